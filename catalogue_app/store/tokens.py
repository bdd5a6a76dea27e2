"""Bearer tokens. Only a SHA-256 digest of each token is stored.

A token is one of three kinds: 'personal' (made by its user, with a label, on the My tokens page
or through /api/v2/tokens/), 'login' (issued by /o/token/) and 'cli' (made by ``catalogue
token``). A personal token may last until it is revoked: its ``expires`` is then ``NEVER``.
Logins are kept in check: expired tokens go whenever one is issued, and a user keeps only the
newest LOGINS_PER_CLIENT login tokens of each client (LOGINS_PER_USER in all), so that a script
that signs in every minute does not grow the table without bound.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3

from catalogue_app.clock import now
from catalogue_app.store import users

KINDS = ("personal", "login", "cli")
NEVER = "9999-12-31T23:59:59.999999Z"  # the expiry of a token that lasts until it is revoked
LOGINS_PER_CLIENT = 50
LOGINS_PER_USER = 100
# The columns a token's owner may see (never the digest).
PUBLIC = "id, user_id, label, kind, client, scope, created, NULLIF(expires, '" + NEVER + "') AS expires, last_used"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def issue(conn: sqlite3.Connection, user_id: int, lifetime_seconds: int | None,
          scope: str = "read write groups", kind: str = "login", label: str = "", client: str = "") -> str:
    """A new token for the user (the only time it is seen); ``lifetime_seconds`` None: until
    revoked. Drops expired tokens, and the user's oldest logins past the limits."""
    token = secrets.token_urlsafe(30)
    created = now()
    expires = NEVER if lifetime_seconds is None else now(lifetime_seconds)
    conn.execute("DELETE FROM tokens WHERE expires <= ?", (created,))
    conn.execute(
        "INSERT INTO tokens (digest, user_id, created, expires, scope, kind, label, client)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (digest(token), user_id, created, expires, scope, kind, label, client),
    )
    if kind == "login":
        _keep_newest(conn, "user_id = ? AND kind = 'login' AND client = ?", (user_id, client), LOGINS_PER_CLIENT)
        _keep_newest(conn, "user_id = ? AND kind = 'login'", (user_id,), LOGINS_PER_USER)
    return token


def _keep_newest(conn: sqlite3.Connection, where: str, args: tuple, keep: int) -> None:
    conn.execute(f"DELETE FROM tokens WHERE id IN (SELECT id FROM tokens WHERE {where}"
                 " ORDER BY created DESC, id DESC LIMIT -1 OFFSET ?)", (*args, keep))


def user_for(conn: sqlite3.Connection, token: str) -> sqlite3.Row | None:
    """The active user a valid, unexpired token belongs to, with ``token_id`` and
    ``token_last_used``."""
    cols = ", ".join(f"u.{c.strip()}" for c in users.COLUMNS.split(","))
    return conn.execute(
        f"SELECT {cols}, t.id AS token_id, t.last_used AS token_last_used"
        " FROM tokens t JOIN users u ON u.id = t.user_id"
        " WHERE t.digest = ? AND t.expires > ? AND u.is_active = 1",
        (digest(token), now()),
    ).fetchone()


def touch(conn: sqlite3.Connection, token_id: int, at: str, not_since: str) -> int:
    """Record that the token was used ``at``, unless it was already recorded at ``not_since`` or
    later (so that a burst of requests writes it once)."""
    return conn.execute("UPDATE tokens SET last_used = ? WHERE id = ? AND (last_used IS NULL OR last_used < ?)",
                        (at, token_id, not_since)).rowcount


def of_user(conn: sqlite3.Connection, user_id: int) -> list[sqlite3.Row]:
    """The user's unexpired tokens, newest first."""
    return conn.execute(f"SELECT {PUBLIC} FROM tokens WHERE user_id = ? AND expires > ?"
                        " ORDER BY created DESC, id DESC", (user_id, now())).fetchall()


def get(conn: sqlite3.Connection, token_id: int) -> sqlite3.Row | None:
    """One unexpired token (any user's)."""
    return conn.execute(f"SELECT {PUBLIC} FROM tokens WHERE id = ? AND expires > ?", (token_id, now())).fetchone()


def by_digest(conn: sqlite3.Connection, token: str) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {PUBLIC} FROM tokens WHERE digest = ?", (digest(token),)).fetchone()


def count(conn: sqlite3.Connection, user_id: int, kind: str) -> int:
    return conn.execute("SELECT count(*) FROM tokens WHERE user_id = ? AND kind = ? AND expires > ?",
                        (user_id, kind, now())).fetchone()[0]


def revoke(conn: sqlite3.Connection, token: str) -> int:
    return conn.execute("DELETE FROM tokens WHERE digest = ?", (digest(token),)).rowcount


def revoke_id(conn: sqlite3.Connection, token_id: int, user_id: int) -> int:
    """Revoke the user's token with this id; 0 when the user has none such."""
    return conn.execute("DELETE FROM tokens WHERE id = ? AND user_id = ?", (token_id, user_id)).rowcount


def revoke_all(conn: sqlite3.Connection, user_id: int) -> int:
    return conn.execute("DELETE FROM tokens WHERE user_id = ?", (user_id,)).rowcount
