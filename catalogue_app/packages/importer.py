"""A package read into this catalogue, resource by resource, with a report.

The import opens the package and checks it whole (archive.py: a zip, the manifest, the
signature, every member's hash, the free disk) before anything is written, and refuses a
"since" package whose base this catalogue never exported or imported. It then decides, for each
resource, what to do (``plan``, from the sync points of store/packages.py: created, updated,
unchanged, conflict, deleted, kept, refused), extracts the members of those it writes into its
workspace under tmp/ (``stage``), and writes each resource in a savepoint of its own
(``commit``): its files renamed into files/ in the write that makes its rows, renamed back if
that write fails (the resource is then ``failed`` and left as it was). Datasets come first, then
documents, then maps and apps (their layers find their datasets), then the links between
resources, then deletions. A dry run plans and stops there: the report, nothing written.

``create_from_record`` and ``apply_update`` write one incoming record; the conflicts' "keep
theirs" and "keep both" (packages/conflicts.py) call them too. Their ``folder`` holds the
resource's members as the package had them under resources/<uuid>/ (``data/...``,
``styles/<name>.sld``, ``thumbnail.<ext>``, ``changes.json``).
"""

from __future__ import annotations

import json
import logging
import mimetypes
import os
import uuid as uuids
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalogue_app import files, rules
from catalogue_app.geo import gpkg_edit
from catalogue_app.services import access, history
from catalogue_app.store import Connection, package_writes, packages, versions
from catalogue_app.store.db import savepoint

log = logging.getLogger("catalogue.packages")

VIA = "package"  # what the versions an import writes came through
OUTCOMES = ("created", "updated", "unchanged", "conflicts", "deleted", "kept", "left_out", "refused", "failed")
ORDER = {"dataset": 0, "document": 1, "map": 2}  # then geoapps and anything else


class ImportRefused(ValueError):
    """The package is refused outright (its base is unknown here, a manifest this catalogue
    cannot read...); nothing is written. The message is for the user."""


# -- opening ----------------------------------------------------------------------------------------
def open_checked(path: Path, *, trusted_keys: tuple[str, ...] = (), room_in: Path | None = None,
                 reserve_bytes: int | None = None, label: str | None = None):
    """The package at ``path``, opened and checked whole (every member's hash too) before
    anything is written; archive.PackageError or ImportRefused (ValueErrors) when it cannot be
    trusted or read."""
    from catalogue_app.packages.archive import Package

    extra = {"reserve_bytes": reserve_bytes} if reserve_bytes is not None else {}
    package = Package.open(path, trusted_keys=tuple(trusted_keys), room_in=room_in, label=label, **extra)
    try:
        package.verify()
        _check_manifest(package.manifest)
    except BaseException:
        package.close()
        raise
    return package


def _check_manifest(manifest: Any) -> None:
    if not isinstance(manifest, dict) or not isinstance(manifest.get("id"), str):
        raise ImportRefused("The package's manifest has no id.")
    maker = manifest.get("catalogue")
    if not isinstance(maker, dict) or not isinstance(maker.get("id"), str):
        raise ImportRefused("The package's manifest does not say which catalogue made it.")
    for key in ("resources", "deleted"):
        items = manifest.get(key) or []
        if not isinstance(items, list) or not all(isinstance(i, dict) and isinstance(i.get("uuid"), str) for i in items):
            raise ImportRefused(f"The package's manifest lists its {key} wrongly (each needs a uuid).")


def read_records(package) -> dict[str, dict[str, Any]]:
    """The record of every resource the package carries, by uuid."""
    out = {}
    for entry in package.manifest.get("resources") or []:
        member = entry.get("record") or f"resources/{entry['uuid']}/record.json"
        record = package.read_json(member)
        if not isinstance(record, dict) or record.get("uuid") != entry["uuid"]:
            raise ImportRefused(f"The record of {entry['uuid']} in the package does not match its manifest.")
        out[entry["uuid"]] = record
    return out


