"""OGC API - Records, Part 1: the catalogue as the record collection ``metadata:main``. A record
is one resource as GeoJSON (its extent in CRS84 as the geometry); the items are the resource
list's own query (visibility as SQL, its text, extent and relation indexes, its plans), with
the Records parameters added as conditions on it; facets come from store/facets.py.

What a record says does not depend on who asks (only whether they may see it), so each record is
kept encoded by the database owner until the data change, under the request's base URL, and a
whole page of items under who asks and what they asked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec

from catalogue_app.reads import linked_data
from catalogue_app.reads import links as links_
from catalogue_app.reads import resources as resource_reads
from catalogue_app.store import Connection, facets as facet_store, records_api, resource_extras, resources
from catalogue_app.store.db import kept as store_kept
from catalogue_app.store.filters import ListSpec, Ordering
from catalogue_app.store.resources import ResourceQuery, Viewer

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller

RECORDS_ID = "metadata:main"
PREFIX = "/ogcapi"
ITEMS = f"{PREFIX}/collections/{RECORDS_ID}/items"
QUERYABLES = records_api.QUERYABLES
SORTABLES = records_api.SORTABLES
TYPES = resources.RESOURCE_TYPES
UI_KIND = {"geostory": "geoapp", "dashboard": "geoapp"}
FACET_SIZE = 50  # values shown of each facet
MAX_KEPT_PAGES = 256

_encode = msgspec.json.Encoder().encode


def collection(base: str) -> dict[str, Any]:
    """The record collection's own document (also listed by /ogcapi/collections)."""
    here = f"{base}{PREFIX}/collections/{RECORDS_ID}"
    return {
        "id": RECORDS_ID,
        "title": "The catalogue's records",
        "description": "Every dataset, map, document and geoapp of the catalogue that you may view, as "
                       "OGC API - Records records.",
        "itemType": "record",
        "type": "Collection",
        "crs": ["http://www.opengis.net/def/crs/OGC/1.3/CRS84"],
        "extent": {"spatial": {"bbox": [[-180.0, -90.0, 180.0, 90.0]],
                               "crs": "http://www.opengis.net/def/crs/OGC/1.3/CRS84"}},
        "keywords": ["catalogue", "metadata"],
        "links": [
            {"href": f"{here}?f=json", "rel": "self", "type": "application/json", "title": "This collection as JSON"},
            {"href": f"{here}?f=html", "rel": "alternate", "type": "text/html", "title": "This collection as HTML"},
            {"href": f"{here}/items?f=json", "rel": "items", "type": "application/geo+json",
             "title": "The records as GeoJSON"},
            {"href": f"{here}/items?f=html", "rel": "items", "type": "text/html", "title": "The records as HTML"},
            {"href": f"{here}/queryables", "rel": "http://www.opengis.net/def/rel/ogc/1.0/queryables",
             "type": "application/schema+json", "title": "What a filter may name"},
            {"href": f"{base}/dcat/catalog", "rel": "describedby", "type": "application/ld+json",
             "title": "DCAT-AP catalogue"},
        ],
    }


def queryables(base: str) -> dict[str, Any]:
    """The queryables as a JSON Schema (OGC API - Features Part 3, as Records uses it)."""
    kinds = {"string": {"type": "string"}, "number": {"type": "number"}, "integer": {"type": "integer"},
             "boolean": {"type": "boolean"}, "datetime": {"type": "string", "format": "date-time"},
             "geometry": {"format": "geometry-any"}}
    props = {}
    for q in QUERYABLES.values():
        props[q.name] = {"title": q.title, **kinds[q.kind]}
        if q.name == "type":
            props[q.name]["enum"] = list(TYPES)
        if q.name == "geometry":
            props[q.name]["x-ogc-role"] = "primary-geometry"
        if q.name == "id":
            props[q.name]["x-ogc-role"] = "id"
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{base}{PREFIX}/collections/{RECORDS_ID}/queryables",
        "type": "object",
        "title": "The catalogue's records",
        "properties": props,
        "additionalProperties": False,
    }


