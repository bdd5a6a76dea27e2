"""The document representation on /api/v2/documents: the resource fields plus GeoNode's
document fields (name, href, extension, mime_type, doc_url), the same in lists and details.

``href`` is where the content is read: the remote address of a remote document, else this
catalogue's /documents/{pk}/link. Documents created from JSON alone have neither file nor
address: their extension and mime_type are null.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from catalogue_app.reads.resources import Resource
from catalogue_app.rules import Viewer
from catalogue_app.services import access
from catalogue_app.services.errors import NotFound, refusal_for
from catalogue_app.store import Connection, documents, resources

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller


class Document(Resource, kw_only=True):
    """A document, in a list or on its own."""

    name: str
    href: str
    extension: str | None
    mime_type: str | None
    doc_url: str | None


class StoredDocument(msgspec.Struct):
    """Where a document's content is: its remote address (``doc_url``), or its file (the name
    in its folder, and its media type); all None for a document without either."""

    folder: str
    doc_url: str | None = None
    file_name: str | None = None
    mime_type: str | None = None


def allowed_extension(extension: str) -> bool:
    """Whether a document may have this extension (the supported list)."""
    return documents.allowed(extension)


def extend(conn: Connection, items: list[Resource], base: str, detail: bool) -> list[Document]:
    """The document fields added to rendered resources (all of them documents)."""
    rows = documents.rows(conn, [int(i.pk) for i in items])
    out = []
    for item in items:
        row = rows.get(int(item.pk))
        doc_url = row["doc_url"] if row else None
        file_name = row["file_name"] if row else None
        out.append(Document(
            **msgspec.structs.asdict(item), name=item.title or file_name or "",
            href=doc_url or f"{base}/documents/{item.pk}/link", extension=row["extension"] if row else None,
            mime_type=row["mime_type"] if row else None, doc_url=doc_url))
    return out


def content(conn: Connection, viewer: Viewer, caller: Caller, rid: int) -> StoredDocument:
    """Where the content of document ``rid`` is, if the viewer may download it: NotFound when
    they cannot see it, 401/403 when they may not download it."""
    row = resources.get_visible(conn, viewer, rid, ("document",))
    if row is None:
        raise NotFound("Document")
    if not access.may(conn, viewer, row, access.DOWNLOAD):
        raise refusal_for(caller)
    doc = documents.get(conn, row["id"])
    if doc is None:
        return StoredDocument(row["uuid"])
    return StoredDocument(row["uuid"], doc["doc_url"], doc["file_name"], doc["mime_type"])
