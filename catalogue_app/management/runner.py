"""The runner of management jobs: one per server process, a thread that takes up QUEUED jobs
(at once when the API queues one, else every few seconds) and runs each on a small pool.

A job is claimed with one conditional update, so of several processes one runs it. Its output
is kept in the job while it runs (written at most twice a second). A stop request is seen by
the command at its next ``ctx.check()``. The user who asked must still be staff when the job
starts (jobs/recheck.py). However the command ends, the job ends FINISHED (as in GeoNode, which
has no failed status); ``failed`` and the output say how. At start-up, jobs left STARTED by a
process that is gone are finished, saying so. The shape of the runner is ticker.py's.
"""

from __future__ import annotations

import io
import json
import logging
import threading
import time
import traceback

from catalogue_app import processes
from catalogue_app.jobs import recheck
from catalogue_app.jobs.folders import Folders
from catalogue_app.management import registry
from catalogue_app.management.base import CommandContext, CommandError, Stopped, argv
from catalogue_app.store import Connection, management_jobs
from catalogue_app.store.db import Database
from catalogue_app.ticker import Ticker

log = logging.getLogger("catalogue.management")
FLUSH_SECONDS = 0.5


class JobOutput(io.TextIOBase):
    """A text stream kept in the job's output_message as it grows."""

    def __init__(self, db: Database, job_id: int):
        self.db, self.job_id = db, job_id
        self.parts: list[str] = []
        self._lock = threading.Lock()
        self._written = 0.0

    def write(self, text: str) -> int:
        with self._lock:
            self.parts.append(text)
        if time.monotonic() - self._written > FLUSH_SECONDS:
            self.flush()
        return len(text)

    def flush(self) -> None:
        self._written = time.monotonic()
        self.db.write_sync(management_jobs.set_output, self.job_id, self.text())

    def text(self) -> str:
        with self._lock:
            return "".join(self.parts)


class ManagementRunner(Ticker):
    name = "command"

    def __init__(self, db: Database, folders: Folders, tick_seconds: float = 5.0, workers: int = 2):
        super().__init__(db, folders, tick_seconds, workers)

    def recover(self) -> None:
        gone = self.db.write_sync(management_jobs.abandoned, processes.alive)
        if gone:
            log.warning("finished %d management job(s) left running by a stopped server", len(gone))

    def look(self) -> None:
        for job_id in self.db.read_sync(management_jobs.queued_ids):
            if self.db.write_sync(_claim, job_id, self.pid):
                self.pool.submit(self.run, job_id)

    def run(self, job_id: int) -> None:
        """Run a claimed job to its end."""
        row = self.db.read_sync(management_jobs.get, job_id)
        out = JobOutput(self.db, job_id)
        failed = False
        try:
            command = registry.command(row["command"])
            if command is None or not command.over_http:
                raise CommandError("Command not found")
            options = command.parser().parse_args(argv(json.loads(row["args"]), json.loads(row["kwargs"])))
            folders = self.folders
            ctx = CommandContext(db=self.db, data_dir=folders.data, files_dir=folders.files, tmp_dir=folders.tmp,
                                 import_dir=folders.imports, out=out, user_id=row["user_id"], server_running=True,
                                 stop_requested=lambda: self.stopping or self.db.read_sync(
                                     management_jobs.stop_requested, job_id))
            command.run(ctx, options)
        except Stopped:
            out.write("Stopped.\n")
        except CommandError as exc:
            failed = True
            out.write(f"{exc}\n")
        except Exception:  # the command's own failure: its traceback is its output, as GeoNode's
            failed = True
            log.exception("management job %s (%s) failed", job_id, row["command"])
            out.write(traceback.format_exc())
        try:
            self.db.write_sync(management_jobs.finish, job_id, out.text(), failed)
        except Exception:
            log.exception("management job %s could not be finished", job_id)


def _claim(conn: Connection, job_id: int, pid: int) -> bool:
    """Claim a queued job for this process; whether it is to run. A job whose user may no longer
    run commands (jobs/recheck.py) ends here, in the same transaction: failed, saying why."""
    if not management_jobs.claim(conn, job_id, pid):
        return False
    try:
        recheck.check_command(conn, management_jobs.get(conn, job_id)["user_id"])
    except recheck.Withdrawn as exc:
        management_jobs.finish(conn, job_id, f"{exc}\n", True)
        return False
    return True
