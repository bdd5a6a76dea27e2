"""What /api/v2/groups shows: group profiles as the caller may see them, their people and resources."""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalogue_app.reads.resources import Resource, render
from catalogue_app.reads.users import GroupProfile, User, group_profiles, user
from catalogue_app.services import groups as group_service
from catalogue_app.store import Connection, Row, groups, resources, users
from catalogue_app.store.filters import ListSpec
from catalogue_app.store.resources import Viewer

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller

# The fields a list of groups may be filtered, sorted and searched on.
FIELDS = groups.FIELDS
SEARCH_FIELDS = groups.SEARCH_FIELDS


def page(conn: Connection, spec: ListSpec, caller: Caller, base: str, limit: int,
         offset: int) -> tuple[int, list[GroupProfile]]:
    """One page of the group profiles the caller may see, and how many there are in all."""
    total, rows = groups.page(conn, spec, caller.id, group_service.sees_all(caller), limit, offset)
    return total, group_profiles(conn, rows, base)


def several(conn: Connection, profile_ids: list[int], base: str) -> list[GroupProfile]:
    """Group profiles just written, in the order of ``profile_ids`` (those gone are left out)."""
    rows = [groups.get(conn, pid) for pid in profile_ids]
    return group_profiles(conn, [r for r in rows if r is not None], base)


def visible(conn: Connection, caller: Caller, profile_id: int) -> Row:
    """The group profile's row if the caller may see it, else NotFound (what a write acts on)."""
    return group_service.visible(conn, caller, profile_id)


def one(conn: Connection, caller: Caller, profile_id: int, base: str) -> GroupProfile:
    """One group profile as the caller sees it; NotFound when the caller may not see it."""
    return several(conn, [visible(conn, caller, profile_id)["id"]], base)[0]


def people(conn: Connection, caller: Caller, group_id: int, base: str, managers_only: bool) -> list[User]:
    """A group's managers, or all its members (managers included)."""
    ids = groups.member_ids(conn, group_id, managers_only)
    return [user(r, caller, base) for r in users.by_ids(conn, ids)]


def people_of(conn: Connection, caller: Caller, profile_id: int, base: str, managers_only: bool) -> list[User]:
    """The managers, or all the members, of a group the caller may see."""
    return people(conn, caller, visible(conn, caller, profile_id)["group_id"], base, managers_only)


def resources_of(conn: Connection, caller: Caller, viewer: Viewer, profile_id: int, base: str, limit: int,
                 offset: int) -> tuple[int, list[Resource]]:
    """One page of the resources a visible group holds a permission on, as the caller sees them."""
    profile = visible(conn, caller, profile_id)
    total, rows = resources.page_of_group(conn, profile["group_id"], viewer, limit, offset)
    return total, render(conn, rows, caller, viewer, base)
