"""``sync_geonode_datasets``, ``sync_geonode_maps`` and ``set_all_datasets_metadata``: what the
catalogue derives from data, recomputed for the datasets (or maps) chosen.

GeoNode runs these to bring its database in step with GeoServer. Here the data files are the
source: a dataset's extent, fields, feature count and geometry type are read again from the
files it was imported from (files/<folder>/, the originals, else the working copy); a map's
extent is the union of its layers' and its thumbnail is drawn again. Each dataset or map is
written in one transaction; one that fails is reported and the run goes on (the exit status is
then 1). Links are made from the record each time a resource is shown, and the ISO 19139 record
(CSW, the metadata links) is generated from the record when it is asked for: neither is stored,
so both follow what these commands fix. Attribute statistics are not kept by this catalogue.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec

from catalogue_app import files
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.inspect import RASTER_SUFFIXES, VECTOR_DRIVERS, Description, describe
from catalogue_app.geo.iso import parse_iso
from catalogue_app.geo.styles import default_sld, style_kind
from catalogue_app.jobs import thumbnails
from catalogue_app.management import common
from catalogue_app.management.base import Command, CommandContext, CommandError
from catalogue_app.store import datasets, maintenance, map_layers, metadata, resources

DERIVED = ("Links are made from the record whenever a resource is shown, and ISO 19139 records are generated "
           "from it when asked for: nothing of them is stored to sync.")


def add_selection(parser, kind: str) -> None:
    parser.add_argument("--ids", metavar="1,2", help=f"only the {kind}s with these ids (separated by commas)")
    parser.add_argument("-f", "--filter", metavar="TEXT", help=f"only the {kind}s whose title contains this text "
                                                             "(case aside)")
    parser.add_argument("-u", "--username", metavar="USERNAME", help=f"only the {kind}s of this owner")
    parser.add_argument("-i", "--ignore-errors", action="store_true",
                        help=f"accepted for GeoNode's sake: a {kind} that fails never stops the others")


def selection(ctx: CommandContext, options, kind: str) -> list[Any]:
    """The resources of ``kind`` the options choose (all by default); CommandError for an id
    that names none."""
    ids = common.id_list(options.ids)
    owner = common.owner_filter(ctx, options.username)
    rows = common.db(ctx).read_sync(lambda conn: maintenance.chosen(conn, kind, ids=ids, title_contains=options.filter,
                                                                owner_id=owner))
    if ids is not None:
        missing = sorted(set(ids) - {r["id"] for r in rows})
        if missing and not options.filter and owner is None:
            raise CommandError(f"--ids: there is no {kind} with id {', '.join(map(str, missing))}.")
    return rows


def _box(values) -> str:
    return "none" if values is None or None in values else "(" + ", ".join(f"{v:.6g}" for v in values) + ")"


def _same(a, b) -> bool:
    if a is None or b is None or None in a or None in b:
        return False
    return all(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9) for x, y in zip(a, b, strict=True))


def read_data(folder: Path, facts: Any) -> Description:
    """The dataset's layer described again from its files: the originals it was imported from,
    else its working copy. GeoError when they are missing or unreadable."""
    if not folder.is_dir():
        raise GeoError(f"its data folder {folder.name} is missing.")
    originals = sorted(p for p in folder.iterdir() if p.is_file())
    mains = [p for p in originals if p.suffix.lower() in (*VECTOR_DRIVERS, *RASTER_SUFFIXES)]
    if mains:
        layers = describe(mains[0], parts=originals, check_pixels=False, charset=facts["charset"])
    else:
        working = files.working_copy(folder)
        if working is None:
            raise GeoError(f"its data folder {folder.name} holds no data file.")
        layers = describe(working, check_pixels=False, charset=facts["charset"])
    chosen = [layer for layer in layers if layer.name == facts["source_name"]] or (layers if len(layers) == 1 else [])
    if not chosen:
        raise GeoError(f"no layer named {facts['source_name']} in {mains[0].name if mains else 'its working copy'}.")
    return chosen[0]


class SyncDatasets(Command):
    name = "sync_geonode_datasets"
    app_name = "geonode"
    help = ("Recompute, from the data files on disk, each chosen dataset's extent (native and longitude/latitude "
            "box, and the regions it meets), its fields, feature count and geometry type, and draw its thumbnail "
            "again; one transaction per dataset, a line each. Without --update... options, all of that; with "
            "some, only those. " + DERIVED)

    def add_arguments(self, parser) -> None:
        add_selection(parser, "dataset")
        parser.add_argument("--updatebbox", action="store_true", help="recompute the extent (and regions)")
        parser.add_argument("--updateattributes", action="store_true",
                            help="recompute the fields, feature count and geometry type")
        parser.add_argument("--updatethumbnails", action="store_true", help="draw the thumbnail again")
        parser.add_argument("--updatepermissions", action="store_true",
                            help="refresh whether anyone may see it from its permission rows (permissions live in "
                                 "the catalogue's own database: nothing else to sync)")
        parser.add_argument("--skip-thumbnails", action="store_true", help="do not draw thumbnails")

    def run(self, ctx: CommandContext, options) -> None:
        steps = {s for s in ("bbox", "attributes", "thumbnails", "permissions") if getattr(options, f"update{s}")}
        if not steps:
            steps = {"bbox", "attributes", "thumbnails"}
        if options.skip_thumbnails:
            steps.discard("thumbnails")
        rows = selection(ctx, options, "dataset")
        ctx.say(DERIVED + " Attribute statistics are not kept.")
        db = common.db(ctx)

        def one(row) -> str:
            facts = db.read_sync(maintenance.dataset_facts, row["id"])
            if facts is None:
                return "no data files of its own (a remote or made-up dataset): nothing to recompute"
            said = []
            if steps & {"bbox", "attributes"}:
                said += self._from_data(ctx, row["id"], facts, steps)
            if "permissions" in steps:
                db.write_sync(resources.refresh_public_view, row["id"])
                said.append("public visibility refreshed")
            if "thumbnails" in steps:
                said.append(_thumbnail(ctx, row["id"]))
            return "; ".join(said)

        common.run_each(ctx, rows, "dataset", one)

    def _from_data(self, ctx: CommandContext, rid: int, facts: Any, steps: set[str]) -> list[str]:
        db = common.db(ctx)
        layer = read_data(ctx.files_dir / facts["folder"], facts)
        said = []
        old_box = tuple(facts[c] for c in maintenance.BOX)
        bbox = ll_bbox = None
        if "bbox" in steps:
            if _same(old_box, layer.bbox) and _same(tuple(facts[c] for c in maintenance.LL_BOX), layer.ll_bbox):
                said.append("extent unchanged")
            else:
                bbox, ll_bbox = list(layer.bbox), list(layer.ll_bbox)
                said.append(f"extent fixed: {_box(old_box)} -> {_box(layer.bbox)}")
        attributes = None
        if "attributes" in steps:
            new = [msgspec.to_builtins(a) for a in layer.attributes]
            old = db.read_sync(datasets.attributes, rid)
            if [(a["attribute"], a["attribute_type"]) for a in old] == [(a["attribute"], a["attribute_type"])
                                                                        for a in new]:
                said.append(f"{len(new)} attribute{'s' if len(new) != 1 else ''} unchanged")
            else:
                attributes = new
                said.append(f"attributes fixed: {len(old)} -> {len(new)}")
        details = {}
        if "attributes" in steps:
            details = {"geometry_type": layer.geometry_type, "feature_count": layer.feature_count}
        if "bbox" in steps and bbox is not None:
            details["crs_wkt"] = layer.wkt
        db.write_sync(lambda conn: maintenance.refresh_from_data(conn, rid, srid=layer.srid, bbox=bbox,
                                                                 ll_bbox=ll_bbox, details=details,
                                                                 attributes=attributes))
        return said


def _thumbnail(ctx: CommandContext, rid: int) -> str:
    try:
        thumbnails.draw_dataset(common.db(ctx), ctx.files_dir, thumbnails.folder(ctx.data_dir), rid)
    except thumbnails.NothingToDraw as exc:
        return f"no thumbnail ({exc})"
    except Exception as exc:  # the rest of the sync stands
        return f"thumbnail not drawn ({exc or type(exc).__name__})"
    return "thumbnail drawn"


class SyncMaps(Command):
    name = "sync_geonode_maps"
    app_name = "geonode"
    help = ("Recompute each chosen map's extent from its layers' datasets and draw its thumbnail again; one "
            "transaction per map, a line each. " + DERIVED)

    def add_arguments(self, parser) -> None:
        add_selection(parser, "map")
        parser.add_argument("--skip-thumbnails", action="store_true", help="do not draw thumbnails")

    def run(self, ctx: CommandContext, options) -> None:
        rows = selection(ctx, options, "map")
        db = common.db(ctx)

        def one(row) -> str:
            before = db.read_sync(maintenance.map_extent, row["id"])
            db.write_sync(map_layers.fit_extent, row["id"])
            after = db.read_sync(maintenance.map_extent, row["id"])
            said = [f"extent unchanged {_box(after)}" if _same(before, after) or before == after
                    else f"extent {_box(before)} -> {_box(after)}"]
            if after is None or None in after:
                said = ["no layer shows a dataset with an extent: extent left as it was"]
            if not options.skip_thumbnails:
                try:
                    thumbnails.draw_map(db, ctx.files_dir, row["id"])
                    said.append("thumbnail drawn")
                except Exception as exc:
                    said.append(f"thumbnail not drawn ({exc or type(exc).__name__})")
            return "; ".join(said)

        common.run_each(ctx, rows, "map", one)


class SetAllDatasetsMetadata(Command):
    name = "set_all_datasets_metadata"
    app_name = "geonode"
    help = ("Fill in, for each chosen dataset, the metadata an upload sets when it is missing: the title (the "
            "layer's name), the date (its creation), the language (eng), the regions (those its extent meets), "
            "a default style for its geometry, and its thumbnail; check that an uploaded ISO document still "
            "reads. One transaction per dataset, a line each. " + DERIVED)

    def add_arguments(self, parser) -> None:
        add_selection(parser, "dataset")
        parser.add_argument("-d", "--remove-duplicates", action="store_true",
                            help="accepted for GeoNode's sake: links are made when shown, there are no duplicates")
        parser.add_argument("-t", "--delete-orphaned-thumbs", action="store_true",
                            help="also remove thumbnail files no resource uses (older than ten minutes)")

    def run(self, ctx: CommandContext, options) -> None:
        rows = selection(ctx, options, "dataset")
        ctx.say(DERIVED)
        db = common.db(ctx)

        def one(row) -> str:
            said = db.write_sync(_fill_defaults, row["id"])
            if said is None:
                return "no data files of its own (a remote or made-up dataset): nothing to fill in"
            facts = db.read_sync(maintenance.dataset_facts, row["id"])
            if facts is not None and not facts["thumbnail_url"]:
                said.append(_thumbnail(ctx, row["id"]))
            xml = db.read_sync(metadata.iso_xml, row["id"])
            if xml is not None:
                try:
                    parse_iso(xml)
                    said.append("uploaded ISO document reads")
                except GeoError as exc:
                    said.append(f"uploaded ISO document unreadable ({exc})")
            return "; ".join(said) or "nothing missing"

        common.run_each(ctx, rows, "dataset", one)
        if options.delete_orphaned_thumbs:
            removed = thumbnails.sweep(db, ctx.data_dir)
            ctx.say(f"{len(removed)} unused thumbnail file{'s' if len(removed) != 1 else ''} removed.")


def _fill_defaults(conn, rid: int) -> list[str] | None:
    """Inside one write: the missing metadata of one dataset set as an upload sets it."""
    facts = maintenance.dataset_facts(conn, rid)
    if facts is None:
        return None
    values: dict[str, Any] = {}
    if not (facts["title"] or "").strip():
        values["title"] = facts["source_name"] or facts["name"]
    if not facts["date"]:
        values["date"] = facts["created"]
    if not (facts["language"] or "").strip():
        values["language"] = "eng"
    regions = not facts["regions"] and facts["ll_x0"] is not None
    maintenance.fill_defaults(conn, rid, values, regions)
    said = [f"{k} set" for k in values]
    if regions:
        after = maintenance.dataset_facts(conn, rid)["regions"]
        if after:
            said.append(f"{after} region{'s' if after != 1 else ''} from its extent")
    if facts["default_style_id"] is None:
        name = facts["name"]
        kind = style_kind("raster" if facts["subtype"] == "raster" else "vector", facts["geometry_type"])
        datasets.set_default_style(conn, rid, name=name, workspace=facts["workspace"], title=name,
                                   sld=default_sld(name, kind, name), generated=True)
        said.append("default style made")
    return said
