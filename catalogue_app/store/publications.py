"""Publications: what of a local resource was sent to which remote, and how far it got.

One row per (remote, resource): the remote's pk and uuid of the copy, the step reached
(``stage``, see publishing/publish.py), the remote's execution id of an upload in flight, a
checksum of the data last sent, when it was last published and the last outcome (``message``).
Also what publishing reads of a local resource (``source``)."""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.clock import now

COLUMNS = ("p.remote_id, p.resource_id, p.remote_pk, p.remote_uuid, p.stage, p.upload_exec_id, p.data_checksum,"
           " p.last_published, p.message")
FIELDS = ("remote_pk", "remote_uuid", "stage", "upload_exec_id", "data_checksum", "last_published", "message")
TEXT_FIELDS = ("title", "abstract", "attribution", "doi", "edition", "purpose", "maintenance_frequency",
               "constraints_other", "supplemental_information", "data_quality_statement", "language", "date",
               "date_type", "temporal_extent_start", "temporal_extent_end")


def get(conn: sqlite3.Connection, remote_id: int, resource_id: int) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {COLUMNS} FROM publications p WHERE p.remote_id = ? AND p.resource_id = ?",
                        (remote_id, resource_id)).fetchone()


def ensure(conn: sqlite3.Connection, remote_id: int, resource_id: int) -> sqlite3.Row:
    """The row, made ('new') when the resource was never published there."""
    conn.execute("INSERT OR IGNORE INTO publications (remote_id, resource_id) VALUES (?, ?)", (remote_id, resource_id))
    return get(conn, remote_id, resource_id)


def update(conn: sqlite3.Connection, remote_id: int, resource_id: int, values: dict[str, Any]) -> sqlite3.Row | None:
    changes = {k: v for k, v in values.items() if k in FIELDS}
    if changes:
        conn.execute(f"UPDATE publications SET {', '.join(f'{k} = ?' for k in changes)}"
                     " WHERE remote_id = ? AND resource_id = ?", [*changes.values(), remote_id, resource_id])
    return get(conn, remote_id, resource_id)


def finished(conn: sqlite3.Connection, remote_id: int, resource_id: int, message: str) -> sqlite3.Row | None:
    return update(conn, remote_id, resource_id, {"stage": "done", "last_published": now(), "message": message})


def of_resource(conn: sqlite3.Connection, resource_id: int) -> list[sqlite3.Row]:
    """Where the resource was published: each row with the remote's name and address."""
    return conn.execute(
        f"SELECT {COLUMNS}, m.name AS remote_name, m.url AS remote_url, r.resource_type"
        " FROM publications p JOIN remotes m ON m.id = p.remote_id JOIN resources r ON r.id = p.resource_id"
        " WHERE p.resource_id = ? ORDER BY m.name", (resource_id,)).fetchall()


def source(conn: sqlite3.Connection, resource_id: int) -> dict[str, Any] | None:
    """What publishing sends of a local resource: its fields, keywords, category and licence
    identifiers, owner's name, thumbnail address, and a dataset's folder and files or a
    document's file. None when there is no such resource."""
    row = conn.execute(
        "SELECT r.id, r.uuid, r.resource_type, r.subtype, r.alternate, r.thumbnail_url, r.metadata_only,"
        f" {', '.join('r.' + f for f in TEXT_FIELDS)}, u.username AS owner,"
        " (SELECT identifier FROM categories WHERE id = r.category_id) AS category,"
        " (SELECT identifier FROM licenses WHERE id = r.license_id) AS license"
        " FROM resources r JOIN users u ON u.id = r.owner_id WHERE r.id = ?", (resource_id,)).fetchone()
    if row is None:
        return None
    out = dict(row)
    out["keywords"] = [r[0] for r in conn.execute(
        "SELECT k.name FROM resource_keywords rk JOIN keywords k ON k.id = rk.keyword_id"
        " WHERE rk.resource_id = ? ORDER BY k.name", (resource_id,))]
    out["files"] = [r[0] for r in conn.execute(
        "SELECT name FROM resource_files WHERE resource_id = ? ORDER BY name", (resource_id,))]
    dataset = conn.execute("SELECT folder, source_name, name FROM datasets WHERE resource_id = ?",
                           (resource_id,)).fetchone()
    out["dataset"] = dict(dataset) if dataset else None
    document = conn.execute("SELECT extension, file_name, doc_url FROM documents WHERE resource_id = ?",
                            (resource_id,)).fetchone()
    out["document"] = dict(document) if document else None
    return out
