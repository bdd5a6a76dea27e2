"""What the tiles of OGC API - Tiles need beyond the OGC services' layer queries (store/ogc.py):
a map's title and extent as the viewer may see it, and whether a dataset is metadata only."""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.store import resources
from catalogue_app.store.resources import Viewer


def map_summary(conn: sqlite3.Connection, viewer: Viewer, map_id: int) -> dict[str, Any] | None:
    """A map the viewer may see (id, title, lon/lat box); None when unknown or hidden."""
    cond, params = resources.visibility(viewer)
    row = conn.execute(
        "SELECT r.id, r.title, r.ll_x0, r.ll_y0, r.ll_x1, r.ll_y1 FROM resources r"
        f" WHERE r.id = ? AND r.resource_type = 'map' AND {cond}", [map_id, *params]).fetchone()
    return dict(row) if row else None


def metadata_only(conn: sqlite3.Connection, resource_id: int) -> bool:
    """Whether a resource came without its data (GeoNode's metadata_only flag)."""
    row = conn.execute("SELECT metadata_only FROM resources WHERE id = ?", (resource_id,)).fetchone()
    return bool(row and row[0])
