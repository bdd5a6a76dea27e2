"""Groups with their profiles, categories, managers and members."""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.clock import now
from catalogue_app.store.filters import Field, Listing, ListSpec, fetch_page

PROFILE_COLUMNS = (
    "p.id, p.group_id, g.name AS group_name, p.title, p.slug, p.description, p.email, p.logo, "
    "p.access, p.created, p.last_modified"
)
FROM = "group_profiles p JOIN groups g ON g.id = p.group_id"
WRITABLE = ("title", "slug", "description", "email", "logo", "access")

FIELDS = {
    "pk": Field("p.id", "int"),
    "id": Field("p.id", "int"),
    "title": Field("p.title"),
    "slug": Field("p.slug"),
    "description": Field("p.description"),
    "email": Field("p.email"),
    "access": Field("p.access"),
    "created": Field("p.created", "datetime"),
    "last_modified": Field("p.last_modified", "datetime"),
    "group.pk": Field("g.id", "int"),
    "group.name": Field("g.name"),
    "categories": Field(
        "gc.slug", exists="EXISTS (SELECT 1 FROM group_profile_categories pc JOIN group_categories gc"
        " ON gc.id = pc.category_id WHERE pc.profile_id = p.id AND {cond})", sortable=False),
}
SEARCH_FIELDS = {name: FIELDS[name] for name in ("title", "slug", "description")}


def visibility(viewer_id: int | None, sees_all: bool) -> tuple[str, list[Any]]:
    """Admins see every group; others the non-private ones and the private ones they belong to."""
    if sees_all:
        return "1", []
    if viewer_id is None:
        return "p.access <> 'private'", []
    return (
        "(p.access <> 'private' OR EXISTS (SELECT 1 FROM group_members m"
        " WHERE m.group_id = p.group_id AND m.user_id = ?))",
        [viewer_id],
    )


LISTING = Listing(PROFILE_COLUMNS, FROM, FIELDS, SEARCH_FIELDS, "p.title COLLATE NOCASE, p.id", "p.id")


def page(conn: sqlite3.Connection, spec: ListSpec, viewer_id: int | None, sees_all: bool,
         limit: int, offset: int) -> tuple[int, list[sqlite3.Row]]:
    return fetch_page(conn, LISTING, spec, visibility(viewer_id, sees_all), limit, offset)


def get(conn: sqlite3.Connection, profile_id: int) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {PROFILE_COLUMNS} FROM {FROM} WHERE p.id = ?", (profile_id,)).fetchone()


def get_visible(conn: sqlite3.Connection, profile_id: int, viewer_id: int | None,
                sees_all: bool) -> sqlite3.Row | None:
    cond, params = visibility(viewer_id, sees_all)
    return conn.execute(
        f"SELECT {PROFILE_COLUMNS} FROM {FROM} WHERE p.id = ? AND {cond}", [profile_id, *params]
    ).fetchone()


def of_user(conn: sqlite3.Connection, user_id: int, viewer_id: int | None,
            sees_all: bool) -> list[sqlite3.Row]:
    """Profiles of the groups ``user_id`` belongs to, as far as the viewer may see them."""
    cond, params = visibility(viewer_id, sees_all)
    return conn.execute(
        f"SELECT {PROFILE_COLUMNS} FROM {FROM} JOIN group_members m ON m.group_id = p.group_id"
        f" WHERE m.user_id = ? AND {cond} ORDER BY p.title COLLATE NOCASE, p.id",
        [user_id, *params],
    ).fetchall()


def extras(conn: sqlite3.Connection, profile_ids: list[int]) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """Category slugs and keyword slugs of each profile."""
    categories: dict[int, list[str]] = {i: [] for i in profile_ids}
    keywords: dict[int, list[str]] = {i: [] for i in profile_ids}
    if profile_ids:
        marks = ",".join("?" * len(profile_ids))
        for pid, slug in conn.execute(
            f"SELECT pc.profile_id, c.slug FROM group_profile_categories pc JOIN group_categories c"
            f" ON c.id = pc.category_id WHERE pc.profile_id IN ({marks}) ORDER BY c.slug", profile_ids):
            categories[pid].append(slug)
        for pid, slug in conn.execute(
            f"SELECT profile_id, slug FROM group_profile_keywords WHERE profile_id IN ({marks})"
            " ORDER BY slug", profile_ids):
            keywords[pid].append(slug)
    return categories, keywords


def slug_taken(conn: sqlite3.Connection, slug: str, except_profile: int | None = None) -> bool:
    row = conn.execute(
        "SELECT 1 FROM group_profiles WHERE slug = ? AND id IS NOT ?", (slug, except_profile)
    ).fetchone()
    if row:
        return True
    if except_profile is None:
        return conn.execute("SELECT 1 FROM groups WHERE name = ?", (slug,)).fetchone() is not None
    return False