@dataclass
class Search:
    """What an items request asks for, already checked by the API layer."""

    words: list[str] = field(default_factory=list)               # q without commas: every word
    alternatives: list[list[str]] = field(default_factory=list)  # q with commas: every word of one of them
    extents: list[tuple[float, float, float, float]] = field(default_factory=list)
    interval: tuple[datetime | None, datetime | None] | None = None
    types: tuple[str, ...] = ()
    ids: list[str] = field(default_factory=list)
    external_ids: list[str] = field(default_factory=list)
    ordering: list[tuple[str, bool]] = field(default_factory=list)  # (sortby name, descending)
    filter: Any = None  # a CQL2 expression (catalogue_app.cql2.parse)
    facets: bool = False
    key: tuple = ()  # what the answer depends on besides who asks: the request's parameters


def resource_query(search: Search) -> ResourceQuery:
    """The search as the resource list's query."""
    spec = ListSpec(search_terms=list(search.words), search_fields=["title", "abstract"] if search.words else [],
                    ordering=[Ordering(SORTABLES[name], desc) for name, desc in search.ordering])
    query = ResourceQuery(spec=spec, resource_types=tuple(search.types), extents=list(search.extents))
    if search.alternatives:
        query.sql.append(records_api.any_text(search.alternatives))
    if search.interval is not None:
        query.sql.append(records_api.in_time(*search.interval))
    if search.ids:
        query.sql.append(records_api.with_uuids(search.ids))
    if search.external_ids:
        query.sql.append(records_api.with_external_ids(search.external_ids))
    if search.filter is not None:
        from catalogue_app.store import cql2_sql

        query.sql.append(cql2_sql.where(search.filter))
    return query


class Page(msgspec.Struct):
    """A page of items: how many match, the records (a JSON array, encoded), and the facets."""

    matched: int
    returned: int
    features: msgspec.Raw
    facets: dict[str, Any] | None = None


def items(conn: Connection, caller: Caller, viewer: Viewer, base: str, search: Search, limit: int,
          offset: int) -> Page:
    """One page of records as the caller may see them."""
    query = resource_query(search)
    total, rows = resources.page(conn, viewer, query, limit, offset, resources.PERMS_COLUMNS)
    features = encoded(conn, [row["id"] for row in rows], caller, viewer, base)
    shown_facets = None
    if search.facets:
        counted = facet_store.counts(conn, viewer, resource_query(search))
        shown_facets = {name: {"type": "terms", "property": name, "buckets": [
            {"value": b.key, "label": b.label, "count": b.count} for b in buckets[:FACET_SIZE]]}
            for name, buckets in counted.items()}
    return Page(total, len(rows), msgspec.Raw(b"[" + b",".join(features) + b"]"), shown_facets)


def answer(conn: Connection, caller: Caller, viewer: Viewer, base: str, request: Any,
           parse: Callable[[], tuple[Search, int, int]], envelope: Callable[[Page, int, int], bytes]) -> bytes:
    """The items answer, encoded by ``envelope``, for the request whose parameters ``parse``
    reads (once, when the answer is not kept); kept whole until the data change, under who asks
    and ``request`` (the query string: all that the answer depends on besides)."""
    kept = store_kept(conn)
    pages = kept.get("ogc record answers")
    if pages is None:
        pages = kept["ogc record answers"] = {}
    key = (base, viewer, request)
    found = pages.get(key)
    if found is None:
        search, limit, offset = parse()
        found = envelope(items(conn, caller, viewer, base, search, limit, offset), limit, offset)
        resource_reads.keep(pages, key, found, MAX_KEPT_PAGES)
    return found


