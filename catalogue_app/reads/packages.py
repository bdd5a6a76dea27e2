"""Field packages as a user sees them: what an export selects (and how each resource's data
travels), its size estimate, the packages they exported or imported, one with its report, and
the file of one to download. Also the two documents a package holds for each resource as this
catalogue shows them: the API's JSON and the ISO 19139 record."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from catalogue_app import files
from catalogue_app.services import access
from catalogue_app.services import package_exports as package_service
from catalogue_app.services.errors import Invalid, NotFound
from catalogue_app.store import Connection, package_exports, resources
from catalogue_app.store.resources import ResourceQuery, Viewer

ORDER = {"dataset": 0, "document": 1}  # then maps, geoapps and the rest: what refers comes after what it names
NO_DOWNLOAD = "no download permission: travels as metadata only"
THUMBS_PREFIX = "/uploaded/thumbs/"


@dataclass
class Item:
    """One resource an export carries: how its data travels, and for a since package the
    version the base recorded and the data version after which its feature edits travel."""

    id: int
    uuid: str
    resource_type: str
    title: str
    data: str  # whole | clipped | changes | metadata_only | remote | none
    base_version: int | None = None
    data_after: int | None = None  # since packages: the data version the base recorded


@dataclass
class Selection:
    items: list[Item] = field(default_factory=list)
    left_out: list[dict[str, Any]] = field(default_factory=list)
    deleted: list[dict[str, Any]] = field(default_factory=list)


def selection(conn: Connection, user_id: int, query: ResourceQuery | None, tkeyword_ids: list[int], force_and: bool,
              clip: bool, since: str | None = None) -> Selection:
    """What an export by user ``user_id`` carries: the resources ``query`` selects that they may
    view (None: no search; a since export then takes every change), the datasets their maps show
    that they may view, each with how its data travels (data only where they may download; else
    metadata only, named in ``left_out``). With ``since``, only what changed here since that
    package (Invalid when this catalogue never exported or imported it)."""
    viewer = access.viewer_of(conn, user_id)
    if query is not None and tkeyword_ids:
        query.tkeyword_groups = resources.tkeyword_groups(conn, tkeyword_ids, force_and)
    changes = None
    if since is not None:
        changes = package_exports.since(conn, since)
        if changes is None:
            raise Invalid(f"Unknown package {since!r}: this catalogue never exported or imported it, so "
                          "there is nothing to compare with. Export a whole package instead.")
        wanted = set(changes["changed"]) | set(changes["new"])
        if query is not None:
            wanted &= set(resources.ids_matching(conn, viewer, query))
        ids = sorted(rid for rid in wanted if resources.get_visible(conn, viewer, rid) is not None)
    else:
        ids = resources.ids_matching(conn, viewer, query or ResourceQuery())
        shown = set(ids)
        kinds = package_exports.kinds(conn, ids)
        layers = package_exports.map_datasets(conn, [i for i in ids if kinds[i]["resource_type"] == "map"])
        ids += [d for d in layers if d not in shown and resources.get_visible(conn, viewer, d) is not None]
    kinds = package_exports.kinds(conn, ids)
    out = Selection(deleted=changes["deleted"] if changes else [])
    for rid in sorted(ids, key=lambda i: (ORDER.get(kinds[i]["resource_type"], 2), i)):
        row = kinds[rid]
        data = _data(conn, viewer, rid, row, clip)
        if data == "metadata_only":
            out.left_out.append({"uuid": row["uuid"], "title": row["title"], "reason": NO_DOWNLOAD})
        item = Item(rid, row["uuid"], row["resource_type"], row["title"], data)
        if changes is not None and rid in changes["changed"]:
            point = changes["changed"][rid]
            item.base_version = point["base_version"]
            if data in ("whole", "clipped") and row["resource_type"] == "dataset":
                item.data_after = point["local_data_version"]
                item.data = "changes"  # or whole, or none: the export looks at the data versions
        out.items.append(item)
    return out


def _data(conn: Connection, viewer: Viewer, rid: int, row: Any, clip: bool) -> str:
    kind = row["resource_type"]
    if kind == "dataset":
        if row["remote_layer"] or (row["sourcetype"] or "").upper() == "REMOTE":
            return "remote"
        target = package_exports.data_target(conn, rid)
        if target is None or not target["folder"]:
            return "none"
        if not access.may(conn, viewer, resources.get_visible(conn, viewer, rid), access.DOWNLOAD):
            return "metadata_only"
        return "clipped" if clip else "whole"
    if kind == "document":
        doc = package_exports.document_file(conn, rid)
        if doc is None or (not doc["file_name"] and not doc["doc_url"]):
            return "none"
        if doc["doc_url"]:
            return "remote"
        if not access.may(conn, viewer, resources.get_visible(conn, viewer, rid), access.DOWNLOAD):
            return "metadata_only"
        return "whole"
    return "none"


class Estimate(msgspec.Struct):
    resources: int
    bytes: int
    left_out: int


def estimate(conn: Connection, user_id: int, body: dict[str, Any], files_dir: Path, data_dir: Path) -> Estimate:
    """How many resources an export asked with ``body`` would carry, roughly how many bytes, and
    how many travel without their data (a clipped dataset counted by the share of its extent the
    area covers). Invalid as the export itself would refuse the request."""
    cut = package_service.export_request(conn, user_id, body)
    query, tkeyword_ids, force_and = package_service.resource_query(cut, user_id)
    bbox, clip, since, thumbs_dir = cut.bbox, cut.clip, cut.since, data_dir / "thumbs"
    found = selection(conn, user_id, query, tkeyword_ids, force_and, clip, since)
    size = 0
    for item in found.items:
        size += 4096  # record, metadata and ISO documents
        if item.data in ("whole", "clipped", "changes"):
            size += _data_size(conn, item, files_dir, bbox if item.data == "clipped" else None)
        thumb = package_exports.kinds(conn, [item.id])[item.id]["thumbnail_url"] or ""
        if thumb.startswith(THUMBS_PREFIX):
            path = thumbs_dir / thumb[len(THUMBS_PREFIX):]
            size += path.stat().st_size if path.is_file() else 0
    return Estimate(len(found.items), size, len(found.left_out))


def _data_size(conn: Connection, item: Item, files_dir: Path, bbox: tuple[float, float, float, float] | None) -> int:
    if item.resource_type == "document":
        doc = package_exports.document_file(conn, item.id)
        path = files_dir / doc["uuid"] / doc["file_name"] if doc and doc["file_name"] else None
        return path.stat().st_size if path is not None and path.is_file() else 0
    target = package_exports.data_target(conn, item.id)
    path = files.working_copy(files_dir / target["folder"]) if target and target["folder"] else None
    if path is None:
        return 0
    size = path.stat().st_size
    row = resources.rows_by_ids(conn, [item.id])
    if bbox is not None and row and row[0]["ll_x0"] is not None:
        r = row[0]
        area = max(0.0, (r["ll_x1"] - r["ll_x0"]) * (r["ll_y1"] - r["ll_y0"]))
        inter_x = max(0.0, min(r["ll_x1"], bbox[2]) - max(r["ll_x0"], bbox[0]))
        inter_y = max(0.0, min(r["ll_y1"], bbox[3]) - max(r["ll_y0"], bbox[1]))
        if area > 0:
            size = int(size * min(1.0, inter_x * inter_y / area))
    return size


# -- the documents a package holds for each resource ----------------------------------------------
RESOURCES_FAMILY_ARGS = ("resources", "resource", "resources", (), "ResourceBase")


def _caller(conn: Connection, user_id: int):
    from catalogue_app.api.middleware.auth import Caller
    from catalogue_app.store import users

    row = users.get(conn, user_id)
    return Caller.from_row(row) if row is not None else Caller(None, "AnonymousUser")


def metadata_json(conn: Connection, user_id: int, base: str, rid: int) -> bytes | None:
    """The resource as ``GET /api/v2/resources/{pk}`` shows it to the user (its "resource")."""
    from catalogue_app.reads.resources import Family, one

    viewer = access.viewer_of(conn, user_id)
    found = one(conn, Family(*RESOURCES_FAMILY_ARGS), rid, _caller(conn, user_id), viewer, base)
    if found is None:
        return None
    item = found[0]
    return bytes(item) if isinstance(item, msgspec.Raw) else msgspec.json.encode(item)


def iso_document(conn: Connection, user_id: int, base: str, uuid: str) -> bytes | None:
    """The resource's ISO 19139 record as the catalogue's CSW writes it for the user."""
    from lxml import etree

    from catalogue_app.api.ogc.csw import formats
    from catalogue_app.reads import csw

    def write(records: list[dict[str, Any]]) -> bytes:
        return etree.tostring(formats.iso(records[0]), xml_declaration=True, encoding="UTF-8", pretty_print=True)

    return csw.by_ids(conn, _caller(conn, user_id), access.viewer_of(conn, user_id), base, [uuid], write)


# -- the packages a user exported or imported -----------------------------------------------------
class PackageItem(msgspec.Struct):
    id: str
    direction: str
    created: str
    user: str | None
    maker: str
    base: str | None
    size: int | None
    resources: int
    download_url: str | None
    report: dict[str, Any]


class PackageList(msgspec.Struct):
    total: int
    page: int
    page_size: int
    packages: list[PackageItem]


def _item(conn: Connection, row: Any, base: str) -> PackageItem:
    downloadable = row["direction"] == "export" and row["file_name"]
    return PackageItem(row["id"], row["direction"], row["created"], row["username"], row["maker"], row["base"],
                       row["size"], package_exports.member_count(conn, row["id"]),
                       f"{base}/api/v2/packages/{row['id']}/download" if downloadable else None,
                       json.loads(row["report"] or "{}"))


def packages(conn: Connection, user_id: int, is_superuser: bool, base: str, page: int, page_size: int) -> PackageList:
    """The packages the user exported or imported (a superuser: everyone's), newest first."""
    total, rows = package_exports.listed(conn, None if is_superuser else user_id, page_size, (page - 1) * page_size)
    return PackageList(total, page, page_size, [_item(conn, r, base) for r in rows])


def _own(conn: Connection, user_id: int, is_superuser: bool, package_id: str) -> Any:
    row = package_exports.get(conn, package_id)
    if row is None or not (is_superuser or row["user_id"] == user_id):
        raise NotFound("Package")
    return row


def package(conn: Connection, user_id: int, is_superuser: bool, base: str, package_id: str) -> PackageItem:
    """One package of the user's (a superuser: anyone's); NotFound for others."""
    return _item(conn, _own(conn, user_id, is_superuser, package_id), base)


def download_name(conn: Connection, user_id: int, is_superuser: bool, package_id: str) -> str:
    """The file name (under packages/) of a package the user exported (a superuser: anyone's);
    NotFound for others, and for a package without a file here."""
    row = _own(conn, user_id, is_superuser, package_id)
    if row["direction"] != "export" or not row["file_name"]:
        raise NotFound("Package", "This package has no file here to download.")
    return row["file_name"]
