"""The resource representation, with GeoNode's keys and JSON types.

Every key that QGIS or geonodectl reads is present on every row (null when unknown); ``pk``,
``polymorphic_ctype_id``, ``popular_count``, ``share_count`` and ``rating`` are strings, as in
GeoNode.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from catalogue_app import rules
from catalogue_app.api.resources import links as links_
from catalogue_app.api.middleware.auth import Caller
from catalogue_app.api.resources.links import Link
from catalogue_app.api.accounts.representation import GroupRef, User, user
from catalogue_app.store import Connection, Row, origins, records, remote_layers, resources, users
from catalogue_app.store.resources import Related, Viewer

CONTACT_ROLES = ("poc", "metadata_author", "processor", "publisher", "custodian", "distributor",
                 "resource_user", "resource_provider", "originator", "principal_investigator")
CTYPE_IDS = {"dataset": "50", "map": "55", "document": "58", "service": "70", "geostory": "63", "dashboard": "63"}
TAGS = re.compile(r"<[^>]*>")


class Keyword(msgspec.Struct):
    name: str
    slug: str


class Thesaurus(msgspec.Struct):
    name: str
    slug: str
    uri: str


class TKeyword(msgspec.Struct):
    name: str
    slug: str
    uri: str
    thesaurus: Thesaurus
    i18n: dict[str, str]


class Region(msgspec.Struct):
    code: str
    name: str


class Category(msgspec.Struct):
    identifier: str
    gn_description: str


class Identifier(msgspec.Struct):
    identifier: str


class Polygon(msgspec.Struct):
    type: str
    coordinates: list[list[list[float]]]


class Extent(msgspec.Struct):
    coords: list[float]
    srid: str


class Origin(msgspec.Struct):
    """Where a resource came from (a field beyond GeoNode's): ``kind`` is its ``source``
    (copy, harvested, remote). A copy made here names its original (``pk``, ``url`` here) while
    it exists, and its title as it was when copied; a copy of a resource in another catalogue
    (published here) gives its address there; a harvested record its harvester, the remote's
    address and the remote's page of the record; a remote resource the address of its data."""

    kind: str
    title: str | None
    url: str | None
    pk: str | None
    harvester: str | None
    remote_url: str | None


class Resource(msgspec.Struct, kw_only=True):
    pk: str
    uuid: str
    resource_type: str
    polymorphic_ctype_id: str
    perms: list[str]
    owner: User
    poc: list[User]
    metadata_author: list[User]
    processor: list[User]
    publisher: list[User]
    custodian: list[User]
    distributor: list[User]
    resource_user: list[User]
    resource_provider: list[User]
    originator: list[User]
    principal_investigator: list[User]
    keywords: list[Keyword]
    tkeywords: list[TKeyword]
    regions: list[Region]
    category: Category | None
    title: str
    abstract: str
    attribution: str | None
    alternate: str | None
    doi: str | None
    bbox_polygon: Polygon | None
    ll_bbox_polygon: Polygon | None
    srid: str
    date: str | None
    date_type: str
    edition: str | None
    purpose: str | None
    maintenance_frequency: str | None
    restriction_code_type: Identifier | None
    constraints_other: str | None
    license: Identifier | None
    language: str
    spatial_representation_type: Identifier | None
    temporal_extent_start: str | None
    temporal_extent_end: str | None
    supplemental_information: str | None
    data_quality_statement: str | None
    group: GroupRef | None
    popular_count: str
    share_count: str
    rating: str
    featured: bool
    advertised: bool
    is_published: bool
    is_approved: bool
    detail_url: str
    embed_url: str
    created: str
    last_updated: str
    raw_abstract: str
    raw_purpose: str
    raw_constraints_other: str
    raw_supplemental_information: str
    raw_data_quality_statement: str
    metadata_only: bool
    processed: bool
    state: str
    subtype: str | None
    sourcetype: str
    is_copyable: bool
    download_url: str | None
    download_urls: list[dict[str, Any]]
    extent: Extent
    favorite: bool
    thumbnail_url: str | None
    links: list[Link]
    link: str
    metadata_uploaded_preserve: bool
    # beyond GeoNode's fields (read-only): local | harvested | remote | copy, and where from
    source: str
    origin: Origin | None
    # deferred: present only when asked for with include[]
    data: Any | UnsetType = UNSET


FIELD_NAMES = set(Resource.__struct_fields__) | {"metadata", "executions", "linked_resources"}
DEFERRED = {"data", "metadata", "executions", "linked_resources"}


def raw(text: str | None) -> str:
    """GeoNode's raw_* copies: tags removed, entities decoded, lines joined; "None" for null."""
    if text is None:
        return "None"
    return " ".join(html.unescape(TAGS.sub(" ", text)).split())


def polygon(x0, y0, x1, y1) -> Polygon | None:
    if None in (x0, y0, x1, y1):
        return None
    return Polygon("Polygon", [[[x0, y0], [x0, y1], [x1, y1], [x1, y0], [x0, y0]]])


def caller_perms(row: Row, held: set[str], viewer: Viewer) -> list[str]:
    """The caller's permission names on one resource: the rule book's answer, from what they hold."""
    return list(rules.resource_actions(viewer, rules.ResourceFacts.of(row, held)))


def urls(row: Row, base: str) -> tuple[str, str, str | None, list[dict[str, Any]]]:
    """detail_url, embed_url, download_url and download_urls of a resource."""
    rid, kind = row["id"], row["resource_type"]
    detail = f"{base}/catalogue/#/{kind}/{rid}"
    if kind == "dataset":
        embed = f"{base}/datasets/{row['alternate']}/embed" if row["alternate"] else ""
        download = (f"{base}/datasets/{row['alternate']}/dataset_download"
                    if row["alternate"] and row["subtype"] in ("vector", "raster", "vector_time") else None)
        downloads = [{"url": download, "ajax_safe": True, "default": True}] if download else []
    elif kind == "document":
        embed = f"{base}/documents/{rid}/embed"
        download = f"{base}/documents/{rid}/download"
        # ajax_safe: the file is served here (a remote document's download redirects elsewhere)
        downloads = [{"url": download, "ajax_safe": row["sourcetype"] != "REMOTE", "default": True}]
    elif kind == "map":
        embed, download, downloads = f"{base}/maps/{rid}/embed", None, []
    elif kind in resources.GEOAPP_TYPES:
        embed, download, downloads = f"{base}/apps/{rid}/embed", None, []
    else:
        embed, download, downloads = "", None, []
    return detail, embed, download, downloads


def render(conn: Connection, rows: list[Row], caller: Caller, viewer: Viewer, base: str,
           with_data: bool = False) -> list[Resource]:
    """The representation of a page of rows, loaded in a fixed number of queries."""
    # plain dicts: Row finds a column by name with a linear search, and each row is read
    # by some seventy names here
    rows = [dict(zip(row.keys(), row)) for row in rows]
    rel: Related = resources.related(conn, rows, viewer)
    people = {r["id"]: user(r, caller, base) for r in users.by_ids(conn, rel.user_ids)}
    facts = records.link_facts(conn, [row["id"] for row in rows])
    brought = remote_layers.links_of(conn, [row["id"] for row in rows])
    came = origins.of_page(conn, [row["id"] for row in rows])
    out = []
    for row in rows:
        rid = row["id"]
        roles: dict[str, list[User]] = {role: [] for role in CONTACT_ROLES}
        for c in rel.contacts[rid]:
            if c["role"] in roles and c["user_id"] in people:
                roles[c["role"]].append(people[c["user_id"]])
        category = rel.categories.get(row["category_id"])
        license_ = rel.licenses.get(row["license_id"])
        detail, embed, download, downloads = urls(row, base)
        thumbnail = links_.absolute(base, row["thumbnail_url"])
        found = facts.get(rid)
        remote = bool(found and found.remote_url)
        if remote:  # its data stay on the remote: downloaded there, when it says where
            download = found.remote_download
            downloads = [{"url": download, "ajax_safe": False, "default": True}] if download else []
        ll = (row["ll_x0"], row["ll_y0"], row["ll_x1"], row["ll_y1"])
        coords = list(ll) if None not in ll else [-180.0, -90.0, 180.0, 90.0]
        out.append(Resource(
            pk=str(rid), uuid=row["uuid"], resource_type=row["resource_type"],
            polymorphic_ctype_id=CTYPE_IDS.get(row["resource_type"], "0"),
            perms=caller_perms(row, rel.perms[rid], viewer),
            owner=people[row["owner_id"]], **roles,
            keywords=[Keyword(k["name"], k["slug"]) for k in rel.keywords[rid]],
            tkeywords=[tkeyword(t) for t in rel.tkeywords[rid]],
            regions=[Region(g["code"], g["name"]) for g in rel.regions[rid]],
            category=Category(category["identifier"], category["gn_description"]) if category else None,
            title=row["title"], abstract=row["abstract"], attribution=row["attribution"],
            alternate=row["alternate"], doi=row["doi"],
            bbox_polygon=polygon(row["bbox_x0"], row["bbox_y0"], row["bbox_x1"], row["bbox_y1"]),
            ll_bbox_polygon=polygon(*ll), srid=row["srid"], date=row["date"], date_type=row["date_type"],
            edition=row["edition"], purpose=row["purpose"], maintenance_frequency=row["maintenance_frequency"],
            restriction_code_type=Identifier(row["restriction_code_type"]) if row["restriction_code_type"] else None,
            constraints_other=row["constraints_other"],
            license=Identifier(license_["identifier"]) if license_ else None, language=row["language"],
            spatial_representation_type=(Identifier(row["spatial_representation_type"])
                                         if row["spatial_representation_type"] else None),
            temporal_extent_start=row["temporal_extent_start"], temporal_extent_end=row["temporal_extent_end"],
            supplemental_information=row["supplemental_information"],
            data_quality_statement=row["data_quality_statement"],
            group=GroupRef(row["group_id"], rel.groups[row["group_id"]]) if row["group_id"] in rel.groups else None,
            popular_count=str(row["popular_count"]), share_count=str(row["share_count"]),
            rating=str(round(rel.ratings.get(rid, 0))),
            featured=bool(row["featured"]), advertised=bool(row["advertised"]),
            is_published=bool(row["is_published"]), is_approved=bool(row["is_approved"]),
            detail_url=detail, embed_url=embed, created=row["created"], last_updated=row["last_updated"],
            raw_abstract=raw(row["abstract"]), raw_purpose=raw(row["purpose"]),
            raw_constraints_other=raw(row["constraints_other"]),
            raw_supplemental_information=raw(row["supplemental_information"]),
            raw_data_quality_statement=raw(row["data_quality_statement"]),
            metadata_only=bool(row["metadata_only"]), processed=row["state"] == "PROCESSED" and not row["dirty"],
            state=row["state"], subtype=row["subtype"], sourcetype=row["sourcetype"],
            # a copy of a dataset needs its data, which datasets made up by `catalogue seed` lack
            is_copyable=row["resource_type"] != "dataset" or bool(found and found.has_data and not remote),
            download_url=download, download_urls=downloads, extent=Extent(coords, "EPSG:4326"),
            favorite=rid in rel.favorites, thumbnail_url=thumbnail,
            links=links_.resource_links(row, found, base, detail, thumbnail, download, brought.get(rid)),
            link=f"{base}/api/v2/resources/{rid}",
            metadata_uploaded_preserve=bool(row["metadata_uploaded_preserve"]),
            source=origins.source(came.get(rid), row["sourcetype"]),
            origin=origin(came.get(rid), row["sourcetype"], found, base),
            data=(json.loads(row["blob"]) if row["blob"] else {}) if with_data else UNSET,
        ))
    return out


def origin(came: Row | None, sourcetype: str, facts: records.LinkFacts | None, base: str) -> Origin | None:
    """Where the resource came from (None: made here)."""
    kind = origins.source(came, sourcetype)
    if came is None:
        if kind != "remote":
            return None
        # its data stay at a remote address: a document's, or a remote layer's service
        url = facts and (facts.doc_url or facts.remote_url)
        return Origin(kind, None, url or None, None, None, None)
    here = came["original_id"] is not None and came["original_type"] is not None
    return Origin(kind, came["title"] or None,
                  f"{base}/catalogue/#/{came['original_type']}/{came['original_id']}" if here else came["url"],
                  str(came["original_id"]) if here else None,
                  (came["harvester"] or None) if kind == "harvested" else None, came["remote_url"])


def iso_link(base: str, rid: int) -> Link:
    """The link to the ISO XML document uploaded for the resource, as it was sent (the link named
    "ISO", which geonodectl reads, is the record written from the resource's fields)."""
    return links_.uploaded_iso_link(base, rid)


def tkeyword(t: Row) -> TKeyword:
    slug = re.sub(r"[^a-z0-9]+", "-", (t["about"] or t["alt_label"]).lower()).strip("-")
    return TKeyword(name=t["alt_label"], slug=slug, uri=t["about"],
                    thesaurus=Thesaurus(t["title"], t["identifier"], t["uri"]),
                    i18n=json.loads(t["labels"] or "{}"))
