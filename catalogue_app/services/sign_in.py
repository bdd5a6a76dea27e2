"""Browser sign-in: attempts counted per user name (failures slow the next ones down), sessions
opened and closed."""

from __future__ import annotations

from catalogue_app.store import Connection, sessions


def attempt(conn: Connection, name: str) -> int:
    """Count an attempt to sign in as ``name``; returns the recent failures (store/sessions.py)."""
    return sessions.begin_attempt(conn, name)


def open_session(conn: Connection, user_id: int, name: str, lifetime: int, previous: str | None) -> tuple[str, str]:
    """A new session for the user (the cookie's value, its CSRF token); ``previous`` (the cookie
    the browser had) is closed, so that a session is never carried over a sign-in."""
    return sessions.open_session(conn, user_id, name, lifetime, sessions.digest(previous) if previous else None)


def close(conn: Connection, session_digest: str) -> None:
    sessions.close(conn, session_digest)
