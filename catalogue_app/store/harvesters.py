"""Harvesters, the records their remotes offer (harvestable resources), their sessions, and the
lease that lets one process at a time run a harvester's work.

Rows are read as they are (nothing derived from them is kept, see migrations.UNCOUNTED), so
lists count their rows each time: there are tens of harvesters and thousands of records, not
millions.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from catalogue_app.clock import now
from catalogue_app.store import origins
from catalogue_app.store.filters import Field, ListSpec, order_clause, where_clause

FIELDS = {
    "id": Field("h.id", "int"),
    "pk": Field("h.id", "int"),
    "name": Field("h.name"),
    "status": Field("h.status"),
    "remote_url": Field("h.remote_url"),
    "harvester_type": Field("h.harvester_type"),
    "last_updated": Field("h.last_updated", "datetime"),
}
SESSION_FIELDS = {
    "id": Field("s.id", "int"),
    "pk": Field("s.id", "int"),
    "started": Field("s.started", "datetime"),
    "updated": Field("s.updated", "datetime"),
    "ended": Field("s.ended", "datetime"),
    "status": Field("s.status"),
    "harvester": Field("s.harvester_id", "int"),
    "harvester_id": Field("s.harvester_id", "int"),
    "session_type": Field("s.session_type"),
}
HARVESTABLE_FIELDS = {
    "id": Field("r.id", "int"),
    "unique_identifier": Field("r.unique_identifier"),
    "title": Field("r.title"),
    "should_be_harvested": Field("r.should_be_harvested", "bool"),
    "status": Field("r.status"),
    "remote_resource_type": Field("r.remote_resource_type"),
    "last_updated": Field("r.last_updated", "datetime"),
}
WRITABLE = ("name", "remote_url", "scheduling_enabled", "harvesting_session_update_frequency",
            "refresh_harvestable_resources_update_frequency", "check_availability_frequency",
            "default_owner_id", "harvester_type", "config", "harvest_new_resources_by_default",
            "delete_orphan_resources_automatically", "status")
LEASE_SECONDS = 60.0

# -- harvesters -------------------------------------------------------------------------------


def _page(conn: sqlite3.Connection, table: str, fields: dict[str, Field], spec: ListSpec, default_order: str,
          tiebreak: str, limit: int, offset: int, cond: str = "1", params: tuple = ()) -> tuple[int, list[sqlite3.Row]]:
    where, args = where_clause(spec, fields, {})
    total = conn.execute(f"SELECT count(*) FROM {table} WHERE {cond}{where}", [*params, *args]).fetchone()[0]
    if total <= offset or limit == 0:
        return total, []
    order = order_clause(spec, fields, default_order, tiebreak)
    rows = conn.execute(f"SELECT * FROM {table} WHERE {cond}{where}{order} LIMIT ? OFFSET ?",
                        [*params, *args, limit, offset]).fetchall()
    return total, rows


def page(conn: sqlite3.Connection, spec: ListSpec, limit: int, offset: int) -> tuple[int, list[sqlite3.Row]]:
    return _page(conn, "harvesters h", FIELDS, spec, "h.id", "h.id", limit, offset)


def get(conn: sqlite3.Connection, harvester_id: int) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM harvesters WHERE id = ?", (harvester_id,)).fetchone()


def name_taken(conn: sqlite3.Connection, name: str, other_than: int | None = None) -> bool:
    return conn.execute("SELECT 1 FROM harvesters WHERE name = ? AND id IS NOT ?", (name, other_than)).fetchone() is not None


def create(conn: sqlite3.Connection, values: dict[str, Any]) -> int:
    values = {**values, "last_updated": now()}
    if "config" in values:
        values["config"] = json.dumps(values["config"])
    names = list(values)
    cur = conn.execute(f"INSERT INTO harvesters ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                       [values[n] for n in names])
    return cur.lastrowid


def update(conn: sqlite3.Connection, harvester_id: int, values: dict[str, Any]) -> None:
    values = {k: (json.dumps(v) if k == "config" else v) for k, v in values.items() if k in WRITABLE}
    values["last_updated"] = now()
    conn.execute(f"UPDATE harvesters SET {', '.join(f'{k} = ?' for k in values)} WHERE id = ?",
                 [*values.values(), harvester_id])
    if "name" in values:  # what it harvested says so under its new name
        origins.harvester_renamed(conn, harvester_id, values["name"])


def names_owned_by(conn: sqlite3.Connection, user_id: int) -> list[str]:
    """The harvesters that give what they harvest to this user."""
    return [r[0] for r in conn.execute("SELECT name FROM harvesters WHERE default_owner_id = ? ORDER BY id", (user_id,))]


def delete(conn: sqlite3.Connection, harvester_id: int) -> bool:
    return conn.execute("DELETE FROM harvesters WHERE id = ?", (harvester_id,)).rowcount > 0


def set_status(conn: sqlite3.Connection, harvester_id: int, status: str, *, only_from: tuple[str, ...] = ()) -> bool:
    """Move to ``status`` (only from one of ``only_from``, when given); whether it moved."""
    sql, args = "UPDATE harvesters SET status = ?, last_updated = ? WHERE id = ?", [status, now(), harvester_id]
    if only_from:
        sql += f" AND status IN ({', '.join('?' * len(only_from))})"
        args.extend(only_from)
    return conn.execute(sql, args).rowcount > 0


def record_availability(conn: sqlite3.Connection, harvester_id: int, available: bool) -> None:
    conn.execute("UPDATE harvesters SET remote_available = ?, last_checked_availability = ? WHERE id = ?",
                 (int(available), now(), harvester_id))


def record_refresh(conn: sqlite3.Connection, harvester_id: int, message: str) -> None:
    conn.execute("UPDATE harvesters SET last_checked_harvestable_resources = ?,"
                 " last_check_harvestable_resources_message = ? WHERE id = ?", (now(), message, harvester_id))


def record_harvest(conn: sqlite3.Connection, harvester_id: int) -> None:
    conn.execute("UPDATE harvesters SET last_harvested = ? WHERE id = ?", (now(), harvester_id))


def all_ids(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    return conn.execute("SELECT * FROM harvesters ORDER BY id").fetchall()


def config_of(row: sqlite3.Row) -> dict[str, Any]:
    return json.loads(row["config"] or "{}")


# -- the lease: one process at a time runs a harvester's work -----------------------------------


def take_lease(conn: sqlite3.Connection, harvester_id: int, pid: int, alive) -> bool:
    """Take the harvester's lease for process ``pid`` if nobody holds it: its holder is gone
    (``alive(pid)`` false) or its time has run out."""
    row = conn.execute("SELECT lease_pid, lease_until FROM harvesters WHERE id = ?", (harvester_id,)).fetchone()
    if row is None:
        return False
    held = row["lease_pid"] is not None and row["lease_until"] is not None and row["lease_until"] > time.time()
    if held and row["lease_pid"] != pid and alive(row["lease_pid"]):
        return False
    conn.execute("UPDATE harvesters SET lease_pid = ?, lease_until = ? WHERE id = ?",
                 (pid, time.time() + LEASE_SECONDS, harvester_id))
    return True


def renew_lease(conn: sqlite3.Connection, harvester_id: int, pid: int) -> bool:
    """Keep the lease a while longer; False when another process has it now."""
    return conn.execute("UPDATE harvesters SET lease_until = ? WHERE id = ? AND lease_pid = ?",
                        (time.time() + LEASE_SECONDS, harvester_id, pid)).rowcount > 0


def release_lease(conn: sqlite3.Connection, harvester_id: int, pid: int) -> None:
    conn.execute("UPDATE harvesters SET lease_pid = NULL, lease_until = NULL WHERE id = ? AND lease_pid = ?",
                 (harvester_id, pid))


# -- harvestable resources --------------------------------------------------------------------


def harvestable_page(conn: sqlite3.Connection, harvester_id: int, spec: ListSpec, limit: int,
                     offset: int) -> tuple[int, list[sqlite3.Row]]:
    return _page(conn, "harvestable_resources r", HARVESTABLE_FIELDS, spec, "r.id", "r.id", limit, offset,
                 "r.harvester_id = ? AND r.offered = 1", (harvester_id,))


def harvestable_by_identifiers(conn: sqlite3.Connection, harvester_id: int, identifiers: list[str]) -> dict[str, sqlite3.Row]:
    found: dict[str, sqlite3.Row] = {}
    for start in range(0, len(identifiers), 500):
        chunk = identifiers[start:start + 500]
        for row in conn.execute(f"SELECT * FROM harvestable_resources WHERE harvester_id = ? AND offered = 1"
                                f" AND unique_identifier IN ({', '.join('?' * len(chunk))})", [harvester_id, *chunk]):
            found[row["unique_identifier"]] = row
    return found


def choose(conn: sqlite3.Connection, harvester_id: int, choices: dict[str, bool]) -> None:
    now_ = now()
    conn.executemany("UPDATE harvestable_resources SET should_be_harvested = ?, last_updated = ?"
                     " WHERE harvester_id = ? AND unique_identifier = ?",
                     [(int(v), now_, harvester_id, k) for k, v in choices.items()])


def drop_harvestable(conn: sqlite3.Connection, harvester_id: int) -> None:
    """Forget what the remote offers (its configuration changed): the list is made anew. What was
    harvested stays, and is found again by its identifier."""
    conn.execute("UPDATE harvestable_resources SET offered = 0, should_be_harvested = 0 WHERE harvester_id = ?",
                 (harvester_id,))


def offer(conn: sqlite3.Connection, harvester_id: int, items: list[dict[str, Any]], by_default: bool) -> None:
    """Record what the remote offers now: new items (chosen when ``by_default``), items seen
    again (title, type and remote date updated; a forgotten one offered again)."""
    now_ = now()
    for item in items:
        conn.execute(
            "INSERT INTO harvestable_resources (harvester_id, unique_identifier, title, remote_resource_type,"
            " remote_url, remote_last_updated, should_be_harvested, last_updated, offered)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)"
            " ON CONFLICT (harvester_id, unique_identifier) DO UPDATE SET title = excluded.title,"
            " remote_resource_type = excluded.remote_resource_type, remote_url = excluded.remote_url,"
            " remote_last_updated = excluded.remote_last_updated, last_updated = excluded.last_updated,"
            " should_be_harvested = CASE WHEN offered = 1 THEN should_be_harvested ELSE excluded.should_be_harvested END,"
            " offered = 1",
            (harvester_id, item["unique_identifier"], item["title"], item["resource_type"], item.get("url"),
             item.get("last_updated"), int(by_default), now_))


def withdraw(conn: sqlite3.Connection, harvester_id: int, kept_identifiers: set[str]) -> list[sqlite3.Row]:
    """Items the remote no longer offers: marked so, and returned (with their local resource)."""
    gone = [row for row in conn.execute("SELECT * FROM harvestable_resources WHERE harvester_id = ? AND offered = 1",
                                        (harvester_id,))
            if row["unique_identifier"] not in kept_identifiers]
    conn.executemany("UPDATE harvestable_resources SET offered = 0, should_be_harvested = 0 WHERE id = ?",
                     [(row["id"],) for row in gone])
    return gone


def to_harvest(conn: sqlite3.Connection, harvester_id: int, since: str) -> list[sqlite3.Row]:
    """The chosen items not harvested since ``since`` (a session's start: what a resumed session
    has still to do)."""
    return conn.execute("SELECT * FROM harvestable_resources WHERE harvester_id = ? AND offered = 1"
                        " AND should_be_harvested = 1 AND (last_harvested IS NULL OR last_harvested < ?)"
                        " ORDER BY id", (harvester_id, since)).fetchall()


def chosen_count(conn: sqlite3.Connection, harvester_id: int) -> int:
    return conn.execute("SELECT count(*) FROM harvestable_resources WHERE harvester_id = ? AND offered = 1"
                        " AND should_be_harvested = 1", (harvester_id,)).fetchone()[0]


def set_item_status(conn: sqlite3.Connection, item_id: int, status: str) -> None:
    conn.execute("UPDATE harvestable_resources SET status = ? WHERE id = ?", (status, item_id))


def harvested(conn: sqlite3.Connection, item_id: int, resource_id: int | None, ok: bool, message: str = "") -> None:
    """The outcome of harvesting an item; when it went well, the remote's date it was harvested at."""
    conn.execute("UPDATE harvestable_resources SET resource_id = coalesce(?, resource_id), last_harvested = ?,"
                 " last_harvesting_succeeded = ?, last_harvesting_message = ?, status = 'ready',"
                 " harvested_remote_date = CASE WHEN ? THEN remote_last_updated ELSE harvested_remote_date END"
                 " WHERE id = ?", (resource_id, now(), int(ok), message, int(ok), item_id))


