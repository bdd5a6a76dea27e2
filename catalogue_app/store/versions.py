"""A resource's history: its versions and the tombstones of deleted resources (migration 30).

A version has a uuid (the same wherever it travels), a number within its resource, who made it,
when, through what (``via``), its kind and a summary. A metadata version keeps its fields before
and after in ``changes`` ({field: [before, after]}); a data version's features are kept in the
dataset's GeoPackage, beside the data. A data version is reserved ``pending`` before its
GeoPackage transaction and marked ``done`` after it; ``pending`` rows are settled at start.
"""

from __future__ import annotations

import json
import sqlite3
import uuid as uuids
from typing import Any

from catalogue_app.clock import now
from catalogue_app.store import resource_writes

KINDS = ("data", "replace", "metadata", "revert")
COLUMNS = ("id, uuid, resource_id, number, created, user_id, username, via, kind, state, summary,"
           " changes, reverts_to")


def _next_number(conn: sqlite3.Connection, resource_id: int) -> int:
    row = conn.execute("SELECT MAX(number) FROM resource_versions WHERE resource_id = ?", (resource_id,)).fetchone()
    return (row[0] or 0) + 1


def add(conn: sqlite3.Connection, resource_id: int, *, kind: str, via: str, user_id: int | None,
        username: str | None, summary: dict[str, Any] | None = None, changes: Any = None,
        reverts_to: str | None = None, state: str = "done", version_uuid: str | None = None,
        created: str | None = None) -> sqlite3.Row:
    """A new version of the resource, numbered after its last one; returns its row."""
    conn.execute(
        "INSERT INTO resource_versions (uuid, resource_id, number, created, user_id, username, via, kind,"
        " state, summary, changes, reverts_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (version_uuid or str(uuids.uuid4()), resource_id, _next_number(conn, resource_id), created or now(),
         user_id, username, via, kind, state, json.dumps(summary or {}, separators=(",", ":")),
         None if changes is None else json.dumps(changes, separators=(",", ":"), default=str), reverts_to),
    )
    return conn.execute(f"SELECT {COLUMNS} FROM resource_versions WHERE id = last_insert_rowid()").fetchone()


def settle(conn: sqlite3.Connection, version_uuid: str, summary: dict[str, Any] | None = None) -> None:
    """A pending version whose GeoPackage transaction committed is done."""
    if summary is None:
        conn.execute("UPDATE resource_versions SET state = 'done' WHERE uuid = ?", (version_uuid,))
    else:
        conn.execute("UPDATE resource_versions SET state = 'done', summary = ? WHERE uuid = ?",
                     (json.dumps(summary, separators=(",", ":")), version_uuid))


def drop_pending(conn: sqlite3.Connection, version_uuid: str) -> None:
    """A pending version whose GeoPackage transaction did not commit is forgotten."""
    conn.execute("DELETE FROM resource_versions WHERE uuid = ? AND state = 'pending'", (version_uuid,))


def pending(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    return conn.execute(f"SELECT {COLUMNS} FROM resource_versions WHERE state = 'pending' ORDER BY id").fetchall()


def of_resource(conn: sqlite3.Connection, resource_id: int, offset: int = 0, limit: int = 10,
                include_pending: bool = False) -> tuple[int, list[sqlite3.Row]]:
    """The resource's versions, newest first, and how many there are: those done, and those
    a package conflict keeps aside (kind ``incoming``: store/package_conflicts.py)."""
    where = "resource_id = ?" + ("" if include_pending else " AND state != 'pending'")
    total = conn.execute(f"SELECT COUNT(*) FROM resource_versions WHERE {where}", (resource_id,)).fetchone()[0]
    rows = conn.execute(f"SELECT {COLUMNS} FROM resource_versions WHERE {where} ORDER BY number DESC"
                        " LIMIT ? OFFSET ?", (resource_id, limit, offset)).fetchall()
    return total, rows


def one(conn: sqlite3.Connection, resource_id: int, number: int) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {COLUMNS} FROM resource_versions WHERE resource_id = ? AND number = ?"
                        " AND state = 'done'", (resource_id, number)).fetchone()


def by_uuid(conn: sqlite3.Connection, version_uuid: str) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {COLUMNS} FROM resource_versions WHERE uuid = ?", (version_uuid,)).fetchone()


