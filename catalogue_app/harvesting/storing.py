"""A harvested record made into a local resource, or the one made before updated in place.

The record's data decide what the resource is: a dataset whose files are copied here and
imported as an upload is (sourcetype COPYREMOTE), a dataset shown through a remote WMS, a
document at a remote address, a document whose file is copied here (REMOTE), or a document
with metadata only. Then its metadata, keywords, category, extent and remote links are
written, and its thumbnail fetched. Nothing here reads the network but through the worker's
HTTP client, and every write goes through the database's writer.
"""

from __future__ import annotations

import logging
import os
import uuid as uuids
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from catalogue_app import files
from catalogue_app.harvesting import http as remote
from catalogue_app.harvesting.types import (
    DataFiles,
    DocumentFile,
    Harvested,
    HarvestError,
    RemoteDocument,
    RemoteLayer,
)
from catalogue_app.jobs.folders import Folders
from catalogue_app.services import history
from catalogue_app.store import documents, harvesters, origins, remote_layers, resource_writes, resources
from catalogue_app.store.db import Database

log = logging.getLogger("catalogue.harvesting")
HARVEST = history.By(None, history.HARVEST)  # a harvester's update: made by the catalogue, no user
MAX_THUMBNAIL = 5 * 1024 * 1024
TEXT_VALUES = ("title", "abstract", "attribution", "purpose", "edition", "constraints_other",
               "supplemental_information", "data_quality_statement", "date", "date_type", "language",
               "maintenance_frequency", "doi")


def changes(conn, h: Harvested) -> dict[str, Any]:
    """The record's metadata as the resource writes take them."""
    values = {k: v for k, v in h.values.items() if k in TEXT_VALUES and isinstance(v, str)}
    if "title" in values:
        values["title"] = values["title"][:255] or "Untitled"
    if h.category:
        category = resource_writes.lookup_id(conn, "categories", "identifier", h.category)
        if category is not None:
            values["category_id"] = category
    if h.ll_bbox and len(h.ll_bbox) == 4 and all(isinstance(v, int | float) for v in h.ll_bbox):
        x0, y0, x1, y1 = h.ll_bbox
        values.update(ll_x0=x0, ll_y0=y0, ll_x1=x1, ll_y1=y1)
    out: dict[str, Any] = {"values": values, "keywords": [k[:100] for k in h.keywords if isinstance(k, str)][:200]}
    if "ll_x0" in values:
        out["regions_from_extent"] = True
    return out


def store(db: Database, folders: Folders, http, harvester: Any, item: Any, h: Harvested) -> int:
    """The local resource of ``item`` (a harvestable_resources row) made or updated from ``h``."""
    existing = item["resource_id"]
    if existing is not None and not db.read_sync(resources.exists, existing):
        existing = None
    if existing is None and h.uuid:  # harvested before, by a harvester since deleted: found by its uuid
        existing = db.read_sync(harvesters.harvested_with_uuid, h.uuid)
    owner = harvester["default_owner_id"]
    # What the remote shows everyone is public here too (GeoNode's default permissions); what it
    # showed the harvester's token may be private there: only its owner here sees it.
    public = not harvesters.config_of(harvester).get("token")
    data = _on_the_web(h.data)
    if isinstance(data, DataFiles):
        rid = _import(db, folders, http, owner, existing, h, data, public)
        sourcetype = "COPYREMOTE"
    elif isinstance(data, RemoteLayer):
        rid = db.write_sync(_remote_layer, owner, existing, h, data, public)
        sourcetype = "REMOTE"
    elif isinstance(data, DocumentFile):
        rid = _document_file(db, folders, http, owner, existing, h, data, public)
        sourcetype = "COPYREMOTE"
    else:
        rid = db.write_sync(_document, owner, existing, h, data, public)
        sourcetype = "REMOTE" if data is not None else "LOCAL"
    db.write_sync(_metadata, rid, h, sourcetype, harvester, rid == existing)
    if web_url(h.thumbnail_url):
        _thumbnail(db, folders, http, rid, h.thumbnail_url)
    return rid


