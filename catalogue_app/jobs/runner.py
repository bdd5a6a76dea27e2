"""The job runner: a thread pool fed from the execution_requests table.

A request is stored 'ready' before it is handed here. A worker thread claims it with one
conditional UPDATE (so of several server processes exactly one runs it, and no user runs more
jobs at once than the parallelism limit allows), runs the job and marks it 'finished' in one
transaction, or marks it 'failed' with the message when the job raises.

A job is a function ``fn(conn, params) -> output`` run inside the transaction that claims the
request and ends it (so the writer, which the clients' writes wait for, takes one turn for it,
and a crash leaves it 'ready' rather than 'running'), or an object
with ``stage(params, ctx) -> staged`` (slow work outside any transaction: files written only
under ``ctx.workspace``, progress reported with ``ctx.progress``), ``commit(conn, params,
staged, ctx) -> output`` (inside the transaction) and optionally ``after(params, staged, ctx)``
(once the transaction has committed). The workspace is removed when the job ends. An exception
with an ``output`` dict adds its keys to the failed request's output_params; a job object's
``failed_output(params, staged, message)``, when it has one, gives them for a refused job.

Before a job writes anything, in the transaction that would keep its work, the user who asked
is asked again whether they still may (jobs/recheck.py): if not, the request fails with the
message and nothing of the job is kept.

At start-up the runner fails what processes that are gone left 'running', sweeps what they
left in tmp/ and files/; then it takes up what is 'ready', at once and at every tick (a
request whose user's other jobs held it back, one a stopped process had queued).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalogue_app import files, processes
from catalogue_app.jobs import recheck, registry
from catalogue_app.jobs.folders import Folders
from catalogue_app.store import executions
from catalogue_app.store.db import Database, savepoint
from catalogue_app.ticker import Ticker

log = logging.getLogger("catalogue.jobs")


@dataclass
class JobContext:
    """What a job may use: its own workspace, the folders, the database, and a way to report
    progress (a job run outside the runner, by a command or a harvest, has no request to
    report to: ``reports`` is false)."""

    exec_id: str
    workspace: Path
    folders: Folders
    db: Database
    reports: bool = True
    _reported: int = 0

    def progress(self, percent: int) -> None:
        if not self.reports:
            return
        percent = max(0, min(99, int(percent)))
        if percent >= self._reported + 5:  # a write for every 5 %, not for every chunk
            self._reported = percent
            self.db.write_sync(executions.set_progress, self.exec_id, percent)


class JobRunner(Ticker):
    name = "job"

    def __init__(self, db: Database, folders: Folders, tick_seconds: float = 30.0, workers: int = 4):
        super().__init__(db, folders, tick_seconds, workers)
        self._queued: set[str] = set()  # requests handed to the pool and not yet taken up
        self._queued_lock = threading.Lock()

    def recover(self) -> None:
        abandoned = self.db.write_sync(executions.fail_abandoned, process_alive)
        if abandoned:
            log.warning("failed %d job(s) left running by a stopped server", len(abandoned))
        in_use = self.db.read_sync(executions.open_ids)
        swept = files.sweep(self.folders.tmp, self.folders.files, in_use,
                            lambda name: self.db.read_sync(executions.folder_in_use, name),
                            lambda name: self.db.read_sync(executions.has_ended, name))
        if swept:
            log.warning("removed %d file(s) or folder(s) left by stopped jobs", len(swept))

    def look(self) -> None:
        """Take up what is ready (a request this process queued already is not queued twice)."""
        for exec_id in self.db.read_sync(executions.ready_ids):
            self.submit(exec_id)

    def submit(self, exec_id: str) -> None:
        """Queue a try at the request, unless one is queued already (each job that ends hands
        back every request of its user still waiting, which may be many)."""
        with self._queued_lock:
            if exec_id in self._queued:
                return
            self._queued.add(exec_id)
        self.pool.submit(self._run, exec_id)

    def run_here(self, conn: sqlite3.Connection, exec_id: str, func_name: str) -> bool:
        """Inside the write transaction that stored request ``exec_id``: a job that works in one
        transaction (permissions, metadata) is claimed, run and ended there too, one turn of the
        writer instead of two; whether it ran (when not, ``submit`` it)."""
        job = _known_job(func_name)
        return callable(job) and _claim_and_run(conn, exec_id, self.pid, job) is not None

    def _run(self, exec_id: str) -> None:
        with self._queued_lock:
            self._queued.discard(exec_id)
        try:
            # a read first: a request another process has taken costs no write (and no turn of
            # the writer, which the requests of the clients wait for)
            stored = self.db.read_sync(executions.get, exec_id)
            if stored is None or stored["status"] != "ready":
                return
            job = _known_job(stored["func_name"])
            if callable(job):  # claimed, run and ended in one transaction
                row = self.db.write_sync(_claim_and_run, exec_id, self.pid, job)
            else:
                row = self.db.write_sync(executions.claim, exec_id, self.pid)
            if row is None:  # another process took it, or the user's limit holds it back
                return
            if not callable(job):
                self._stage_and_commit(job, row)
            # what the user's parallelism limit held back may run now
            for waiting in self.db.read_sync(executions.waiting, row["user_id"]):
                self.submit(waiting)
        except Exception:  # the database itself failed; the request stays as it was stored
            log.exception("job %s could not be run", exec_id)

    def _stage_and_commit(self, job: Any, row: sqlite3.Row) -> None:
        """A claimed job that stages work first (or one of an unknown kind: the exception it
        stands for fails the request)."""
        exec_id = row["exec_id"]
        ctx = JobContext(exec_id, self.folders.workspace(exec_id), self.folders, self.db)
        try:
            if isinstance(job, Exception):
                raise job
            self._work(job, row, json.loads(row["input_params"]), ctx)
        except Exception as exc:  # the job's own failure: stored for the client to read
            log.info("job %s (%s) failed: %s", exec_id, row["func_name"], exc)
            files.remove(ctx.workspace)  # gone before a client reads 'failed'
            self.db.write_sync(executions.fail, exec_id, row["func_name"], str(exc) or type(exc).__name__,
                               getattr(exc, "output", None))
        finally:
            files.remove(ctx.workspace)

    def _work(self, job: Any, row: sqlite3.Row, params: dict[str, Any], ctx: JobContext) -> None:
        ctx.workspace.mkdir(parents=True, exist_ok=True)
        staged = job.stage(params, ctx) if hasattr(job, "stage") else None
        try:
            self.db.write_sync(_commit_and_finish, row, lambda conn: job.commit(conn, params, staged, ctx))
        except recheck.Withdrawn as exc:
            if hasattr(job, "failed_output"):
                exc.output = job.failed_output(params, staged, str(exc))
            raise
        if hasattr(job, "after"):
            try:
                job.after(params, staged, ctx)
            except Exception:  # committed already: what is left over is swept at start-up
                log.exception("job %s: clean-up after commit failed", ctx.exec_id)


def _commit_and_finish(conn: sqlite3.Connection, row: sqlite3.Row, commit) -> None:
    """Ask again whether the user may, write the job's work and end the request, in one transaction."""
    recheck.check(conn, row)
    executions.finish(conn, row["exec_id"], commit(conn) or {})