def set_sourcetype(conn: sqlite3.Connection, resource_id: int, sourcetype: str) -> None:
    """Where a harvested resource's data are: REMOTE (shown from the remote) or COPYREMOTE (copied)."""
    conn.execute("UPDATE resources SET sourcetype = ? WHERE id = ?", (sourcetype, resource_id))


def item(conn: sqlite3.Connection, item_id: int) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM harvestable_resources WHERE id = ?", (item_id,)).fetchone()


def harvested_resource_ids(conn: sqlite3.Connection, harvester_id: int) -> list[int]:
    return [r[0] for r in conn.execute("SELECT resource_id FROM harvestable_resources WHERE harvester_id = ?"
                                       " AND resource_id IS NOT NULL", (harvester_id,))]


def harvested_with_uuid(conn: sqlite3.Connection, uuid: str) -> int | None:
    """The local resource harvested from the remote record of this uuid (kept when it was free)."""
    row = conn.execute("SELECT id FROM resources WHERE uuid = ? AND sourcetype IN ('REMOTE', 'COPYREMOTE')",
                       (uuid,)).fetchone()
    return row[0] if row else None


def origin_of(conn: sqlite3.Connection, resource_id: int) -> sqlite3.Row | None:
    """The harvester and record a local resource came from, if it was harvested."""
    return conn.execute("SELECT r.*, h.name AS harvester_name, h.remote_url FROM harvestable_resources r"
                        " JOIN harvesters h ON h.id = r.harvester_id WHERE r.resource_id = ?", (resource_id,)).fetchone()


