"""Users: rows, visibility, the deletion rules and ownership transfer."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from catalogue_app.clock import now
from catalogue_app.store.filters import Field, Listing, ListSpec, fetch_page

ANONYMOUS_GROUP_ID = 1
REGISTERED_GROUP_ID = 2

COLUMNS = (
    "id, username, email, first_name, last_name, avatar, is_superuser, is_staff, is_active, "
    "date_joined, last_login, password"
)
WRITABLE = ("username", "password", "email", "first_name", "last_name", "avatar",
            "is_superuser", "is_staff", "is_active")

FIELDS = {
    "pk": Field("u.id", "int"),
    "id": Field("u.id", "int"),
    "username": Field("u.username"),
    "first_name": Field("u.first_name"),
    "last_name": Field("u.last_name"),
    "email": Field("u.email"),
    "is_superuser": Field("u.is_superuser", "bool"),
    "is_staff": Field("u.is_staff", "bool"),
    "is_active": Field("u.is_active", "bool"),
    "date_joined": Field("u.date_joined", "datetime"),
}
SEARCH_FIELDS = {name: FIELDS[name] for name in ("username", "first_name", "last_name", "email")}


def visibility(viewer_id: int | None, sees_all: bool) -> tuple[str, list[Any]]:
    """SQL condition on ``u``: the users the viewer may see.

    Admins see every user, deactivated ones included (the users API shows them ``is_active``).
    Others see only active users: themselves, members of public groups, members of
    the groups they belong to, and members of the registered-members group.
    """
    if sees_all:
        return "1", []
    if viewer_id is None:
        return "0", []
    return (
        "u.is_active = 1 AND (u.id = ? OR EXISTS ("
        " SELECT 1 FROM group_members gm WHERE gm.user_id = u.id AND ("
        "  gm.group_id = ? OR gm.group_id IN (SELECT group_id FROM group_profiles WHERE access = 'public')"
        "  OR gm.group_id IN (SELECT group_id FROM group_members WHERE user_id = ?))))",
        [viewer_id, REGISTERED_GROUP_ID, viewer_id],
    )


def get(conn: sqlite3.Connection, user_id: int) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {COLUMNS} FROM users WHERE id = ?", (user_id,)).fetchone()


def get_visible(conn: sqlite3.Connection, user_id: int, viewer_id: int | None, sees_all: bool) -> sqlite3.Row | None:
    cond, params = visibility(viewer_id, sees_all)
    return conn.execute(
        f"SELECT {COLUMNS} FROM users u WHERE u.id = ? AND {cond}", [user_id, *params]
    ).fetchone()


def by_username(conn: sqlite3.Connection, username: str) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {COLUMNS} FROM users WHERE username = ?", (username,)).fetchone()


def email_taken(conn: sqlite3.Connection, email: str, except_id: int | None = None) -> bool:
    row = conn.execute(
        "SELECT 1 FROM users WHERE email = ? COLLATE NOCASE AND id IS NOT ?", (email, except_id)
    ).fetchone()
    return row is not None


LISTING = Listing(COLUMNS, "users u", FIELDS, SEARCH_FIELDS, "u.username COLLATE NOCASE, u.id", "u.id")


def page(conn: sqlite3.Connection, spec: ListSpec, viewer_id: int | None, sees_all: bool,
         limit: int, offset: int) -> tuple[int, list[sqlite3.Row]]:
    return fetch_page(conn, LISTING, spec, visibility(viewer_id, sees_all), limit, offset)


def by_ids(conn: sqlite3.Connection, ids: Iterable[int]) -> list[sqlite3.Row]:
    ids = list(ids)
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return conn.execute(f"SELECT {COLUMNS} FROM users WHERE id IN ({marks}) ORDER BY id", ids).fetchall()


def create(conn: sqlite3.Connection, values: dict[str, Any]) -> int:
    row = {k: values[k] for k in WRITABLE if k in values}
    row["date_joined"] = now()
    names = ", ".join(row)
    marks = ", ".join("?" * len(row))
    user_id = conn.execute(f"INSERT INTO users ({names}) VALUES ({marks})", list(row.values())).lastrowid
    conn.execute(
        "INSERT INTO group_members (group_id, user_id, role, joined) VALUES (?, ?, 'member', ?)",
        (REGISTERED_GROUP_ID, user_id, now()),
    )
    return user_id


def update(conn: sqlite3.Connection, user_id: int, values: dict[str, Any]) -> None:
    row = {k: values[k] for k in WRITABLE if k in values}
    if not row:
        return
    assignments = ", ".join(f"{k} = ?" for k in row)
    conn.execute(f"UPDATE users SET {assignments} WHERE id = ?", [*row.values(), user_id])


def touch_login(conn: sqlite3.Connection, user_id: int) -> None:
    conn.execute("UPDATE users SET last_login = ? WHERE id = ?", (now(), user_id))


def delete(conn: sqlite3.Connection, user_id: int) -> None:
    """Remove a user; what they still own goes to the first superuser, as in GeoNode."""
    heir = principal_superuser(conn, exclude=user_id)
    if heir is not None:
        conn.execute("UPDATE resources SET owner_id = ? WHERE owner_id = ?", (heir, user_id))
    conn.execute("DELETE FROM users WHERE id = ?", (user_id,))


def principal_superuser(conn: sqlite3.Connection, exclude: int | None = None) -> int | None:
    row = conn.execute(
        "SELECT id FROM users WHERE is_superuser = 1 AND is_active = 1 AND id IS NOT ? ORDER BY id LIMIT 1",
        (exclude,),
    ).fetchone()
    return row[0] if row else None


def active_superuser_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM users WHERE is_superuser = 1 AND is_active = 1").fetchone()[0]


def owned_resource_count(conn: sqlite3.Connection, user_id: int) -> int:
    return conn.execute("SELECT count(*) FROM resources WHERE owner_id = ?", (user_id,)).fetchone()[0]


def managed_group_count(conn: sqlite3.Connection, user_id: int) -> int:
    return conn.execute(
        "SELECT count(*) FROM group_members WHERE user_id = ? AND role = 'manager'", (user_id,)
    ).fetchone()[0]


def owned_resource_ids(conn: sqlite3.Connection, user_id: int) -> set[int]:
    return {r[0] for r in conn.execute("SELECT id FROM resources WHERE owner_id = ?", (user_id,))}


def transfer_resources(conn: sqlite3.Connection, from_id: int, to_id: int,
                       resource_ids: list[int] | None = None) -> int:
    """Give ``to_id`` the resources of ``from_id`` (all, or those listed); returns how many."""
    sql = "UPDATE resources SET owner_id = ?, last_updated = ? WHERE owner_id = ?"
    params: list[Any] = [to_id, now(), from_id]
    if resource_ids is not None:
        sql += f" AND id IN ({','.join('?' * len(resource_ids))})"
        params += resource_ids
    return conn.execute(sql, params).rowcount
