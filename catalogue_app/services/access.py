"""The rule book (catalogue_app/rules.py) asked with facts from the store.

Every check of who may do what with a resource comes here, or to ``rules`` directly where the
facts are already at hand (a page of rows and what the viewer holds on them). Seeing a resource is
a condition joined into every query (store/resources.py ``visibility``, compiled from the rule
book), never a check made afterwards, so that lists, totals and pages agree.
"""

from __future__ import annotations

from catalogue_app import rules
from catalogue_app.services.errors import Forbidden
from catalogue_app.store import Connection, Row, resources, users
from catalogue_app.store.resources import Viewer

# The actions the services ask for, by the permission that allows them.
CHANGE = rules.CHANGE_METADATA   # PATCH/PUT of a resource (a change permission shows this one too)
DELETE = rules.DELETE
DOWNLOAD = rules.DOWNLOAD
VIEW = rules.VIEW
CHANGE_DATA = rules.CHANGE_DATA
EDIT_STYLE = rules.CHANGE_STYLE
MANAGE = rules.MANAGE


def viewer_of(conn: Connection, user_id: int | None) -> Viewer:
    """The user (None: anonymous) as the rule book sees them, from what is stored now: a job
    asks with this when it runs, so that a right withdrawn since the request counts. A user
    deleted or deactivated since is anonymous."""
    row = users.get(conn, user_id) if user_id is not None else None
    if row is None or not row["is_active"]:
        return resources.viewer_of(conn, None)
    return resources.viewer_of(conn, row["id"], bool(row["is_superuser"]), bool(row["is_staff"]))


def facts(conn: Connection, viewer: Viewer, row: Row | dict) -> rules.ResourceFacts:
    """What the rule book needs of the resource ``row`` (``id``, ``owner_id``, ``group_id``,
    ``resource_type``, ``subtype``) for this viewer."""
    return rules.ResourceFacts.of(row, resources.held_perms(conn, viewer, row["id"]))


def resource_actions(conn: Connection, viewer: Viewer, row: Row | dict) -> tuple[str, ...]:
    """What the viewer may do with the resource: its ``perms``, in body order."""
    return rules.resource_actions(viewer, facts(conn, viewer, row))


def may(conn: Connection, viewer: Viewer, row: Row | dict, action: str) -> bool:
    return action in resource_actions(conn, viewer, row)


def require(conn: Connection, viewer: Viewer, row: Row | dict, action: str) -> None:
    """Forbidden unless the viewer may take ``action`` on the resource."""
    if not may(conn, viewer, row, action):
        raise Forbidden()


def may_set_flag(conn: Connection, viewer: Viewer, row: Row | None, flag: str) -> bool:
    """Whether the viewer may set ``featured``, ``is_published``, ``advertised`` or
    ``is_approved`` on the resource ``row`` (None: a resource being created by the viewer)."""
    return rules.may_set_flag(viewer, None if row is None else facts(conn, viewer, row), flag)

