"""Execution requests (jobs) and the uploads they carry, as their requesters and administrators
see them (the rule book's ``execution_actions``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from catalogue_app import rules
from catalogue_app.services.errors import Busy, NotFound, refusal_for
from catalogue_app.store import Connection, Row, executions


def _missing(exec_id: str) -> NotFound:
    return NotFound(message=f"uuid provided does not exists: {exec_id}")


def own(conn: Connection, caller, exec_id: str) -> Row:
    """The request if the caller may see it; NotFound otherwise, as if it did not exist."""
    row = executions.get(conn, exec_id)
    if row is None or "view" not in rules.execution_actions(caller, row["user_id"]):
        raise _missing(exec_id)
    return row


def status(conn: Connection, caller, exec_id: str) -> Row:
    """The request for its status page: NotFound when there is none, 401/403 when it is another's."""
    row = executions.get(conn, exec_id)
    if row is None:
        raise _missing(exec_id)
    if "view" not in rules.execution_actions(caller, row["user_id"]):
        raise refusal_for(caller)
    return row


def upload(conn: Connection, caller, upload_id: int) -> Row | None:
    """An upload (an import request, by its number) if the caller may see it, else None."""
    row = executions.get_by_id(conn, upload_id)
    if row is None or row["action"] != "import" or "view" not in rules.execution_actions(caller, row["user_id"]):
        return None
    return row


def sees_all(caller) -> bool:
    """Whether lists of requests and uploads hold everyone's for the caller (else their own)."""
    return rules.sees_every_execution(caller)


def forget(conn: Connection, caller, exec_id: str) -> None:
    """Delete the record of a finished or failed request the caller may delete."""
    row = executions.get(conn, exec_id)
    if row is None or "delete" not in rules.execution_actions(caller, row["user_id"]):
        raise _missing(exec_id)
    if row["status"] in executions.OPEN:
        raise Busy("This execution request is still ready or running; it can be removed once it ends.")
    executions.delete(conn, exec_id)


RESOURCE_BUSY = ("A previous change of this resource is still being applied; "
                 "wait until its execution request is finished, then send this one again.")


def queue(conn: Connection, caller, func_name: str, action: str, input_params: dict[str, Any],
          resource_id: int | None, run_here: Callable[[Connection, str, str], bool], *, name: str = "",
          source: str | None = None, exclusive: bool = True, exec_id: str | None = None) -> tuple[str, bool]:
    """Store a 'ready' request of the caller's (``exec_id`` when its workspace was filled
    beforehand) and offer it to ``run_here`` (the runner runs a short one inside this write);
    returns its id and whether it ran. With ``exclusive``, Busy while a previous change of the
    resource is still ready or running."""
    try:
        stored = executions.create(conn, user_id=caller.id, func_name=func_name, action=action,
                                   input_params=input_params, resource_id=resource_id, name=name, source=source,
                                   exclusive=exclusive and resource_id is not None, exec_id=exec_id)
    except executions.Busy:
        raise Busy(RESOURCE_BUSY) from None
    return stored, run_here(conn, stored, func_name)
