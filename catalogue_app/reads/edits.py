"""What the answer to an edit of features shows: the version it made."""

from __future__ import annotations

from catalogue_app.reads.versions import Version, shape
from catalogue_app.store import Connection, versions


def version(conn: Connection, version_uuid: str) -> Version:
    """The version an edit made, as the history API shows it."""
    return shape(versions.by_uuid(conn, version_uuid))
