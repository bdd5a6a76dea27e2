"""Execution requests: the stored life of a job (ready -> running -> finished | failed).

Every change of state is a write of its own, so what a client polls is always what happened.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from typing import Any

from catalogue_app.clock import now
from catalogue_app.store.filters import Field, Listing, ListSpec, fetch_page

OPEN = ("ready", "running")
COLUMNS = ("e.id, e.exec_id, e.user_id, e.func_name, e.action, e.source, e.name, e.status, e.progress, e.step, "
           "e.log, e.input_params, e.output_params, e.resource_id, e.created, e.last_updated, e.finished, "
           "(SELECT username FROM users WHERE id = e.user_id) AS username")
FIELDS: dict[str, Field] = {
    "id": Field("e.id", "int"),
    "exec_id": Field("e.exec_id"),
    "user": Field("e.user_id", "int"),
    "func_name": Field("e.func_name"),
    "action": Field("e.action"),
    "source": Field("e.source"),
    "name": Field("e.name"),
    "status": Field("e.status"),
    "created": Field("e.created", "datetime"),
    "last_updated": Field("e.last_updated", "datetime"),
    "finished": Field("e.finished", "datetime"),
    "geonode_resource": Field("e.resource_id", "int"),
}
SEARCH_FIELDS = {"name": FIELDS["name"], "func_name": FIELDS["func_name"], "action": FIELDS["action"]}
LISTING = Listing(COLUMNS, "execution_requests e", FIELDS, SEARCH_FIELDS, "e.id", "e.id")
NEWEST_FIRST = Listing(COLUMNS, "execution_requests e", FIELDS, SEARCH_FIELDS, "e.id DESC", "e.id DESC")


class Busy(Exception):
    """The resource has a job that is still ready or running."""


def create(conn: sqlite3.Connection, *, user_id: int | None, func_name: str, action: str,
           input_params: dict[str, Any], resource_id: int | None = None, name: str = "",
           source: str | None = None, exclusive: bool = False, exec_id: str | None = None) -> str:
    """Store a new request as 'ready' and return its exec_id. With ``exclusive``, refuse
    (Busy) while another request on the same resource is still open."""
    if exclusive and resource_id is not None and busy(conn, resource_id):
        raise Busy(resource_id)
    exec_id = exec_id or str(uuid.uuid4())
    stamp = now()
    conn.execute(
        "INSERT INTO execution_requests (exec_id, user_id, func_name, action, source, name, input_params,"
        " resource_id, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (exec_id, user_id, func_name, action, source, name, json.dumps(input_params), resource_id, stamp, stamp))
    return exec_id


def parallel_limit(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT max_number FROM upload_parallelism_limits"
                       " WHERE slug = 'default_max_parallel_uploads'").fetchone()
    return row[0] if row else 5


def claim(conn: sqlite3.Connection, exec_id: str, pid: int) -> sqlite3.Row | None:
    """ready -> running for this process. None when another runner has it already, or when
    its user already has as many jobs running as the parallelism limit allows (it then waits
    'ready' until one of them ends)."""
    stamp = now()
    taken = conn.execute(
        "UPDATE execution_requests SET status = 'running', runner_pid = ?, last_updated = ?, step = 'running'"
        " WHERE exec_id = ? AND status = 'ready' AND (user_id IS NULL OR (SELECT count(*) FROM execution_requests"
        " AS busy WHERE busy.user_id = execution_requests.user_id AND busy.status = 'running') < ?)",
        (pid, stamp, exec_id, parallel_limit(conn))).rowcount
    return get(conn, exec_id) if taken else None


def waiting(conn: sqlite3.Connection, user_id: int | None) -> list[str]:
    """The user's requests still 'ready', oldest first."""
    return [r[0] for r in conn.execute(
        "SELECT exec_id FROM execution_requests WHERE status = 'ready' AND user_id IS ? ORDER BY id", (user_id,))]


def finish(conn: sqlite3.Connection, exec_id: str, output: dict[str, Any]) -> None:
    stamp = now()
    conn.execute(
        "UPDATE execution_requests SET status = 'finished', progress = 100, step = 'finished',"
        " output_params = ?, last_updated = ?, finished = ? WHERE exec_id = ?",
        (json.dumps(output), stamp, stamp, exec_id))


def fail(conn: sqlite3.Connection, exec_id: str, func_name: str, message: str,
         extra: dict[str, Any] | None = None) -> None:
    """Mark the request failed; ``extra`` adds the job's own keys to output_params (an import's
    ``errors`` and ``failed_layers``)."""
    stamp = now()
    output = {"error": f"Error occurred while executing the operation: '{func_name}'", "exception": message,
              **(extra or {})}
    conn.execute(
        "UPDATE execution_requests SET status = 'failed', step = 'failed', log = ?, output_params = ?,"
        " last_updated = ?, finished = ? WHERE exec_id = ?", (message, json.dumps(output), stamp, stamp, exec_id))


