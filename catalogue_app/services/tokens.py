"""The rules of API tokens, free of HTTP. A signed-in user lists, makes and revokes their own
tokens, of every kind (personal ones, /o/token/ logins, the command line's); another user's
token, superusers' included, is not found (so that ids cannot be probed). A personal token has a
label of 1 to LABEL_MAX printable characters and lasts until it is revoked, or for 1 to DAYS_MAX
days when asked; a user holds at most PERSONAL_MAX of them."""

from __future__ import annotations

from typing import Any

from catalogue_app.services.errors import Invalid, NotFound, NotSignedIn
from catalogue_app.store import Connection, Row, tokens

LABEL_MAX = 100
DAYS_MAX = 3650
PERSONAL_MAX = 100
SCOPE = "read write groups"
FIELDS = ("label", "expires_in_days")


def require_user(caller: Any) -> int:
    """The caller's user id; 401 for anonymous callers."""
    if caller.is_anonymous:
        raise NotSignedIn()
    return caller.id


def new_token_values(body: Any) -> dict[str, Any]:
    """The checked label and lifetime (days, or None: until revoked) of a new personal token."""
    if isinstance(body, dict) and isinstance(body.get("token"), dict) and len(body) == 1:
        body = body["token"]
    if not isinstance(body, dict):
        raise Invalid('Expected a JSON object: {"label": "what the token is for", "expires_in_days": 90}.')
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise Invalid(f"{unknown[0]}: not a field of a new token (label, expires_in_days).")
    label = body.get("label")
    if not isinstance(label, str) or not label.strip():
        raise Invalid("label: say what the token is for (for instance 'QGIS on my laptop').")
    label = " ".join(label.split())
    if len(label) > LABEL_MAX or any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in label):
        raise Invalid(f"label: at most {LABEL_MAX} printable characters.")
    days = body.get("expires_in_days")
    if isinstance(days, str) and days.strip().isdecimal() and len(days.strip()) <= 6:
        days = int(days)  # (a form field)
    elif isinstance(days, str) and not days.strip():
        days = None
    if days is not None and (isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= DAYS_MAX):
        raise Invalid(f"expires_in_days: a whole number of days from 1 to {DAYS_MAX}, or null for a token "
                      "that lasts until it is revoked.")
    return {"label": label, "days": days}


def list_tokens(conn: Connection, user_id: int) -> list[Row]:
    return tokens.of_user(conn, user_id)


def get_token(conn: Connection, user_id: int, token_id: int) -> Row:
    row = tokens.get(conn, token_id)
    if row is None or row["user_id"] != user_id:
        raise NotFound("Token")
    return row


def create_token(conn: Connection, user_id: int, values: dict[str, Any]) -> tuple[str, Row]:
    """A new personal token: (the token itself, shown this once; its row)."""
    if tokens.count(conn, user_id, "personal") >= PERSONAL_MAX:
        raise Invalid(f"You have {PERSONAL_MAX} personal tokens already: revoke those you no longer use first.")
    lifetime = None if values["days"] is None else values["days"] * 86_400
    issued = tokens.issue(conn, user_id, lifetime, SCOPE, kind="personal", label=values["label"])
    return issued, tokens.by_digest(conn, issued)


def revoke_token(conn: Connection, user_id: int, token_id: int) -> None:
    if not tokens.revoke_id(conn, token_id, user_id):
        raise NotFound("Token")
