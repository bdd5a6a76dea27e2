"""The records the CSW endpoint answers with: resources as the API shows them to the caller, as
plain data, found by uuid (GetRecordById) or by a GetRecords query (store/csw_search.py).

The endpoint's document writer (``write``, api/ogc/csw/) is passed in and run here, so that a
long answer is written off the event loop when its read is."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from catalogue_app.reads.resources import render
from catalogue_app.store import Connection, csw_search, records, resource_extras
from catalogue_app.store.resources import Viewer

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller

Records = list[dict[str, Any]]


def _plain(conn: Connection, rows: list, caller: Caller, viewer: Viewer, base: str) -> Records:
    """The records as plain data, each with ``linked_to``: the uuids and titles of the resources
    it links to that the viewer sees."""
    if not rows:
        return []
    out = [msgspec.to_builtins(item) for item in render(conn, rows, caller, viewer, base)]
    linked = resource_extras.linked_uuids(conn, [int(item["pk"]) for item in out], viewer)
    for item in out:
        item["linked_to"] = [{"uuid": r["uuid"], "title": r["title"]} for r in linked[int(item["pk"])]]
    return out


def by_ids(conn: Connection, caller: Caller, viewer: Viewer, base: str, uuids: list[str],
           write: Callable[[Records], bytes]) -> bytes | None:
    """The document of the records with these uuids the caller may see, in the order asked;
    None when the caller may see none of them."""
    found = _plain(conn, records.visible_by_uuids(conn, viewer, uuids), caller, viewer, base)
    return write(found) if found else None


def search(conn: Connection, caller: Caller, viewer: Viewer, base: str, query: csw_search.RecordQuery,
           write: Callable[[int, Records], bytes]) -> bytes:
    """The document of how many records the caller may see match the query, and the page of
    them it asks for; csw_search.TooComplex when SQLite refuses the query for its size."""
    total, rows = csw_search.search(conn, viewer, query)
    return write(total, _plain(conn, rows, caller, viewer, base))
