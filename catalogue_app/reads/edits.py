"""What the answer to an edit of features shows: the version it made."""

from __future__ import annotations

from typing import Any

from catalogue_app.store import Connection, versions


def version(conn: Connection, version_uuid: str) -> dict[str, Any] | None:
    """A version's row by its uuid (store/versions.py ``COLUMNS``), or None."""
    row = versions.by_uuid(conn, version_uuid)
    return None if row is None else dict(row)
