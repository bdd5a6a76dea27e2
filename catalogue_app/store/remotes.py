"""Remotes: other catalogues (a GeoNode, or another instance of this one) that resources are
published to, each with its API address and the token this catalogue sends there. The token is
read by the publisher only; rows handed to the API carry ``has_token`` instead."""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.clock import now

PUBLIC = "id, name, url, token != '' AS has_token, created"


def all_(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    return conn.execute(f"SELECT {PUBLIC} FROM remotes ORDER BY id").fetchall()


def get(conn: sqlite3.Connection, remote_id: int) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {PUBLIC} FROM remotes WHERE id = ?", (remote_id,)).fetchone()


def by_name(conn: sqlite3.Connection, name: str) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {PUBLIC} FROM remotes WHERE name = ?", (name,)).fetchone()


def name_taken(conn: sqlite3.Connection, name: str, except_id: int | None = None) -> bool:
    return conn.execute("SELECT 1 FROM remotes WHERE name = ? AND id IS NOT ?", (name, except_id)).fetchone() is not None


def credentials(conn: sqlite3.Connection, remote_id: int) -> sqlite3.Row | None:
    """name, url and token: what the publisher needs to talk to the remote."""
    return conn.execute("SELECT id, name, url, token FROM remotes WHERE id = ?", (remote_id,)).fetchone()


def create(conn: sqlite3.Connection, name: str, url: str, token: str = "") -> int:
    return conn.execute("INSERT INTO remotes (name, url, token, created) VALUES (?, ?, ?, ?)",
                        (name, url, token, now())).lastrowid


FIELDS = ("name", "url", "token")


def update(conn: sqlite3.Connection, remote_id: int, values: dict[str, Any]) -> bool:
    """Change name, url or token; whether the remote exists."""
    changes = {k: v for k, v in values.items() if k in FIELDS}
    if not changes:
        return conn.execute("SELECT 1 FROM remotes WHERE id = ?", (remote_id,)).fetchone() is not None
    return conn.execute(f"UPDATE remotes SET {', '.join(f'{k} = ?' for k in changes)} WHERE id = ?",
                        [*changes.values(), remote_id]).rowcount > 0


def delete(conn: sqlite3.Connection, remote_id: int) -> bool:
    """Remove the remote and what was recorded of publications there (nothing on the remote)."""
    return conn.execute("DELETE FROM remotes WHERE id = ?", (remote_id,)).rowcount > 0
