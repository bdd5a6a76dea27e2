"""What an upload (a dataset's data, a document's file, an ISO XML or SLD onto a dataset) reads
before its request is stored: the size limit, the open uploads, the dataset it replaces or
changes, and its form's resource fields and permissions, checked in one snapshot."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from catalogue_app import json_text
from catalogue_app.reads import perms_spec
from catalogue_app.rules import Viewer
from catalogue_app.services import access
from catalogue_app.services.errors import Forbidden, Invalid, NotFound
from catalogue_app.services.resource_changes import clean
from catalogue_app.store import Connection, datasets, executions, limits, resources

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller


def _check_parallel(conn: Connection, caller: Caller) -> None:
    """The caller's open uploads may not already reach the parallelism limit."""
    parallel = executions.parallel_limit(conn)
    if executions.open_layers(conn, caller.id, "import") >= parallel:
        raise Invalid(f"The number of active parallel uploads exceeds {parallel}. Wait for the pending "
                      "ones to finish.", code="upload_parallelism_limit_exceeded")


def dataset_size_limit(conn: Connection) -> int:
    """How many bytes a dataset upload may carry."""
    return limits.size_limit(conn, "dataset_upload_size")


def document_size_limit(conn: Connection, caller: Caller) -> int:
    """How many bytes a document upload may carry, once its open uploads are checked (as a
    dataset upload's are)."""
    _check_parallel(conn, caller)
    return limits.size_limit(conn, "document_upload_size")


def target(conn: Connection, viewer: Viewer, resource_pk: int | None, wanted: str) -> int:
    """The dataset ``resource_pk`` names, if the viewer may take the action ``wanted`` on it
    (NotFound or Forbidden otherwise)."""
    row = resources.get_visible(conn, viewer, resource_pk, ("dataset",))
    if row is None or datasets.detail(conn, row["id"]) is None:
        raise NotFound("Dataset")
    if not access.may(conn, viewer, row, wanted):
        raise Forbidden()
    return row["id"]


def replaced(conn: Connection, caller: Caller, name: str) -> int | None:
    """The caller's dataset of that name, which an upload with overwrite_existing_layer replaces."""
    return datasets.of_owner_named(conn, caller.id, name)


def form_checks(conn: Connection, viewer: Viewer, caller: Caller, replace: int | None, fields: dict[str, str]
                ) -> tuple[int | None, dict[str, Any], dict[str, dict[str, str]] | None]:
    """A dataset upload's checks that read the database: the open uploads, the dataset to
    replace (``replace``: its pk, which the caller must be allowed to change the data of), the
    resource fields of the form and its ``permissions``. Returns the dataset replaced, the
    checked changes and the grants."""
    _check_parallel(conn, caller)
    found = target(conn, viewer, replace, access.CHANGE_DATA) if replace else None
    values = {k: fields[k] for k in ("title", "abstract") if fields.get(k)}
    if fields.get("dataset_title"):
        values["title"] = fields["dataset_title"]
    # checked as a new resource's fields; without a title the job names the dataset after its layer
    checked = {"title": "untitled", **values}
    changes = asdict(clean(conn, checked, viewer, None, "dataset"))
    if "title" not in values:
        changes["values"].pop("title", None)
    return found, changes, _permissions(conn, fields.get("permissions"))


def _permissions(conn: Connection, text: str | None) -> dict[str, dict[str, str]] | None:
    """The form's ``permissions`` (either perms-spec shape, as JSON text), checked now."""
    if not text:
        return None
    try:
        body = json_text.loads(text)
    except json.JSONDecodeError as exc:
        raise Invalid(f"permissions: not valid JSON ({exc.msg}).") from None
    return perms_spec.parse(conn, body, "dataset").as_json()
