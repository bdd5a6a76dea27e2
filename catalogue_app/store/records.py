"""What the links, metadata records and embed views of resources need beyond the resource row:
whether a dataset has data, a document's file or address, whether an ISO document was
uploaded; and resources found by uuid or alternate, as the viewer may see them."""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from catalogue_app.store.resources import COLUMNS, Viewer, visibility


class LinkFacts(NamedTuple):
    """One resource's facts for its links (a tuple: a page makes many, and cheaply)."""

    has_data: int = 0                   # a dataset with a datasets row (uploaded, not made up by `seed`),
                                        # but for one marked metadata only that has no files (from a package)
    has_iso: int = 0                    # an ISO XML document was uploaded for it
    extension: str | None = None        # documents: the file's extension
    file_name: str | None = None        # documents: the stored file
    doc_url: str | None = None          # documents: the remote address
    mime_type: str | None = None        # documents: the media type of the file
    remote_url: str | None = None       # remote datasets: the service serving the layer
    remote_layer: str | None = None     # remote datasets: the layer's name there
    remote_download: str | None = None  # remote datasets: where its data are downloaded, if anywhere
    remote_type: str | None = None      # remote datasets: the kind of service (WMS)


NO_FACTS = LinkFacts()


def link_facts(conn: sqlite3.Connection, ids: list[int]) -> dict[int, LinkFacts]:
    """The link facts of a page of resources, in one query (resources without any are left out)."""
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT r.id, d.resource_id IS NOT NULL AND (r.metadata_only = 0 OR EXISTS"
        " (SELECT 1 FROM resource_files f WHERE f.resource_id = r.id)), i.resource_id IS NOT NULL, doc.extension, doc.file_name,"
        " doc.doc_url, doc.mime_type, rl.service_url, rl.layer_name, rl.download_url, rl.service_type"
        " FROM resources r"
        " LEFT JOIN datasets d ON d.resource_id = r.id"
        " LEFT JOIN remote_layers rl ON rl.resource_id = r.id"
        " LEFT JOIN iso_metadata i ON i.resource_id = r.id"
        " LEFT JOIN documents doc ON doc.resource_id = r.id"
        f" WHERE r.id IN ({','.join('?' * len(ids))})", ids)
    return {row[0]: LinkFacts._make(row[1:]) for row in rows}


def visible_by_uuids(conn: sqlite3.Connection, viewer: Viewer, uuids: list[str]) -> list[sqlite3.Row]:
    """The resources with these uuids that the viewer may see, in the order asked."""
    if not uuids:
        return []
    cond, params = visibility(viewer)
    rows = conn.execute(f"SELECT {COLUMNS} FROM resources r WHERE r.uuid IN ({','.join('?' * len(uuids))})"
                        f" AND {cond}", [*uuids, *params]).fetchall()
    order = {u: i for i, u in enumerate(uuids)}
    return sorted(rows, key=lambda r: order[r["uuid"]])


def visible_dataset(conn: sqlite3.Connection, viewer: Viewer, alternate: str) -> sqlite3.Row | None:
    """The dataset with this alternate, if the viewer may see it."""
    cond, params = visibility(viewer)
    return conn.execute(f"SELECT {COLUMNS} FROM resources r WHERE r.alternate = ? AND r.resource_type = 'dataset'"
                        f" AND {cond}", [alternate, *params]).fetchone()
