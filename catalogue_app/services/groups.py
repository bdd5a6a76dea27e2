"""Groups: creating, changing, deleting them and their members, as the rule book's
``group_actions`` allows (who sees a group is the same rule, as SQL: store/groups.py)."""

from __future__ import annotations

from typing import Any

from catalogue_app import rules
from catalogue_app.services import history
from catalogue_app.services.errors import Forbidden, Invalid, NotFound, refusal_for
from catalogue_app.store import Connection, Row, field_history, groups, users


def sees_all(caller) -> bool:
    """Whether the caller sees every group, private ones included."""
    return rules.is_admin(caller)


def visible(conn: Connection, caller, profile_id: int) -> Row:
    """The group profile if the caller may see it (private groups: members and administrators)."""
    row = groups.get_visible(conn, profile_id, caller.id, sees_all(caller))
    if row is None:
        raise NotFound("GroupProfile")
    return row


def actions(conn: Connection, caller, profile: Row) -> frozenset[str]:
    """What the caller may do with the group (rules.group_actions)."""
    role = groups.role(conn, profile["group_id"], caller.id) if caller.id is not None else None
    return rules.group_actions(caller, access=profile["access"], role=role)


def may_change(conn: Connection, caller, profile: Row) -> bool:
    return "change" in actions(conn, caller, profile)


def _categories(conn: Connection, slugs: list[str] | None) -> list[int] | None:
    if slugs is None:
        return None
    ids, missing = groups.category_ids(conn, slugs)
    if missing:
        raise Invalid(f"Object with slug={missing[0]} does not exist.")
    return ids


def create(conn: Connection, caller, batch: list[tuple[dict[str, Any], list[str] | None]]) -> list[int]:
    """New groups from checked values, made by an administrator (who becomes their manager)."""
    if not rules.may_create_groups(caller):
        raise refusal_for(caller)
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
    if ("replace" if admins_only else "change") not in actions(conn, caller, profile):
        raise Forbidden()
    if "slug" in values and groups.slug_taken(conn, values["slug"], except_profile=profile_id):
        raise Invalid(f"A group with the slug \"{values['slug']}\" already exists.")
    groups.update(conn, profile_id, values, _categories(conn, slugs))


def change_each(conn: Connection, caller, batch: list[tuple[int, dict[str, Any], list[str] | None]]) -> None:
    for profile_id, values, slugs in batch:
        change(conn, caller, profile_id, values, slugs)


def delete(conn: Connection, caller, profile_id: int) -> None:
    """Delete a group the caller sees and may delete (administrators)."""
    profile = visible(conn, caller, profile_id)
    if "delete" not in actions(conn, caller, profile):
        raise Forbidden()
    with history.recorded(conn, history.By(caller.id), *field_history.in_group(conn, profile_id)):  # they leave it
        groups.delete(conn, profile_id)


def delete_each(conn: Connection, caller, profile_ids: list[int]) -> None:
    """Delete groups (administrators); all or none."""
    if not rules.may_create_groups(caller):
        raise refusal_for(caller)
    for profile_id in profile_ids:
        delete(conn, caller, profile_id)


def change_members(conn: Connection, caller, profile: Row, user_ids: list[int], role: str, adding: bool) -> None:
    """Add users to the group with ``role``, or remove them."""
    allowed = actions(conn, caller, profile)
    by_self = user_ids == [caller.id] and role == "member" and ("join" if adding else "leave") in allowed
    if not ("manage_members" in allowed or by_self):
        raise Forbidden()
    for user_id in user_ids:
        row = users.get(conn, user_id)
        if row is None or not row["is_active"]:
            raise Invalid(f"User {user_id} does not exist.")
        if adding:
            groups.set_role(conn, profile["group_id"], user_id, role)
        else:
            groups.remove_member(conn, profile["group_id"], user_id)
