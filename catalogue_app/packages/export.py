"""Exporting a package: what a search selects (the resource list's own query), written member by
member into one package file (docs/package-format.md), whole, clipped to an area, or "since" a
package exported or imported here before.

What was asked (the body of ``POST /api/v2/packages/exports``, the options of ``catalogue package
export``) is checked by services/package_exports.py; ``build`` writes the package file (slow work, no transaction: the
job's stage, or the command); ``record`` stores the export and its sync points in the
transaction that keeps it. The same functions serve the job (jobs/package_export.py) and the
command line (packages/cli.py).
"""

from __future__ import annotations

import math
import re
import uuid as uuid_module
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalogue_app import clock, files
from catalogue_app.geo import package_data
from catalogue_app.geo.errors import GeoError
from catalogue_app.packages import keys
from catalogue_app.packages.archive import PackageWriter
from catalogue_app.reads import packages as package_reads
from catalogue_app.services.package_exports import FOLDER, Cut, resource_query
from catalogue_app.store import package_exports, package_records, users
from catalogue_app.store.db import Database

THUMBS_PREFIX = "/uploaded/thumbs/"
THUMB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.(png|jpg)")
STYLE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


# -- writing the package --------------------------------------------------------------------------
@dataclass
class Built:
    """A package written, waiting to be recorded."""

    package_id: str
    path: Path
    size: int
    created: str
    manifest: dict[str, Any]
    report: dict[str, Any]
    members: list[tuple[str, int, int, str]]  # (uuid, version, data version, data)


def _member(uuid: str, name: str) -> str:
    return f"{package_records.member_prefix(uuid)}{name}"


