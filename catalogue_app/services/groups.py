"""The rules of groups: who sees a group, who may change it (its managers and administrators),
who may create or delete one (administrators), and who may add or remove members (managers
and administrators; a user may join a public group or leave any)."""

from __future__ import annotations

from typing import Any

from catalogue_app.services.errors import Forbidden, Invalid, NotFound
from catalogue_app.store import Connection, Row, groups, users


def visible(conn: Connection, caller, profile_id: int) -> Row:
    """The group profile if the caller may see it (private groups: members and administrators)."""
    row = groups.get_visible(conn, profile_id, caller.id, caller.is_admin)
    if row is None:
        raise NotFound("GroupProfile")
    return row


def may_change(conn: Connection, caller, profile: Row) -> bool:
    return caller.is_admin or groups.role(conn, profile["group_id"], caller.id) == "manager"


def _categories(conn: Connection, slugs: list[str] | None) -> list[int] | None:
    if slugs is None:
        return None
    ids, missing = groups.category_ids(conn, slugs)
    if missing:
        raise Invalid(f"Object with slug={missing[0]} does not exist.")
    return ids


def create(conn: Connection, caller, batch: list[tuple[dict[str, Any], list[str] | None]]) -> list[int]:
    """New groups from checked values, made by an administrator (who becomes their manager)."""
    if not caller.is_admin:
        raise Forbidden()
    ids = []
    for values, slugs in batch:
        if groups.slug_taken(conn, values["slug"]):
            raise Invalid(f"A group with the slug \"{values['slug']}\" already exists.")
        ids.append(groups.create(conn, values, _categories(conn, slugs) or [], caller.id))
    return ids


def change(conn: Connection, caller, profile_id: int, values: dict[str, Any], slugs: list[str] | None,
           admins_only: bool = False) -> None:
    """Apply checked values to a group the caller may change (``admins_only``: PUT, administrators)."""
    profile = visible(conn, caller, profile_id)
    if not (caller.is_admin if admins_only else may_change(conn, caller, profile)):
        raise Forbidden()
    if "slug" in values and groups.slug_taken(conn, values["slug"], except_profile=profile_id):
        raise Invalid(f"A group with the slug \"{values['slug']}\" already exists.")
    groups.update(conn, profile_id, values, _categories(conn, slugs))


def change_each(conn: Connection, caller, batch: list[tuple[int, dict[str, Any], list[str] | None]]) -> None:
    for profile_id, values, slugs in batch:
        change(conn, caller, profile_id, values, slugs)


def delete_each(conn: Connection, caller, profile_ids: list[int]) -> None:
    """Delete groups (administrators); all or none."""
    if not caller.is_admin:
        raise Forbidden()
    for profile_id in profile_ids:
        if groups.get(conn, profile_id) is None:
            raise NotFound("GroupProfile")
        groups.delete(conn, profile_id)


def change_members(conn: Connection, caller, profile: Row, user_ids: list[int], role: str, adding: bool) -> None:
    """Add users to the group with ``role``, or remove them."""
    by_self = user_ids == [caller.id] and role == "member"
    if not (may_change(conn, caller, profile) or (by_self and (not adding or profile["access"] == "public"))):
        raise Forbidden()
    for user_id in user_ids:
        row = users.get(conn, user_id)
        if row is None or not row["is_active"]:
            raise Invalid(f"User {user_id} does not exist.")
        if adding:
            groups.set_role(conn, profile["group_id"], user_id, role)
        else:
            groups.remove_member(conn, profile["group_id"], user_id)