def between(conn: sqlite3.Connection, resource_id: int, after: int, upto: int) -> list[sqlite3.Row]:
    """The done versions numbered above ``after`` up to ``upto``, oldest first."""
    return conn.execute(f"SELECT {COLUMNS} FROM resource_versions WHERE resource_id = ? AND number > ?"
                        " AND number <= ? AND state = 'done' ORDER BY number", (resource_id, after, upto)).fetchall()


def latest_number(conn: sqlite3.Connection, resource_id: int) -> int:
    row = conn.execute("SELECT MAX(number) FROM resource_versions WHERE resource_id = ? AND state = 'done'",
                       (resource_id,)).fetchone()
    return row[0] or 0


def set_data_version(conn: sqlite3.Connection, resource_id: int, number: int) -> None:
    conn.execute("UPDATE datasets SET data_version = ? WHERE resource_id = ?", (number, resource_id))


# -- dropping old history (catalogue vacuum --drop-versions-before; migration 31) ----------------
DATA = "(kind IN ('data', 'replace') OR (kind = 'revert' AND changes IS NULL))"  # services/history.py is_data


def cuts_before(conn: sqlite3.Connection, before: str) -> list[tuple[int, int]]:
    """Where each resource's history would be cut to forget what was made before ``before`` (an
    ISO time): (resource id, upto) for the resources with versions to drop, the versions numbered
    up to ``upto`` going. The cut stops before the first version made at or after ``before``,
    before the resource's newest version (numbers go on from it, never given twice), and before
    its newest version of data (the one its GeoPackage holds as applied, by which the start-up
    knows the file's history is known here), and before a copy an open package conflict keeps
    aside (a resolved one's version goes with the others)."""
    rows = conn.execute(
        "SELECT resource_id,"
        " MIN(CASE WHEN created >= ? OR state IN ('pending', 'aside') THEN number END),"
        " MAX(CASE WHEN state = 'done' THEN number END),"
        f" MAX(CASE WHEN state = 'done' AND {DATA} THEN number END)"
        " FROM resource_versions WHERE resource_id IN (SELECT resource_id FROM resource_versions WHERE created < ?)"
        " GROUP BY resource_id", (before, before)).fetchall()
    out = []
    for rid, first_new, newest, newest_data in rows:
        if newest is None:
            continue
        upto = min(newest, newest_data or newest, first_new or newest) - 1
        if upto >= 1 and conn.execute("SELECT 1 FROM resource_versions WHERE resource_id = ? AND number <= ?"
                                      " AND state NOT IN ('pending', 'aside')", (rid, upto)).fetchone():
            out.append((rid, upto))
    return out


def cut(conn: sqlite3.Connection, resource_id: int, upto: int, when: str) -> tuple[int, int]:
    """Drop the resource's versions numbered up to ``upto`` and record the cut (never lowered);
    returns how many versions of fields and how many of data went."""
    data = conn.execute(f"DELETE FROM resource_versions WHERE resource_id = ? AND number <= ? AND state = 'done'"
                        f" AND {DATA}", (resource_id, upto)).rowcount
    fields = conn.execute("DELETE FROM resource_versions WHERE resource_id = ? AND number <= ?"
                          " AND state NOT IN ('pending', 'aside')", (resource_id, upto)).rowcount
    conn.execute("INSERT INTO resource_history_cuts (resource_id, upto, dropped) VALUES (?, ?, ?)"
                 " ON CONFLICT (resource_id) DO UPDATE SET upto = excluded.upto, dropped = excluded.dropped"
                 " WHERE excluded.upto > resource_history_cuts.upto", (resource_id, upto, when))
    return fields, data


def cut_of(conn: sqlite3.Connection, resource_id: int) -> sqlite3.Row | None:
    """The resource's cut (upto, dropped), or None when its history was never cut."""
    return conn.execute("SELECT upto, dropped FROM resource_history_cuts WHERE resource_id = ?",
                        (resource_id,)).fetchone()


