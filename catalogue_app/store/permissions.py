"""Resource permissions as levels: the level table, the overview of who holds what, and changes.

A level (view, download, edit, manage, owner) stands for a set of permission names that depends
on the resource's type: ``download_resourcebase`` only on the downloadable types (dataset and
document), the dataset data and style permissions only on datasets of an editable subtype. The
owner and the superusers hold everything without any row; changes never write rows for them.
Every change keeps ``resources.public_view`` in step with the anonymous group's rows.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app import rules
from catalogue_app.store import resources
from catalogue_app.store.users import ANONYMOUS_GROUP_ID, REGISTERED_GROUP_ID

LEVELS = ("none", "view", "download", "edit", "manage", "owner")
EDITABLE_SUBTYPES = rules.EDITABLE_SUBTYPES
SPECIAL_GROUPS = (ANONYMOUS_GROUP_ID, REGISTERED_GROUP_ID)
REGISTERED_TITLE = "Registered Members"

VIEW = rules.VIEW
DOWNLOAD = rules.DOWNLOAD
EDIT = (rules.CHANGE, rules.CHANGE_METADATA)
DATASET_EDIT = (rules.CHANGE_DATA, rules.CHANGE_STYLE)
MANAGE = (rules.DELETE, rules.MANAGE, rules.PUBLISH)
# every name a perms spec may carry (the mapping form names permissions, not levels)
NAMES = frozenset((VIEW, DOWNLOAD, *EDIT, *DATASET_EDIT, *MANAGE))
# The special groups stand for everyone (anonymous: anybody at all; registered members: anybody
# who signs up), so they may only read: a write permission there would let anyone edit, delete or
# re-permission the resource. Every write of permissions refuses more than this.
SPECIAL_GROUP_LEVELS = ("none", "view", "download")
SPECIAL_GROUP_PERMS = rules.EVERYONE_MAY_HOLD
SPECIAL_GROUP_NAMES = {ANONYMOUS_GROUP_ID: "the anonymous group (anybody, logged in or not)",
                       REGISTERED_GROUP_ID: "the registered-members group (anybody with an account)"}


def special_group_refusal(group_id: int, level: str) -> str | None:
    """Why ``level`` may not be given to ``group_id``, or None when it may."""
    if group_id in SPECIAL_GROUP_NAMES and level not in SPECIAL_GROUP_LEVELS:
        return (f"{SPECIAL_GROUP_NAMES[group_id]} may be given at most 'download' (view_resourcebase and "
                f"download_resourcebase), not {level!r}.")
    return None


def level_perms(resource_type: str, subtype: str | None, level: str) -> list[str]:
    """The permission names that ``level`` stands for on a resource of this type and subtype."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}")
    if level == "none":
        return []
    downloadable = resource_type in resources.DOWNLOADABLE
    editable = resource_type == "dataset" and subtype in EDITABLE_SUBTYPES
    perms = [VIEW]
    if level != "view" and downloadable:
        perms.append(DOWNLOAD)
    if level in ("edit", "manage", "owner"):
        perms += EDIT
        if editable:
            perms += DATASET_EDIT
    if level in ("manage", "owner"):
        perms += MANAGE
    return perms


def level_of(perms: set[str] | frozenset[str], resource_type: str, owner: bool = False) -> str:
    """The level a set of permission names amounts to (the reverse of ``level_perms``)."""
    if owner:
        return "owner"
    if not perms:
        return "none"
    if perms & set(MANAGE):
        return "manage"
    if perms & {*EDIT, *DATASET_EDIT}:
        return "edit"
    if DOWNLOAD in perms and resource_type in resources.DOWNLOADABLE:
        return "download"
    if VIEW in perms:
        return "view"
    return "none"


def resource(conn: sqlite3.Connection, resource_id: int) -> sqlite3.Row | None:
    return conn.execute("SELECT id, uuid, resource_type, subtype, owner_id, group_id FROM resources WHERE id = ?",
                        (resource_id,)).fetchone()


def _held(conn: sqlite3.Connection, resource_id: int) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    users: dict[int, set[str]] = {}
    groups: dict[int, set[str]] = {}
    for user_id, group_id, perm in conn.execute(
            "SELECT user_id, group_id, perm FROM resource_perms WHERE resource_id = ?", (resource_id,)):
        if user_id is not None:
            users.setdefault(user_id, set()).add(perm)
        else:
            groups.setdefault(group_id, set()).add(perm)
    return users, groups