def build(db: Database, *, user_id: int, cut: Cut, base_url: str, data_dir: Path, files_dir: Path, target: Path,
          workspace: Path, sign: bool, progress: Callable[[int], None] = lambda p: None) -> Built:
    """Write the package the cut selects for user ``user_id`` to ``target`` (its temporary file in
    ``workspace``, on the same disk); Invalid for a since package whose base is unknown here."""
    query, tkeyword_ids, force_and = resource_query(cut, user_id)
    chosen = db.read_sync(package_reads.selection, user_id, query, tkeyword_ids, force_and, cut.clip, cut.since)
    user = db.read_sync(users.get, user_id)
    maker = db.read_sync(package_exports.catalogue_id)
    package_id = str(uuid_module.uuid4())
    created = clock.now()
    entries: list[dict[str, Any]] = []
    members: list[tuple[str, int, int, str]] = []
    left_out = list(chosen.left_out)
    counts: dict[str, int] = {}
    scratch = workspace / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    with PackageWriter(target, workspace) as writer:
        total = max(1, len(chosen.items))
        for n, item in enumerate(chosen.items):
            written = _resource(db, writer, item, user_id, cut, base_url, data_dir, files_dir, scratch, left_out)
            if written is None:  # gone or hidden since it was selected
                continue
            record, data = written
            counts[data] = counts.get(data, 0) + 1
            entries.append({"uuid": item.uuid, "resource_type": item.resource_type, "title": item.title,
                            "version": record["version"]["number"], "data_version": record["version"]["data_version"],
                            "base_version": item.base_version, "data": data,
                            "record": _member(item.uuid, "record.json")})
            members.append((item.uuid, record["version"]["number"], record["version"]["data_version"], data))
            progress((n + 1) * 95 // total)
        manifest = {"id": package_id, "created": created,
                    "catalogue": {"id": maker, "url": base_url, "key": None},
                    "made_by": user["username"] if user else None, "cut": cut.manifest(), "base": cut.since,
                    "resources": entries, "deleted": chosen.deleted, "left_out": left_out}
        signer = keys.signer(data_dir) if sign else None
        size = writer.finish(manifest, signer)
    files.remove(scratch)
    report = {"resources": len(entries), "data": counts, "deleted": len(chosen.deleted), "left_out": left_out,
              "base": cut.since, "signed_by": signer.fingerprint if signer else None, "size": size}
    return Built(package_id, target, size, created, manifest, report, members)


def _resource(db: Database, writer: PackageWriter, item: package_reads.Item, user_id: int, cut: Cut, base_url: str,
              data_dir: Path, files_dir: Path, scratch: Path, left_out: list[dict[str, Any]]) -> tuple[dict, str] | None:
    """Write one resource's members, its record last; its record and how its data travelled."""
    history_after = 0
    if item.base_version is not None:  # since packages carry the versions after the base
        history_after = db.read_sync(package_exports.local_version, cut.since, item.uuid)
    record = db.read_sync(package_records.record_of, item.id, history_after)
    metadata = db.read_sync(package_reads.metadata_json, user_id, base_url, item.id)
    if record is None or metadata is None:
        return None
    uuid = item.uuid
    writer.add_bytes(_member(uuid, "metadata.json"), metadata)
    iso = db.read_sync(package_reads.iso_document, user_id, base_url, uuid)
    if iso is not None:
        writer.add_bytes(_member(uuid, "iso19139.xml"), iso)
    if record["iso_metadata"]:
        uploaded = db.read_sync(package_records.uploaded_iso, item.id)
        if uploaded is None:
            record["iso_metadata"] = None
        else:
            writer.add_bytes(record["iso_metadata"], uploaded)
    record["thumbnail"] = _thumbnail(db, writer, item, data_dir)
    if record["styles"]:
        bodies = db.read_sync(package_records.style_bodies, item.id)
        for style in record["styles"]:
            style["sld"] = _member(uuid, f"styles/{STYLE_NAME.sub('_', style['name'])}.sld")
            writer.add_bytes(style["sld"], bodies.get(style["name"], b""))
    data = item.data
    if item.resource_type == "dataset" and record["dataset"] is not None:
        data = _dataset_data(db, writer, item, record, cut, files_dir, scratch, left_out)
    elif item.resource_type == "document" and record["document"] is not None and data == "whole":
        data = _document_file(writer, item, record, files_dir, left_out)
    writer.add_json(_member(uuid, "record.json"), record)
    return record, data


def _thumbnail(db: Database, writer: PackageWriter, item: package_reads.Item, data_dir: Path) -> str | None:
    url = db.read_sync(package_exports.kinds, [item.id]).get(item.id)
    url = url["thumbnail_url"] if url is not None else None
    if not url or not url.startswith(THUMBS_PREFIX) or not THUMB_NAME.fullmatch(url[len(THUMBS_PREFIX):]):
        return None
    name = url[len(THUMBS_PREFIX):]
    path = data_dir / "thumbs" / name
    if not path.is_file():
        return None
    member = _member(item.uuid, f"thumbnail.{name.rsplit('.', 1)[1]}")
    try:
        writer.add_file(member, path)
    except FileNotFoundError:  # drawn again meanwhile
        return None
    return member


def _dataset_data(db: Database, writer: PackageWriter, item: package_reads.Item, record: dict, cut: Cut,
                  files_dir: Path, scratch: Path, left_out: list[dict[str, Any]]) -> str:
    """Write a dataset's data as ``item.data`` says (a since package: its feature edits when only
    those happened, else the whole data, or none when the data did not change); how it travelled."""
    data = item.data
    if data not in ("whole", "clipped", "changes"):
        return data
    target = db.read_sync(package_exports.data_target, item.id)
    working = files.working_copy(files_dir / target["folder"]) if target is not None and target["folder"] else None
    if working is None:
        left_out.append({"uuid": item.uuid, "title": item.title,
                         "reason": "its data is missing on the server: travels as metadata only"})
        return "metadata_only"
    vector = working.suffix == ".gpkg"
    uuid = item.uuid
    if data == "changes":
        if item.data_after is not None and item.data_after >= record["version"]["data_version"]:
            return "none"  # the data did not change since the base
        if vector:
            changes = scratch / f"{uuid}-changes.json"
            try:
                package_data.write_changes(working, item.data_after or 0, changes)
                writer.add_file(_member(uuid, "changes.json"), changes)
                return "changes"
            except package_data.Replaced:
                pass
            finally:
                changes.unlink(missing_ok=True)
        data = "whole"
    name = "data.gpkg" if vector else "data.tif"
    member = _member(uuid, f"data/{name}")
    part = working if data == "whole" and not vector else scratch / f"{uuid}-{name}"
    try:
        if data == "clipped":
            if vector:
                package_data.clip_vector(working, part, cut.bbox)
            elif not package_data.clip_raster(working, part, cut.bbox):
                left_out.append({"uuid": uuid, "title": item.title,
                                 "reason": "the raster lies outside the area: travels as metadata only"})
                return "metadata_only"
            record["dataset"]["clip"] = list(cut.bbox)
            _clipped_extent(record, part)
        elif vector:
            package_data.copy_vector(working, part, history=True)
        writer.add_file(member, part)
    except (GeoError, FileNotFoundError) as exc:
        left_out.append({"uuid": uuid, "title": item.title,
                         "reason": f"its data could not be read ({exc}): travels as metadata only"})
        return "metadata_only"
    finally:
        if part != working:
            part.unlink(missing_ok=True)
    relative = working.relative_to(files_dir / target["folder"]).as_posix()
    record["dataset"]["files"] = [{"name": relative, "mime_type": "application/geopackage+sqlite3" if vector
                                   else "image/tiff", "member": member}]
    return data


def _clipped_extent(record: dict, data: Path) -> None:
    """A clipped dataset's record gives the extent of the data it carries, not of the whole."""
    found = package_data.extent_of(data)
    if found is not None:
        native, lonlat = found
        record["fields"].update(zip(("bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1"), native))
        record["fields"].update(zip(("ll_x0", "ll_y0", "ll_x1", "ll_y1"), lonlat))


def _document_file(writer: PackageWriter, item: package_reads.Item, record: dict, files_dir: Path,
                   left_out: list[dict[str, Any]]) -> str:
    document = record["document"]
    name = document.get("file_name")
    path = files_dir / item.uuid / name if name else None
    if path is None or not path.is_file():
        left_out.append({"uuid": item.uuid, "title": item.title,
                         "reason": "its file is missing on the server: travels as metadata only"})
        return "metadata_only"
    member = _member(item.uuid, f"data/{Path(name).name}")
    writer.add_file(member, path)
    document["files"] = [{"name": name, "mime_type": document.get("mime_type"), "member": member}]
    return "whole"


def record(conn, built: Built, user_id: int | None, file_name: str | None) -> None:
    """Store the export (its row, its sync points) in the caller's transaction."""
    package_exports.record_export(conn, package_id=built.package_id, user_id=user_id, created=built.created,
                                  maker=built.manifest["catalogue"]["id"], base=built.manifest["base"],
                                  file_name=file_name, size=built.size, manifest=built.manifest,
                                  report=built.report, members=built.members)


def folder(data_dir: Path) -> Path:
    return data_dir / FOLDER


def file_name(package_id: str) -> str:
    return f"{package_id}.zip"


def size_text(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{math.ceil(n / 1e3)} kB"