def web_url(url: Any) -> str | None:
    """``url`` when it is an http(s) address with a host (never javascript:, data:, file:...)."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return url if parts.scheme.lower() in ("http", "https") and parts.hostname else None


def _on_the_web(data: Any) -> Any:
    """The record's data, every address in it an http(s) one: a remote download that is not is
    left out; a service, document or file that is not fails the record (HarvestError)."""
    if isinstance(data, RemoteLayer):
        address = data.service_url
        data = msgspec.structs.replace(data, download_url=web_url(data.download_url))
    elif isinstance(data, RemoteDocument):
        address = data.doc_url
    elif isinstance(data, DocumentFile):
        address = data.url
    elif isinstance(data, DataFiles):
        address = next((u for u in data.urls if not web_url(u)), data.urls[0] if data.urls else "")
    else:
        return data
    if not web_url(address):
        raise HarvestError(f"The record's data are at {str(address)[:200]!r}, not an http(s) address.")
    return data


def _metadata(conn, rid: int, h: Harvested, sourcetype: str, harvester: Any, updating: bool = False) -> None:
    """The record's metadata written into the resource: an update of one harvested before is a
    metadata version (via "harvest")."""
    with history.recorded(conn, HARVEST, *([rid] if updating else [])):
        resource_writes.apply_changes(conn, rid, changes(conn, h))
    harvesters.set_sourcetype(conn, rid, sourcetype)
    title = h.values.get("title") if isinstance(h.values.get("title"), str) else ""
    origins.record_harvest(conn, rid, harvester, title[:255], web_url(h.page_url))
    remote_layers.set_links(conn, rid, [msgspec.to_builtins(link) for link in h.links if web_url(link.url)])


def _free_uuid(conn, wanted: str | None) -> str:
    """The remote's uuid when no local resource has it, else a new one."""
    if wanted:
        try:
            wanted = str(uuids.UUID(wanted))
        except ValueError:
            wanted = None
    if wanted and resources.id_by_uuid(conn, wanted) is None:
        return wanted
    return str(uuids.uuid4())


def _remote_layer(conn, owner: int, existing: int | None, h: Harvested, data: RemoteLayer, public: bool) -> int:
    if existing is not None and remote_layers.get(conn, existing) is not None:
        with history.recorded(conn, HARVEST, existing):
            remote_layers.update(conn, existing, ll_bbox=h.ll_bbox, service_type=data.service_type,
                                 service_url=data.service_url, layer_name=data.layer_name,
                                 download_url=data.download_url)
        return existing
    if existing is not None:  # was copied before, now shown from the remote: a new record
        resource_writes.delete(conn, existing)
    rid = remote_layers.create(conn, uuid=_free_uuid(conn, h.uuid), owner_id=owner, name=data.layer_name,
                               values=changes(conn, h)["values"], ll_bbox=h.ll_bbox, service_type=data.service_type,
                               service_url=data.service_url, layer_name=data.layer_name,
                               download_url=data.download_url)
    if public:
        resources.grant(conn, rid, ["view_resourcebase", "download_resourcebase"],
                        group_id=resources.ANONYMOUS_GROUP_ID)
    return rid


def _document(conn, owner: int, existing: int | None, h: Harvested, data: RemoteDocument | None,
              public: bool) -> int:
    doc_url = data.doc_url if data is not None else None
    extension = _extension(doc_url) if doc_url else ""
    if existing is not None and documents.get(conn, existing) is not None:
        documents.add(conn, existing, extension=extension or None, doc_url=doc_url)
        return existing
    rid = resource_writes.create(conn, "document", owner, {"uuid": _free_uuid(conn, h.uuid)}, public=public)
    documents.add(conn, rid, extension=extension or None, doc_url=doc_url)
    return rid


def _extension(url: str) -> str:
    path = url.split("?", 1)[0].rsplit("/", 1)[-1]
    return path.rsplit(".", 1)[-1].lower()[:10] if "." in path else ""


def _document_file(db: Database, folders: Folders, http, owner: int, existing: int | None, h: Harvested, data: DocumentFile,
                   public: bool) -> int:
    """A document's file copied into files/<uuid>/ (a new document; an existing one keeps its file)."""
    if existing is not None and db.read_sync(documents.get, existing) is not None:
        return existing
    name = os.path.basename(data.name.replace("\\", "/")).strip().lstrip(".") or "document"
    uuid = db.read_sync(_free_uuid, h.uuid)
    staging = files.claim_workspace(folders.tmp / f"harvest-{uuid}")
    try:
        remote.download(http, data.url, staging / name)
        size = (staging / name).stat().st_size
        final = folders.files / uuid
        os.rename(staging, final)
    except BaseException:
        files.remove(staging)
        raise
    try:
        return db.write_sync(lambda conn: documents.create(
            conn, uuid=uuid, owner_id=owner, changes={"values": {}}, extension=_extension(name),
            file_name=name, size=size, public=public))
    except BaseException:
        files.remove(final)
        raise


