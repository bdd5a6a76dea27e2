"""The rules of management commands over HTTP (GeoNode's, facts §16): staff only; a job is made
from a command's name, ``args`` (a list) and ``kwargs`` (an object), and starts at once unless
``autostart`` is false; ``--help`` is refused as an argument (the help is its own route)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalogue_app.management import registry
from catalogue_app.services import backups
from catalogue_app.services.backups import require_staff  # the staff rule of every management route
from catalogue_app.services.errors import Invalid, NotFound
from catalogue_app.store import Connection, Row, management_jobs

MAX_ARGS = 1000
MAX_TEXT = 100_000  # characters of all arguments together


class JobRefused(Invalid):
    """A job that cannot be started, with GeoNode's empty job fields as ``data``."""


def command_named(caller, name: str | None, *, from_body: bool):
    """The command of that name; 404 from the URL, 400 from a body (GeoNode's messages)."""
    require_staff(caller)
    if name is None and from_body:
        raise Invalid("This field may not be null.")
    command = registry.command(name) if isinstance(name, str) and name in registry.known() else None
    if command is None or not command.over_http:
        if from_body:
            raise Invalid("Command not found")
        raise NotFound(message="Command not found")
    return command


def checked_body(body: Any) -> tuple[list[Any], dict[str, Any], bool]:
    """``args``, ``kwargs`` and ``autostart`` of a job request, checked."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise Invalid("Expected a JSON object with args, kwargs and autostart.")
    args = body.get("args", [])
    kwargs = body.get("kwargs", {})
    autostart = body.get("autostart", True)
    if args is None:
        args = []
    if kwargs is None:
        kwargs = {}
    if not isinstance(args, list):
        raise Invalid("args must be a list")
    if not isinstance(kwargs, dict):
        raise Invalid("kwargs must be a dict")
    if not isinstance(autostart, bool):
        raise Invalid("autostart must be true or false")
    if "--help" in args or "-h" in args or "help" in kwargs:
        raise Invalid('Forbidden argument: "--help"')
    values = [*args, *kwargs.keys(), *kwargs.values()]
    if len(values) > MAX_ARGS or sum(len(str(v)) for v in values) > MAX_TEXT:
        raise Invalid(f"Too many or too long arguments (at most {MAX_ARGS} values, {MAX_TEXT} characters).")
    if any(isinstance(v, dict) for v in values):
        raise Invalid("Arguments are strings, numbers, booleans or lists of them.")
    return args, kwargs, autostart


def create_job(conn: Connection, caller, name: str, body: Any, from_body: bool = False) -> int:
    command = command_named(caller, name, from_body=from_body)
    args, kwargs, autostart = checked_body(body)
    return management_jobs.create(conn, command=command.name, app_name=command.app_name, user_id=caller.id,
                                  args=args, kwargs=kwargs, queued=autostart)


def job(conn: Connection, caller, job_id: int) -> Row:
    require_staff(caller)
    row = management_jobs.get(conn, job_id)
    if row is None:
        raise NotFound("Job")
    return row


def job_detail(conn: Connection, caller, job_id: int, data_dir: Path) -> tuple[Row, str | None]:
    """A job, and the name of the archive it wrote when it is a finished backup whose archive is
    still in backups/."""
    row = job(conn, caller, job_id)
    return row, backups.archive_of_job(row["command"], row["status"], bool(row["failed"]), row["output_message"],
                                       data_dir)


def start(conn: Connection, caller, job_id: int) -> None:
    row = job(conn, caller, job_id)
    if not management_jobs.queue(conn, job_id):
        raise JobRefused(f'You can not start the job {job_id} because its status is "{row["status"]}".')


def stop(conn: Connection, caller, job_id: int) -> None:
    job(conn, caller, job_id)
    management_jobs.request_stop(conn, job_id)