def category_ids(conn: sqlite3.Connection, slugs: list[str]) -> tuple[list[int], list[str]]:
    """Ids of the named group categories, and the names that do not exist."""
    found = {slug: cid for cid, slug in conn.execute("SELECT id, slug FROM group_categories")}
    return [found[s] for s in slugs if s in found], [s for s in slugs if s not in found]


def create(conn: sqlite3.Connection, values: dict[str, Any], category_ids: list[int],
           creator_id: int | None) -> int:
    group_id = conn.execute("INSERT INTO groups (name) VALUES (?)", (values["slug"],)).lastrowid
    row = {k: values[k] for k in WRITABLE if k in values}
    row["group_id"] = group_id
    row["created"] = row["last_modified"] = now()
    names, marks = ", ".join(row), ", ".join("?" * len(row))
    profile_id = conn.execute(f"INSERT INTO group_profiles ({names}) VALUES ({marks})", list(row.values())).lastrowid
    set_categories(conn, profile_id, category_ids)
    if creator_id is not None:
        set_role(conn, group_id, creator_id, "manager")
    return profile_id


def update(conn: sqlite3.Connection, profile_id: int, values: dict[str, Any],
           category_ids: list[int] | None) -> None:
    row = {k: values[k] for k in WRITABLE if k in values}
    row["last_modified"] = now()
    assignments = ", ".join(f"{k} = ?" for k in row)
    conn.execute(f"UPDATE group_profiles SET {assignments} WHERE id = ?", [*row.values(), profile_id])
    if "slug" in row:
        conn.execute(
            "UPDATE groups SET name = ? WHERE id = (SELECT group_id FROM group_profiles WHERE id = ?)",
            (row["slug"], profile_id),
        )
    if category_ids is not None:
        set_categories(conn, profile_id, category_ids)


def set_categories(conn: sqlite3.Connection, profile_id: int, category_ids: list[int]) -> None:
    conn.execute("DELETE FROM group_profile_categories WHERE profile_id = ?", (profile_id,))
    conn.executemany(
        "INSERT OR IGNORE INTO group_profile_categories (profile_id, category_id) VALUES (?, ?)",
        [(profile_id, cid) for cid in category_ids],
    )


def delete(conn: sqlite3.Connection, profile_id: int) -> None:
    """Remove the profile and its group (memberships and permissions go with it)."""
    conn.execute(
        "DELETE FROM groups WHERE id = (SELECT group_id FROM group_profiles WHERE id = ?)", (profile_id,)
    )


# -- membership --------------------------------------------------------------------------------
def role(conn: sqlite3.Connection, group_id: int, user_id: int | None) -> str | None:
    if user_id is None:
        return None
    row = conn.execute(
        "SELECT role FROM group_members WHERE group_id = ? AND user_id = ?", (group_id, user_id)
    ).fetchone()
    return row[0] if row else None


def set_role(conn: sqlite3.Connection, group_id: int, user_id: int, new_role: str) -> None:
    conn.execute(
        "INSERT INTO group_members (group_id, user_id, role, joined) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (group_id, user_id) DO UPDATE SET role = excluded.role",
        (group_id, user_id, new_role, now()),
    )


def remove_member(conn: sqlite3.Connection, group_id: int, user_id: int) -> int:
    return conn.execute(
        "DELETE FROM group_members WHERE group_id = ? AND user_id = ?", (group_id, user_id)
    ).rowcount


def member_ids(conn: sqlite3.Connection, group_id: int, managers_only: bool) -> list[int]:
    sql = "SELECT m.user_id FROM group_members m JOIN users u ON u.id = m.user_id WHERE m.group_id = ? AND u.is_active = 1"
    if managers_only:
        sql += " AND m.role = 'manager'"
    return [r[0] for r in conn.execute(sql + " ORDER BY m.user_id", (group_id,))]


def managed_groups(conn: sqlite3.Connection, user_id: int) -> list[sqlite3.Row]:
    """Groups (with their titles) in which the user is a manager."""
    return conn.execute(
        "SELECT m.group_id, coalesce(p.title, g.name) AS title FROM group_members m"
        " JOIN groups g ON g.id = m.group_id LEFT JOIN group_profiles p ON p.group_id = g.id"
        " WHERE m.user_id = ? AND m.role = 'manager' ORDER BY m.group_id",
        (user_id,),
    ).fetchall()


def demote(conn: sqlite3.Connection, user_id: int, group_ids: list[int]) -> None:
    conn.executemany(
        "UPDATE group_members SET role = 'member' WHERE user_id = ? AND group_id = ?",
        [(user_id, gid) for gid in group_ids],
    )


def group_ids_of(conn: sqlite3.Connection, user_id: int) -> list[int]:
    return [r[0] for r in conn.execute("SELECT group_id FROM group_members WHERE user_id = ?", (user_id,))]


def has_profile(conn: sqlite3.Connection, group_id: int) -> bool:
    """Whether the group is a group profile's (and not only a permission group such as anonymous)."""
    return conn.execute("SELECT 1 FROM group_profiles WHERE group_id = ?", (group_id,)).fetchone() is not None
