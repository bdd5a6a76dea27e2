"""Consistent copies of a working GeoPackage, taken while it may be edited.

An edited working copy (geo/gpkg_edit.py) changes in place and runs in WAL mode: its latest
commits may be in ``data.gpkg-wal`` and not yet in ``data.gpkg``. So it is never hard-linked
(an edit in place would change the link too) nor copied byte by byte (the copy could miss the
log, or catch a checkpoint half done). ``snapshot`` copies it with SQLite's online backup,
inside one read transaction: the copy is the GeoPackage as committed at one moment, a single
file in rollback mode (no log beside it), whatever is committed meanwhile. Editors are not held
up (WAL); a GeoPackage never edited (rollback mode) is read the same way. In this process, the
copy takes its turn with GDAL's opens of the file (gpkg_access.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from . import gpkg_access
from .errors import GeoError

PAGES = 1024  # pages copied per step of the online backup
BUSY_MS = 30_000  # how long a read waits for an editor that holds the file (rollback mode)
# The tables of the catalogue's history inside a working copy (geo/gpkg_edit.py): hidden from
# GDAL by their prefix, they travel in a snapshot unless the copy is made a new dataset.
HISTORY_PREFIX = "gpkgext_catalogue_"


def snapshot(source: str | Path, target: str | Path, between: Callable[[], None] | None = None,
             pages: int = PAGES) -> None:
    """Copy the SQLite file ``source`` into the new file ``target`` as committed at one moment;
    ``between()`` is called after each step of ``pages`` pages (an exception there stops the
    copy, and ``target`` is removed). FileNotFoundError when ``source`` is missing, GeoError
    when it is not a database SQLite can read."""
    source, target = Path(source), Path(target)
    if not source.is_file():
        raise FileNotFoundError(2, "No such file", str(source))
    target.parent.mkdir(parents=True, exist_ok=True)
    with gpkg_access.sqlite(source):
        _snapshot(source, target, between, pages)


def _snapshot(source: Path, target: Path, between: Callable[[], None] | None, pages: int) -> None:
    conn = sqlite3.connect(str(source), timeout=BUSY_MS / 1000, isolation_level=None)
    try:
        conn.execute("PRAGMA query_only = ON")
        out = sqlite3.connect(str(target), isolation_level=None)
        try:
            # one read transaction: every step copies the same snapshot, and the backup is not
            # restarted by the commits of other connections meanwhile
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            conn.backup(out, pages=pages, progress=(lambda *_: between()) if between else None)
            conn.execute("COMMIT")
            out.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        finally:
            out.close()
    except sqlite3.DatabaseError as exc:
        target.unlink(missing_ok=True)
        raise GeoError(f"{source.name} cannot be read as a GeoPackage: {exc}") from None
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    finally:
        conn.close()


def forget_history(path: str | Path) -> None:
    """Drop the catalogue's history tables from the GeoPackage at ``path`` (a copy made into a
    new dataset starts its own history: its data as copied is its version 0)."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, ?) = ?",
            (len(HISTORY_PREFIX), HISTORY_PREFIX))]
        if not names:
            return
        conn.execute("BEGIN IMMEDIATE")
        for name in names:
            conn.execute(f'DROP TABLE "{name}"')
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'gpkg_extensions'").fetchone():
            conn.execute("DELETE FROM gpkg_extensions WHERE substr(table_name, 1, ?) = ?"
                         " OR substr(extension_name, 1, ?) = ?",
                         (len(HISTORY_PREFIX), HISTORY_PREFIX, len(HISTORY_PREFIX), HISTORY_PREFIX))
        conn.execute("COMMIT")
        conn.execute("VACUUM")
    finally:
        conn.close()
