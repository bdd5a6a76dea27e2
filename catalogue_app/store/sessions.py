"""Browser sessions and the sign-in attempts that slow down password guessing.

Only a SHA-256 digest of a session's cookie value is stored. Ending sessions on a password
change or a deactivation is done by a trigger (migration SESSIONS), so every writer obeys it.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3

from catalogue_app.clock import now
from catalogue_app.store import users

# Sign-in attempts are counted over this many seconds.
FAILURE_WINDOW_SECONDS = 15 * 60

_USER_COLUMNS = ", ".join(f"u.{c.strip()}" for c in users.COLUMNS.split(","))


def digest(cookie_value: str) -> str:
    return hashlib.sha256(cookie_value.encode("utf-8", "surrogateescape")).hexdigest()


def open_session(conn: sqlite3.Connection, user_id: int, username: str, lifetime_seconds: int,
                 replaces: str | None = None) -> tuple[str, str]:
    """A new session for the user; returns (cookie value, csrf token). Also ends the session
    whose digest is ``replaces`` (the browser's previous one), forgets the user name's failed
    attempts, records the sign-in time and drops expired sessions."""
    cookie_value = secrets.token_urlsafe(32)
    csrf_token = secrets.token_urlsafe(32)
    conn.execute("DELETE FROM sessions WHERE expires <= ? OR digest = ?", (now(), replaces))
    conn.execute(
        "INSERT INTO sessions (digest, user_id, csrf_token, created, expires) VALUES (?, ?, ?, ?, ?)",
        (digest(cookie_value), user_id, csrf_token, now(), now(lifetime_seconds)),
    )
    conn.execute("DELETE FROM login_failures WHERE username = ?", (username,))
    users.touch_login(conn, user_id)
    return cookie_value, csrf_token


def user_for(conn: sqlite3.Connection, cookie_value: str) -> sqlite3.Row | None:
    """The active user of an unexpired session, with its ``csrf_token`` and ``session_digest``."""
    return conn.execute(
        f"SELECT {_USER_COLUMNS}, s.csrf_token, s.digest AS session_digest"
        " FROM sessions s JOIN users u ON u.id = s.user_id"
        " WHERE s.digest = ? AND s.expires > ? AND u.is_active = 1",
        (digest(cookie_value), now()),
    ).fetchone()


def close(conn: sqlite3.Connection, session_digest: str) -> int:
    return conn.execute("DELETE FROM sessions WHERE digest = ?", (session_digest,)).rowcount


def close_all(conn: sqlite3.Connection, user_id: int) -> int:
    return conn.execute("DELETE FROM sessions WHERE user_id = ?", (user_id,)).rowcount


def begin_attempt(conn: sqlite3.Connection, username: str) -> int:
    """Record a sign-in attempt as a failure until it succeeds (open_session clears it), so that
    attempts in flight at the same time count for each other; returns how many attempts on this
    user name the counting window held before this one."""
    cutoff = now(-FAILURE_WINDOW_SECONDS)
    conn.execute("DELETE FROM login_failures WHERE at < ?", (cutoff,))
    earlier = conn.execute(
        "SELECT count(*) FROM login_failures WHERE username = ? AND at >= ?", (username, cutoff)
    ).fetchone()[0]
    conn.execute("INSERT INTO login_failures (username, at) VALUES (?, ?)", (username, now()))
    return earlier
