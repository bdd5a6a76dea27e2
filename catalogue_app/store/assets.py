"""Assets: the stored files of the resources (a document's file, a dataset's originals and
working copy), as GeoNode 5's /api/v2/assets lists them, limited to what the viewer may see."""

from __future__ import annotations

import sqlite3

from catalogue_app.store.resources import Viewer, visibility

COLUMNS = ("f.id, f.name, f.size, f.mime_type, f.created, f.resource_id, r.owner_id, u.username,"
           " coalesce((SELECT d.folder FROM datasets d WHERE d.resource_id = r.id), r.uuid) AS folder")
SOURCE = "resource_files f JOIN resources r ON r.id = f.resource_id JOIN users u ON u.id = r.owner_id"


def page(conn: sqlite3.Connection, viewer: Viewer, limit: int, offset: int) -> tuple[int, list[sqlite3.Row]]:
    """The newest assets first."""
    cond, params = visibility(viewer)
    total = conn.execute(f"SELECT count(*) FROM {SOURCE} WHERE {cond}", params).fetchone()[0]
    rows = conn.execute(f"SELECT {COLUMNS} FROM {SOURCE} WHERE {cond} ORDER BY f.id DESC LIMIT ? OFFSET ?",
                        [*params, limit, offset]).fetchall()
    return total, rows


def get(conn: sqlite3.Connection, viewer: Viewer, asset_id: int) -> sqlite3.Row | None:
    cond, params = visibility(viewer)
    return conn.execute(f"SELECT {COLUMNS} FROM {SOURCE} WHERE f.id = ? AND {cond}", [asset_id, *params]).fetchone()
