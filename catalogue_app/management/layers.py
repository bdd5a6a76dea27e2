"""``importlayers`` and ``updatelayers``: geodata files on the server's disk made into datasets,
each file set through the same import as an upload (jobs/imports.py).

A file set is one dataset file and the files beside it named after it (its name less the
extension, then a dot: ``roads.dbf``, ``roads.shp.xml``): a Shapefile with its .dbf, .shx, .prj, .cpg...; a GeoPackage (each of its layers becomes a
dataset); a GeoTIFF; a GeoJSON, KML or CSV; a .zip or .kmz holding one of those. A ``<name>.xml``
(ISO 19139) or ``<name>.sld`` beside a one-layer file goes with it, as in an upload. Files
that are no dataset (.txt, .pdf, a .dbf without its .shp...) are passed over.

Each file set is copied into a workspace under tmp/, staged, and committed in one write
transaction; a file set that fails (unreadable, incomplete, empty, not what its name says) is
reported with the reason and leaves nothing behind, and the run goes on. Between two file sets
the command stops if its job was asked to.

A dataset is already known when its owner has a dataset of the same layer name (the name an
upload gives it: the file's name, or the layer's in a GeoPackage with several), as GeoNode's
``skip_existing_layers``. Known ones are skipped unless ``--overwrite`` asks for their data to
be replaced (the record, its links and permissions stay).

Over HTTP (the command runs as a job of /api/v2/management/) only the import folder may be
read: paths are taken relative to it, and a path or a link leading out of it is refused.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from catalogue_app import files
from catalogue_app.geo.encoding import codec_name
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.inspect import ARCHIVE_SUFFIXES, RASTER_SUFFIXES, VECTOR_DRIVERS, layer_names
from catalogue_app.jobs.imports import ImportFailed, import_now
from catalogue_app.management import common
from catalogue_app.management.base import Command, CommandContext, CommandError, Stopped
from catalogue_app.services.errors import Invalid
from catalogue_app.services.resource_changes import clean
from catalogue_app.store import datasets, maintenance
from catalogue_app.store.resources import Viewer
from catalogue_app.store.users import ANONYMOUS_GROUP_ID

DATA_SUFFIXES = (*VECTOR_DRIVERS, *RASTER_SUFFIXES, *ARCHIVE_SUFFIXES)


@dataclass
class FileSet:
    main: Path
    parts: list[Path]  # the main file first
    label: str          # as the report names it


@dataclass
class Report:
    """What became of each file set, said as it happens, and the totals at the end."""

    ctx: CommandContext
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("imported", "overwritten", "skipped", "failed"), 0))

    def line(self, status: str, label: str, detail: str) -> None:
        self.counts[status] += 1
        self.ctx.say(f"{status:<11} {label}: {detail}")

    def totals(self, sets: int) -> str:
        c = self.counts
        return (f"{sets} file set{'s' if sets != 1 else ''}: {c['imported']} imported, {c['overwritten']} "
                f"overwritten, {c['skipped']} skipped (already there), {c['failed']} failed")


def add_import_options(parser, *, paths: bool) -> None:
    if paths:
        parser.add_argument("paths", nargs="+", metavar="PATH",
                            help="files or folders (searched recursively); over HTTP, inside the import folder")
    parser.add_argument("-u", "--user", metavar="USERNAME",
                        help="owner of the new datasets (default: the caller over HTTP, the first superuser on "
                             "the command line)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("-o", "--overwrite", action="store_true",
                      help="replace the data of the owner's dataset of the same name (its record, links and "
                           "permissions stay)")
    mode.add_argument("-s", "--skip-existing", action="store_true",
                      help="skip a layer whose name the owner already has a dataset of (the default)")
    parser.add_argument("-k", "--keywords", metavar="A,B", help="keywords of every dataset, separated by commas")
    parser.add_argument("-c", "--category", metavar="IDENTIFIER", help="topic category identifier (e.g. boundaries)")
    parser.add_argument("-t", "--title", help="title of the dataset (only when one file set with one layer is "
                                              "imported; default: the layer's name)")
    parser.add_argument("-a", "--abstract", help="abstract of every dataset")
    parser.add_argument("-r", "--regions", metavar="A,B",
                        help="regions by code or name, separated by commas (default: those the extent meets)")
    parser.add_argument("-p", "--permissions", metavar="JSON", help=common.PERMISSIONS_HELP +
                        "; added to the default (anyone may view and download) unless --private")
    parser.add_argument("--private", action="store_true",
                        help="no permission for anonymous users (only the owner, superusers and --permissions)")
    parser.add_argument("-C", "--charset", help="character set of the attribute text where the files do not say "
                                                "(e.g. ISO-8859-1)")


class _LayersCommand(Command):
    app_name = "geonode"

    def plan(self, ctx: CommandContext, options) -> dict[str, Any]:
        """The import's parameters shared by every file set, checked (CommandError)."""
        owner = common.user_id(ctx, options.user)
        overwrite = bool(options.overwrite)
        charset = None
        if options.charset:
            try:
                charset = codec_name(options.charset)
            except GeoError as exc:
                raise CommandError(f"--charset: {exc}") from None
        body: dict[str, Any] = {}
        if options.title is not None:
            if not options.title.strip():
                raise CommandError("--title: a title may not be blank.")
            body["title"] = options.title.strip()[:255]
        if options.abstract:
            body["abstract"] = options.abstract
        if options.keywords is not None:
            body["keywords"] = common.comma_list(options.keywords)
        category = common.category_id(ctx, options.category)
        if options.regions is not None:
            body["regions"] = common.comma_list(options.regions)
        viewer = Viewer(owner, True)
        try:
            cleaned = asdict(common.db(ctx).read_sync(clean, {"title": "untitled", **body}, viewer, None, "dataset"))
        except Invalid as exc:
            raise CommandError(exc.message) from None
        if "title" not in body:
            cleaned["values"].pop("title", None)
        if category is not None:
            cleaned["values"]["category_id"] = category
        grants = {"users": {}, "groups": {} if options.private else {str(ANONYMOUS_GROUP_ID): "download"}}
        if options.permissions:
            user_levels, group_levels = common.permissions_spec(ctx, options.permissions)
            if options.private and ANONYMOUS_GROUP_ID in group_levels and group_levels[ANONYMOUS_GROUP_ID] != "none":
                raise CommandError("--private and a permission for anonymous users in --permissions contradict "
                                   "each other.")
            grants["users"].update({str(k): v for k, v in user_levels.items()})
            grants["groups"].update({str(k): v for k, v in group_levels.items()})
        return {"owner_id": owner, "changes": cleaned, "permissions": grants, "charset": charset,
                "overwrite_existing_layer": overwrite, "skip_existing_layers": not overwrite,
                "time": False, "time_attributes": {}, "resource_pk": None, "metadata_uploaded_preserve": False,
                "action": "upload"}

    def import_all(self, ctx: CommandContext, roots: list[Path], options, name_filter: str | None = None) -> None:
        base = self.plan(ctx, options)
        report = Report(ctx)
        sets: list[FileSet] = []
        refused: list[tuple[str, str]] = []
        for root in roots:
            found, out = find_file_sets(ctx, root)
            refused += out
            sets += [s for s in found if not name_filter or name_filter.lower() in s.label.lower()]
        if options.title is not None and len(sets) > 1:
            raise CommandError(f"--title names one dataset, and {len(sets)} file sets were found; "
                               "import them one at a time to give each its title.")
        owner = common.db(ctx).read_sync(_username, base["owner_id"])
        ctx.say(f"{len(sets)} file set{'s' if len(sets) != 1 else ''} found; owner {owner}; "
                f"{'overwriting' if base['overwrite_existing_layer'] else 'skipping'} datasets that exist.")
        for label, reason in refused:
            report.line("failed", label, reason)
        done = 0
        try:
            for item in sets:
                ctx.check()
                import_one(ctx, item, base, report)
                done += 1
        except Stopped:
            ctx.say(f"stopped after {done} of {len(sets)} file sets.")
            ctx.say(report.totals(done + len(refused)))
            raise
        ctx.say(report.totals(len(sets) + len(refused)))
        if report.counts["failed"]:
            raise CommandError(f"{report.counts['failed']} file set{'s' if report.counts['failed'] != 1 else ''} "
                               "could not be imported (see above).")


