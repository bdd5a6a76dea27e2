"""What comes with one resource besides its fields: its ratings, its extra metadata items and the
resources it links to or is linked by, each read for a viewer who may see the resource (NotFound
otherwise, as its detail says)."""

from __future__ import annotations

from typing import Any

import msgspec

from catalogue_app.reads.links import absolute
from catalogue_app.rules import Viewer
from catalogue_app.services import resources as resources_service
from catalogue_app.store import Connection, Row, resource_extras


class RatingAnswer(msgspec.Struct):
    rating: float
    count: int
    user_rating: int | None


class LinkItem(msgspec.Struct):
    internal: bool
    pk: int
    title: str
    resource_type: str
    detail_url: str
    thumbnail_url: str | None


def _visible(conn: Connection, viewer: Viewer, resource_id: int, types: tuple[str, ...] = ()) -> Row:
    return resources_service.visible(conn, viewer, resource_id, resources_service.Scope(types))


def seen(conn: Connection, viewer: Viewer, resource_id: int) -> int:
    """The resource's id, when the viewer may see it."""
    return _visible(conn, viewer, resource_id)["id"]


def rating(conn: Connection, viewer: Viewer, resource_id: int, user_id: int | None) -> RatingAnswer:
    """The average rating, how many rated, and ``user_id``'s own rating."""
    row = _visible(conn, viewer, resource_id)
    return RatingAnswer(*resource_extras.rating(conn, row["id"], user_id))


def extra_metadata(conn: Connection, viewer: Viewer, resource_id: int,
                   match: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """The extra metadata items; with ``match`` (key, value) only those whose key has that value
    as text."""
    items = resource_extras.extra_metadata(conn, _visible(conn, viewer, resource_id)["id"])
    if match is not None:
        key, value = match
        items = [i for i in items if str(i.get(key)) == value]
    return items


def linked_payload(conn: Connection, row: Row, viewer: Viewer, base: str,
                   params: list[tuple[str, str]]) -> dict[str, Any]:
    """``linked_to`` and ``linked_by`` of the resource ``row``, as far as the viewer sees them;
    ``params`` may narrow them (``resource_type``, ``link_type``)."""
    types = [t for k, v in params if k == "resource_type" for t in v.split(",") if t]
    found = resource_extras.linked(conn, row["id"], viewer, types)
    wanted = next((v for k, v in params if k == "link_type"), None)
    body: dict[str, Any] = {
        key: [LinkItem(bool(r["internal"]), r["id"], r["title"], r["resource_type"],
                       f"{base}/catalogue/#/{r['resource_type']}/{r['id']}", absolute(base, r["thumbnail_url"]))
              for r in rows]
        for key, rows in found.items() if wanted in (None, key)}
    if any(k in ("page", "page_size") for k, _ in params):
        body["WARNINGS"] = {"PAGINATION": "Pagination is not supported on this call"}
    return body


def linked(conn: Connection, viewer: Viewer, resource_id: int, base: str, params: list[tuple[str, str]],
           types: tuple[str, ...] = ()) -> dict[str, Any]:
    """The linked resources of one resource (of one of ``types``, when given) the viewer sees."""
    return linked_payload(conn, _visible(conn, viewer, resource_id, types), viewer, base, params)
