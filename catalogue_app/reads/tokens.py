"""What /api/v2/tokens/ shows: the signed-in user's own API tokens (never a token nor its digest)."""

from __future__ import annotations

import msgspec

from catalogue_app.services import tokens as tokens_service
from catalogue_app.store import Connection, Row


class Token(msgspec.Struct):
    """One token: ``kind`` is 'personal' (made by its user), 'login' (from /o/token/) or 'cli'
    (from ``catalogue token``); ``expires`` null: until it is revoked; ``last_used`` is kept at
    most a minute behind."""

    id: int
    label: str
    kind: str
    client: str | None
    scope: str
    created: str
    expires: str | None
    last_used: str | None
    link: str


def shape(row: Row, base: str) -> Token:
    return Token(id=row["id"], label=row["label"], kind=row["kind"], client=row["client"] or None, scope=row["scope"],
                 created=row["created"], expires=row["expires"], last_used=row["last_used"],
                 link=f"{base}/api/v2/tokens/{row['id']}")


def mine(conn: Connection, user_id: int, base: str) -> list[Token]:
    """The user's tokens, newest first."""
    return [shape(r, base) for r in tokens_service.list_tokens(conn, user_id)]


def one(conn: Connection, user_id: int, token_id: int, base: str) -> Token:
    """One of the user's tokens; NotFound when it is not theirs."""
    return shape(tokens_service.get_token(conn, user_id, token_id), base)