def _username(conn, user_id: int) -> str:
    from catalogue_app.store import users

    row = users.get(conn, user_id)
    return row["username"] if row is not None else str(user_id)


class ImportLayers(_LayersCommand):
    name = "importlayers"
    help = ("Import geodata files (Shapefiles with their parts, GeoPackages, GeoTIFFs, GeoJSON, KML, CSV with "
            "coordinates, zips of those) as datasets, each file set as an upload would be, and report what "
            "became of each: imported (with its id), skipped (already there), overwritten, or failed (why). "
            "Folders are searched recursively. Over HTTP, only paths inside the import folder.")

    def add_arguments(self, parser) -> None:
        add_import_options(parser, paths=True)

    def run(self, ctx: CommandContext, options) -> None:
        roots = [common.allowed_path(ctx, text) for text in options.paths]
        self.import_all(ctx, roots, options)


class UpdateLayers(_LayersCommand):
    name = "updatelayers"
    help = ("Register the geodata file sets of the import folder that the catalogue does not have yet "
            "(a file set is known when its owner has a dataset of the same layer name), each as an upload "
            "would be; report what became of each.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--folder", metavar="PATH",
                            help="the folder to scan (default: the import folder; over HTTP, a folder inside it)")
        parser.add_argument("-f", "--filter", metavar="TEXT",
                            help="only the file sets whose path contains this text (case aside)")
        parser.add_argument("-i", "--ignore-errors", action="store_true",
                            help="accepted for GeoNode's sake: a file set that fails never stops the others")
        add_import_options(parser, paths=False)

    def run(self, ctx: CommandContext, options) -> None:
        if options.folder:
            folder = common.allowed_path(ctx, options.folder, "--folder")
        else:
            folder = ctx.import_dir
            if not folder.is_dir():
                raise CommandError(f"the import folder {folder} does not exist; put the files there first.")
        if not folder.is_dir():
            raise CommandError(f"--folder: {options.folder!r} is not a folder.")
        self.import_all(ctx, [folder], options, name_filter=options.filter)


