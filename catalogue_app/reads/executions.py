"""Execution requests (jobs) and the dataset uploads among them, as their requesters and
administrators see them: /api/v2/executionrequest, the execution status, and /api/v2/uploads.

Who sees which request is the rule book's (services/executions.py asks it): lists hold the
caller's own requests (everyone's for administrators); one request another user made is
answered as if it did not exist, except on the status page (401/403 there).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import msgspec

from catalogue_app import job_messages
from catalogue_app.services import executions as execution_service
from catalogue_app.store import Connection, Row, executions
from catalogue_app.store.filters import ListSpec

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller

# what the lists may be filtered, ordered and searched on
FIELDS = executions.FIELDS
SEARCH_FIELDS = executions.SEARCH_FIELDS

# GeoNode's upload states for the request's status
STATES = {"ready": "PENDING", "running": "RUNNING", "finished": "PROCESSED", "failed": "INVALID"}


class ExecutionRequest(msgspec.Struct):
    exec_id: str
    user: int | None
    status: str
    progress: int
    func_name: str
    created: str
    finished: str | None
    last_updated: str
    input_params: dict[str, Any]
    output_params: dict[str, Any]
    geonode_resource: int | None
    step: str | None
    log: str | None
    name: str
    action: str
    source: str | None
    tasks: dict[str, Any]
    link: str
    status_url: str


class ExecutionStatus(msgspec.Struct):
    user: str | None
    status: str
    progress: int
    func_name: str
    created: str
    finished: str | None
    last_updated: str
    input_params: dict[str, Any]
    output_params: dict[str, Any]
    step: str | None
    log: str | None
    exec_id: str
    status_url: str


class UploadResource(msgspec.Struct):
    pk: int
    detail_url: str


class Upload(msgspec.Struct, kw_only=True):
    id: int
    name: str
    date: str
    create_date: str
    user: str | None
    state: str
    progress: float
    complete: bool
    resource: UploadResource | None
    resources: list[UploadResource]
    execution_id: str
    status_url: str
    log: str | None
    link: str


def status_url(base: str, exec_id: str) -> str:
    return f"{base}/api/v2/resource-service/execution-status/{exec_id}"


def _request(row: Row, base: str, lang: str = "en") -> ExecutionRequest:
    return ExecutionRequest(
        exec_id=row["exec_id"], user=row["user_id"], status=row["status"], progress=row["progress"],
        func_name=row["func_name"], created=row["created"], finished=row["finished"],
        last_updated=row["last_updated"], input_params=json.loads(row["input_params"]),
        output_params=json.loads(row["output_params"]), geonode_resource=row["resource_id"], step=row["step"],
        log=job_messages.translated(row["log"], lang), name=row["name"], action=row["action"], source=row["source"],
        tasks={},
        link=f"{base}/api/v2/executionrequest/{row['exec_id']}", status_url=status_url(base, row["exec_id"]))


def _upload(row: Row, base: str, lang: str = "en") -> Upload:
    output: dict[str, Any] = json.loads(row["output_params"] or "{}")
    made = [UploadResource(r["id"], base + r["detail_url"]) for r in output.get("resources", [])
            if isinstance(r, dict) and isinstance(r.get("id"), int)]
    return Upload(id=row["id"], name=row["name"], date=row["last_updated"], create_date=row["created"],
                  user=row["username"], state=STATES.get(row["status"], "INVALID"), progress=float(row["progress"]),
                  complete=row["status"] == "finished", resource=made[0] if made else None, resources=made,
                  execution_id=row["exec_id"], status_url=status_url(base, row["exec_id"]),
                  log=job_messages.translated(row["log"], lang),
                  link=f"{base}/api/v2/uploads/{row['id']}")


def requests(conn: Connection, caller: Caller, spec: ListSpec, limit: int, offset: int,
             base: str, lang: str = "en") -> tuple[int, list[ExecutionRequest]]:
    """A page of the requests the caller sees, oldest first, and their total."""
    total, rows = executions.page(conn, spec, caller.id, execution_service.sees_all(caller), limit, offset)
    return total, [_request(r, base, lang) for r in rows]


def request(conn: Connection, caller: Caller, exec_id: str, base: str, lang: str = "en") -> ExecutionRequest:
    """One request of the caller's (any for administrators); NotFound for another's."""
    return _request(execution_service.own(conn, caller, exec_id), base, lang)


def status(conn: Connection, caller: Caller, exec_id: str, base: str, lang: str = "en") -> ExecutionStatus:
    """A request's status page: NotFound when there is none, 401/403 when it is another's."""
    row = execution_service.status(conn, caller, exec_id)
    return ExecutionStatus(
        user=row["username"], status=row["status"], progress=row["progress"], func_name=row["func_name"],
        created=row["created"], finished=row["finished"], last_updated=row["last_updated"],
        input_params=json.loads(row["input_params"]), output_params=json.loads(row["output_params"]),
        step=row["step"], log=job_messages.translated(row["log"], lang), exec_id=row["exec_id"],
        status_url=status_url(base, row["exec_id"]))


def uploads(conn: Connection, caller: Caller, spec: ListSpec, limit: int, offset: int,
            base: str, lang: str = "en") -> tuple[int, list[Upload]]:
    """A page of the dataset uploads the caller sees, newest first, and their total."""
    total, rows = executions.page_of_action(conn, spec, "import", caller.id, execution_service.sees_all(caller),
                                            limit, offset)
    return total, [_upload(r, base, lang) for r in rows]


def upload(conn: Connection, caller: Caller, upload_id: int, base: str, lang: str = "en") -> Upload | None:
    """One dataset upload, by its number, if the caller may see it."""
    row = execution_service.upload(conn, caller, upload_id)
    return None if row is None else _upload(row, base, lang)
