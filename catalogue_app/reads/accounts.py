"""What /api/v2/users shows: users as the caller may see them, their groups and their resources."""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalogue_app import rules
from catalogue_app.reads.resources import Resource, render
from catalogue_app.reads.users import GroupProfile, User, group_profiles, user
from catalogue_app.services.errors import NotFound
from catalogue_app.store import Connection, Row, groups, resources, users
from catalogue_app.store.filters import ListSpec
from catalogue_app.store.resources import Viewer

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller

# The fields a list of users may be filtered, sorted and searched on.
FIELDS = users.FIELDS
SEARCH_FIELDS = users.SEARCH_FIELDS


def page(conn: Connection, spec: ListSpec, caller: Caller, base: str, limit: int, offset: int) -> tuple[int, list[User]]:
    """One page of the users the caller may see, and how many there are in all."""
    total, rows = users.page(conn, spec, caller.id, rules.sees_every_account(caller), limit, offset)
    return total, [user(r, caller, base, account=True) for r in rows]


def several(conn: Connection, ids: list[int], caller: Caller, base: str) -> list[User]:
    """Users just written, by id."""
    return [user(r, caller, base, account=True) for r in users.by_ids(conn, ids)]


def visible(conn: Connection, caller: Caller, user_id: int) -> Row:
    """The user's row if the caller may see them, else NotFound (what a write acts on)."""
    row = users.get_visible(conn, user_id, caller.id, rules.sees_every_account(caller))
    if row is None:
        raise NotFound("User")
    return row


def one(conn: Connection, caller: Caller, user_id: int, base: str) -> User:
    """One user as the caller sees them; NotFound when the caller may not see them."""
    return user(visible(conn, caller, user_id), caller, base, account=True)


def groups_of(conn: Connection, caller: Caller, user_id: int, base: str) -> list[GroupProfile]:
    """The groups a visible user belongs to, as far as the caller may see those groups."""
    target = visible(conn, caller, user_id)
    rows = groups.of_user(conn, target["id"], caller.id, rules.sees_every_account(caller))
    return group_profiles(conn, rows, base)


def resources_of(conn: Connection, caller: Caller, viewer: Viewer, user_id: int, base: str, limit: int,
                 offset: int) -> tuple[int, list[Resource]]:
    """One page of what a visible user can see that the caller can see too, and the total."""
    target = visible(conn, caller, user_id)
    seer = resources.viewer_of(conn, target["id"], bool(target["is_superuser"]))
    total, rows = resources.page_visible_to_user(conn, seer, viewer, limit, offset)
    return total, render(conn, rows, caller, viewer, base)
