"""The document representation on /api/v2/documents: the resource fields plus GeoNode's
document fields (name, href, extension, mime_type, doc_url), the same in lists and details.

``href`` is where the content is read: the remote address of a remote document, else this
catalogue's /documents/{pk}/link. Documents created from JSON alone have neither file nor
address: their extension and mime_type are null.
"""

from __future__ import annotations

import msgspec

from catalogue_app.reads.resources import Resource
from catalogue_app.store import Connection, documents


class Document(Resource, kw_only=True):
    """A document, in a list or on its own."""

    name: str
    href: str
    extension: str | None
    mime_type: str | None
    doc_url: str | None


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