def reset_items(conn: sqlite3.Connection, harvester_id: int) -> None:
    """Items left 'updating' or 'harvesting' by a run that stopped are ready again."""
    conn.execute("UPDATE harvestable_resources SET status = 'ready' WHERE harvester_id = ? AND status <> 'ready'",
                 (harvester_id,))


# -- sessions ---------------------------------------------------------------------------------


def session_page(conn: sqlite3.Connection, spec: ListSpec, limit: int, offset: int) -> tuple[int, list[sqlite3.Row]]:
    return _page(conn, "harvesting_sessions s", SESSION_FIELDS, spec, "s.id DESC", "s.id", limit, offset)


def session(conn: sqlite3.Connection, session_id: int) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM harvesting_sessions WHERE id = ?", (session_id,)).fetchone()


def start_session(conn: sqlite3.Connection, harvester_id: int, session_type: str) -> int:
    now_ = now()
    return conn.execute("INSERT INTO harvesting_sessions (harvester_id, session_type, status, started, updated)"
                        " VALUES (?, ?, 'pending', ?, ?)", (harvester_id, session_type, now_, now_)).lastrowid


def open_session(conn: sqlite3.Connection, harvester_id: int, session_type: str) -> sqlite3.Row | None:
    """The newest session of that type that has not ended (one a stopped run left)."""
    return conn.execute("SELECT * FROM harvesting_sessions WHERE harvester_id = ? AND session_type = ?"
                        " AND ended IS NULL ORDER BY id DESC LIMIT 1", (harvester_id, session_type)).fetchone()


