"""Resources as the API shows them, with GeoNode's keys and JSON types, read whole here.

Every key that QGIS or geonodectl reads is present on every row (null when unknown); ``pk``,
``polymorphic_ctype_id``, ``popular_count``, ``share_count`` and ``rating`` are strings, as in
GeoNode.

Two ways lead to the same bytes. ``render`` builds the Structs of any page or resource in a
fixed number of queries (the typed families add their fields with their ``extend``). A page of
/resources with every default field (``page_json``) is joined from kept bytes instead: building a
resource's JSON costs most of a list request, so what does not depend on the caller is kept,
already encoded, by the database owner (store/db.py ``kept``: emptied as soon as any connection
commits a change), under the request's base URL, the resource id and which user fields the caller
is shown (``users.user``: e-mail for signed-in callers, global ``perms`` of a user for admins and
for that user). The caller's permissions and favorites are kept beside it, under who asks. A page
then costs the page query and joining bytes; the bytes are those of ``render`` encoded by
msgspec, so the answer is the one a fresh rendering gives.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import msgspec
from msgspec import UNSET, UnsetType

from catalogue_app import rules
from catalogue_app.reads import links as links_
from catalogue_app.reads.links import Link
from catalogue_app.reads.users import GroupRef, User, user
from catalogue_app.store import Connection, Row, origins, records, remote_layers, resources, users
from catalogue_app.store.db import kept as store_kept
from catalogue_app.store.resources import Related, ResourceQuery, Viewer

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller

CONTACT_ROLES = ("poc", "metadata_author", "processor", "publisher", "custodian", "distributor",
                 "resource_user", "resource_provider", "originator", "principal_investigator")
CTYPE_IDS = {"dataset": "50", "map": "55", "document": "58", "service": "70", "geostory": "63", "dashboard": "63"}
TAGS = re.compile(r"<[^>]*>")


class NamedContact(msgspec.Struct, kw_only=True):
    """A contact that is no user of the catalogue (beyond GeoNode's): a name with an organisation
    and an email, shown in its role's list beside the users (``pk`` and ``username`` null)."""

    pk: None = None
    username: None = None
    first_name: str
    last_name: str = ""
    organization: str
    email: str


# one entry of a contact role's list: a User, or a NamedContact (msgspec's schemas take no union
# of untagged Structs, so the OpenAPI document describes it in words)
ContactEntry = Annotated[Any, msgspec.Meta(
    description="A user of the catalogue (as `owner`), or a contact that is no user: "
                "{pk: null, username: null, first_name (the name), last_name, organization, email}.")]


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
    poc: list[ContactEntry]
    metadata_author: list[ContactEntry]
    processor: list[ContactEntry]
    publisher: list[ContactEntry]
    custodian: list[ContactEntry]
    distributor: list[ContactEntry]
    resource_user: list[ContactEntry]
    resource_provider: list[ContactEntry]
    originator: list[ContactEntry]
    principal_investigator: list[ContactEntry]
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
        roles: dict[str, list[User | NamedContact]] = {role: [] for role in CONTACT_ROLES}
        for c in rel.contacts[rid]:
            if c["role"] in roles and c["user_id"] in people:
                roles[c["role"]].append(people[c["user_id"]])
        for c in rel.contact_names[rid]:
            if c["role"] in roles:
                roles[c["role"]].append(NamedContact(first_name=c["name"], organization=c["organization"],
                                                     email=c["email"]))
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


# Where the caller's own fields sit in a resource encoded with perms=[] and favorite=false; a
# '"' inside a JSON string is escaped, so these bytes cannot come from a value.
PERMS = b',"perms":[]'
FAVORITE = b',"favorite":false'
MAX_KEPT = 2048  # entries kept: a resource is about 4 KB, so some 9 MB at most
MAX_PAGES = 256  # whole pages kept: a page of ten is about 40 KB, so some 10 MB at most

_encode = msgspec.json.Encoder().encode  # the bytes msgspec gives a Response for the same Struct


class Kept(NamedTuple):
    """One resource's JSON without the caller's ``perms`` and ``favorite`` values."""

    head: bytes     # up to '"perms":'
    middle: bytes   # from ',"owner":' up to '"favorite":'
    tail: bytes     # after the favorite value
    user_ids: frozenset[int]  # the users shown in it (owner and contacts)


def audience(caller: Caller) -> str:
    """Which fields of the embedded users the caller sees."""
    if caller.is_anonymous:
        return "anonymous"
    return "admin" if rules.sees_every_account(caller) else "member"


def split(item: Resource) -> Kept:
    users = frozenset([item.owner.pk, *(u.pk for role in CONTACT_ROLES for u in getattr(item, role))])
    item.perms, item.favorite = [], False
    encoded = _encode(item)
    p = encoded.index(PERMS + b',"owner":')
    f = encoded.index(FAVORITE + b',"thumbnail_url":', p)
    return Kept(encoded[:p + len(PERMS) - 2], encoded[p + len(PERMS):f + len(FAVORITE) - 5],
                encoded[f + len(FAVORITE):], users)


def page_json(conn: Connection, rows: list[Row], caller: Caller, viewer: Viewer, base: str) -> msgspec.Raw:
    """The JSON array of the rows as ``render`` shows them to the caller on /resources; ``rows``
    need only ``resources.PERMS_COLUMNS``."""
    kept = store_kept(conn)
    group = audience(caller)
    parts: dict[int, Kept] = {}
    missing = []
    for row in rows:
        entry = kept.get(("resource", base, group, row["id"]))
        # a user's own entry shows their global perms: not for other members
        if entry is None or (group == "member" and caller.id in entry.user_ids):
            missing.append(row["id"])
        else:
            parts[row["id"]] = entry
    if missing:
        full = resources.rows_by_ids(conn, missing)
        for row, item in zip(full, render(conn, full, caller, viewer, base)):
            entry = parts[row["id"]] = split(item)
            if group != "member" or caller.id not in entry.user_ids:
                keep(kept, ("resource", base, group, row["id"]), entry)
    perms = _perms(conn, kept, rows, viewer)
    favorites = _favorites(conn, store_kept(conn, "favorites"), rows, viewer)  # kept apart: see store/db.py kept
    out = []
    for row in rows:
        rid = row["id"]
        entry = parts[rid]
        out.append(b"".join((entry.head, perms[rid], entry.middle, favorites[rid], entry.tail)))
    return msgspec.Raw(b"[" + b",".join(out) + b"]")


def keep(kept: dict, key: tuple, value: object, most: int = MAX_KEPT) -> None:
    if len(kept) >= most:
        try:
            kept.pop(next(iter(kept)), None)  # the oldest
        except (StopIteration, RuntimeError):  # emptied, or changed by another reader meanwhile
            pass
    kept[key] = value


def _perms(conn: Connection, kept: dict, rows: list[Row], viewer: Viewer) -> dict[int, bytes]:
    """The viewer's permission names on each row, encoded; kept under everything they depend on
    (the key starts with a tuple, so it never meets a resource's or a favorite's)."""
    who = ("perms", viewer)  # the rule book's answer depends on all of the viewer
    out = {}
    missing = []
    for row in rows:
        found = kept.get((who, row["id"]))
        if found is None:
            missing.append(row)
        else:
            out[row["id"]] = found
    if missing:
        held = resources.held_on_page(conn, missing, viewer)
        for row in missing:
            out[row["id"]] = _encode(caller_perms(row, held[row["id"]], viewer))
            keep(kept, (who, row["id"]), out[row["id"]])
    return out


def _favorites(conn: Connection, kept: dict, rows: list[Row], viewer: Viewer) -> dict[int, bytes]:
    """Whether the viewer has marked each row as a favorite, as JSON."""
    if viewer.id is None:
        return {row["id"]: b"false" for row in rows}
    out = {}
    missing = []
    for row in rows:
        found = kept.get(("favorite", viewer.id, row["id"]))
        if found is None:
            missing.append(row["id"])
        else:
            out[row["id"]] = found
    if missing:
        marked = resources.favorites_on_page(conn, missing, viewer)
        for rid in missing:
            out[rid] = b"true" if rid in marked else b"false"
            keep(kept, ("favorite", viewer.id, rid), out[rid])
    return out


# -- what the handlers ask for --------------------------------------------------------------------
class Family(msgspec.Struct, frozen=True):
    """One endpoint family: its path, its JSON keys, the resource types it lists, its model
    name, and for typed families their own fields: ``extend(conn, items, base, detail)`` turns
    rendered resources into the family's representation, of type ``item`` in lists and
    ``detail`` alone (with the viewer as a fifth argument when ``extend_with_viewer``)."""

    path: str
    singular: str
    plural: str
    types: tuple[str, ...]
    model: str
    item: type = Resource
    detail: type = Resource
    extend: Callable[..., list[Any]] | None = None
    extend_with_viewer: bool = False

    @property
    def field_names(self) -> frozenset[str]:
        names = _FIELD_NAMES.get(self.detail)
        if names is None:  # built once per representation: every list request asks
            names = _FIELD_NAMES[self.detail] = frozenset(FIELD_NAMES | set(self.detail.__struct_fields__))
        return names


_FIELD_NAMES: dict[type, frozenset[str]] = {}
# Deferred fields (include[]): ``deferred(conn, ids, selection, viewer, base)``, one dict per id.
Deferred = Callable[[Connection, list[int], Any, Viewer, str], list[dict[str, Any]]]


@dataclass
class Listing:
    """What a list of resources asks for: the family, the query (or how to parse it: ``parse``
    returns the query, the thesaurus keyword ids still to group and whether they all must
    match), the field selection, and how to read the deferred fields it includes. A page of
    /resources with every default field is kept whole, under ``key`` (what, besides the family
    and the caller, the answer depends on: the request's path and parameters), as the bytes
    that ``envelope(total, items)`` makes of it."""

    family: Family
    query: ResourceQuery | None
    selection: Any  # api/resources/params.py Selection: active, wants_data, include
    parse: Callable[[], tuple[ResourceQuery, list[int], bool]] | None = None
    deferred: Deferred | None = None
    key: tuple | None = None
    envelope: Callable[[int, msgspec.Raw], bytes] | None = None


class Answer(NamedTuple):
    """A page of a list: the exact total, the items (the JSON array already encoded, for
    /resources with every default field), the deferred fields of each item when the selection
    asks for some (else None), and the whole answer encoded when it was kept (else None)."""

    total: int
    items: Any
    extras: list[dict[str, Any]] | None = None
    body: bytes | None = None


def present(conn: Connection, family: Family, rows: list[Row], caller: Caller, viewer: Viewer, base: str,
            *, detail: bool, with_data: bool = False) -> list[Any]:
    """Rows as the family shows them (a dataset on /datasets carries its dataset fields)."""
    items = render(conn, rows, caller, viewer, base, with_data=with_data)
    if family.path != "resources":  # a row's link is the detail URL of the endpoint that listed it
        for item in items:
            item.link = f"{base}/api/v2/{family.path}/{item.pk}"
    if family.extend is None:
        return items
    if family.extend_with_viewer:
        return family.extend(conn, items, base, detail, viewer)
    return family.extend(conn, items, base, detail)


def page(conn: Connection, listing: Listing, caller: Caller, viewer: Viewer, base: str, limit: int,
         offset: int) -> Answer:
    """One page of a list as the caller sees it."""
    sel, family = listing.selection, listing.family
    if family.path == "resources" and not sel.active:
        # the whole answer is kept: the same page asked again (the first page of Browse above
        # all) costs a look-up until the data change (or the caller's favorites, when signed in)
        kept_here = store_kept(conn, "favorites" if viewer.id is not None else "data")
        here = kept_here.get("pages")
        if here is None:
            here = kept_here["pages"] = {}
        key = ("page", listing.key, base, audience(caller), viewer, limit, offset) if listing.key is not None else None
        found = here.get(key) if key is not None else None
        if found is None:
            total, rows = resources.page(conn, viewer, _query(conn, listing), limit, offset, resources.PERMS_COLUMNS)
            items = page_json(conn, rows, caller, viewer, base)
            found = Answer(total, items, None, listing.envelope(total, items) if listing.envelope else None)
            if key is not None:
                keep(here, key, found, MAX_PAGES)
        return found
    total, rows = resources.page(conn, viewer, _query(conn, listing), limit, offset)
    items = present(conn, family, rows, caller, viewer, base, detail=False, with_data=sel.wants_data)
    extras = listing.deferred(conn, [int(i.pk) for i in items], sel, viewer, base) \
        if sel.active and listing.deferred else None
    return Answer(total, items, extras)


def _query(conn: Connection, listing: Listing) -> ResourceQuery:
    """The list's query, parsed now if it was not given, its thesaurus keywords grouped."""
    if listing.query is not None:
        return listing.query
    query, tkeyword_ids, force_and = listing.parse()
    if tkeyword_ids:
        query.tkeyword_groups = resources.tkeyword_groups(conn, tkeyword_ids, force_and)
    return query


def one(conn: Connection, family: Family, resource_id: int, caller: Caller, viewer: Viewer, base: str,
        selection: Any = None, deferred: Deferred | None = None) -> tuple[Any, dict[str, Any]] | None:
    """One resource of the family as the caller sees it, with the deferred fields the selection
    asks for; None when the caller may not see it (or it is of another family)."""
    row = resources.get_visible(conn, viewer, resource_id, family.types)
    if row is None:
        return None
    if family.path == "resources" and not (selection is not None and selection.active):
        # on /resources a resource is shown as on its pages: from what is kept of it
        return msgspec.Raw(bytes(page_json(conn, [row], caller, viewer, base))[1:-1]), {}
    item = present(conn, family, [row], caller, viewer, base, detail=True,
                   with_data=bool(selection and selection.wants_data))[0]
    extra = deferred(conn, [resource_id], selection, viewer, base)[0] \
        if selection is not None and selection.active and deferred else {}
    return item, extra


def several(conn: Connection, family: Family, ids: list[int], caller: Caller, viewer: Viewer, base: str,
            detail: bool) -> list[Any]:
    """Resources just written, in the order of ``ids``, as the family shows them."""
    rows = [resources.get_visible(conn, viewer, rid) for rid in ids]
    return present(conn, family, rows, caller, viewer, base, detail=detail)


def type_counts(conn: Connection, viewer: Viewer) -> dict[str, int]:
    """How many resources of each type the viewer lists by default."""
    return resources.type_counts(conn, viewer)
