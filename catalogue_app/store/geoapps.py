"""Geoapp names: one row per named geoapp (geostory, dashboard); a name is used once."""

from __future__ import annotations

import sqlite3


def taken(conn: sqlite3.Connection, name: str, other_than: int | None = None) -> bool:
    """Whether a geoapp (other than ``other_than``) has this name."""
    return conn.execute("SELECT 1 FROM geoapps WHERE name = ? AND resource_id IS NOT ?",
                        (name, other_than)).fetchone() is not None


def set_name(conn: sqlite3.Connection, resource_id: int, name: str) -> None:
    conn.execute("INSERT INTO geoapps (resource_id, name) VALUES (?, ?)"
                 " ON CONFLICT (resource_id) DO UPDATE SET name = excluded.name", (resource_id, name))


def names(conn: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    """The names of those of the resources that have one."""
    if not ids:
        return {}
    rows = conn.execute(f"SELECT resource_id, name FROM geoapps WHERE resource_id IN ({','.join('?' * len(ids))})",
                        ids)
    return dict(rows.fetchall())


def copy(conn: sqlite3.Connection, source_id: int, new_id: int) -> None:
    """The copy's name: the original's with the first free number appended ("story_2")."""
    row = conn.execute("SELECT name FROM geoapps WHERE resource_id = ?", (source_id,)).fetchone()
    if row is None:
        return
    stem = row[0]
    number = 2
    while taken(conn, f"{stem}_{number}"):
        number += 1
    set_name(conn, new_id, f"{stem}_{number}")