# -- planning -----------------------------------------------------------------------------------------
@dataclass
class Item:
    """What the import does with one resource of the package."""

    uuid: str
    title: str
    resource_type: str
    outcome: str                     # created | updated | unchanged | conflicts | deleted | kept | refused | failed
    pk: int | None = None
    message: str | None = None
    kind: str | None = None          # a conflict's kind
    version: int | None = None       # the package's version of it
    data_version: int | None = None
    data: str = "none"
    deletion: bool = False
    agreed: int | None = None        # changed only here: the version both last agreed on (the sync point stays)
    again: bool = False              # imported before: its member row stays as that import left it

    def shown(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uuid": self.uuid, "title": self.title, "resource_type": self.resource_type}
        if self.pk is not None:
            out["pk"] = self.pk
        if self.message:
            out["message"] = self.message
        return out


def plan(conn: Connection, manifest: dict[str, Any], user_id: int | None) -> list[Item]:
    """What importing the package would do to each resource, as things are now (no write).
    ImportRefused when it is a "since" package whose base is unknown here."""
    ours = packages.our_id(conn)
    package_id, maker, base = manifest["id"], manifest["catalogue"]["id"], manifest.get("base")
    if base and packages.get(conn, base) is None:
        raise ImportRefused(f"This package holds the changes since package {base}, which this catalogue never "
                            "exported or imported: import that package first. Nothing was imported.")
    before = packages.get(conn, package_id)
    earlier = packages.members(conn, package_id) if before is not None and before["direction"] == "import" else {}
    viewer = access.viewer_of(conn, user_id)
    entries = sorted(manifest.get("resources") or [], key=lambda e: ORDER.get(e.get("resource_type"), 3))
    items = []
    for entry in entries:
        item = Item(entry["uuid"], str(entry.get("title") or ""), str(entry.get("resource_type") or ""), "unchanged",
                    version=_int(entry.get("version")), data_version=_int(entry.get("data_version")),
                    data=str(entry.get("data") or "none"))
        row = package_writes.resource_by_uuid(conn, item.uuid)
        item.pk = row["id"] if row is not None else None
        done = earlier.get(item.uuid)
        if (maker == ours and not base) or (before is not None and before["direction"] == "export"):
            item.message = "This catalogue made this package."
        elif done is not None and done["outcome"] not in ("failed", None):
            item.message, item.again = "This package was imported before.", True
        elif row is None:
            _unknown_here(conn, item, maker, base, package_id, viewer)
        else:
            _known_here(conn, item, row, maker, base, package_id, viewer)
        items.append(item)
    for entry in manifest.get("deleted") or []:
        items.append(_deletion(conn, entry, maker, base, package_id, viewer, ours, earlier))
    return items


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _unknown_here(conn: Connection, item: Item, maker: str, base: str | None, package_id: str, viewer) -> None:
    buried = package_writes.tombstone(conn, item.uuid)
    if buried is None:
        if rules.may_add_resources(viewer):
            item.outcome = "created"
        else:
            item.outcome, item.message = "refused", "You may not add resources here."
        return
    sync = packages.sync_point(conn, item.uuid, maker=maker, base=base, exclude=package_id)
    if sync is not None and (item.version or 0) <= (sync["peer_version"] or 0):
        item.message = "Deleted here; not changed there since."
        return
    item.outcome, item.kind = "conflicts", "deleted_here"
    item.message = "Deleted here and changed there: the incoming copy is kept aside."


def _known_here(conn: Connection, item: Item, row, maker: str, base: str | None, package_id: str, viewer) -> None:
    sync = packages.sync_point(conn, item.uuid, maker=maker, base=base, exclude=package_id)
    if sync is None:
        item.outcome, item.kind = "conflicts", "changed_both"
        item.message = "This resource is here already and the two catalogues never agreed on it: the incoming copy is kept aside."
        return
    here = package_writes.latest_version(conn, row["id"]) > (sync["local_version"] or 0)
    there = (item.version or 0) > (sync["peer_version"] or 0)
    if there and not here:
        if access.CHANGE in access.resource_actions(conn, viewer, row):
            item.outcome = "updated"
        else:
            item.outcome, item.message = "refused", "You may not change this resource here."
    elif there and here:
        item.outcome, item.kind = "conflicts", "changed_both"
        item.message = "Changed here and there since they last agreed: ours is kept, theirs aside."
    elif here:
        item.message, item.agreed = "Changed here only: ours is kept.", sync["local_version"]


def _deletion(conn: Connection, entry: dict[str, Any], maker: str, base: str | None, package_id: str, viewer,
              ours: str, earlier: dict) -> Item:
    item = Item(entry["uuid"], str(entry.get("title") or ""), str(entry.get("resource_type") or ""), "unchanged",
                deletion=True, version=_int(entry.get("base_version")))
    row = package_writes.resource_by_uuid(conn, item.uuid)
    if row is None:
        item.message = "Deleted there; not here (any more)."
        return item
    item.pk = row["id"]
    done = earlier.get(item.uuid)
    if done is not None and done["outcome"] not in ("failed", None):
        item.message, item.again = "This package was imported before.", True
        return item
    sync = packages.sync_point(conn, item.uuid, maker=maker, base=base, exclude=package_id)
    agreed = sync["local_version"] if sync is not None else _int(entry.get("base_version"))
    if package_writes.latest_version(conn, row["id"]) > (agreed or 0):
        item.outcome, item.message = "kept", "Deleted there, but changed here since: kept."
    elif access.DELETE in access.resource_actions(conn, viewer, row):
        item.outcome = "deleted"
    else:
        item.outcome, item.message = "refused", "Deleted there; you may not delete it here."
    return item


def report_of(manifest: dict[str, Any], signer: str | None, items: list[Item], *, dry_run: bool,
              notes: list[str] = ()) -> dict[str, Any]:
    """The import's report (docs/package-format.md): each outcome's resources, and the notes."""
    maker = manifest.get("catalogue") or {}
    out: dict[str, Any] = {"package": manifest.get("id"), "maker": maker.get("id"),
                           "maker_url": maker.get("url") if isinstance(maker.get("url"), str) else None,
                           "signed_by": signer, "base": manifest.get("base"), "dry_run": dry_run,
                           **{key: [] for key in OUTCOMES}, "notes": list(notes)}
    for item in items:
        out[item.outcome].append(item.shown())
    out["left_out"] = [dict(i) for i in manifest.get("left_out") or [] if isinstance(i, dict)]
    return out


def _within(folder: Path, relative: str) -> Path:
    """``relative`` (a name a package gave) as a path inside ``folder``; ValueError when it is
    absolute or climbs out."""
    parts = relative.replace("\\", "/").split("/")
    if not relative or relative.startswith("/") or "\x00" in relative or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{relative!r} is not a plain relative path.")
    return folder.joinpath(*parts)


# -- staging: the members of what will be written, out of the package ------------------------------
def members_of(package, uuid: str) -> list[str]:
    prefix = f"resources/{uuid}/"
    return [name for name in package.names() if name.startswith(prefix)]


def extract_resource(package, uuid: str, target: Path) -> Path:
    """The members of resources/<uuid>/ extracted (hash checked) under ``target`` in their
    layout there, synced."""
    prefix = f"resources/{uuid}/"
    target.mkdir(parents=True, exist_ok=True)
    for name in members_of(package, uuid):
        package.extract(name, _within(target, name[len(prefix):]))
    files.sync_tree(target)
    return target


# -- writing one record ---------------------------------------------------------------------------------
@dataclass
class Written:
    """What writing one record did: the resource's id, notes for the report (unknown owner,
    groups, permissions...), and the files it moved (undone with ``undo`` when the write fails;
    ``retired`` folders are removed once it has committed)."""

    resource_id: int
    notes: list[str] = field(default_factory=list)
    moved: list[tuple[Path, Path]] = field(default_factory=list)   # (from, to)
    made: list[Path] = field(default_factory=list)                 # folders made under files/
    retired: list[Path] = field(default_factory=list)
    data_changed: bool = False
    edited: tuple[Path, int] | None = None                         # a working copy edited: its path, its last version
    note: Callable[[list[str]], None] | None = None                # told the folders of files/ it makes or retires

    def noting(self, *names: str) -> None:
        """Say, before they are made or retired, which folders of files/ this write touches (the
        job's workspace keeps them, so that a crash before the commit leaves no stray folder)."""
        if self.note is not None:
            self.note(list(names))

    def undo(self) -> None:
        """Put the moved files back where they came from and remove what was made (the write
        was rolled back)."""
        for source, target in reversed(self.moved):
            try:
                source.parent.mkdir(parents=True, exist_ok=True)
                os.rename(target, source)
            except OSError:
                log.warning("could not move %s back to %s", target, source)
        self.moved.clear()
        for folder in self.made:
            files.remove(folder)
        self.made.clear()


def _member_path(folder: Path | None, record: dict[str, Any], member: str | None) -> Path | None:
    """Where a member of the record is in ``folder`` (None: not there)."""
    if not member or folder is None:
        return None
    prefix = f"resources/{record['uuid']}/"
    relative = member[len(prefix):] if member.startswith(prefix) else member
    try:
        path = _within(folder, relative)
    except ValueError:
        return None
    return path if path.is_file() else None


def _data_files(record: dict[str, Any], folder: Path | None) -> list[tuple[str, Path, str | None]]:
    """(name in the resource's folder, where it is now, media type) of the record's files; a
    dataset's one GeoPackage or GeoTIFF becomes its working copy when the record names none."""
    part = record.get("dataset") or record.get("document") or {}
    found = []
    for item in part.get("files") or []:
        path = _member_path(folder, record, item.get("member"))
        if path is not None and item.get("name"):
            found.append((str(item["name"]), path, item.get("mime_type")))
    if record.get("dataset") and found and not any(n.startswith(files.WORKING + "/") or n in ("working.gpkg", "working.tif")
                                                    for n, _, _ in found):
        for i, (name, path, mime) in enumerate(found):
            ext = name.rsplit(".", 1)[-1].lower()
            if ext in ("gpkg", "tif", "tiff"):
                found[i] = (f"{files.WORKING}/data.{'gpkg' if ext == 'gpkg' else 'tif'}", path, mime)
                break
    return found


def _move_files(found: list[tuple[str, Path, str | None]], target: Path, written: Written) -> list[tuple[str, int, str]]:
    """Move the files into ``target`` (made now) and give their file rows."""
    if not target.exists():
        written.noting(target.name)
        target.mkdir(parents=True)
        written.made.append(target)
    rows = []
    for name, source, mime in found:
        dest = _within(target, name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.rename(source, dest)
        written.moved.append((source, dest))
        rows.append((name, dest.stat().st_size, mime or mimetypes.guess_type(name)[0] or "application/octet-stream"))
    return rows


def _styles(record: dict[str, Any], folder: Path | None) -> list[tuple[dict[str, Any], bytes]]:
    out = []
    for style in record.get("styles") or []:
        path = _member_path(folder, record, style.get("sld"))
        if path is not None:
            out.append((style, path.read_bytes()))
    return out


def _thumbnail(conn: Connection, rid: int, uuid: str, record: dict[str, Any], folder: Path | None,
               files_dir: Path) -> None:
    path = _member_path(folder, record, record.get("thumbnail"))
    if path is None:
        return
    from catalogue_app.jobs import thumbnails  # Pillow and the drawing: loaded when first needed

    ext = path.suffix.lstrip(".").lower() or "png"
    name = thumbnails.write_file(thumbnails.folder(files_dir.parent), uuid, path.read_bytes(), ext)
    package_writes.set_thumbnail(conn, rid, thumbnails.URL_PREFIX + name)


def _iso(conn: Connection, rid: int, record: dict[str, Any], folder: Path | None) -> None:
    path = _member_path(folder, record, record.get("iso_metadata"))
    if path is not None:
        package_writes.set_iso(conn, rid, path.read_bytes())


def _type_rows(conn: Connection, rid: int, record: dict[str, Any], folder: Path | None, data_folder: str | None,
               creating: bool) -> tuple[list[str], str | None]:
    kind = record.get("resource_type")
    notes: list[str] = []
    old = None
    if kind == "dataset":
        old = package_writes.write_dataset(conn, rid, record, folder=data_folder, creating=creating,
                                           styles=_styles(record, folder))
        package_writes.write_remote_layer(conn, rid, record)
    elif kind == "document":
        package_writes.write_document(conn, rid, record)
    elif kind == "map":
        notes += package_writes.write_map(conn, rid, record)
    elif record.get("geoapp"):
        package_writes.write_geoapp(conn, rid, record)
    return notes, old


def create_from_record(conn: Connection, record: dict[str, Any], folder: Path | None, *, files_dir: Path,
                       importer_id: int, new_uuid: str | None = None, title: str | None = None,
                       note: Callable[[list[str]], None] | None = None) -> Written:
    """Write ``record`` as a new resource (its uuid, or ``new_uuid`` for a second copy, then
    titled ``title``), its files moved from ``folder`` into files/, inside the caller's write
    transaction. Owner, group, contacts and permissions by name (unknown owner: ``importer_id``,
    said in the notes). Raises on failure (the caller rolls back and calls ``undo``)."""
    uuid = new_uuid or record["uuid"]
    owner_id = package_writes.user_id(conn, record.get("owner"))
    notes = []
    if owner_id is None:
        owner_id = importer_id
        notes.append(f"The owner {record.get('owner')!r} is not a user here: the importer owns it.")
    rid, more = package_writes.create(conn, record, uuid=uuid, owner_id=owner_id, title=title)
    written = Written(rid, notes + more, note=note)
    try:
        found = _data_files(record, folder)
        data_folder = None
        if record.get("resource_type") == "dataset":
            data_folder = uuid if found else package_writes.no_data_folder(uuid)
            if not found and not record.get("remote_layer"):
                package_writes.mark_metadata_only(conn, rid)
        rows = _move_files(found, files_dir / uuid, written) if found else []
        more, _ = _type_rows(conn, rid, record, folder, data_folder, creating=True)
        written.notes += more
        package_writes.set_files(conn, rid, rows)
        written.notes += package_writes.write_relations(conn, rid, record)
        package_writes.write_origin(conn, rid, record)
        _iso(conn, rid, record, folder)
        if new_uuid is None:
            package_writes.add_history(conn, rid, record.get("history") or [])
        data_version = _int((record.get("version") or {}).get("data_version"))
        if record.get("resource_type") == "dataset" and data_version:
            package_writes.set_data_version(conn, rid, data_version)
        _thumbnail(conn, rid, uuid, record, folder, files_dir)
        written.data_changed = bool(found) and _member_path(folder, record, record.get("thumbnail")) is None
    except BaseException:
        written.undo()
        raise
    return written


def apply_update(conn: Connection, resource_id: int, record: dict[str, Any], folder: Path | None, *,
                 files_dir: Path, by_user_id: int | None, peer: str = "",
                 note: Callable[[list[str]], None] | None = None) -> Written:
    """Write ``record`` over the existing resource ``resource_id`` (fields, keywords, regions,
    contacts, links, styles, map layers...; its owner, group and permissions stay as they are
    here: package_writes.update says why) as one ``metadata`` version via
    "package", and its data: ``changes.json`` applied version by version to a copy of the working
    GeoPackage, or whole data replacing it (a ``replace`` version); inside the caller's write
    transaction. Raises on failure (the caller rolls back and calls ``undo``)."""
    written = Written(resource_id, note=note)
    uuid = record["uuid"]
    by = history.By(by_user_id, VIA)
    try:
        package_writes.add_history(conn, resource_id, [v for v in record.get("history") or []
                                                       if v.get("kind") in ("metadata", "revert") and v.get("changes")])
        with history.recorded(conn, by, resource_id, ignore=history.FROM_DATA):
            written.notes += package_writes.update(conn, resource_id, record)
            more, _ = _type_rows(conn, resource_id, record, folder, None, creating=False)
            written.notes += more
            written.notes += package_writes.write_relations(conn, resource_id, record, updating=True)
            _iso(conn, resource_id, record, folder)
            if record.get("resource_type") == "document":
                found = _data_files(record, folder)
                if found:
                    target = files_dir / uuid
                    for name, _, _ in found:  # the old file of that name goes once this commits
                        old = target / name
                        if old.exists():
                            aside = old.with_name(old.name + f".replaced-{uuids.uuid4().hex[:8]}")
                            os.rename(old, aside)
                            written.moved.append((old, aside))
                            written.retired.append(aside)
                    package_writes.set_files(conn, resource_id, _move_files(found, target, written))
        if record.get("resource_type") == "dataset":
            _update_data(conn, resource_id, record, folder, files_dir, by_user_id, written, peer)
        _thumbnail(conn, resource_id, uuid, record, folder, files_dir)
    except BaseException:
        written.undo()
        raise
    return written


def _update_data(conn: Connection, rid: int, record: dict[str, Any], folder: Path | None, files_dir: Path,
                 by_user_id: int | None, written: Written, peer: str = "") -> None:
    """A dataset's new data: its feature edits (changes.json) applied to a copy of its working
    GeoPackage, version by version, or its whole data; the copy is switched in by this write."""
    changes_path = _member_path(folder, record, f"resources/{record['uuid']}/changes.json")
    found = _data_files(record, folder)
    if changes_path is None and not found:
        return
    current = package_writes.data_folder(conn, rid)
    if current is None:
        return
    new_name = f"{record['uuid']}-{uuids.uuid4().hex[:8]}"
    target = files_dir / new_name
    old_folder = files_dir / current
    written.noting(new_name, current)
    if changes_path is not None:
        working = files.working_copy(old_folder)
        if working is None or working.suffix != ".gpkg":
            raise ValueError("Its feature edits cannot be applied: this dataset has no GeoPackage here.")
        target.mkdir(parents=True)
        written.made.append(target)
        for name in files.relative_files(old_folder):  # the originals and the working copy, as committed
            if files.is_working_geopackage(name):
                gpkg_edit.copy_database(old_folder / name, target / name, history=True)
            else:
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                files.copy_file(old_folder / name, target / name)
        path = files.working_copy(target)
        last = _apply_changes(conn, rid, path, json.loads(changes_path.read_text()), peer)
        written.edited = (path, last)
        rows = [(n, (target / n).stat().st_size, mimetypes.guess_type(n)[0]) for n in files.relative_files(target)]
    else:
        rows = _move_files(found, target, written)
        path = files.working_copy(target)
        if path is not None and path.suffix == ".gpkg":
            # the data versions the new file holds join our history (numbered after ours where
            # taken), the file's own numbers following; then the replace is a version of ours
            inside = {v["uuid"] for v in gpkg_edit.versions(path)}
            added = package_writes.add_history(conn, rid, [v for v in record.get("history") or []
                                                           if v.get("uuid") in inside])
            for version_uuid, number in sorted(added, key=lambda a: -a[1]):
                gpkg_edit.renumber(path, version_uuid, number)
            user = history.username_of(conn, by_user_id)
            version = versions.add(conn, rid, kind="replace", via=VIA, user_id=by_user_id, username=user,
                                   summary={"files": sorted(n for n, _, _ in rows)})
            gpkg_edit.record_version(path, gpkg_edit.Reserved(version["number"], version["uuid"], version["created"],
                                                              by_user_id, user), via=VIA, kind="replace")
            versions.set_data_version(conn, rid, version["number"])
            written.edited = (path, version["number"])
    files.sync_tree(target)
    package_writes.switch_data_folder(conn, rid, new_name)
    package_writes.set_files(conn, rid, rows)
    if written.edited is not None:
        state = gpkg_edit.state(written.edited[0])
        from catalogue_app.services.edits import _extent  # the extent as the edit service records it

        bbox, ll_bbox = _extent(state["extent"], state["crs"], package_writes.srid_of(conn, rid))
        versions.set_data_state(conn, rid, state["applied"], state["count"], bbox, ll_bbox)
    written.retired.append(old_folder)
    written.data_changed = True


def _apply_changes(conn: Connection, rid: int, path: Path, items: Any, peer: str = "") -> int:
    """The versions of changes.json applied to the GeoPackage at ``path`` (a copy not yet in
    use), each as the version it was there (its uuid, who, when), numbered here; a version known
    here already is skipped. A feature added there gets a new id here (its id there may be
    taken), remembered for ``peer`` so that its later changes find it. Returns the last number
    applied."""
    if not isinstance(items, list):
        raise ValueError("changes.json is not a list of versions.")
    last = 0
    fids = packages.fid_map(conn, rid, peer)
    added: dict[int, int] = {}
    for item in items:
        if not isinstance(item, dict) or versions.by_uuid(conn, item.get("uuid") or "") is not None:
            continue
        pairs = [_change(c, fids) for c in item.get("changes") or []]
        todo = [change for change, _ in pairs]
        user = package_writes.user_id(conn, item.get("username"))

        def reserve(item=item, user=user) -> gpkg_edit.Reserved:
            row = versions.add(conn, rid, kind=item.get("kind") or "data", via=item.get("via") or VIA, user_id=user,
                               username=item.get("username"), summary=item.get("summary") or {},
                               version_uuid=item.get("uuid") or None, created=item.get("created") or None)
            return gpkg_edit.Reserved(row["number"], row["uuid"], row["created"], user, item.get("username"))

        applied = gpkg_edit.apply(path, todo, reserve=reserve, via=item.get("via") or VIA,
                                  kind=item.get("kind") or "data")
        for there, here in zip([fid for change, fid in pairs if isinstance(change, gpkg_edit.Insert)],
                               applied.inserted):
            if there is not None:
                fids[there] = added[there] = here
        last = applied.number
    packages.add_fids(conn, rid, peer, added)
    return last


def _change(item: dict[str, Any], fids: dict[int, int]) -> tuple[gpkg_edit.Insert | gpkg_edit.Update | gpkg_edit.Delete,
                                                               int | None]:
    """One feature change of changes.json (geo/gpkg_edit.py ``data_changes``'s shape, geometries
    in longitude/latitude) as an edit, with the feature's id there. An insert takes a new id
    here; a change of a feature added there names it by the id it was given here."""
    import shapely.geometry

    op, there = item.get("op"), item.get("fid")
    fid = fids.get(there, there)
    after = item.get("after") or {}
    geometry = after.get("geometry")
    shape = shapely.geometry.shape(geometry) if geometry else None
    if op == "insert":
        return gpkg_edit.Insert(dict(after.get("properties") or {}), shape, None, None), there
    if op == "update":
        return gpkg_edit.Update(fid, dict(after.get("properties") or {}), shape, "geometry" in after, None), there
    if op == "delete":
        return gpkg_edit.Delete(fid), there
    raise ValueError(f"changes.json: {op!r} is not an insert, an update or a delete.")


# -- the whole import, inside one write transaction -----------------------------------------------------------
@dataclass
class Done:
    """What ``commit`` did: the report, and what is left for after the commit."""

    report: dict[str, Any]
    retired: list[Path] = field(default_factory=list)
    data_changed: list[int] = field(default_factory=list)
    edited: list[tuple[int, Path, int]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


def commit(conn: Connection, manifest: dict[str, Any], signer: str | None, records: dict[str, dict[str, Any]],
           staged: dict[str, str], *, user_id: int, files_dir: Path,
           note: Callable[[list[str]], None] | None = None) -> Done:
    """Write the package: plan again (things may have changed since it was staged), then each
    resource in a savepoint of its own, the links between them, the deletions, and the sync
    points. ``staged``: the folder each resource's members were extracted to, by uuid."""
    items = plan(conn, manifest, user_id)
    package_id = manifest["id"]
    ours = packages.our_id(conn)
    exported = packages.get(conn, package_id)
    # a package of ours (or one this catalogue exported) leaves the sync points as they are
    writes = (manifest["catalogue"]["id"] != ours or bool(manifest.get("base"))) and not (
        exported is not None and exported["direction"] == "export")
    if writes:
        packages.record_import(conn, package_id, maker=manifest["catalogue"]["id"], base=manifest.get("base"),
                               user_id=user_id, manifest=manifest)
    done = Done({})
    notes: list[str] = []
    viewer = access.viewer_of(conn, user_id)
    for item in items:
        record = records.get(item.uuid)
        folder = Path(staged[item.uuid]) if item.uuid in staged else None
        written: Written | None = None
        try:
            with savepoint(conn):
                if item.deletion and item.outcome == "deleted":
                    from catalogue_app.services import resources as resource_service

                    resource_service.delete(conn, viewer, item.pk)
                    done.deleted.append(item.uuid)
                elif item.outcome == "created":
                    if folder is None and record is not None and any(
                            (record.get(k) or {}).get("files") for k in ("dataset", "document")):
                        raise ValueError("Its files were not read out of the package (it changed here while the "
                                         "package was read); import the package again.")
                    written = create_from_record(conn, record, folder, files_dir=files_dir, importer_id=user_id,
                                                 note=note)
                    item.pk = written.resource_id
                elif item.outcome == "updated":
                    if folder is None:
                        raise ValueError("It was not read out of the package (it changed here while the package "
                                         "was read); import the package again.")
                    written = apply_update(conn, item.pk, record, folder, files_dir=files_dir, by_user_id=user_id,
                                           peer=manifest["catalogue"]["id"], note=note)
                elif item.outcome == "conflicts":
                    _set_aside(conn, package_id, record, item, folder, files_dir)
                if writes:
                    _sync_point(conn, package_id, item)
        except Exception as exc:  # that resource alone fails; the others stand
            if written is not None:
                written.undo()
            log.info("package %s: %s failed: %s", package_id, item.uuid, exc, exc_info=True)
            item.outcome, item.message = "failed", f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)
            if writes:
                _sync_point(conn, package_id, item)
            continue
        if written is not None:
            notes += [f"{item.title or item.uuid}: {n}" for n in written.notes]
            done.retired += written.retired
            if written.data_changed and item.resource_type == "dataset":
                done.data_changed.append(written.resource_id)
            if written.edited is not None:
                done.edited.append((written.resource_id, *written.edited))
    for item in items:  # links between resources, once all of them are here
        if item.outcome in ("created", "updated") and records.get(item.uuid):
            missing = package_writes.link_resources(conn, item.pk, records[item.uuid].get("linked_resources") or [])
            notes += [f"{item.title or item.uuid}: {n}" for n in missing]
    done.report = report_of(manifest, signer, items, dry_run=False, notes=notes)
    if writes:
        packages.set_report(conn, package_id, done.report)
    return done


def _sync_point(conn: Connection, package_id: str, item: Item) -> None:
    """The member row of the resource: what both sides agree on after this import."""
    if item.again:
        return
    rid = item.pk if item.outcome != "deleted" else None
    local = package_writes.latest_version(conn, rid) if rid is not None else 0
    if item.agreed is not None:
        local = item.agreed
    local_data = package_writes.data_version(conn, rid) if rid is not None else 0
    packages.set_member(conn, package_id, item.uuid, local_version=local, local_data_version=local_data,
                        peer_version=item.version, peer_data_version=item.data_version, data=item.data,
                        outcome=item.outcome if item.outcome != "conflicts" else "conflict")


def _set_aside(conn: Connection, package_id: str, record: dict[str, Any] | None, item: Item, folder: Path | None,
               files_dir: Path) -> None:
    """The incoming copy kept aside (packages/conflicts.py): ours stays as it is."""
    from catalogue_app.packages import conflicts  # (it calls this module back to resolve)

    conflicts.set_aside(conn, package_id, record or {}, item.pk, item.kind or "changed_both", folder,
                        files_dir=files_dir)


def after(done: Done, db, files_dir: Path) -> None:
    """Once the import has committed: the folders it retired go, the layer caches and the
    thumbnails of the datasets whose data it changed follow them."""
    from catalogue_app.geo import layer_cache
    from catalogue_app.jobs import thumbnails

    for folder in done.retired:
        files.remove(folder)
    for rid, path, number in done.edited:
        try:
            layer_cache.CACHE.advance(path, number)
        except Exception:
            log.warning("the layer held for %s could not be patched", path, exc_info=True)
    for uuid in done.deleted:
        files.remove_resource_files(files_dir, uuid)
        thumbnails.remove_unused(db, files_dir.parent, uuid)
    for rid in done.data_changed:
        thumbnails.redraw_after_quiet(db, files_dir, rid, quiet=0)

