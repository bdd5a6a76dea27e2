"""Documents: a resource whose content is one file (kept under files/<uuid>/) or a remote URL.

The ``documents`` row holds what the common record lacks: the extension, the original file
name, the remote address and the media type. This module also knows which extensions a
document may have and what media type and GeoNode subtype each one means, so that uploads and
ingests describe their files the same way.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.store import resource_writes

# GeoNode's default ALLOWED_DOCUMENT_TYPES, each with its media type (None: no registered type,
# served as application/octet-stream) and the document subtype shown in the API.
TYPES: dict[str, tuple[str | None, str]] = {
    "txt": ("text/plain", "text"), "csv": ("text/csv", "text"), "log": ("text/plain", "text"),
    "doc": ("application/msword", "text"),
    "docx": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "text"),
    "ods": ("application/vnd.oasis.opendocument.spreadsheet", "text"),
    "odt": ("application/vnd.oasis.opendocument.text", "text"),
    "sld": ("application/vnd.ogc.sld+xml", "text"), "qml": ("application/xml", "text"),
    "xls": ("application/vnd.ms-excel", "text"),
    "xlsx": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "text"),
    "xml": ("application/xml", "text"), "pdf": ("application/pdf", "text"),
    "bm": ("image/bmp", "image"), "bmp": ("image/bmp", "image"), "fif": ("image/fif", "image"),
    "gif": ("image/gif", "image"), "jpg": ("image/jpeg", "image"), "jpe": ("image/jpeg", "image"),
    "jpeg": ("image/jpeg", "image"), "png": ("image/png", "image"), "tif": ("image/tiff", "image"),
    "tiff": ("image/tiff", "image"), "pbm": ("image/x-portable-bitmap", "image"),
    "dwg": ("image/vnd.dwg", "other"), "dxf": ("image/vnd.dxf", "other"),
    "odp": ("application/vnd.oasis.opendocument.presentation", "presentation"),
    "ppt": ("application/vnd.ms-powerpoint", "presentation"),
    "pptx": ("application/vnd.openxmlformats-officedocument.presentationml.presentation", "presentation"),
    "tar": ("application/x-tar", "archive"), "tgz": ("application/gzip", "archive"),
    "rar": ("application/vnd.rar", "archive"), "gz": ("application/gzip", "archive"),
    "7z": ("application/x-7z-compressed", "archive"), "zip": ("application/zip", "archive"),
    "aif": ("audio/aiff", "audio"), "aifc": ("audio/aiff", "audio"), "aiff": ("audio/aiff", "audio"),
    "au": ("audio/basic", "audio"), "mp3": ("audio/mpeg", "audio"), "mpga": ("audio/mpeg", "audio"),
    "wav": ("audio/wav", "audio"),
    "afl": ("video/animaflex", "video"), "avi": ("video/x-msvideo", "video"), "avs": ("video/avs-video", "video"),
    "fli": ("video/fli", "video"), "mp2": ("video/mpeg", "video"), "mp4": ("video/mp4", "video"),
    "mpg": ("video/mpeg", "video"), "ogg": ("video/ogg", "video"), "webm": ("video/webm", "video"),
    "3gp": ("video/3gpp", "video"), "flv": ("video/x-flv", "video"), "vdo": ("video/vdo", "video"),
    "glb": ("model/gltf-binary", "other"), "gltf": ("model/gltf+json", "other"), "pcd": (None, "other"),
    "ifc": ("application/x-step", "other"),
}
ALLOWED_EXTENSIONS = tuple(TYPES)
COLUMNS = "resource_id, extension, file_name, doc_url, mime_type"


def allowed(extension: str) -> bool:
    """Whether a document may have this extension. Compared without regard to case, unlike
    GeoNode, which refuses "report.PDF" although it takes "report.pdf"."""
    return extension.lower() in TYPES


def mime_type(extension: str | None) -> str | None:
    """The media type of a file with this extension, None when there is none to give."""
    return TYPES.get((extension or "").lower(), (None, ""))[0]


def subtype(extension: str | None) -> str:
    """GeoNode's document subtype: image, text, video, audio, archive, presentation or other."""
    return TYPES.get((extension or "").lower(), (None, "other"))[1]


def create(conn: sqlite3.Connection, *, uuid: str, owner_id: int, changes: dict[str, Any], extension: str,
           file_name: str | None = None, size: int = 0, doc_url: str | None = None, public: bool = True) -> int:
    """A new document owned by ``owner_id`` with the checked ``changes`` (the API layer's
    ``Cleaned`` as a dict): a local file ``file_name`` of ``size`` bytes, already in
    files/<uuid>/, or a remote ``doc_url`` (sourcetype REMOTE, no media type, as GeoNode)."""
    rid = resource_writes.create(conn, "document", owner_id, {"uuid": uuid}, public=public)
    resource_writes.apply_changes(conn, rid, {**changes, "values": {**changes.get("values", {}),
                                                                     "subtype": subtype(extension)}})
    if doc_url is not None:
        conn.execute("UPDATE resources SET sourcetype = 'REMOTE' WHERE id = ?", (rid,))
        add(conn, rid, extension=extension, doc_url=doc_url)
        return rid
    mime = mime_type(extension)
    add(conn, rid, extension=extension, file_name=file_name, mime_type=mime)
    resource_writes.add_files(conn, rid, [(file_name or "", size, mime)])
    return rid


def add(conn: sqlite3.Connection, resource_id: int, *, extension: str | None, file_name: str | None = None,
        doc_url: str | None = None, mime_type: str | None = None) -> None:
    """The documents row of a resource (replaced if it has one)."""
    conn.execute(f"INSERT OR REPLACE INTO documents ({COLUMNS}) VALUES (?, ?, ?, ?, ?)",
                 (resource_id, extension, file_name, doc_url, mime_type))


def rows(conn: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    """The documents rows of these resources, by id (resources without one are left out)."""
    if not ids:
        return {}
    return {r["resource_id"]: r for r in conn.execute(
        f"SELECT {COLUMNS} FROM documents WHERE resource_id IN ({','.join('?' * len(ids))})", ids)}


def get(conn: sqlite3.Connection, resource_id: int) -> sqlite3.Row | None:
    return rows(conn, [resource_id]).get(resource_id)