def overview(conn: sqlite3.Connection, resource_id: int) -> dict[str, list[dict[str, Any]]]:
    """Who holds which level on the resource: ``users`` (holders, the owner, every active
    superuser), ``organizations`` (other groups with a profile holding permissions) and
    ``groups`` (the anonymous and registered-members groups, always both), each sorted by id
    descending. Users carry their row's fields, organizations their profile's title and logo."""
    row = resource(conn, resource_id)
    if row is None:
        return {"users": [], "organizations": [], "groups": []}
    kind = row["resource_type"]
    held_users, held_groups = _held(conn, resource_id)
    user_rows = conn.execute(
        "SELECT id, username, first_name, last_name, avatar, is_superuser, is_staff FROM users"
        " WHERE id = ? OR (is_superuser = 1 AND is_active = 1) OR id IN"
        " (SELECT user_id FROM resource_perms WHERE resource_id = ? AND user_id IS NOT NULL)"
        " ORDER BY id DESC", (row["owner_id"], resource_id)).fetchall()
    users = []
    for u in user_rows:
        if u["id"] == row["owner_id"]:
            level = "owner"
        elif u["is_superuser"]:
            level = "manage"
        else:
            level = level_of(held_users.get(u["id"], set()), kind)
        users.append({"id": u["id"], "username": u["username"], "first_name": u["first_name"],
                      "last_name": u["last_name"], "avatar": u["avatar"], "permissions": level,
                      "is_superuser": bool(u["is_superuser"]), "is_staff": bool(u["is_staff"])})
    others = [g for g in held_groups if g not in SPECIAL_GROUPS]
    organizations = []
    if others:
        marks = ",".join("?" * len(others))
        for g in conn.execute(
                f"SELECT g.id, g.name, p.title, p.logo FROM groups g JOIN group_profiles p ON p.group_id = g.id"
                f" WHERE g.id IN ({marks}) ORDER BY g.id DESC", others):
            organizations.append({"id": g["id"], "title": g["title"], "name": g["name"], "logo": g["logo"],
                                  "permissions": level_of(held_groups[g["id"]], kind)})
    special = []
    for g in conn.execute(
            "SELECT g.id, g.name, p.title FROM groups g LEFT JOIN group_profiles p ON p.group_id = g.id"
            f" WHERE g.id IN ({ANONYMOUS_GROUP_ID}, {REGISTERED_GROUP_ID}) ORDER BY g.id DESC"):
        title = "anonymous" if g["id"] == ANONYMOUS_GROUP_ID else (g["title"] or REGISTERED_TITLE)
        special.append({"id": g["id"], "title": title, "name": g["name"],
                        "permissions": level_of(held_groups.get(g["id"], set()), kind)})
    return {"users": users, "organizations": organizations, "groups": special}


def known_ids(conn: sqlite3.Connection, table: str, ids: set[int]) -> set[int]:
    """Which of ``ids`` exist in ``users`` or ``groups``."""
    if table not in ("users", "groups"):
        raise ValueError(table)
    found: set[int] = set()
    ids_ = sorted(ids)
    for start in range(0, len(ids_), 500):
        chunk = ids_[start:start + 500]
        found.update(r[0] for r in conn.execute(
            f"SELECT id FROM {table} WHERE id IN ({','.join('?' * len(chunk))})", chunk))
    return found


def ids_by_name(conn: sqlite3.Connection, table: str, names: set[str]) -> dict[str, int]:
    """Ids of users (by username, case-insensitive) or groups (by name) that exist."""
    column = {"users": "username", "groups": "name"}[table]
    out = {}
    for name in names:
        found = conn.execute(f"SELECT id FROM {table} WHERE {column} = ?", (name,)).fetchone()
        if found is not None:
            out[name] = found[0]
    return out


def _superusers(conn: sqlite3.Connection) -> set[int]:
    return {r[0] for r in conn.execute("SELECT id FROM users WHERE is_superuser = 1")}


def apply(conn: sqlite3.Connection, resource_id: int, users: dict[int, str], groups: dict[int, str], *,
          replace: bool) -> None:
    """Set the levels of users and groups on one resource, inside the caller's write transaction.

    Merge (``replace`` false): each named user or group gets exactly its new level (``none``
    revokes), everyone else keeps theirs. Replace: every row but the owner's goes first. The
    owner and the superusers are skipped (they hold everything without rows); ids that no longer
    exist are skipped too. Raises LookupError when the resource is gone, ValueError (changing
    nothing) when a special group would get more than it may hold."""
    for group_id, level in groups.items():
        refusal = special_group_refusal(group_id, level)
        if refusal:
            raise ValueError(f"Permissions not changed: {refusal}")
    row = resource(conn, resource_id)
    if row is None:
        raise LookupError(f"Resource {resource_id} does not exist.")
    skipped = _superusers(conn) | {row["owner_id"]}
    if replace:
        conn.execute("DELETE FROM resource_perms WHERE resource_id = ? AND user_id IS NOT ?",
                     (resource_id, row["owner_id"]))
    live_users = known_ids(conn, "users", set(users))
    live_groups = known_ids(conn, "groups", set(groups))
    rows: list[tuple[int, int | None, int | None, str]] = []
    for user_id, level in users.items():
        if user_id in skipped or user_id not in live_users:
            continue
        conn.execute("DELETE FROM resource_perms WHERE resource_id = ? AND user_id = ?", (resource_id, user_id))
        rows += [(resource_id, user_id, None, p) for p in level_perms(row["resource_type"], row["subtype"], level)]
    for group_id, level in groups.items():
        if group_id not in live_groups:
            continue
        conn.execute("DELETE FROM resource_perms WHERE resource_id = ? AND group_id = ?", (resource_id, group_id))
        rows += [(resource_id, None, group_id, p) for p in level_perms(row["resource_type"], row["subtype"], level)]
    conn.executemany("INSERT OR IGNORE INTO resource_perms (resource_id, user_id, group_id, perm)"
                     " VALUES (?, ?, ?, ?)", rows)
    resources.refresh_public_view(conn, resource_id)


def remove_all(conn: sqlite3.Connection, resource_id: int, keep_groups: tuple[int, ...] = ()) -> None:
    """Strip every permission row of the resource but the owner's (and those of ``keep_groups``,
    the special groups a caller may not change). Raises LookupError when the resource is gone."""
    row = resource(conn, resource_id)
    if row is None:
        raise LookupError(f"Resource {resource_id} does not exist.")
    kept = ",".join(str(int(g)) for g in keep_groups) or "0"
    conn.execute(f"DELETE FROM resource_perms WHERE resource_id = ? AND user_id IS NOT ?"
                 f" AND (group_id IS NULL OR group_id NOT IN ({kept}))", (resource_id, row["owner_id"]))
    resources.refresh_public_view(conn, resource_id)
