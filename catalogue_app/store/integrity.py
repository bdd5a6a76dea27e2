"""The SQL of the operator's commands (catalogue_app/management): a consistent copy of the
database (backup), what the rows say the data folder holds, the checks of the database and of
the indexes kept by triggers (check), their rebuilding and the marking of broken resources
(repair), and the sizes a VACUUM changes (vacuum).

The indexes kept by triggers on ``resources`` (migrations.py):

- ``resource_text``: FTS5 trigram index of title and abstract, its content in ``resources``
  (external content: FTS5's 'integrity-check' with rank 1 compares it with the rows, 'rebuild'
  makes it anew from them);
- ``resource_words``: FTS5 word index of the same, contentless (no rows to compare with:
  'integrity-check' checks it alone; its row count and its count of hidden rows are compared
  with ``resources``; it is rebuilt by 'delete-all' and a refill, as migration 21 filled it);
- ``resource_vocab_text``: FTS5 trigram index of ``resource_vocab`` (external content);
- ``resource_extents``: the R*Tree of the WGS84 boxes (entry 2*id, and 2*id+1 for the eastern
  part of a box crossing the antimeridian).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from catalogue_app.store import text_index
from catalogue_app.store.migrations import HIDDEN, MIGRATIONS, fill_word_index

INVALID = "INVALID"  # GeoNode's state of a resource that is broken (store/resources ``state``)
PROCESSED = "PROCESSED"
THUMBS_PREFIX = "/uploaded/thumbs/"
# R*Tree boxes are 32-bit floats rounded outwards: a box is in step within this much
EXTENT_TOLERANCE = 1e-3

# The boxes the R*Tree holds for the resources, as the triggers of migrations.py write them.
EXPECTED_EXTENTS = """
SELECT id * 2 AS id, coalesce(ll_x0, -180) AS minx,
       CASE WHEN ll_x0 > ll_x1 THEN 180 ELSE coalesce(ll_x1, 180) END AS maxx,
       coalesce(ll_y0, -90) AS miny, coalesce(ll_y1, 90) AS maxy FROM resources
UNION ALL
SELECT id * 2 + 1, -180, ll_x1, ll_y0, ll_y1 FROM resources WHERE ll_x0 > ll_x1
"""


# -- backup ---------------------------------------------------------------------------------------
def begin_snapshot(conn: sqlite3.Connection) -> None:
    """Start a read transaction on ``conn`` and fix its snapshot (WAL: the commits of others
    after this are not seen by it until ``end_snapshot``)."""
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()


def end_snapshot(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("COMMIT")


def copy_database(conn: sqlite3.Connection, target: Path, pages: int,
                  between: Callable[[int, int], None]) -> None:
    """Copy the database of ``conn`` into the new file ``target`` with SQLite's online backup,
    ``pages`` pages a step, calling ``between(done, total)`` after each step (an exception there
    stops the copy). Inside a read transaction of ``conn`` (begin_snapshot) the copy is that
    transaction's snapshot and is never restarted by the writes others commit meanwhile; the
    writers are not held up (WAL). The copy is a database file complete in itself."""
    target_conn = sqlite3.connect(str(target))
    try:
        conn.backup(target_conn, pages=pages,
                    progress=lambda _status, remaining, total: between(total - remaining, total))
        target_conn.execute("PRAGMA journal_mode = DELETE")  # one file: no log beside it
    finally:
        target_conn.close()


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    """What a backup's manifest and a restore's report count."""
    out = {"resources": conn.execute("SELECT count(*) FROM resources").fetchone()[0],
           "users": conn.execute("SELECT count(*) FROM users").fetchone()[0],
           "groups": conn.execute("SELECT count(*) FROM groups").fetchone()[0],
           "permissions": conn.execute("SELECT count(*) FROM resource_perms").fetchone()[0],
           "stored_files": conn.execute("SELECT count(*) FROM resource_files").fetchone()[0]}
    for kind, n in conn.execute("SELECT resource_type, count(*) FROM resources GROUP BY 1 ORDER BY 1"):
        out[f"{kind}s"] = n
    return out


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def newest_schema() -> int:
    return len(MIGRATIONS)


# -- what the rows say the data folder holds --------------------------------------------------------
def stored_files(conn: sqlite3.Connection) -> Iterator[tuple[int, str, list[str]]]:
    """Each resource with stored files: (id, its folder under files/, the files' paths relative
    to that folder, from its resource_files rows). A dataset's folder is ``datasets.folder``,
    another resource's its uuid."""
    current: tuple[int, str, list[str]] | None = None
    for rid, folder, name in conn.execute(
            "SELECT f.resource_id, coalesce(d.folder, r.uuid), f.name FROM resource_files f"
            " JOIN resources r ON r.id = f.resource_id LEFT JOIN datasets d ON d.resource_id = r.id"
            " WHERE f.name <> '' ORDER BY f.resource_id, f.name"):
        if current is None or current[0] != rid:
            if current is not None:
                yield current
            current = (rid, folder, [])
        current[2].append(name)
    if current is not None:
        yield current