def _known_job(func_name: str) -> Any:
    """The job of that name, or the exception that says there is none (stored as the request's
    failure once it is claimed)."""
    try:
        return registry.job(func_name)
    except Exception as exc:  # noqa: BLE001 - whatever it is, the request fails with it
        return exc


def _claim_and_run(conn: sqlite3.Connection, exec_id: str, pid: int, job: Callable) -> sqlite3.Row | None:
    """Claim the request and run a job function in the same transaction, and store it finished,
    or failed with the message (what the job wrote is rolled back, the claim stays): one turn of
    the writer instead of two, and no 'running' state a crash could leave behind (a crash
    leaves the request 'ready', to run at the next start). None when it was not claimed."""
    row = executions.claim(conn, exec_id, pid)
    if row is None:
        return None
    try:
        with savepoint(conn):
            recheck.check(conn, row)
            output = job(conn, json.loads(row["input_params"]))
    except Exception as exc:  # noqa: BLE001 - the job's own failure: stored for the client to read
        log.info("job %s (%s) failed: %s", exec_id, row["func_name"], exc)
        executions.fail(conn, exec_id, row["func_name"], str(exc) or type(exc).__name__, getattr(exc, "output", None))
    else:
        executions.finish(conn, exec_id, output or {})
    return row


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine."""
    return processes.alive(pid)