def encoded(conn: Connection, ids: list[int], caller: Caller, viewer: Viewer, base: str) -> list[bytes]:
    """The records of these resources, encoded, in this order (kept until the data change)."""
    kept = store_kept(conn)
    out: dict[int, bytes] = {}
    missing = []
    for rid in ids:
        found = kept.get(("ogc record", base, rid))
        if found is None:
            missing.append(rid)
        else:
            out[rid] = found
    if missing:
        rows = resources.rows_by_ids(conn, missing)
        linked = public_links(conn, missing)
        for row, item in zip(rows, resource_reads.render(conn, rows, caller, viewer, base)):
            out[row["id"]] = _encode(record(item, base, linked[row["id"]]))
            resource_reads.keep(kept, ("ogc record", base, row["id"]), out[row["id"]])
    return [out[rid] for rid in ids if rid in out]


def one(conn: Connection, caller: Caller, viewer: Viewer, base: str, uuid: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """One record and the resource as the API shows it (for its page's linked data); None when
    there is none the caller may see."""
    rid = resources.id_by_uuid(conn, uuid)
    row = resources.get_visible(conn, viewer, rid) if rid is not None else None
    if row is None:
        return None
    item = resource_reads.render(conn, [row], caller, viewer, base)[0]
    return record(item, base, public_links(conn, [row["id"]])[row["id"]]), msgspec.to_builtins(item)


def public_links(conn: Connection, ids: list[int]) -> dict[int, list[Any]]:
    """The public resources each links to (a record says the same to whoever may see it)."""
    return resource_extras.linked_uuids(conn, ids, resources.ANONYMOUS)


def _ui_page(base: str, kind: str, pk: str) -> str:
    return f"{base}/#/{UI_KIND.get(kind, kind)}/{pk}"


def _person(user: Any, role: str) -> dict[str, Any]:
    """A contact: a user of the catalogue (linked to its page in the API), or a contact that is no
    user, with its organisation and email."""
    if isinstance(user, resource_reads.NamedContact):
        out: dict[str, Any] = {"roles": [role]}
        if user.first_name:
            out["name"] = user.first_name
        if user.organization:
            out["organization"] = user.organization
        if user.email:
            out["emails"] = [{"value": user.email}]
        return out
    name = " ".join(p for p in (user.first_name, user.last_name) if p) or user.username
    return {"name": name, "roles": [role], "links": [{"href": user.link, "rel": "about", "type": "application/json"}]}


# link_type of a resource's links (reads/links.py) and the rel a record names them by
_SERVICE_TYPES = {"OGC:WMS", "OGC:WFS", "OGC:WCS"}


def record(item: Any, base: str, linked: list[Any] = ()) -> dict[str, Any]:
    """One resource (as reads/resources.py ``render`` makes it) as a record; ``linked``: the
    (uuid, title) rows of the resources it links to, shown as related records."""
    pk, kind, uuid = item.pk, item.resource_type, item.uuid
    here = f"{base}{ITEMS}/{uuid}"
    geometry = None
    if item.ll_bbox_polygon is not None:
        geometry = {"type": "Polygon", "coordinates": item.ll_bbox_polygon.coordinates}
    contacts = [_person(item.owner, "owner")]
    for role in resource_reads.CONTACT_ROLES:
        for user in getattr(item, role):
            contacts.append(_person(user, role))
    formats, links = [], [
        {"href": f"{here}?f=json", "rel": "self", "type": "application/geo+json", "title": "This record as GeoJSON"},
        {"href": f"{here}?f=html", "rel": "alternate", "type": "text/html", "title": "This record as HTML"},
        {"href": f"{base}{PREFIX}/collections/{RECORDS_ID}", "rel": "collection", "type": "application/json",
         "title": "The catalogue's records"},
        {"href": f"{base}/api/v2/resources/{pk}", "rel": "alternate", "type": "application/json",
         "title": "The resource in the catalogue's API"},
        {"href": f"{base}/dcat/resources/{uuid}", "rel": "describedby", "type": "application/ld+json",
         "title": "DCAT-AP"},
        {"href": _ui_page(base, kind, pk), "rel": "alternate", "type": "text/html", "title": "Page in the web UI"},
    ]
    for lk in item.links:
        if lk.link_type == "metadata":
            if lk.name == "ISO" or lk.name == links_.UPLOADED_ISO:
                links.append({"href": lk.url, "rel": "describedby", "type": "application/xml",
                              "title": f"{lk.name} 19139 metadata" if lk.name == "ISO" else lk.name})
        elif lk.link_type in _SERVICE_TYPES:
            links.append({"href": lk.url, "rel": "service", "type": "application/xml", "title": lk.link_type,
                          "protocol": lk.link_type, "name": lk.name})
        elif lk.link_type in ("data", "original"):
            links.append({"href": lk.url, "rel": "enclosure", "type": lk.mime, "title": lk.name})
            formats.append({"name": lk.name, "mediaType": lk.mime})
        elif lk.link_type == "image" and lk.name == "Thumbnail":
            links.append({"href": lk.url, "rel": "preview", "type": lk.mime, "title": "Thumbnail"})
    for other in linked:
        links.append({"href": f"{base}{ITEMS}/{other['uuid']}", "rel": "related", "type": "application/geo+json",
                      "title": other["title"]})
    properties: dict[str, Any] = {
        "type": kind,
        "title": item.title,
        "description": item.abstract,
        "keywords": [k.name for k in item.keywords],
        "themes": ([{"concepts": [{"id": item.category.identifier, "title": item.category.gn_description}],
                     "scheme": "https://standards.iso.org/iso/19115/resources/Codelists/cat/codelists.xml#MD_TopicCategoryCode"}]
                   if item.category else []),
        "language": {"code": item.language} if item.language else None,
        "created": item.created,
        "updated": item.last_updated,
        "contacts": contacts,
        "formats": formats,
        "license": item.license.identifier if item.license else None,
        "rights": item.constraints_other or (item.restriction_code_type.identifier if item.restriction_code_type else None),
        "externalIds": [{"scheme": "https://doi.org", "value": item.doi}] if item.doi else [],
        # the catalogue's other metadata fields, named as its API names them
        "date": item.date,
        "date_type": item.date_type,
        "edition": item.edition,
        "purpose": item.purpose,
        "attribution": item.attribution,
        "data_quality_statement": item.data_quality_statement,
        "supplemental_information": item.supplemental_information,
        "maintenance_frequency": item.maintenance_frequency,
        "restriction_code_type": item.restriction_code_type.identifier if item.restriction_code_type else None,
        "constraints_other": item.constraints_other,
        "spatial_representation_type": (item.spatial_representation_type.identifier
                                        if item.spatial_representation_type else None),
    }
    if item.regions:
        properties["themes"].append({"concepts": [{"id": r.code, "title": r.name} for r in item.regions],
                                     "scheme": f"{base}/api/v2/regions"})
    if item.tkeywords:
        by_thesaurus: dict[str, list[dict[str, str]]] = {}
        for t in item.tkeywords:
            by_thesaurus.setdefault(t.thesaurus.uri or t.thesaurus.slug, []).append({"id": t.uri or t.slug, "title": t.name})
        properties["themes"] += [{"concepts": concepts, "scheme": scheme} for scheme, concepts in by_thesaurus.items()]
    out: dict[str, Any] = {"id": uuid, "type": "Feature", "conformsTo": [
        "http://www.opengis.net/spec/ogcapi-records-1/1.0/req/record-core"], "time": None, "geometry": geometry,
        "properties": properties, "links": links}
    start, end = item.temporal_extent_start, item.temporal_extent_end
    if start or end:
        out["time"] = {"interval": [start or "..", end or ".."]}
    elif item.date:
        out["time"] = {"date": item.date[:10]} if item.date else None
    return out


def schema_org(resource: dict[str, Any], base: str) -> dict[str, Any]:
    """The resource's schema.org JSON-LD for its record's page ({} when there is none)."""
    return linked_data.schema_org(resource, base)
