"""Entity tags of features (OGC API - Features, Part 4): a tag that changes whenever the feature
does, so that a client's If-Match names the state it edited.

The tag is a hash of the feature's row as stored in the working copy (geo/gpkg_edit.py
``feature_tag``): every column, the geometry blob included. Whatever changes the feature (an edit
through any route, a revert, a package, a new upload of the data) changes its tag, and features
the edit did not touch keep theirs. An edit that expects a tag checks it under its own write lock
(gpkg_edit ``apply``'s ``expected``), with the same function."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from catalogue_app.geo import gpkg_access, gpkg_edit

# the feature table and its primary key column of each file, by path, with the file's inode (a
# file replaced by a new upload is another inode): what a tag needs beyond the row itself
_TABLES: dict[str, tuple[int, str, str]] = {}
_LOCK = threading.Lock()


def etag_of(path: str | Path, fid: int) -> str | None:
    """The entity tag (quoted, as sent in ETag) of feature ``fid`` of the working copy at
    ``path``; None when there is no such feature (or no such file, or no feature table).
    Blocking: one short read of the GeoPackage (about a millisecond)."""
    if not isinstance(fid, int) or isinstance(fid, bool):
        return None
    key = str(path)
    try:
        inode = os.stat(key).st_ino
    except OSError:
        return None
    with gpkg_access.sqlite(path):
        try:
            conn = sqlite3.connect(key, timeout=gpkg_edit.BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            return None
        try:
            conn.execute("BEGIN")
            known = _TABLES.get(key)
            if known is not None and known[0] == inode:
                try:
                    return gpkg_edit.row_tag(conn, known[1], known[2], fid)
                except sqlite3.OperationalError:  # the table was renamed or dropped: look again
                    pass
            layer = gpkg_edit.layer_of(conn)
            with _LOCK:
                if len(_TABLES) > 4096:
                    _TABLES.clear()
                _TABLES[key] = (inode, layer.table, layer.fid)
            return gpkg_edit.feature_tag(conn, layer, fid)
        except (gpkg_edit.NotVector, sqlite3.Error):
            return None
        finally:
            conn.close()
