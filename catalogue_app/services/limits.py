"""Upload limits (size and parallelism): administrators create and change them (the rule book's
``may_change_limits``); everyone reads them."""

from __future__ import annotations

from typing import Any

from catalogue_app import rules
from catalogue_app.services.errors import NotFound, refusal_for
from catalogue_app.store import Connection, Row, limits


def require_admin(caller) -> None:
    if not rules.may_change_limits(caller):
        raise refusal_for(caller)


def create(conn: Connection, caller, kind: str, cleaned: list[tuple[str, str, Any]]) -> list[Row]:
    """New limits from checked (slug, description, value) items; all or none."""
    require_admin(caller)
    return limits.create_many(conn, kind, cleaned)


def change(conn: Connection, caller, kind: str, slug: str, description: str | None, value: Any) -> None:
    require_admin(caller)
    if not limits.update(conn, kind, slug, description, value):
        raise NotFound(message="No limit matches the given query.")
