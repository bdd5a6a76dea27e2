"""Signing in: browser sign-in attempts counted per user name (failures slow the next ones
down), sessions opened and closed; OAuth2 login tokens issued and revoked; a token's use noted."""

from __future__ import annotations

from catalogue_app.store import Connection, sessions, tokens, users


def attempt(conn: Connection, name: str) -> int:
    """Count an attempt to sign in as ``name``; returns the recent failures (store/sessions.py)."""
    return sessions.begin_attempt(conn, name)


def open_session(conn: Connection, user_id: int, name: str, lifetime: int, previous: str | None) -> tuple[str, str]:
    """A new session for the user (the cookie's value, its CSRF token); ``previous`` (the cookie
    the browser had) is closed, so that a session is never carried over a sign-in."""
    return sessions.open_session(conn, user_id, name, lifetime, sessions.digest(previous) if previous else None)


def close(conn: Connection, session_digest: str) -> None:
    sessions.close(conn, session_digest)


def issue_login_token(conn: Connection, user_id: int, lifetime: int, scope: str, client: str) -> str | None:
    """A login token for the user whose password was just checked, kept per ``client``
    (store/tokens.py); None when the account was made inactive or removed meanwhile."""
    user = users.get(conn, user_id)
    if user is None or not user["is_active"]:
        return None
    return tokens.issue(conn, user_id, lifetime, scope, "login", "", client)


def revoke_token(conn: Connection, token: str) -> int:
    """Revoke a token by its secret (whoever sends it may: RFC 7009); returns how many went."""
    return tokens.revoke(conn, token)


def note_token_use(conn: Connection, token_id: int, at: str, not_since: str) -> int:
    """Record that a token was used (once per burst, store/tokens.py touch)."""
    return tokens.touch(conn, token_id, at, not_since)