def fail_abandoned(conn: sqlite3.Connection, alive) -> list[str]:
    """Fail the requests left 'running' by processes that are gone (``alive(pid)`` says which
    still run); their work was one transaction that never committed, so nothing of it stays."""
    gone = [r["exec_id"] for r in conn.execute(
        "SELECT exec_id, runner_pid FROM execution_requests WHERE status = 'running'")
            if r["runner_pid"] is None or not alive(r["runner_pid"])]
    for exec_id in gone:
        func = conn.execute("SELECT func_name FROM execution_requests WHERE exec_id = ?", (exec_id,)).fetchone()[0]
        fail(conn, exec_id, func, "The server stopped while this was running; nothing of it was kept. "
                                  "Send the request again.")
    return gone


def set_progress(conn: sqlite3.Connection, exec_id: str, percent: int) -> None:
    conn.execute("UPDATE execution_requests SET progress = ?, last_updated = ? WHERE exec_id = ? AND status = 'running'",
                 (percent, now(), exec_id))


def open_ids(conn: sqlite3.Connection) -> list[str]:
    """Requests still ready or running (their workspaces under tmp/ are in use)."""
    return [r[0] for r in conn.execute("SELECT exec_id FROM execution_requests WHERE status IN ('ready', 'running')")]


def open_layers(conn: sqlite3.Connection, user_id: int, action: str) -> int:
    """The layers the user's open requests of this action are importing (GeoNode counts
    layers, not requests, against the parallelism limit)."""
    return conn.execute("SELECT coalesce(sum(max(1, coalesce(json_extract(input_params, '$.total_layers'), 1))), 0)"
                        " FROM execution_requests WHERE user_id = ? AND action = ? AND status IN ('ready', 'running')",
                        (user_id, action)).fetchone()[0]


def busy(conn: sqlite3.Connection, resource_id: int) -> bool:
    """Whether a request on the resource is still ready or running."""
    return conn.execute("SELECT 1 FROM execution_requests WHERE status IN ('ready', 'running') AND resource_id = ?",
                        (resource_id,)).fetchone() is not None


def has_ended(conn: sqlite3.Connection, exec_id: str) -> bool:
    """Whether a request of that id exists and is finished or failed."""
    return conn.execute("SELECT 1 FROM execution_requests WHERE exec_id = ? AND status IN ('finished', 'failed')",
                        (exec_id,)).fetchone() is not None


def folder_in_use(conn: sqlite3.Connection, name: str) -> bool:
    """Whether a folder under files/ holds a dataset's current data (datasets.folder), belongs
    to another resource (named by its uuid) or keeps a package conflict's incoming files."""
    return conn.execute("SELECT 1 FROM datasets WHERE folder = ? UNION ALL SELECT 1 FROM resources r WHERE r.uuid = ?"
                        " AND NOT EXISTS (SELECT 1 FROM datasets d WHERE d.resource_id = r.id)"
                        " UNION ALL SELECT 1 FROM package_conflicts WHERE folder = ? LIMIT 1",
                        (name, name, name)).fetchone() is not None


def ready_ids(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT exec_id FROM execution_requests WHERE status = 'ready' ORDER BY id")]


def get(conn: sqlite3.Connection, exec_id: str) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {COLUMNS} FROM execution_requests e WHERE e.exec_id = ?", (exec_id,)).fetchone()


def delete(conn: sqlite3.Connection, exec_id: str) -> bool:
    return conn.execute("DELETE FROM execution_requests WHERE exec_id = ?", (exec_id,)).rowcount > 0


def page(conn: sqlite3.Connection, spec: ListSpec, user_id: int | None, sees_all: bool, limit: int,
         offset: int) -> tuple[int, list[sqlite3.Row]]:
    """A user's own requests (everyone's for admins), oldest first."""
    visible = ("1", []) if sees_all else ("e.user_id = ?", [user_id])
    return fetch_page(conn, LISTING, spec, visible, limit, offset)


def page_of_action(conn: sqlite3.Connection, spec: ListSpec, action: str, user_id: int | None, sees_all: bool,
                   limit: int, offset: int) -> tuple[int, list[sqlite3.Row]]:
    """A user's requests of one action (everyone's for admins), newest first."""
    cond = "e.action = ?" if sees_all else "e.action = ? AND e.user_id = ?"
    args = [action] if sees_all else [action, user_id]
    return fetch_page(conn, NEWEST_FIRST, spec, (cond, args), limit, offset)


def get_by_id(conn: sqlite3.Connection, request_id: int) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {COLUMNS} FROM execution_requests e WHERE e.id = ?", (request_id,)).fetchone()
