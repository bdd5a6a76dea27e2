"""Resources as far as accounts need them: who sees what, and lists by user or group.

The full catalogue (fields, filters, search, extents) builds on the visibility rule here.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.store.users import ANONYMOUS_GROUP_ID, REGISTERED_GROUP_ID

VIEW_PERMS = ("view_resourcebase", "change_resourcebase")
COLUMNS = "r.id, r.uuid, r.resource_type, r.owner_id, r.title, r.abstract, r.created, r.last_updated"


def visibility(viewer_id: int | None, sees_all: bool, alias: str = "r") -> tuple[str, list[Any]]:
    """A caller sees a resource they own, or one on which they, a group of theirs, or the
    anonymous or registered-members group holds a view permission. Superusers see everything."""
    if sees_all:
        return "1", []
    perms = ",".join(f"'{p}'" for p in VIEW_PERMS)
    if viewer_id is None:
        return (
            f"EXISTS (SELECT 1 FROM resource_perms p WHERE p.resource_id = {alias}.id"
            f" AND p.group_id = {ANONYMOUS_GROUP_ID} AND p.perm IN ({perms}))",
            [],
        )
    return (
        f"({alias}.owner_id = ? OR EXISTS (SELECT 1 FROM resource_perms p WHERE p.resource_id = {alias}.id"
        f" AND p.perm IN ({perms}) AND (p.user_id = ? OR p.group_id IN ({ANONYMOUS_GROUP_ID}, {REGISTERED_GROUP_ID})"
        " OR p.group_id IN (SELECT group_id FROM group_members WHERE user_id = ?))))",
        [viewer_id, viewer_id, viewer_id],
    )


def _page(conn: sqlite3.Connection, conds: list[tuple[str, list[Any]]], limit: int,
          offset: int) -> tuple[int, list[sqlite3.Row]]:
    where = " AND ".join(c for c, _ in conds) or "1"
    params = [p for _, ps in conds for p in ps]
    total = conn.execute(f"SELECT count(*) FROM resources r WHERE {where}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM resources r WHERE {where} ORDER BY r.title, r.id LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return total, rows


def page_visible_to_user(conn: sqlite3.Connection, user_id: int, user_is_superuser: bool,
                         viewer_id: int | None, viewer_sees_all: bool, limit: int,
                         offset: int) -> tuple[int, list[sqlite3.Row]]:
    """What ``user_id`` can see, limited to what the viewer can see too."""
    return _page(conn, [visibility(user_id, user_is_superuser), visibility(viewer_id, viewer_sees_all)],
                 limit, offset)


def page_of_group(conn: sqlite3.Connection, group_id: int, viewer_id: int | None,
                  viewer_sees_all: bool, limit: int, offset: int) -> tuple[int, list[sqlite3.Row]]:
    """Resources on which the group holds a view or change permission, as the viewer sees them."""
    perms = ",".join(f"'{p}'" for p in VIEW_PERMS)
    held = (f"EXISTS (SELECT 1 FROM resource_perms g WHERE g.resource_id = r.id AND g.group_id = ?"
            f" AND g.perm IN ({perms}))", [group_id])
    return _page(conn, [held, visibility(viewer_id, viewer_sees_all)], limit, offset)
