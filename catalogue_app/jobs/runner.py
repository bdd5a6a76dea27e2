"""The job runner: a thread pool fed from the execution_requests table.

A request is stored 'ready' before it is handed here. A worker thread claims it with one
conditional UPDATE (so of several server processes exactly one runs it, and no user runs more
jobs at once than the parallelism limit allows), runs the job and marks it 'finished' in one
transaction, or marks it 'failed' with the message when the job raises.
At start-up the runner fails what processes that are gone left 'running', and takes up what
is still 'ready'.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from catalogue_app.jobs import registry
from catalogue_app.store import executions
from catalogue_app.store.db import Database

log = logging.getLogger("catalogue.jobs")


class Runner:
    def __init__(self, db: Database, workers: int):
        self.db = db
        self.pid = os.getpid()
        self.pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="job")

    def start(self) -> None:
        abandoned = self.db.write_sync(executions.fail_abandoned, process_alive)
        if abandoned:
            log.warning("failed %d job(s) left running by a stopped server", len(abandoned))
        for exec_id in self.db.read(executions.ready_ids):
            self.submit(exec_id)

    def submit(self, exec_id: str) -> None:
        self.pool.submit(self._run, exec_id)

    def close(self) -> None:
        """Let running jobs end; queued ones stay 'ready' in the database for the next start."""
        self.pool.shutdown(wait=True, cancel_futures=True)

    def _run(self, exec_id: str) -> None:
        try:
            row = self.db.write_sync(executions.claim, exec_id, self.pid)
            if row is None:  # another process took it
                return
            try:
                fn = registry.job(row["func_name"])
                self.db.write_sync(_run_and_finish, fn, json.loads(row["input_params"]), exec_id)
            except Exception as exc:  # the job's own failure: stored for the client to read
                log.info("job %s (%s) failed: %s", exec_id, row["func_name"], exc)
                self.db.write_sync(executions.fail, exec_id, row["func_name"], str(exc) or type(exc).__name__)
            # what the user's parallelism limit held back may run now
            for waiting in self.db.read(executions.waiting, row["user_id"]):
                self.submit(waiting)
        except Exception:  # the database itself failed; the request stays as it was stored
            log.exception("job %s could not be run", exec_id)


def _run_and_finish(conn: sqlite3.Connection, fn, params: dict[str, Any], exec_id: str) -> None:
    executions.finish(conn, exec_id, fn(conn, params) or {})


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine."""
    if os.name == "nt":  # os.kill would end the process there
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        ctypes.windll.kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        ctypes.windll.kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
