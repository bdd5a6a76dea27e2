"""A small package writer for the import's tests, built from the format (docs/package-format.md,
/work/briefs/packages.md): it reads a catalogue's data folder (its SQLite file, files/ and
thumbs/) as the export would, writes the members and the manifest with archive.PackageWriter,
and records the export's sync points in that catalogue (as an export does). It stands in for the
export until that part is merged; the import under test does not use it."""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
import uuid as uuids
from pathlib import Path
from typing import Any

from catalogue_app import files
from catalogue_app.geo import gpkg_edit
from catalogue_app.geo.package_data import Replaced, write_changes
from catalogue_app.packages.archive import PackageWriter
from catalogue_app.store import package_exports
from catalogue_app.store.package_records import record_of, style_bodies, uploaded_iso

ORDER = {"dataset": 0, "document": 1, "map": 2}


def _connect(data_dir: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(data_dir / "catalogue.sqlite3", timeout=30, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def make_package(data_dir: Path, out: Path, *, uuids_: list[str] | None = None, base: str | None = None,
                 made_by: str = "admin", package_id: str | None = None, record: bool = True) -> dict[str, Any]:
    """Write a package of the catalogue in ``data_dir`` to ``out``: the resources ``uuids_`` (all
    of them when None), or with ``base`` what changed since that package (records with the
    versions after it, a dataset's feature edits as changes.json, deletions). Returns the manifest."""
    conn = _connect(data_dir)
    work = out.parent / f"work-{uuids.uuid4().hex[:8]}"
    work.mkdir(parents=True)
    try:
        maker = package_exports.catalogue_id(conn)
        since = package_exports.since(conn, base) if base else None
        if since is not None:
            ids = sorted(set(since["changed"]) | set(since["new"]))
        elif uuids_ is None:
            ids = [r[0] for r in conn.execute("SELECT id FROM resources ORDER BY id")]
        else:
            ids = [conn.execute("SELECT id FROM resources WHERE uuid = ?", (u,)).fetchone()[0] for u in uuids_]
        package_id = package_id or str(uuids.uuid4())
        entries, members = [], []
        with PackageWriter(out, work) as w:
            rows = [conn.execute("SELECT id, resource_type FROM resources WHERE id = ?", (i,)).fetchone() for i in ids]
            for rid, kind in sorted(rows, key=lambda r: (ORDER.get(r[1], 3), r[0])):
                changed = (since or {}).get("changed", {}).get(rid)
                entry, data = _resource(conn, w, data_dir, work, rid, changed)
                entries.append(entry)
                version, data_version = package_exports.current_versions(conn, rid)
                members.append((entry["uuid"], version, data_version, data))
            manifest = {"id": package_id, "created": dt.datetime.now(dt.timezone.utc).isoformat(),
                        "catalogue": {"id": maker, "url": "http://office.example"}, "made_by": made_by,
                        "cut": {"q": None, "types": [], "keywords": [], "bbox": None, "ids": ids, "clip": False,
                                "query": None},
                        "base": base, "resources": entries, "deleted": (since or {}).get("deleted", []),
                        "left_out": []}
            size = w.finish(manifest, None)
        if record:
            conn.execute("BEGIN IMMEDIATE")
            package_exports.record_export(conn, package_id=package_id, user_id=None, created=manifest["created"],
                                          maker=maker, base=base, file_name=out.name, size=size, manifest=manifest,
                                          report={}, members=members)
            conn.execute("COMMIT")
        return manifest
    finally:
        conn.close()
        shutil.rmtree(work, ignore_errors=True)


def _resource(conn, w: PackageWriter, data_dir: Path, work: Path, rid: int,
              changed: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
    rec = record_of(conn, rid, history_after=changed["base_version"] if changed else 0)
    uuid = rec["uuid"]
    prefix = f"resources/{uuid}/"
    data = "none"
    if rec["dataset"] is not None:
        folder = data_dir / "files" / conn.execute("SELECT folder FROM datasets WHERE resource_id = ?",
                                                   (rid,)).fetchone()[0]
        working = files.working_copy(folder)
        if working is not None and changed is not None and working.suffix == ".gpkg":
            try:
                write_changes(working, changed["local_data_version"], work / f"{uuid}-changes.json")
                w.add_file(prefix + "changes.json", work / f"{uuid}-changes.json")
                data = "changes"
            except Replaced:  # replaced since: the whole data travel
                pass
        if working is not None and data == "none":
            copy = work / f"{uuid}{working.suffix}"
            if working.suffix == ".gpkg":
                gpkg_edit.copy_database(working, copy, history=True)
            else:
                shutil.copyfile(working, copy)
            member = f"{prefix}data/{rec['dataset']['name']}{working.suffix}"
            w.add_file(member, copy)
            rec["dataset"]["files"] = [{"name": f"working/data{working.suffix}", "mime_type": None, "member": member}]
            data = "whole"
        for name, body in style_bodies(conn, rid).items():
            w.add_bytes(f"{prefix}styles/{name}.sld", body)
    if rec["document"] is not None and rec["document"].get("file_name"):
        name = rec["document"]["file_name"]
        member = f"{prefix}data/{name}"
        w.add_file(member, data_dir / "files" / uuid / name)
        rec["document"]["files"] = [{"name": name, "mime_type": rec["document"].get("mime_type"), "member": member}]
        data = "whole"
    url = conn.execute("SELECT thumbnail_url FROM resources WHERE id = ?", (rid,)).fetchone()[0] or ""
    thumb = data_dir / "thumbs" / url.rsplit("/", 1)[-1] if url.startswith("/uploaded/thumbs/") else None
    if rec["thumbnail"] and thumb is not None and thumb.is_file():
        w.add_file(rec["thumbnail"], thumb)
    else:
        rec["thumbnail"] = None
    iso = uploaded_iso(conn, rid)
    if iso is not None and rec["iso_metadata"]:
        w.add_bytes(rec["iso_metadata"], iso)
    w.add_json(prefix + "record.json", rec)
    version = rec["version"]
    return ({"uuid": uuid, "resource_type": rec["resource_type"], "title": rec["fields"].get("title"),
             "version": version["number"], "data_version": version["data_version"],
             "base_version": changed["base_version"] if changed else None, "data": data,
             "record": prefix + "record.json"}, data)