def files_of(conn: sqlite3.Connection, resource_id: int) -> tuple[str, list[str]] | None:
    """One resource's folder and stored files (None when it has none)."""
    row = conn.execute("SELECT coalesce(d.folder, r.uuid) FROM resources r LEFT JOIN datasets d"
                       " ON d.resource_id = r.id WHERE r.id = ?", (resource_id,)).fetchone()
    if row is None:
        return None
    names = [r[0] for r in conn.execute("SELECT name FROM resource_files WHERE resource_id = ? AND name <> ''"
                                        " ORDER BY name", (resource_id,))]
    return (row[0], names) if names else None


def thumbnails(conn: sqlite3.Connection) -> list[tuple[int, str]]:
    """(resource id, thumbnail address) of every resource whose thumbnail is a file of ours."""
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT id, thumbnail_url FROM resources WHERE thumbnail_url >= ? AND thumbnail_url < ? ORDER BY id",
        (THUMBS_PREFIX, THUMBS_PREFIX + "\U0010ffff"))]


def thumbnail_of(conn: sqlite3.Connection, resource_id: int) -> str | None:
    row = conn.execute("SELECT thumbnail_url FROM resources WHERE id = ?", (resource_id,)).fetchone()
    return row[0] if row else None


def thumbnail_used(conn: sqlite3.Connection, url: str) -> bool:
    return conn.execute("SELECT 1 FROM resources WHERE thumbnail_url = ? LIMIT 1", (url,)).fetchone() is not None


def clear_thumbnail(conn: sqlite3.Connection, resource_id: int, url: str) -> bool:
    """Forget the resource's thumbnail address if it is still ``url``; whether it was."""
    return conn.execute("UPDATE resources SET thumbnail_url = NULL WHERE id = ? AND thumbnail_url = ?",
                        (resource_id, url)).rowcount > 0


def invalid_resources(conn: sqlite3.Connection) -> list[int]:
    return [r[0] for r in conn.execute("SELECT id FROM resources WHERE state = ? ORDER BY id", (INVALID,))]


def mark_invalid(conn: sqlite3.Connection, resource_id: int) -> bool:
    """Mark a resource as broken (GeoNode's state INVALID: ``processed`` is false in the API);
    whether it was not marked yet. Its record stays as it is otherwise."""
    return conn.execute("UPDATE resources SET state = ? WHERE id = ? AND state <> ?",
                        (INVALID, resource_id, INVALID)).rowcount > 0


def unmark_invalid(conn: sqlite3.Connection, resource_id: int) -> bool:
    """Undo mark_invalid (its files are back); whether it was marked."""
    return conn.execute("UPDATE resources SET state = ? WHERE id = ? AND state = ?",
                        (PROCESSED, resource_id, INVALID)).rowcount > 0