def cut_datasets(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """The vector datasets whose history was cut: resource id, folder, upto, dropped."""
    return conn.execute("SELECT d.resource_id, d.folder, c.upto, c.dropped FROM resource_history_cuts c"
                        " JOIN datasets d ON d.resource_id = c.resource_id JOIN resources r ON r.id = c.resource_id"
                        " WHERE d.folder IS NOT NULL AND d.folder != '' AND r.subtype IN ('vector', 'vector_time')"
                        " ORDER BY d.resource_id").fetchall()


def bury(conn: sqlite3.Connection, resource_uuid: str, resource_id: int, resource_type: str, title: str,
         user_id: int | None, username: str | None) -> None:
    """The tombstone of a resource deleted now."""
    conn.execute(
        "INSERT OR REPLACE INTO resource_tombstones (uuid, resource_id, resource_type, title, deleted, user_id,"
        " username) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (resource_uuid, resource_id, resource_type, title or "", now(), user_id, username),
    )


def tombstones(conn: sqlite3.Connection, offset: int = 0, limit: int = 10) -> tuple[int, list[sqlite3.Row]]:
    total = conn.execute("SELECT COUNT(*) FROM resource_tombstones").fetchone()[0]
    rows = conn.execute("SELECT uuid, resource_id, resource_type, title, deleted, user_id, username"
                        " FROM resource_tombstones ORDER BY deleted DESC LIMIT ? OFFSET ?", (limit, offset)).fetchall()
    return total, rows


# -- data versions (services/edits.py): the dataset's state after one, and the reconciling at start --
def set_data_state(conn: sqlite3.Connection, resource_id: int, number: int, feature_count: int | None,
                   bbox: tuple[float, float, float, float] | None,
                   ll_bbox: tuple[float, float, float, float] | None) -> bool:
    """The dataset's data as at data version ``number``: its data_version, feature count and
    extent (native and longitude/latitude, with the regions that follow it), unless a later data
    version is recorded already (two edits settling out of order). Returns whether it was set."""
    done = conn.execute("UPDATE datasets SET data_version = ?, feature_count = COALESCE(?, feature_count)"
                        " WHERE resource_id = ? AND data_version <= ?",
                        (number, feature_count, resource_id, number)).rowcount
    if done and bbox is not None and ll_bbox is not None:
        resource_writes.update(conn, resource_id, {
            **dict(zip(("bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1"), bbox)),
            **dict(zip(("ll_x0", "ll_y0", "ll_x1", "ll_y1"), ll_bbox))})
        resource_writes.set_regions_from_extent(conn, resource_id)
    elif done:
        conn.execute("UPDATE resources SET last_updated = ? WHERE id = ?", (now(), resource_id))
    return bool(done)


def add_known(conn: sqlite3.Connection, resource_id: int, *, number: int, version_uuid: str, created: str,
              kind: str, via: str, user_id: int | None, username: str | None, summary: dict[str, Any] | None,
              reverts_to: str | None) -> int:
    """A data version found in a dataset's GeoPackage but not here (an older catalogue restored):
    recorded with its own number when that is free, else with the next; returns the number."""
    if conn.execute("SELECT 1 FROM resource_versions WHERE resource_id = ? AND number = ?",
                    (resource_id, number)).fetchone():
        number = _next_number(conn, resource_id)
    if user_id is not None and conn.execute("SELECT 1 FROM users WHERE id = ?", (user_id,)).fetchone() is None:
        user_id = None
    conn.execute(
        "INSERT INTO resource_versions (uuid, resource_id, number, created, user_id, username, via, kind, state,"
        " summary, reverts_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'done', ?, ?)",
        (version_uuid, resource_id, number, created, user_id, username, via, kind,
         json.dumps(summary or {}, separators=(",", ":")), reverts_to))
    return number


def vector_datasets(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Every dataset with data of its own: resource id, folder, data_version, srid."""
    return conn.execute("SELECT d.resource_id, d.folder, d.data_version, r.srid FROM datasets d"
                        " JOIN resources r ON r.id = d.resource_id"
                        " WHERE d.folder IS NOT NULL AND d.folder != '' AND r.subtype IN ('vector', 'vector_time')"
                        " ORDER BY d.resource_id").fetchall()


def data_target(conn: sqlite3.Connection, resource_id: int) -> sqlite3.Row | None:
    """What an edit of the dataset needs: its folder, subtype, srid, data_version."""
    return conn.execute("SELECT d.resource_id, d.folder, d.data_version, r.subtype, r.srid,"
                        " (SELECT 1 FROM remote_layers rl WHERE rl.resource_id = r.id) AS remote"
                        " FROM datasets d JOIN resources r ON r.id = d.resource_id WHERE d.resource_id = ?",
                        (resource_id,)).fetchone()
