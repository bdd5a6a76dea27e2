"""Facets of a resource search as a caller sees them (store/facets.py counts them): what GeoNode's
facets API (/api/v2/facets/{name}) and the OGC API - Records items (facets=true) answer with."""

from __future__ import annotations

import msgspec

from catalogue_app.store import Connection, facets, resources
from catalogue_app.store.resources import ResourceQuery, Viewer

NAMES = facets.FACETS


class Topic(msgspec.Struct):
    """One value of a facet: its id, the key a filter names it by, its label and its count."""

    id: str | int
    key: str
    label: str
    count: int


class Topics(msgspec.Struct):
    """A page of a facet's values, most frequent first, and how many values it has."""

    name: str
    total: int
    start: int
    page_size: int
    items: list[Topic]


def topics(conn: Connection, viewer: Viewer, query: ResourceQuery, tkeyword_ids: list[int], force_and: bool,
           names: tuple[str, ...] = NAMES, start: int = 0, page_size: int = 10) -> dict[str, Topics]:
    """The values of each facet named (one of NAMES) that the resources ``query`` selects for
    the viewer have, a page of each from ``start``; the thesaurus keywords asked for are grouped
    as the resource list groups them."""
    if tkeyword_ids:
        query.tkeyword_groups = resources.tkeyword_groups(conn, tkeyword_ids, force_and)
    counted = facets.counts(conn, viewer, query, names)
    return {name: Topics(name, len(buckets), start, page_size,
                         [Topic(b.id, b.key, b.label, b.count) for b in buckets[start:start + page_size]])
            for name, buckets in counted.items()}