# -- finding file sets --------------------------------------------------------------------------
def find_file_sets(ctx: CommandContext, root: Path) -> tuple[list[FileSet], list[tuple[str, str]]]:
    """The file sets under ``root`` (a file: its own set), and the paths refused (links out of
    the import folder, over HTTP) with the reason."""
    over_http = ctx.user_id is not None
    refused: list[tuple[str, str]] = []
    found: list[FileSet] = []
    if root.is_file():
        top = root.parent
        names = _names_in(top)
        group = _group(top, names, over_http, ctx.import_dir, refused, lambda p: p.name)
        found = [s for s in group if s.main.name == root.name]
        if not found:
            raise CommandError(f"{root.name} is not a dataset file: name {', '.join(sorted(DATA_SUFFIXES))} files, "
                               "or a folder holding them.")
        return found, refused

    def label(path: Path) -> str:
        return os.path.relpath(path, root.parent)

    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        here = Path(folder)
        for d in list(dirs):
            if (here / d).is_symlink():
                dirs.remove(d)
                if over_http and not common.inside(ctx.import_dir, here / d):
                    refused.append((label(here / d), "a link leading out of the import folder: refused"))
        found += _group(here, sorted(n for n in names if not n.startswith(".")), over_http, ctx.import_dir,
                        refused, label)
    return found, refused


def _names_in(folder: Path) -> list[str]:
    return sorted(e.name for e in os.scandir(folder) if not e.name.startswith(".") and e.is_file())


def _group(folder: Path, names: list[str], over_http: bool, import_dir: Path, refused: list[tuple[str, str]],
           label) -> list[FileSet]:
    """The file sets among the files of one folder: each dataset file with the files, not
    dataset files themselves, whose names start with its name less its extension and a dot."""
    mains = [n for n in names if Path(n).suffix.lower() in DATA_SUFFIXES]
    others = [n for n in names if n not in mains]
    out = []
    for main in mains:
        stem = Path(main).stem.lower()
        paths = [folder / main] + [folder / n for n in others if n.lower().startswith(stem + ".")]
        if over_http:
            outside = [p for p in paths if not common.inside(import_dir, p)]
            if outside:
                refused.append((label(folder / main), f"{outside[0].name} is a link leading out of the import "
                                                      "folder: refused"))
                continue
        out.append(FileSet(paths[0], paths, label(folder / main)))
    return out


# -- importing one ------------------------------------------------------------------------------
def import_one(ctx: CommandContext, item: FileSet, base: dict[str, Any], report: Report) -> None:
    db = common.db(ctx)
    owner = base["owner_id"]
    overwrite = base["overwrite_existing_layer"]
    try:
        names = layer_names(item.main)
    except GeoError as exc:
        report.line("failed", item.label, str(exc))
        return
    existing = {n: db.read_sync(datasets.of_owner_named, owner, n) for n in names}
    if names and not overwrite and all(existing.values()):
        ids = ", ".join(f"{n} (dataset {existing[n]})" for n in names)
        report.line("skipped", item.label, f"already there: {ids}")
        return
    exec_id = str(uuid.uuid4())
    workspace = files.claim_workspace(ctx.tmp_dir / f"command-{exec_id}")
    try:
        upload = workspace / "upload"
        upload.mkdir()
        for part in item.parts:
            shutil.copyfile(part, upload / part.name)
        stem = item.main.name[: -len(item.main.suffix)].lower()
        extras = {}
        if len(names) == 1:
            for key, ext in (("xml_file", ".xml"), ("sld_file", ".sld")):
                extra = next((p.name for p in item.parts if p.name.lower() == stem + ext), None)
                if extra:
                    extras[key] = extra
        params = {**base, "files": [p.name for p in item.parts if p.name not in extras.values()],
                  "total_layers": max(1, len(names)), **extras}
        try:
            job, output = import_now(db, ctx.folders, workspace, exec_id, params)
        except ImportFailed as exc:
            report.line("failed", item.label, str(exc))
            return
        except Exception as exc:  # what no check foresaw: still this file set's failure
            report.line("failed", item.label, f"could not be imported: {exc or type(exc).__name__}")
            return
    finally:
        files.remove(workspace)
    known = {v for v in existing.values() if v}
    for rid in getattr(job, "imported", []):
        row = db.read_sync(lambda conn: maintenance.chosen(conn, "dataset", ids=[rid]))
        title = row[0]["title"] if row else "?"
        status = "overwritten" if rid in known else "imported"
        report.line(status, item.label, f"dataset {rid} {title!r}")
    for name in output.get("skipped_layers", []):
        report.line("skipped", item.label, f"layer {name}: already there (dataset {existing.get(name) or '?'})")