# -- the database -----------------------------------------------------------------------------------
def integrity_problems(conn: sqlite3.Connection, quick: bool = False, limit: int = 100) -> list[str]:
    """SQLite's own check of the file (``quick``: quick_check, which skips the comparison of
    indexes with their tables); [] when it is sound."""
    pragma = "quick_check" if quick else "integrity_check"
    rows = [r[0] for r in conn.execute(f"PRAGMA {pragma}({int(limit)})")]
    return [] if rows == ["ok"] else rows


def foreign_key_problems(conn: sqlite3.Connection) -> list[tuple[str, int | None, str]]:
    """Rows whose reference names a missing row: (table, rowid, the table referred to)."""
    return [(r[0], r[1], r[2]) for r in conn.execute("PRAGMA foreign_key_check")]


# -- the text indexes -------------------------------------------------------------------------------
def _averages_rows(conn: sqlite3.Connection, table: str) -> int | None:
    """How many rows an FTS5 index holds, from its averages record (rowid 1 of its %_data
    table: the row count first, as an SQLite varint); None when it has none."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return None
    block, value = bytes(row[0]), 0
    for i in range(9):
        byte = block[i]
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    return value


def text_index_counts(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """Read-only comparisons of each text index with its table: (index, what differs)."""
    found = []
    present = text_index.present(conn)
    resources = conn.execute("SELECT count(*) FROM resources").fetchone()[0]
    if "resource_text" in present:
        indexed = conn.execute("SELECT count(*) FROM resource_text_docsize").fetchone()[0]
        if indexed != resources:
            found.append(("resource_text", f"{indexed} rows indexed, {resources} resources"))
        else:
            unindexed = conn.execute("SELECT count(*) FROM resources r WHERE NOT EXISTS"
                                     " (SELECT 1 FROM resource_text_docsize d WHERE d.id = r.id)").fetchone()[0]
            if unindexed:
                found.append(("resource_text", f"{unindexed} resources not indexed"))
    if "resource_words" in present:
        indexed = _averages_rows(conn, "resource_words") or 0
        if indexed != resources:
            found.append(("resource_words", f"{indexed} rows indexed, {resources} resources"))
        else:
            hidden_rows = conn.execute(f"SELECT count(*) FROM resources r WHERE {HIDDEN.format('r')} IS NOT NULL"
                                       ).fetchone()[0]
            hidden_indexed = conn.execute("SELECT coalesce(sum(doc), 0) FROM resource_words_by_column"
                                          " WHERE col = 'hidden' AND term = 'h'").fetchone()[0]
            if hidden_rows != hidden_indexed:
                found.append(("resource_words", f"{hidden_indexed} rows indexed as not listed, {hidden_rows} resources"))
    if "resource_vocab_text" in present:
        words = conn.execute("SELECT count(*) FROM resource_vocab").fetchone()[0]
        indexed = conn.execute("SELECT count(*) FROM resource_vocab_text_docsize").fetchone()[0]
        if indexed != words:
            found.append(("resource_vocab_text", f"{indexed} rows indexed, {words} words"))
    return found


def text_indexes(conn: sqlite3.Connection) -> tuple[str, ...]:
    return text_index.present(conn)


def text_index_check(conn: sqlite3.Connection, table: str) -> str | None:
    """FTS5's 'integrity-check' of one index (compared with its rows where it has content);
    None when in step, else SQLite's message. It is an INSERT for SQLite: run it in a write
    transaction (it changes nothing)."""
    if table not in text_index.TABLES:
        raise ValueError(table)
    try:
        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None


def rebuild_text_index(conn: sqlite3.Connection, table: str) -> None:
    """Make an index anew from its rows: 'rebuild' where it has content, else (the word index)
    emptied and filled again from the resources, as migration 21 filled it."""
    if table == "resource_words":
        conn.execute("INSERT INTO resource_words (resource_words) VALUES ('delete-all')")
        fill_word_index(conn, 1)
    elif table in ("resource_text", "resource_vocab_text"):
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
    else:
        raise ValueError(table)


# -- the extents ------------------------------------------------------------------------------------
def extent_problems(conn: sqlite3.Connection) -> list[str]:
    """Where the R*Tree of extents differs from the resources' boxes; [] when in step."""
    found = []
    check = conn.execute("SELECT rtreecheck('resource_extents')").fetchone()[0]
    if check != "ok":
        found.append(f"R*Tree structure: {check.splitlines()[0]}")
    expected = conn.execute(f"SELECT count(*) FROM ({EXPECTED_EXTENTS})").fetchone()[0]
    held = conn.execute("SELECT count(*) FROM resource_extents").fetchone()[0]
    if expected != held:
        found.append(f"{held} boxes held, {expected} expected")
    tol = EXTENT_TOLERANCE
    wrong = conn.execute(
        f"SELECT count(*) FROM ({EXPECTED_EXTENTS}) x LEFT JOIN resource_extents e ON e.id = x.id"
        " WHERE e.id IS NULL OR abs(e.minx - x.minx) > ? OR abs(e.maxx - x.maxx) > ?"
        " OR abs(e.miny - x.miny) > ? OR abs(e.maxy - x.maxy) > ?", (tol, tol, tol, tol)).fetchone()[0]
    if wrong:
        found.append(f"{wrong} resources' boxes missing or different")
    stray = conn.execute(f"SELECT count(*) FROM resource_extents e WHERE e.id NOT IN (SELECT id FROM ({EXPECTED_EXTENTS}))"
                         ).fetchone()[0]
    if stray:
        found.append(f"{stray} boxes of no resource")
    return found


