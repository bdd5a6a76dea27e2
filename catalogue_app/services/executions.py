"""Execution requests (jobs) and the uploads they carry, as their requesters and administrators
see them (the rule book's ``execution_actions``)."""

from __future__ import annotations

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
