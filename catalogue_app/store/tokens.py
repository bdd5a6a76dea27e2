"""Bearer tokens. Only a SHA-256 digest of each token is stored."""

from __future__ import annotations

import hashlib
import secrets
import sqlite3

from catalogue_app.clock import now
from catalogue_app.store import users


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue(conn: sqlite3.Connection, user_id: int, lifetime_seconds: int,
          scope: str = "read write groups") -> str:
    token = secrets.token_urlsafe(30)
    conn.execute(
        "INSERT INTO tokens (digest, user_id, created, expires, scope) VALUES (?, ?, ?, ?, ?)",
        (digest(token), user_id, now(), now(lifetime_seconds), scope),
    )
    conn.execute("DELETE FROM tokens WHERE expires < ?", (now(),))
    return token


def user_for(conn: sqlite3.Connection, token: str) -> sqlite3.Row | None:
    """The active user a valid, unexpired token belongs to."""
    cols = ", ".join(f"u.{c.strip()}" for c in users.COLUMNS.split(","))
    return conn.execute(
        f"SELECT {cols} FROM tokens t JOIN users u ON u.id = t.user_id"
        " WHERE t.digest = ? AND t.expires > ? AND u.is_active = 1",
        (digest(token), now()),
    ).fetchone()


def revoke(conn: sqlite3.Connection, token: str) -> int:
    return conn.execute("DELETE FROM tokens WHERE digest = ?", (digest(token),)).rowcount


def revoke_all(conn: sqlite3.Connection, user_id: int) -> int:
    return conn.execute("DELETE FROM tokens WHERE user_id = ?", (user_id,)).rowcount