def rebuild_extents(conn: sqlite3.Connection) -> int:
    """Fill the R*Tree anew from the resources' boxes; how many boxes it holds."""
    conn.execute("DELETE FROM resource_extents")
    conn.execute(f"INSERT INTO resource_extents (id, minx, maxx, miny, maxy) {EXPECTED_EXTENTS}")
    return conn.execute("SELECT count(*) FROM resource_extents").fetchone()[0]


# -- vacuum -----------------------------------------------------------------------------------------
def space(conn: sqlite3.Connection) -> dict[str, Any]:
    """Pages in the database and free pages inside it, and its auto_vacuum mode."""
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    return {"page_size": page_size, "pages": conn.execute("PRAGMA page_count").fetchone()[0],
            "free_pages": conn.execute("PRAGMA freelist_count").fetchone()[0],
            "auto_vacuum": {0: "NONE", 1: "FULL", 2: "INCREMENTAL"}.get(
                conn.execute("PRAGMA auto_vacuum").fetchone()[0], "?")}


def incremental_vacuum(conn: sqlite3.Connection) -> None:
    """Give the free pages back to the file system (auto_vacuum INCREMENTAL only)."""
    conn.execute("PRAGMA incremental_vacuum").fetchall()


def vacuum(conn: sqlite3.Connection) -> None:
    """VACUUM, outside any transaction (Database.maintenance_sync). Its temporary copy goes to a
    file rather than memory (the connections keep temporary tables in memory otherwise)."""
    conn.execute("PRAGMA temp_store = FILE")
    try:
        conn.execute("VACUUM")
    finally:
        conn.execute("PRAGMA temp_store = MEMORY")


def checkpoint(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """Copy the whole log into the database file and empty it (TRUNCATE, waiting for the readers
    up to the busy timeout): (1 if readers kept it from finishing, log frames, frames copied)."""
    row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return row[0], row[1], row[2]


def problems_of_file(path: Path) -> list[str]:
    """``integrity_problems`` of a database file no server uses (a restored one)."""
    try:
        conn = sqlite3.connect(str(path))
    except sqlite3.Error as exc:
        return [str(exc)]
    try:
        return integrity_problems(conn)
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    finally:
        conn.close()
