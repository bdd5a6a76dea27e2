"""Jobs of the management commands (GeoNode's statuses CREATED, QUEUED, STARTED, FINISHED).

A job is CREATED, or QUEUED at once when it starts with its creation; a runner moves it to
STARTED with one conditional update (so of several processes one runs it) and to FINISHED
when it ends, however it ends (``failed`` says whether with an error). Its output grows in
``output_message`` while it runs.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from catalogue_app.clock import now

COLUMNS = ("id, command, app_name, user_id, status, created_at, start_time, end_time, args, kwargs,"
           " celery_result_id, output_message, failed, stop_requested, pid")
FILTERS = {"command": "command", "status": "status", "app_name": "app_name", "user": "user_id",
           "task_result_id": "celery_result_id", "celery_result_id": "celery_result_id"}
MAX_OUTPUT = 1_000_000  # characters of output kept (the end of a longer one)


def create(conn: sqlite3.Connection, *, command: str, app_name: str, user_id: int | None, args: list[Any],
           kwargs: dict[str, Any], queued: bool) -> int:
    return conn.execute(
        "INSERT INTO management_jobs (command, app_name, user_id, status, created_at, args, kwargs)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (command, app_name, user_id, "QUEUED" if queued else "CREATED", now(), json.dumps(args), json.dumps(kwargs)),
    ).lastrowid


def get(conn: sqlite3.Connection, job_id: int) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {COLUMNS} FROM management_jobs WHERE id = ?", (job_id,)).fetchone()


def page(conn: sqlite3.Connection, filters: dict[str, Any], username: str | None, limit: int,
         offset: int) -> tuple[int, list[sqlite3.Row]]:
    """Jobs newest first, with equality filters on FILTERS' keys (and the user's name)."""
    where, params = ["1"], []
    for key, value in filters.items():
        where.append(f"{FILTERS[key]} = ?")
        params.append(value)
    if username is not None:
        where.append("user_id = (SELECT id FROM users WHERE username = ?)")
        params.append(username)
    cond = " AND ".join(where)
    total = conn.execute(f"SELECT count(*) FROM management_jobs WHERE {cond}", params).fetchone()[0]
    rows = conn.execute(f"SELECT {COLUMNS} FROM management_jobs WHERE {cond} ORDER BY id DESC LIMIT ? OFFSET ?",
                        [*params, limit, offset]).fetchall()
    return total, rows


def queue(conn: sqlite3.Connection, job_id: int) -> bool:
    """CREATED → QUEUED; whether it moved."""
    return conn.execute("UPDATE management_jobs SET status = 'QUEUED' WHERE id = ? AND status = 'CREATED'",
                        (job_id,)).rowcount > 0


def claim(conn: sqlite3.Connection, job_id: int, pid: int) -> bool:
    """QUEUED → STARTED by process ``pid``; whether this process got it."""
    return conn.execute("UPDATE management_jobs SET status = 'STARTED', start_time = ?, pid = ?"
                        " WHERE id = ? AND status = 'QUEUED' AND stop_requested = 0",
                        (now(), pid, job_id)).rowcount > 0


def queued_ids(conn: sqlite3.Connection) -> list[int]:
    return [r[0] for r in conn.execute("SELECT id FROM management_jobs WHERE status = 'QUEUED' ORDER BY id")]


def set_output(conn: sqlite3.Connection, job_id: int, text: str) -> None:
    conn.execute("UPDATE management_jobs SET output_message = ? WHERE id = ?", (text[-MAX_OUTPUT:], job_id))


def finish(conn: sqlite3.Connection, job_id: int, output: str | None, failed: bool) -> None:
    conn.execute("UPDATE management_jobs SET status = 'FINISHED', end_time = ?, output_message = ?, failed = ?"
                 " WHERE id = ?", (now(), None if output is None else output[-MAX_OUTPUT:], int(failed), job_id))


def request_stop(conn: sqlite3.Connection, job_id: int) -> str | None:
    """Ask the job to stop: one not started yet ends at once; a running one at its next step.
    Its status before, or None when there is no such job."""
    row = get(conn, job_id)
    if row is None:
        return None
    if row["status"] in ("CREATED", "QUEUED"):
        stamp = now()
        conn.execute("UPDATE management_jobs SET status = 'FINISHED', stop_requested = 1, end_time = ?,"
                     " output_message = 'Stopped before it started.' WHERE id = ?", (stamp, job_id))
    elif row["status"] == "STARTED":
        conn.execute("UPDATE management_jobs SET stop_requested = 1 WHERE id = ?", (job_id,))
    return row["status"]


def stop_requested(conn: sqlite3.Connection, job_id: int) -> bool:
    row = conn.execute("SELECT stop_requested FROM management_jobs WHERE id = ?", (job_id,)).fetchone()
    return row is None or bool(row[0])


def abandoned(conn: sqlite3.Connection, alive) -> list[int]:
    """Jobs left STARTED by processes that are gone: finished, saying so."""
    gone = [r["id"] for r in conn.execute("SELECT id, pid FROM management_jobs WHERE status = 'STARTED'")
            if r["pid"] is None or not alive(r["pid"])]
    for job_id in gone:
        conn.execute("UPDATE management_jobs SET status = 'FINISHED', end_time = ?, failed = 1,"
                     " output_message = coalesce(output_message, '') || ? WHERE id = ?",
                     (now(), "\nThe server stopped while this job ran: it did not finish.", job_id))
    return gone
