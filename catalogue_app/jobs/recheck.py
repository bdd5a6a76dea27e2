"""A job asks the rule book again when it runs.

The API checks a request when it arrives; the job runs later (at once, or after the user's
other jobs, or after a restart). Whatever was withdrawn meanwhile (a permission, a group
membership, the account itself, staff or superuser status) refuses the job: ``check`` raises
Withdrawn inside the transaction that would write the job's work, so the request ends
'failed' with the message and nothing of the job is kept.

Who asked is the request's user, as stored now (services/access.py ``viewer_of``). What the job
needs of them, by its kind (``NEEDS``): an action on the resource it works on (found as the job
finds it: by the uuid in its parameters, else the request's resource), asked of the rule book
(``access.resource_actions``) as the HTTP check asked it, and for each flag an update sets, the
flag's own permission; or a rule about the user alone (ingest, publish). A resource that no longer exists is left to the job, which says so in its own words.
A management job asks ``check_command`` before its command starts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from catalogue_app import rules
from catalogue_app.services import access
from catalogue_app.store import Connection, Row, resources, users
from catalogue_app.store.resources import DOWNLOADABLE, Viewer

NOTHING_DONE = "Nothing was done."


class Withdrawn(Exception):
    """The user who asked may no longer do what the request does; the job is refused."""


@dataclass(frozen=True)
class Need:
    """What a kind of job needs of the user who asked: ``doing`` says what it does (for the
    message); ``action`` the rule book's action on its resource (or a function of the resource's
    row that names it; None: it works on no resource); ``person`` a rule about the user alone,
    and ``who`` names the users that rule lets in (for the message)."""

    doing: str
    action: str | Callable[[Row], str] | None = None
    person: Callable[[Viewer], bool] = rules.may_add_resources
    who: str = ""


def _copy_action(row: Row) -> str:
    """A copy needs to download a dataset or a document, to see anything else (services/resources.py)."""
    return access.DOWNLOAD if row["resource_type"] in DOWNLOADABLE else access.VIEW


INGEST = Need("register files from the server's import folder", person=rules.may_ingest, who="staff")
NEEDS: dict[str, Need] = {
    "delete": Need("delete this resource", access.DELETE),
    "update": Need("change this resource", access.CHANGE),
    "copy": Need("copy this resource", _copy_action),
    "set_permissions": Need("change the permissions of this resource", access.MANAGE),
    "remove_permissions": Need("change the permissions of this resource", access.MANAGE),
    "apply_metadata": Need("change the metadata of this dataset", access.CHANGE),
    "apply_style": Need("change the style of this dataset", access.EDIT_STYLE),
    "import": Need("replace the data of this dataset", access.CHANGE_DATA),  # with no resource: a new dataset
    "create": Need("add resources"),
    "ingest": INGEST,  # a dataset's ingest is an 'import' whose action is 'ingest'
    "publish": Need("publish resources to a remote", person=rules.may_publish, who="superusers"),
    "package_import": Need("import packages"),
    "package_export": Need("export packages", person=lambda viewer: not viewer.is_anonymous, who="signed-in users"),
}
COMMAND = Need("run management commands", person=rules.may_run_management, who="staff")


def check(conn: Connection, request: Row) -> None:
    """Raise Withdrawn when the user who asked for ``request`` (an execution_requests row) may
    no longer do what it does. Kinds not in NEEDS are left to the job."""
    need = INGEST if request["action"] == "ingest" else NEEDS.get(request["func_name"])
    if need is None:
        return
    viewer, name = _asker(conn, request["user_id"], need)
    rid = _resource(conn, request) if need.action is not None else None
    if rid is None:
        return
    row = resources.get_visible(conn, viewer, rid)
    action = need.action(row) if callable(need.action) and row is not None else need.action
    if row is None or action not in access.resource_actions(conn, viewer, row):
        raise Withdrawn(f"Refused when the job ran: {name} may no longer {need.doing} (a permission was "
                        f"withdrawn after the request was sent). {NOTHING_DONE}")
    for flag in _flags(request):
        if not access.may_set_flag(conn, viewer, row, flag):
            raise Withdrawn(f"Refused when the job ran: {name} may no longer set {flag} on this resource (a "
                            f"permission was withdrawn after the request was sent). {NOTHING_DONE}")


def _flags(request: Row) -> list[str]:
    """The flags (featured, is_approved, ...) an update sets: each needs its own permission."""
    if request["func_name"] != "update":
        return []
    changes = json.loads(request["input_params"] or "{}").get("changes")
    values = changes.get("values") if isinstance(changes, dict) else None
    return [key for key in values if key in rules.FLAGS] if isinstance(values, dict) else []


def check_command(conn: Connection, user_id: int | None) -> None:
    """Raise Withdrawn when the user who asked for a management job may no longer run it."""
    _asker(conn, user_id, COMMAND)


def _asker(conn: Connection, user_id: int | None, need: Need) -> tuple[Viewer, str]:
    """The user who asked as the rule book sees them now, and their name; Withdrawn when they no
    longer exist, are no longer active, or no longer pass the ``need``'s rule about users."""
    viewer = access.viewer_of(conn, user_id)
    stored = users.get(conn, user_id) if user_id is not None else None
    if stored is None:
        raise Withdrawn(f"Refused when the job ran: the user who asked for it no longer exists. {NOTHING_DONE}")
    if viewer.is_anonymous:  # deactivated since
        raise Withdrawn(f"Refused when the job ran: the account of {stored['username']} is no longer active. "
                        f"{NOTHING_DONE}")
    if not need.person(viewer):
        raise Withdrawn(f"Refused when the job ran: only {need.who} may {need.doing}; {stored['username']} no "
                        f"longer is one of them. {NOTHING_DONE}")
    return viewer, stored["username"]


def _resource(conn: Connection, request: Row) -> int | None:
    """The id of the resource the job works on, found as the job finds it (by the uuid in its
    parameters where it has one, else the request's resource); None when there is none (any
    more), which the job itself reports."""
    params: dict[str, Any] = json.loads(request["input_params"] or "{}")
    uuid = params.get("uuid") or params.get("source_uuid")
    if isinstance(uuid, str):
        return resources.id_by_uuid(conn, uuid)
    rid = request["resource_id"]
    return rid if rid is not None and resources.exists(conn, rid) else None
