"""What OGC API - Records asks of the resources beyond the resource list's own query: its
queryables (the SQL columns of ``resources r`` a CQL2 filter may name), and the conditions of its
``datetime``, ``ids``, ``externalIds`` and comma-separated ``q`` parameters, as SQL on ``r``."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from catalogue_app.cql2 import Queryable
from catalogue_app.store.cql2_sql import EXTENT
from catalogue_app.store.filters import match_ci
from catalogue_app.store.resources import KEYWORDS

# The queryables of the record collection: a name as clients write it, its kind, the SQL of it on r.
QUERYABLES: dict[str, Queryable] = {q.name: q for q in (
    Queryable("id", "string", "r.uuid", "Identifier of the record (the resource's uuid)"),
    Queryable("type", "string", "r.resource_type", "Resource type (dataset, map, document, geostory, dashboard)"),
    Queryable("title", "string", "r.title", "Title"),
    Queryable("description", "string", "r.abstract", "Description (abstract)"),
    Queryable("created", "datetime", "r.created", "Date the record was created"),
    Queryable("updated", "datetime", "r.last_updated", "Date the record was last updated"),
    Queryable("date", "datetime", "r.date", "Reference date of the resource"),
    Queryable("language", "string", "r.language", "Language of the resource (ISO 639-2)"),
    Queryable("category", "string", "(SELECT identifier FROM categories WHERE id = r.category_id)",
              "Topic category (identifier)"),
    Queryable("owner", "string", "(SELECT username FROM users WHERE id = r.owner_id)", "User name of the owner"),
    Queryable("license", "string", "(SELECT identifier FROM licenses WHERE id = r.license_id)", "Licence (identifier)"),
    Queryable("doi", "string", "r.doi", "DOI of the resource"),
    Queryable("keywords", "string", "k.name", "Keywords (a filter asks whether any keyword passes)", exists=KEYWORDS),
    Queryable("time", "datetime", "r.temporal_extent_start", "Temporal extent of the resource",
              end="r.temporal_extent_end"),
    Queryable("featured", "boolean", "r.featured", "Whether the resource is featured"),
    Queryable("popularity", "integer", "r.popular_count", "How many times the resource was viewed"),
    # the extent in CRS84, as its four columns west, south, east, north
    Queryable("geometry", "geometry", EXTENT, "Extent of the resource (CRS84)"),
)}

# sortby names and the resource list's fields they sort by
SORTABLES = {"title": "title", "created": "created", "updated": "last_updated", "date": "date",
             "type": "resource_type", "id": "uuid"}


def _text(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


# The time of a resource: its temporal extent, else its reference date (as the first 19
# characters of the stored ISO text, which compare as times do)
_START = "substr(coalesce(r.temporal_extent_start, r.temporal_extent_end, r.date), 1, 19)"
_END = "substr(coalesce(r.temporal_extent_end, r.temporal_extent_start, r.date), 1, 19)"


def in_time(start: datetime | None, end: datetime | None) -> tuple[str, list[Any]]:
    """SQL: the resource's time meets the interval from ``start`` to ``end`` (None: open)."""
    parts, params = [f"{_START} IS NOT NULL"], []
    if end is not None:
        parts.append(f"{_START} <= ?")
        params.append(_text(end))
    if start is not None:
        parts.append(f"{_END} >= ?")
        params.append(_text(start))
    return " AND ".join(parts), params


def with_uuids(uuids: list[str]) -> tuple[str, list[Any]]:
    """SQL: the resource has one of these uuids."""
    return f"r.uuid IN ({','.join('?' * len(uuids))})", list(uuids)


def with_external_ids(values: list[str]) -> tuple[str, list[Any]]:
    """SQL: the resource's DOI is one of these (written bare, as "doi:..." or as a doi.org address)."""
    bare = []
    for value in values:
        v = value.strip()
        for prefix in ("https://doi.org/", "http://doi.org/", "http://dx.doi.org/", "doi:"):
            if v.lower().startswith(prefix):
                v = v[len(prefix):]
        bare.append(v)
    return f"r.doi IN ({','.join('?' * len(bare))})", bare


def any_text(alternatives: list[list[str]]) -> tuple[str, list[Any]]:
    """SQL: title or abstract hold every word of one of the alternatives (``q`` with commas)."""
    ors, params = [], []
    for words in alternatives:
        ands = []
        for word in words:
            a, pa = match_ci("r.title", word)
            b, pb = match_ci("r.abstract", word)
            ands.append(f"({a} OR {b})")
            params += pa + pb
        ors.append("(" + " AND ".join(ands) + ")")
    return " OR ".join(ors) or "0", params