def _import(db: Database, folders: Folders, http, owner: int, existing: int | None, h: Harvested, data: DataFiles,
            public: bool) -> int:
    """The dataset's files downloaded and imported as an upload is (its data replaced in place
    when it was harvested before)."""
    from catalogue_app.jobs.imports import ImportFailed, import_now

    exec_id = str(uuids.uuid4())
    workspace = files.claim_workspace(folders.tmp / exec_id)
    try:
        upload = workspace / "upload"
        upload.mkdir()
        names = []
        for url, name in zip(data.urls, data.names, strict=False):
            name = os.path.basename(name.replace("\\", "/")).strip()
            if not name or name.startswith("."):
                raise HarvestError(f"{url}: no usable file name.")
            remote.download(http, url, upload / name)
            names.append(_named_by_content(upload, name))
        if not names:
            raise HarvestError("The remote offers no file of this dataset.")
        base = _base_file(names)
        params = {"files": [base, *[n for n in names if n != base]], "owner_id": owner,
                  "changes": changes_without_db(h),
                  "permissions": None if public else {"users": {}, "groups": {}}, "total_layers": 1,
                  "overwrite_existing_layer": existing is not None, "resource_pk": existing,
                  "skip_existing_layers": False, "time_attributes": {}, "charset": None, "via": history.HARVEST}
        try:
            _job, output = import_now(db, folders, workspace, exec_id, params)
        except ImportFailed as exc:
            raise HarvestError(f"The dataset's data could not be imported: {exc}") from None
        created = [r["id"] for r in output.get("resources", [])]
        if not created:
            raise HarvestError("The dataset's data held no layer.")
        return created[0]
    finally:
        files.remove(workspace)


def _named_by_content(folder: Path, name: str) -> str:
    """A download named ``*.download`` renamed for what it holds: a zip, or a GeoTIFF."""
    if not name.endswith(".download"):
        return name
    with open(folder / name, "rb") as f:
        head = f.read(4)
    ext = ".zip" if head == b"PK\x03\x04" else ".tif" if head in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+") else None
    if ext is None:
        raise HarvestError("The remote's download is neither a zip nor a GeoTIFF.")
    new = name[: -len(".download")] + ext
    os.rename(folder / name, folder / new)
    return new


def _base_file(names: list[str]) -> str:
    """The file the import starts from: a zip, a .shp, or the first file."""
    for ext in (".zip", ".shp", ".gpkg", ".geojson", ".json", ".tif", ".tiff", ".kml", ".csv"):
        found = next((n for n in names if n.lower().endswith(ext)), None)
        if found:
            return found
    return names[0]


def changes_without_db(h: Harvested) -> dict[str, Any]:
    """The record's text values for an import (the rest is written once the dataset exists)."""
    values = {k: v for k, v in h.values.items() if k in ("title", "abstract") and isinstance(v, str)}
    return {"values": values}


def _thumbnail(db: Database, folders: Folders, http, rid: int, url: str) -> None:
    """The record's thumbnail fetched and kept (a failure is logged: the record stays)."""
    from catalogue_app.jobs import thumbnails

    try:
        body = remote.get_bytes(http, url, limit=MAX_THUMBNAIL)
        ext = _image_type(body)
        if ext is None:
            raise HarvestError(f"{url} is not a PNG or JPEG image.")
        uuid = db.read_sync(resources.uuid_of, rid)
        thumbnails.save(db, folders.thumbs, rid, uuid, body, ext)
    except (HarvestError, LookupError, OSError) as exc:
        log.info("thumbnail of resource %s not harvested: %s", rid, exc)


def _image_type(body: bytes) -> str | None:
    if body.startswith(b"\x89PNG"):
        return "png"
    if body.startswith(b"\xff\xd8"):
        return "jpg"
    return None


def remove(db: Database, folders: Folders, resource_id: int) -> None:
    """A harvested resource whose record the remote no longer offers: removed with its files."""
    from catalogue_app.jobs import thumbnails

    uuid = db.read_sync(resources.uuid_of, resource_id)
    if uuid is None:
        return
    db.write_sync(resource_writes.delete, resource_id)
    files.remove_resource_files(folders.files, uuid)
    thumbnails.remove_unused(db, folders.data, uuid)