MAX_DETAILS = 20_000  # characters of a session's details: the failures past them are not written
MORE = "(more: each record's own message is in the harvester's harvestable resources)"


def session_progress(conn: sqlite3.Connection, session_id: int, *, status: str | None = None, total: int | None = None,
                     done: int = 0, failed: int = 0, detail: str | None = None) -> None:
    """A session's counts moved on, and ``detail`` added to its details as a line, until they
    reach MAX_DETAILS (a session of thousands of failures was rewritten ever longer at each one,
    and sent whole to whoever lists the sessions)."""
    conn.execute("UPDATE harvesting_sessions SET status = coalesce(:status, status),"
                 " total_records_to_process = coalesce(:total, total_records_to_process),"
                 " records_done = records_done + :done, records_failed = records_failed + :failed,"
                 " details = CASE WHEN :detail IS NULL OR length(details) >= :max OR substr(details, -length(:more)) = :more"
                 " THEN details"
                 " WHEN length(details) + length(:detail) >= :max THEN details || char(10) || :more"
                 " WHEN details = '' THEN :detail ELSE details || char(10) || :detail END,"
                 " updated = :now WHERE id = :id",
                 {"status": status, "total": total, "done": done, "failed": failed, "detail": detail,
                  "max": MAX_DETAILS, "more": MORE, "now": now(), "id": session_id})


def end_session(conn: sqlite3.Connection, session_id: int, status: str) -> None:
    now_ = now()
    conn.execute("UPDATE harvesting_sessions SET status = ?, ended = ?, updated = ? WHERE id = ?",
                 (status, now_, now_, session_id))
