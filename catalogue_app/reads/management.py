"""What /api/v2/management/ shows of its jobs: lists, one job, a job with its task's state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from catalogue_app.services import management as management_service
from catalogue_app.store import Connection, Row, management_jobs

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller


class JobBrief(msgspec.Struct):
    id: int
    command: str
    app_name: str
    user: int | None
    status: str
    created_at: str


class Job(JobBrief):
    start_time: str | None
    end_time: str | None
    args: list[Any]
    kwargs: dict[str, Any]
    celery_result_id: str | None
    output_message: str | None
    failed: bool
    archive: str | None  # a finished backup job: the file name of its archive, while it is in backups/


class TaskMeta(msgspec.Struct):
    date_done: str | None
    status: str | None
    traceback: str | None
    worker: str | None


class JobStatus(Job):
    celery_task_meta: TaskMeta


def brief(row: Row) -> JobBrief:
    return JobBrief(row["id"], row["command"], row["app_name"], row["user_id"], row["status"], row["created_at"])


def job(row: Row, archive: str | None = None) -> Job:
    b = brief(row)
    return Job(**{f: getattr(b, f) for f in JobBrief.__struct_fields__}, start_time=row["start_time"],
               end_time=row["end_time"], args=json.loads(row["args"]), kwargs=json.loads(row["kwargs"]),
               celery_result_id=row["celery_result_id"], output_message=row["output_message"],
               failed=bool(row["failed"]), archive=archive)


def status(row: Row, archive: str | None = None) -> JobStatus:
    j = job(row, archive)
    done = row["end_time"] if row["status"] == "FINISHED" else None
    state = {"CREATED": None, "QUEUED": "PENDING", "STARTED": "STARTED"}.get(
        row["status"], "FAILURE" if row["failed"] else "SUCCESS")
    return JobStatus(**{f: getattr(j, f) for f in Job.__struct_fields__},
                     celery_task_meta=TaskMeta(done, state, None, f"catalogue@{row['pid']}" if row["pid"] else None))


def page(conn: Connection, filters: dict[str, Any], username: str | None, limit: int,
         offset: int) -> tuple[int, list[JobBrief]]:
    """One page of the jobs, newest first, and how many there are."""
    total, rows = management_jobs.page(conn, filters, username, limit, offset)
    return total, [brief(r) for r in rows]


def one(conn: Connection, job_id: int) -> Job:
    """A job just created or changed."""
    return job(management_jobs.get(conn, job_id))


def detail(conn: Connection, caller: Caller, job_id: int, data_dir: Path) -> Job:
    """A job with its output, and the archive it wrote (staff: services/management.py says who)."""
    return job(*management_service.job_detail(conn, caller, job_id, data_dir))


def with_status(conn: Connection, caller: Caller, job_id: int, data_dir: Path) -> JobStatus:
    """A job with its task's state, as GeoNode's Celery would tell it."""
    return status(*management_service.job_detail(conn, caller, job_id, data_dir))
