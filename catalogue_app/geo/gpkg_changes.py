"""What the edits of a working GeoPackage did to its geometries since a version, read from its
history (geo/gpkg_edit.py writes it): how a process that holds the layer's arrays at one
version brings them to the file's last one without reading the layer again (layer_cache.py).

Read only, in one read transaction, taking its turn with GDAL's opens in this process
(gpkg_access.py). Nothing here asks the catalogue: any server process learns an edit from the
file itself.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import gpkg_access
from . import gpkg_edit
from .gpkg_edit import CHANGES, STATE, VERSIONS, NotVector, layer_of

BUSY_MS = 60_000


@dataclass(frozen=True)
class GeometryDelta:
    """From version ``after`` to version ``version``: the features whose geometry changed
    (``touched``: inserted, deleted, or updated with a new geometry, sorted), and of those, the
    ones that have a geometry now (``fids``, sorted) with it (``wkb``, ISO WKB in the layer's
    CRS); ``features``: the layer's feature count at ``version``; ``inserted`` and ``deleted``:
    rows inserted and deleted in between."""

    after: int
    version: int
    touched: np.ndarray
    fids: np.ndarray
    wkb: list[bytes]
    features: int
    inserted: int
    deleted: int


def _connect(path: str | Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA query_only = ON")
    return conn


def _applied(conn: sqlite3.Connection) -> int | None:
    try:
        row = conn.execute(f"SELECT applied_version FROM {STATE} WHERE id = 1").fetchone()
    except sqlite3.OperationalError:  # no history
        return None
    return int(row[0]) if row is not None else None


def _features(conn: sqlite3.Connection) -> int:
    """The feature count GDAL's triggers keep (gpkg_ogr_contents), else a count of the rows."""
    try:
        row = conn.execute("SELECT o.feature_count FROM gpkg_contents c JOIN gpkg_ogr_contents o"
                           " ON lower(o.table_name) = lower(c.table_name) WHERE c.data_type = 'features'"
                           " ORDER BY c.rowid LIMIT 1").fetchone()
    except sqlite3.OperationalError:  # no gpkg_ogr_contents
        row = None
    if row is not None and row[0] is not None:
        return int(row[0])
    layer = layer_of(conn)
    quoted = '"' + layer.table.replace('"', '""') + '"'
    return int(conn.execute(f"SELECT count(*) FROM {quoted}").fetchone()[0])


def applied_version(path: str | Path) -> int | None:
    """The number of the last version applied to the file; None when it was never edited (no
    history) or is no GeoPackage."""
    if Path(path).suffix.lower() != ".gpkg":
        return None
    try:
        with gpkg_access.sqlite(path):
            conn = _connect(path)
            try:
                return _applied(conn)
            finally:
                conn.close()
    except sqlite3.Error:
        return None


def geometry_delta(path: str | Path, after: int) -> GeometryDelta | None:
    """The geometries the versions after ``after`` changed, up to the file's last version; None
    when the history cannot tell them: no history, or ``after`` is neither 0 nor a version the
    file records (its history was cut since), or the file is unreadable."""
    try:
        with gpkg_access.sqlite(path):
            conn = _connect(path)
            try:
                conn.execute("BEGIN")
                try:
                    return _delta(conn, after)
                finally:
                    conn.execute("COMMIT")
            finally:
                conn.close()
    except (sqlite3.Error, NotVector):
        return None


def _delta(conn: sqlite3.Connection, after: int) -> GeometryDelta | None:
    applied = _applied(conn)
    if applied is None or applied < after:
        return None
    if after and conn.execute(f"SELECT 1 FROM {VERSIONS} WHERE number = ?", (after,)).fetchone() is None:
        return None
    cut = gpkg_edit.cut_of(conn)
    if cut is not None and after <= cut[0]:  # vacuum dropped changes the held copy lacks
        return None
    final: dict[int, bytes | None] = {}
    inserted = deleted = 0
    for fid, op, geometry, after_wkb in conn.execute(
            f"SELECT fid, op, geometry, after_wkb FROM {CHANGES} WHERE version > ? AND version <= ? ORDER BY id",
            (after, applied)):
        inserted += op == "insert"
        deleted += op == "delete"
        if op == "delete":
            final[fid] = None
        elif op == "insert" or geometry:
            final[fid] = after_wkb
    touched = np.array(sorted(final), dtype=np.int64)
    kept = [f for f in touched.tolist() if final[f] is not None]
    return GeometryDelta(after, applied, touched, np.array(kept, dtype=np.int64), [final[f] for f in kept],
                         _features(conn), inserted, deleted)
