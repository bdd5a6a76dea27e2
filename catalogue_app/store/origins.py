"""Where a resource came from: its source (local, harvested, remote, copy) and its origin.

A resource made here from scratch (an upload, a new document or map) has no row in
``resource_origins`` and is ``local``; one whose data stay elsewhere (a document at a remote
address) is ``remote``. A copy made here remembers its original (and that original's title, as it
was when copied: it stays true once the original is renamed or deleted); a resource published
here from another catalogue remembers the original's address there; a harvested one remembers
its harvester, the remote's address and its page of the record (migrations.RESOURCE_ORIGINS).
"""

from __future__ import annotations

import sqlite3
from typing import Any

SOURCES = ("local", "harvested", "remote", "copy")
ORIGIN_KINDS = ("copy", "harvested")  # the sources that have a row (every COPYREMOTE one does)

# The source of the resource ``r``, in SQL (a filter and sort field; rendering says the same). A
# filter that keeps copies or harvested records only is served by resource_origins instead
# (store/resources.py ``_came``).
SOURCE_SQL = ("coalesce((SELECT o.kind FROM resource_origins o WHERE o.resource_id = r.id),"
              " CASE r.sourcetype WHEN 'REMOTE' THEN 'remote' ELSE 'local' END)")


def of_page(conn: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    """The origin rows of a page of resources (those that have one), with the original's type
    while it exists."""
    if not ids:
        return {}
    rows = conn.execute("SELECT o.*, r.resource_type AS original_type FROM resource_origins o"
                        " LEFT JOIN resources r ON r.id = o.original_id"
                        f" WHERE o.resource_id IN ({','.join('?' * len(ids))})", ids)
    return {row["resource_id"]: row for row in rows}


def source(origin: Any, sourcetype: str) -> str:
    """A resource's source from its origin row (or None) and its sourcetype, as SOURCE_SQL says."""
    if origin is not None:
        return origin["kind"]
    return "remote" if sourcetype == "REMOTE" else "local"


def record_copy(conn: sqlite3.Connection, copy_id: int, original_id: int) -> None:
    """The copy ``copy_id`` was made here from ``original_id`` (whose title it remembers)."""
    conn.execute("INSERT OR REPLACE INTO resource_origins (resource_id, kind, original_id, title)"
                 " SELECT ?, 'copy', id, title FROM resources WHERE id = ?", (copy_id, original_id))


def record_harvest(conn: sqlite3.Connection, resource_id: int, harvester: Any, title: str,
                   page_url: str | None) -> None:
    """The resource was harvested (again) by ``harvester`` (its row); ``page_url`` is the remote's
    page of the record, when it has one."""
    conn.execute("INSERT OR REPLACE INTO resource_origins (resource_id, kind, title, url, harvester_id, harvester,"
                 " remote_url) VALUES (?, 'harvested', ?, ?, ?, ?, ?)",
                 (resource_id, title, page_url, harvester["id"], harvester["name"], harvester["remote_url"]))


def harvester_renamed(conn: sqlite3.Connection, harvester_id: int, name: str) -> None:
    conn.execute("UPDATE resource_origins SET harvester = ? WHERE harvester_id = ?", (name, harvester_id))


def get(conn: sqlite3.Connection, resource_id: int) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM resource_origins WHERE resource_id = ?", (resource_id,)).fetchone()


def recorded_here(origin: Any) -> bool:
    """Whether the catalogue itself recorded this origin (a copy made here, a harvest), which API
    clients may not change; a copy of a resource elsewhere is what a client said."""
    return origin is not None and (origin["kind"] != "copy" or origin["url"] is None)


def set_elsewhere(conn: sqlite3.Connection, resource_id: int, url: str | None, title: str) -> None:
    """The resource is a copy of the one at ``url`` (in another catalogue), titled ``title``
    there; None forgets it. Only for resources whose origin the catalogue did not record."""
    if url is None:
        conn.execute("DELETE FROM resource_origins WHERE resource_id = ? AND kind = 'copy' AND url IS NOT NULL",
                     (resource_id,))
        return
    conn.execute("INSERT OR REPLACE INTO resource_origins (resource_id, kind, title, url) VALUES (?, 'copy', ?, ?)",
                 (resource_id, title, url))
