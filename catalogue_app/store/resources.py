"""Catalogue resources: who sees what, the list query (filters, search, extent), and the rows.

Visibility is a SQL condition joined into every query, so totals, pages and counts agree.
A caller sees a resource they own, or one on which they, a group of theirs, or the anonymous or
registered-members group holds view (or change) permission; superusers see everything. The
anonymous case is the column ``public_view``, kept by ``grant``/``revoke`` in the same
transaction as the permission rows, so the public listing is served by one index.
"""

from __future__ import annotations

import heapq
import sqlite3
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any
from unicodedata import ucd_3_2_0

from catalogue_app.store.filters import (
    Combined,
    Condition,
    Field,
    Listing,
    ListSpec,
    Source,
    cached_count,
    cached_rows,
    condition_sql,
    count_query,
    fetch_page,
    kept_value,
    known_count,
    remember_count,
    where_clause,
)
from catalogue_app import rules
from catalogue_app.rules import Viewer
from catalogue_app.store.migrations import LISTED_EXTENT_SHIFT
from catalogue_app.store.origins import ORIGIN_KINDS, SOURCE_SQL
from catalogue_app.store.users import ANONYMOUS_GROUP_ID, REGISTERED_GROUP_ID

__all__ = ["Viewer"]  # who asks is defined by the rule book; the store's callers find it here too


def _names(perms: tuple[str, ...]) -> str:
    return ",".join(f"'{p}'" for p in perms)


VIEW_PERMS = rules.VIEWING
# Rows of the groups that stand for everyone count for reading only, whatever an older version
# stored (permission writes refuse more; see store/permissions.py).
READ_ONLY_FOR_EVERYONE = (f"(p.group_id IS NULL OR p.group_id NOT IN ({ANONYMOUS_GROUP_ID}, {REGISTERED_GROUP_ID})"
                          f" OR p.perm IN ({_names(rules.EVERYONE_MAY_HOLD)}))")
RESOURCE_TYPES = ("dataset", "map", "document", "service", "geostory", "dashboard")
GEOAPP_TYPES = ("geostory", "dashboard")
DOWNLOADABLE = rules.DOWNLOADABLE
WORLD_AREA = 360.0 * 180.0

COLUMNS = (
    "r.id, r.uuid, r.resource_type, r.owner_id, r.group_id, r.title, r.abstract, r.created, r.last_updated, "
    "r.subtype, r.alternate, r.attribution, r.doi, r.edition, r.purpose, r.maintenance_frequency, "
    "r.constraints_other, r.supplemental_information, r.data_quality_statement, r.restriction_code_type, "
    "r.spatial_representation_type, r.language, r.srid, r.bbox_x0, r.bbox_y0, r.bbox_x1, r.bbox_y1, "
    "r.ll_x0, r.ll_y0, r.ll_x1, r.ll_y1, r.date, r.date_type, r.temporal_extent_start, r.temporal_extent_end, "
    "r.category_id, r.license_id, r.popular_count, r.share_count, r.featured, r.advertised, r.is_published, "
    "r.is_approved, r.metadata_only, r.metadata_uploaded_preserve, r.state, r.dirty, r.sourcetype, "
    "r.thumbnail_url, r.blob"
)
# What a page needs of each row besides what is kept of it (api/resources/pages.py): the caller's
# permissions depend on these.
PERMS_COLUMNS = "r.id, r.resource_type, r.subtype, r.owner_id, r.group_id"


def _rel(table: str, link: str, on: str) -> str:
    """A to-many condition: evaluated on the small related table first (CROSS JOIN fixes that
    order), then its resources are found through the link table's index."""
    key = link.split()[1] + ".resource_id"
    return f"r.id IN (SELECT {key} FROM {table} CROSS JOIN {link} ON {on} WHERE {{cond}})"


KEYWORDS = _rel("keywords k", "resource_keywords rk", "rk.keyword_id = k.id")
REGIONS = _rel("regions g", "resource_regions rr", "rr.region_id = g.id")
TKEYWORDS = _rel("thesaurus_keywords t", "resource_tkeywords rt", "rt.tkeyword_id = t.id")

FIELDS: dict[str, Field] = {
    "pk": Field("r.id", "int"),
    "uuid": Field("r.uuid"),
    "resource_type": Field("r.resource_type"),
    "polymorphic_ctype_id": Field("r.resource_type", sortable=False),
    "subtype": Field("r.subtype"),
    "title": Field("r.title"),
    "abstract": Field("r.abstract"),
    "alternate": Field("r.alternate"),
    "attribution": Field("r.attribution"),
    "doi": Field("r.doi"),
    "edition": Field("r.edition"),
    "purpose": Field("r.purpose"),
    "maintenance_frequency": Field("r.maintenance_frequency"),
    "constraints_other": Field("r.constraints_other"),
    "supplemental_information": Field("r.supplemental_information"),
    "data_quality_statement": Field("r.data_quality_statement"),
    "language": Field("r.language"),
    "srid": Field("r.srid"),
    "date": Field("r.date", "datetime"),
    "date_type": Field("r.date_type"),
    "temporal_extent_start": Field("r.temporal_extent_start", "datetime"),
    "temporal_extent_end": Field("r.temporal_extent_end", "datetime"),
    "created": Field("r.created", "datetime"),
    "last_updated": Field("r.last_updated", "datetime"),
    "popular_count": Field("r.popular_count", "int"),
    "share_count": Field("r.share_count", "int"),
    "featured": Field("r.featured", "bool"),
    "advertised": Field("r.advertised", "bool"),
    "is_published": Field("r.is_published", "bool"),
    "is_approved": Field("r.is_approved", "bool"),
    "metadata_only": Field("r.metadata_only", "bool"),
    "metadata_uploaded_preserve": Field("r.metadata_uploaded_preserve", "bool"),
    "state": Field("r.state"),
    "sourcetype": Field("r.sourcetype"),
    "source": Field(SOURCE_SQL),  # local | harvested | remote | copy (store/origins.py)
    "thumbnail_url": Field("r.thumbnail_url"),
    "owner": Field("r.owner_id", "int"),
    "owner.pk": Field("r.owner_id", "int"),
    "owner.username": Field("(SELECT username FROM users WHERE id = r.owner_id)"),
    "owner.first_name": Field("(SELECT first_name FROM users WHERE id = r.owner_id)"),
    "owner.last_name": Field("(SELECT last_name FROM users WHERE id = r.owner_id)"),
    "category": Field("r.category_id", "int"),
    "category.identifier": Field("(SELECT identifier FROM categories WHERE id = r.category_id)"),
    "category.gn_description": Field("(SELECT gn_description FROM categories WHERE id = r.category_id)"),
    "license": Field("r.license_id", "int"),
    "license.identifier": Field("(SELECT identifier FROM licenses WHERE id = r.license_id)"),
    "group": Field("r.group_id", "int"),
    "group.pk": Field("r.group_id", "int"),
    "group.name": Field("(SELECT name FROM groups WHERE id = r.group_id)"),
    "keywords": Field("k.id", "int", exists=KEYWORDS, sortable=False),
    "keywords.name": Field("k.name", exists=KEYWORDS, sortable=False),
    "keywords.slug": Field("k.slug", exists=KEYWORDS, sortable=False),
    "regions": Field("g.id", "int", exists=REGIONS, sortable=False),
    "regions.name": Field("g.name", exists=REGIONS, sortable=False),
    "regions.code": Field("g.code", exists=REGIONS, sortable=False),
    "tkeywords.name": Field("t.alt_label", exists=TKEYWORDS, sortable=False),
}
# The scalar fields a typed endpoint adds to its rows, for filters and sort[] there (as shown: a
# made-up dataset without data is named after its alternate).
_DATASET = "(SELECT d.{} FROM datasets d WHERE d.resource_id = r.id)"
_DOCUMENT = "(SELECT d.{} FROM documents d WHERE d.resource_id = r.id)"
TYPED_FIELDS: dict[str, dict[str, Field]] = {
    "dataset": {
        "name": Field(f"coalesce({_DATASET.format('name')}, substr(r.alternate, instr(r.alternate, ':') + 1))"),
        "workspace": Field(f"coalesce({_DATASET.format('workspace')}, substr(r.alternate, 1, instr(r.alternate, ':') - 1))"),
        "store": Field(f"coalesce({_DATASET.format('store')}, '')"),
        "charset": Field(f"coalesce({_DATASET.format('charset')}, 'UTF-8')"),
        "has_time": Field(f"coalesce({_DATASET.format('has_time')}, 0)", "bool"),
        "featureinfo_custom_template": Field(_DATASET.format("featureinfo_custom_template")),
        "is_mosaic": Field("0", "bool"),
        "has_elevation": Field("0", "bool"),
        "ptype": Field("'gxp_wmscsource'"),
    },
    "document": {
        "name": Field("r.title"),
        "extension": Field(_DOCUMENT.format("extension")),
        "mime_type": Field(_DOCUMENT.format("mime_type")),
        "doc_url": Field(_DOCUMENT.format("doc_url")),
    },
}


def fields_for(types: tuple[str, ...] | list[str] | None) -> dict[str, Field]:
    """The fields an endpoint listing ``types`` may filter and sort on."""
    if types and len(types) == 1 and types[0] in TYPED_FIELDS:
        return {**FIELDS, **TYPED_FIELDS[types[0]]}
    return FIELDS


# Serializer fields that exist but are computed, not stored: named in a clear 400.
COMPUTED = {"raw_abstract", "raw_purpose", "raw_constraints_other", "raw_supplemental_information",
            "raw_data_quality_statement", "detail_url", "embed_url", "perms", "favorite", "links", "link",
            "extent", "bbox_polygon", "ll_bbox_polygon", "download_url", "download_urls", "processed",
            "is_copyable", "rating", "poc", "metadata_author", "processor", "publisher", "custodian",
            "distributor", "resource_user", "resource_provider", "originator", "principal_investigator",
            "restriction_code_type", "spatial_representation_type", "origin"}
SEARCH_FIELDS = {"title": FIELDS["title"], "abstract": FIELDS["abstract"], "owner__username": FIELDS["owner.username"],
                 "purpose": FIELDS["purpose"], "supplemental_information": FIELDS["supplemental_information"],
                 "keywords__name": FIELDS["keywords.name"], "category__identifier": FIELDS["category.identifier"],
                 "uuid": FIELDS["uuid"], "alternate": FIELDS["alternate"]}
TEXT_INDEXED = {"title", "abstract"}

LISTING = Listing(COLUMNS, "resources r", FIELDS, SEARCH_FIELDS, "r.created DESC, r.id DESC", "r.id DESC")


@dataclass
class ResourceQuery:
    """What a resource list asks for beyond the generic filters."""

    spec: ListSpec = field(default_factory=ListSpec)
    resource_types: tuple[str, ...] = ()
    extents: list[tuple[float, float, float, float]] = field(default_factory=list)
    advertised: bool | None = None         # None: the default rule; True/False: that value
    advertised_all: bool = False
    favorites_of: int | None = None
    tkeyword_groups: list[list[int]] = field(default_factory=list)  # OR inside, AND across
    sql: list[tuple[str, list[Any]]] = field(default_factory=list)  # more conditions on r (OGC API Records)


def viewer_of(conn: sqlite3.Connection, user_id: int | None, is_superuser: bool = False,
              is_staff: bool = False) -> Viewer:
    """A user (None: anonymous) with the groups they belong to and those they manage."""
    if user_id is None:
        return Viewer(None, False, (ANONYMOUS_GROUP_ID,))
    roles = conn.execute("SELECT group_id, role FROM group_members WHERE user_id = ?", (user_id,)).fetchall()
    groups = tuple(sorted({g for g, _ in roles} | {ANONYMOUS_GROUP_ID, REGISTERED_GROUP_ID}))
    return Viewer(user_id, is_superuser, groups, tuple(sorted(g for g, role in roles if role == "manager")), is_staff)


def visibility(viewer: Viewer, alias: str = "r") -> tuple[str, list[Any]]:
    """SQL condition: the viewer may see the resource (dirty ones are hidden from everyone), the
    rule book's seeing rule compiled: everything for those who see every resource, else what they
    own or hold one of ``rules.VIEWING`` on (anonymous: the kept ``public_view``)."""
    if rules.sees_every_resource(viewer):
        return f"{alias}.dirty = 0", []
    if viewer.id is None:
        return f"{alias}.public_view = 1 AND {alias}.dirty = 0", []
    perms = _names(VIEW_PERMS)
    groups = ",".join(str(int(g)) for g in viewer.group_ids) or "0"
    return (
        f"{alias}.dirty = 0 AND ({alias}.public_view = 1 OR {alias}.owner_id = ? OR EXISTS ("
        f"SELECT 1 FROM resource_perms p WHERE p.resource_id = {alias}.id AND p.perm IN ({perms})"
        f" AND (p.user_id = ? OR p.group_id IN ({groups}))))",
        [viewer.id, viewer.id],
    )


def listed_by(viewer: Viewer) -> tuple[str, list[Any]]:
    """SQL condition: the viewer may see the resource and the default rule lists it (an
    unadvertised resource is listed for its owner and superusers only)."""
    cond, params = visibility(viewer)
    extra, extra_params = _advertised(viewer, ResourceQuery())
    return cond + extra, params + extra_params


def _advertised(viewer: Viewer, query: ResourceQuery) -> tuple[str, list[Any]]:
    if query.advertised_all:
        return "", []
    if query.advertised is not None:
        return " AND r.advertised = ?", [int(query.advertised)]
    if rules.sees_every_resource(viewer):
        return "", []
    if viewer.id is None:
        return " AND r.advertised = 1", []
    return " AND (r.advertised = 1 OR r.owner_id = ?)", [viewer.id]


def _fts_phrase(term: str) -> str:
    """The term as one FTS5 string, so that nothing in it is read as query syntax (a NUL would
    end the query, so it is dropped)."""
    return '"' + term.replace("\x00", "").replace('"', '""') + '"'


WORDS_MAX = 64  # words of the vocabulary that one term may stand for; beyond: the trigram index


def _word_like(term: str) -> bool:
    """Whether the word index splits the term into one word: letters and digits only (as
    unicode61 classes them; characters newer than Unicode 3.2 are left to the trigram index),
    and not digits alone (the vocabulary leaves those words out)."""
    for c in term:
        if not (c.isascii() and c.isalnum()) and not (
                not c.isascii() and unicodedata.category(c)[0] in "LN" and ucd_3_2_0.category(c)[0] in "LN"):
            return False
    return not term.isdigit()


def _word_match(conn: sqlite3.Connection, terms: list[str]) -> str | None:
    """The word index's MATCH expression (without its columns) for rows that contain every
    term: for each term, any vocabulary word that contains it. None when a term is not one word,
    or stands for more than WORDS_MAX words."""
    parts = []
    for term in terms:
        if not _word_like(term):
            return None
        if len(term) >= 3:
            found = [r[0] for r in conn.execute("SELECT word FROM resource_vocab_text WHERE resource_vocab_text MATCH ?"
                                                " LIMIT ?", (_fts_phrase(term), WORDS_MAX + 1))]
        elif term.isascii():  # too short for a trigram: the vocabulary is read (its words are folded)
            found = [r[0] for r in conn.execute("SELECT word FROM resource_vocab WHERE instr(word, ?) LIMIT ?",
                                                (term.lower(), WORDS_MAX + 1))]
        else:
            return None
        if len(found) > WORDS_MAX:
            return None
        # no word contains it: no row does (the term itself, a word of no row, says so)
        parts.append("(" + " OR ".join(_fts_phrase(w) for w in found or [term]) + ")")
    return "(" + " AND ".join(parts) + ")"


def _in_columns(expression: str, columns: list[str], unlisted: bool = True) -> str:
    """``expression`` in these columns of the word index, and in their ``*_unlisted`` twins
    (the words of resources anonymous callers do not list, migration 21) unless ``unlisted`` is
    false."""
    names = columns + [f"{c}_unlisted" for c in columns] if unlisted else columns
    return "{" + " ".join(names) + "} : " + expression


@dataclass
class Candidates:
    """The ids that one index allows. ``sql`` lists them, each once; ``probe`` tests the row ``r``
    against the same set, at about ``probe_cost`` microseconds a row."""

    sql: str
    params: list[Any]
    probe: str
    probe_params: list[Any]
    probe_cost: float
    eval_cost: float = 0.0  # microseconds to list them all, beyond one per id, roughly
    listed: bool = False  # ``probe`` is no cheaper than listing: test rows with r.id IN (sql)
    anonymous_count: tuple[str, list[Any]] | None = None  # counts those an anonymous caller lists, alone
    anonymous_ids: tuple[str, list[Any]] | None = None  # lists them, when they are few (see _anonymous_few)


@dataclass(frozen=True)
class Relation:
    """A to-many relation as a filter sees it: the related table (with its alias) and the link table."""

    table: str
    link: str
    key: str
    listed_link: str | None = None  # the links of resources anonymous callers list, kept by triggers


RELATIONS = {KEYWORDS: Relation("keywords k", "resource_keywords", "keyword_id", "listed_keywords"),
             REGIONS: Relation("regions g", "resource_regions", "region_id"),
             TKEYWORDS: Relation("thesaurus_keywords t", "resource_tkeywords", "tkeyword_id")}


def _related(conn: sqlite3.Connection, relation: Relation, column: str, cond: Condition) -> Candidates:
    """The resources linked to a related row that meets ``cond``: the few related rows are
    found first, then their resources through the link table's index."""
    sql, args = condition_sql(column, cond)
    alias = relation.table.split()[1]
    ids = ",".join(str(int(r[0])) for r in conn.execute(f"SELECT {alias}.id FROM {relation.table} WHERE {sql}", args))
    distinct = "DISTINCT " if "," in ids else ""
    listed = (f"SELECT count({distinct}resource_id) FROM {relation.listed_link} WHERE {relation.key} IN ({ids})", [])\
        if relation.listed_link else None
    return Candidates(f"SELECT {distinct}resource_id AS id FROM {relation.link} WHERE {relation.key} IN ({ids})", [],
                      f"EXISTS (SELECT 1 FROM {relation.link} WHERE resource_id = r.id AND {relation.key} IN ({ids}))",
                      [], 1.0, 500.0, anonymous_count=listed)


def _came(cond: Condition | Combined) -> Candidates | None:
    """A source filter that keeps copies or harvested records only: the resources of those kinds
    of resource_origins (few beside all, found by its index); None for any other condition."""
    if not isinstance(cond, Condition) or cond.negate or cond.path != "source" or cond.op not in ("eq", "exact", "in", "any"):
        return None
    kinds = list(dict.fromkeys(cond.values))
    if not kinds or not set(kinds) <= set(ORIGIN_KINDS):
        return None
    marks = ",".join("?" * len(kinds))
    return Candidates(f"SELECT resource_id AS id FROM resource_origins WHERE kind IN ({marks})", kinds,
                      f"EXISTS (SELECT 1 FROM resource_origins WHERE resource_id = r.id AND kind IN ({marks}))", kinds,
                      1.0, 500.0)


def _once(table: str, where: str) -> str:
    """SQL condition on the entries ``e`` of an extent index that meet ``where``: each resource
    once (entry 2*id+1, or id + 1 in listed_extents, the eastern part of a box across the
    antimeridian, counts only when the western part does not meet ``where`` too)."""
    return (f"({where}) AND (e.id % 2 = 0 OR NOT EXISTS"
            f" (SELECT 1 FROM {table} w WHERE w.id = e.id - 1 AND ({where})))")


def _candidates(conn: sqlite3.Connection, query: ResourceQuery) -> tuple[list[Candidates], ListSpec]:
    """The id sets that the extent, the text search and positive filters on keywords, regions,
    thesaurus keywords and the copy or harvested source allow, answered by their indexes (the one
    expected to be smallest first), and the spec with what is left."""
    found: list[Candidates] = []
    spec = query.spec
    area = 0.0
    if query.extents:
        boxes, params = [], []
        for x0, y0, x1, y1 in query.extents:
            boxes.append("(minx <= ? AND maxx >= ? AND miny <= ? AND maxy >= ?)")
            params += [x1, x0, y1, y0]
            area += (x1 - x0) * (y1 - y0)
        where = " OR ".join(boxes)
        # entry 2*id+1 (the eastern part of a box across the antimeridian) counts only when
        # the western part 2*id does not meet the query too, so that every id comes once
        found.append(Candidates(
            f"SELECT e.id / 2 AS id FROM resource_extents e WHERE {_once('resource_extents', where)} ORDER BY e.id",
            params + params,
            f"EXISTS (SELECT 1 FROM resource_extents WHERE id IN (2 * r.id, 2 * r.id + 1) AND ({where}))", params,
            3.0, 2000.0, listed=True,  # in order of id, the rows they lead to are read in order too
            anonymous_count=(f"SELECT count(*) FROM listed_extents e WHERE {_once('listed_extents', where)}",
                             params + params)))
    indexed = [f for f in spec.search_fields if f in TEXT_INDEXED]
    long_terms = [t for t in spec.search_terms if len(t) >= 3]
    words, served = None, spec.search_terms
    if spec.search_terms and len(indexed) == len(spec.search_fields):
        # every term lies inside words of the vocabulary: the word index serves them all; else
        # it may serve those the trigram index would (the others are tested row by row)
        words = _word_match(conn, served)
        if words is None and long_terms and len(long_terms) < len(spec.search_terms):
            words, served = _word_match(conn, long_terms), long_terms
    if words:
        every = _in_columns(words, indexed)
        text = Candidates("SELECT rowid AS id FROM resource_words WHERE resource_words MATCH ?", [every],
                          "EXISTS (SELECT 1 FROM resource_words WHERE resource_words MATCH ? AND rowid = r.id)", [every],
                          8.0 * len(served), FEW_WORTH * len(served), listed=True,
                          anonymous_count=("SELECT count(*) FROM resource_words WHERE resource_words MATCH ?",
                                           [_in_columns(words, indexed, unlisted=False)]),
                          anonymous_ids=("SELECT rowid FROM resource_words WHERE resource_words MATCH ?",
                                         [_in_columns(words, indexed, unlisted=False)]) if len(served) >= FEW_WORDS else None)
        found.insert(len(found) if found and area < WORLD_AREA / 8 else 0, text)
        spec = ListSpec(spec.conditions, [t for t in spec.search_terms if t not in served], spec.search_fields,
                        spec.ordering)
    elif long_terms and indexed and len(indexed) == len(spec.search_fields):
        # every field is in the trigram index: one MATCH serves terms of three characters or more
        # a column filter costs a third more; the index holds nothing but these two columns
        columns = "" if set(indexed) == TEXT_INDEXED else "{" + " ".join(indexed) + "} : "
        match = " AND ".join(f"{columns}{_fts_phrase(t)}" for t in long_terms)
        text = Candidates("SELECT rowid AS id FROM resource_text WHERE resource_text MATCH ?", [match],
                          "EXISTS (SELECT 1 FROM resource_text WHERE resource_text MATCH ? AND rowid = r.id)", [match],
                          15.0 * len(long_terms), 10000.0 * len(long_terms), listed=True)
        # a box larger than an eighth of the world is likely to hold more than the words match
        found.insert(len(found) if found and area < WORLD_AREA / 8 else 0, text)
        spec = ListSpec(spec.conditions, [t for t in spec.search_terms if len(t) < 3], spec.search_fields, spec.ordering)
    fields = fields_for(query.resource_types)
    rest = []
    for cond in spec.conditions:
        relation = RELATIONS.get(fields[cond.path].exists) if isinstance(cond, Condition) and not cond.negate else None
        came = _came(cond)
        if relation:
            found.append(_related(conn, relation, fields[cond.path].sql, cond))
        elif came:
            found.append(came)
        else:
            rest.append(cond)
    if len(rest) < len(spec.conditions):
        spec = ListSpec(rest, spec.search_terms, spec.search_fields, spec.ordering)
    return found, spec


def _conditions(conn: sqlite3.Connection, viewer: Viewer,
                query: ResourceQuery) -> tuple[str, list[Any], ListSpec, list[Candidates]]:
    """Visibility, type, favorite and thesaurus conditions; the generic filters stay in the spec;
    the candidate id sets of the search, extent and relation indexes come apart: the first may
    drive the query, the others are conditions."""
    cond, params = visibility(viewer)
    extra, extra_params = _advertised(viewer, query)
    cond += extra
    params += extra_params
    if query.resource_types:
        cond += f" AND r.resource_type IN ({','.join('?' * len(query.resource_types))})"
        params += list(query.resource_types)
    if query.favorites_of is not None:
        cond += " AND r.id IN (SELECT resource_id FROM favorites WHERE user_id = ?)"
        params.append(query.favorites_of)
    for ids in query.tkeyword_groups:
        cond += (f" AND r.id IN (SELECT resource_id FROM resource_tkeywords WHERE tkeyword_id IN"
                 f" ({','.join('?' * len(ids))}))")
        params += ids
    for extra_sql, extra_args in query.sql:
        cond += f" AND ({extra_sql})"
        params += list(extra_args)
    candidates, spec = _candidates(conn, query)
    for other in candidates[1:]:
        if other.listed:
            cond += f" AND r.id IN ({other.sql})"
            params += other.params
        else:
            cond += f" AND {other.probe}"
            params += other.probe_params
    return cond, params, spec, candidates[:1]


def _tests_ids_only(spec: ListSpec, types: tuple[str, ...]) -> bool:
    """Whether the generic filters test nothing of a row but its id (relations like keywords
    are tested through their own tables), so that the narrow index can stand for the rows."""
    def through_id(cond) -> bool:
        if isinstance(cond, Combined):
            return all(through_id(part) for part in cond.parts)
        return fields[cond.path].exists is not None

    fields = fields_for(types)
    return not spec.search_terms and all(through_id(c) for c in spec.conditions)


ANONYMOUS_LISTING = "r.public_view = 1 AND r.dirty = 0 AND r.advertised = 1"  # as visibility() and _advertised() say


def _narrow_index(viewer: Viewer, query: ResourceQuery) -> str:
    """The narrowest index that holds what visibility tests: for an anonymous caller with the
    default rules, the ids of listed resources (its WHERE clause is what they may see)."""
    anonymous = viewer.id is None and not viewer.is_superuser
    if anonymous and query.advertised is None and not query.advertised_all and not query.resource_types:
        return "resources_listed"
    return "resources_visible"


ROW_COST = 1.0  # microseconds to read one row or index entry and test it, roughly
LIST_PER_MATCH = 20.0  # microseconds to list one match of an index (the page plans' estimate), at most


def page(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery, limit: int,
         offset: int, columns: str = COLUMNS) -> tuple[int, list[sqlite3.Row]]:
    """One page (of ``columns``) and the exact total.

    The total counts the candidates of an index (text, extent, keywords...) through the narrow
    index ``resources_visible`` where it holds all that is tested. The page then either walks
    the rows in the default order, testing each against the candidates (when matches are dense
    enough that the page fills after few rows), or sorts the candidates by the narrow index and
    reads only the rows of the page."""
    cond, params, spec, driver = _conditions(conn, viewer, query)
    listing = replace(LISTING, columns=columns, fields=fields_for(query.resource_types))
    if not driver and not spec.conditions and not spec.search_terms:
        return fetch_page(conn, listing, spec, (cond, params), limit, offset,
                          count=_unfiltered_total(conn, viewer, query, cond))
    if query.extents and cond == ANONYMOUS_LISTING and not spec.conditions and not spec.search_terms \
            and not spec.ordering:
        # nothing is tested but the extent and what anonymous callers list: their own extent index
        return _listed_in_extents(conn, query, limit, offset, columns)
    ids_only = _tests_ids_only(spec, query.resource_types) and not query.sql
    narrow = f" INDEXED BY {_narrow_index(viewer, query)}" if ids_only else ""
    if driver:
        count_from = Source(f"({driver[0].sql}) c CROSS JOIN resources r{narrow} ON r.id = c.id", driver[0].params)
    else:
        count_from = Source(f"resources r{narrow}")
    count = None
    if driver and driver[0].anonymous_count and cond == ANONYMOUS_LISTING and not spec.conditions and not spec.search_terms:
        # nothing is tested but the relation and what anonymous callers list: its own table counts
        count = driver[0].anonymous_count
        if driver[0].anonymous_ids and not spec.ordering:
            found = _anonymous_few(conn, driver[0], limit, offset, columns)
            if found is not None:
                return found
    elif driver and ids_only and not spec.ordering and driver[0].eval_cost >= FEW_WORTH:
        found = _few(conn, listing, spec, (cond, params), driver[0], count_from, limit, offset)
        if found is not None:
            return found
    size = conn.execute("SELECT coalesce(max(id), 0) FROM resources").fetchone()[0]

    def page_from(total: int) -> Source:
        # Walking the rows in the default order meets about (offset + limit) * size / total rows
        # before the page is full; going through the candidates costs one lookup each, plus a sort.
        walked = (offset + limit) * size / max(total, 1)
        if not driver:
            if not spec.ordering and walked < total:
                return Source("resources r INDEXED BY resources_created")
            return Source("resources r")
        d = driver[0]
        if spec.ordering:
            return Source(f"({d.sql}) c CROSS JOIN resources r ON r.id = c.id", d.params)
        probing = walked * (ROW_COST + d.probe_cost)
        # listing the ids costs no more than some microseconds a match: few matches (a word in a
        # small catalogue) are listed at once, where probing each row walked would cost more
        listed = min(d.eval_cost, total * LIST_PER_MATCH)
        listing_first = listed + walked * ROW_COST  # the ids listed once, then the walk
        # through the candidates: their rows when more than the ids are tested (rows of candidates
        # that other conditions drop too, so only where the matches are sparse)
        sorting = listed + total * ROW_COST * 2 if ids_only else (float("inf") if walked < total else 0.0)
        if probing <= min(listing_first, sorting):
            return Source("resources r INDEXED BY resources_created", cond=f" AND {d.probe}",
                          cond_params=d.probe_params)
        if listing_first <= sorting:
            return Source("resources r INDEXED BY resources_created", cond=f" AND r.id IN ({d.sql})",
                          cond_params=d.params)
        if ids_only:
            where, where_params = where_clause(spec, listing.fields, listing.search)
            # the page's ids, then their rows by rowid (NOT INDEXED: never a scan of an index for them)
            return Source("resources r NOT INDEXED", paged=True, cond=(
                f" AND r.id IN (SELECT r.id FROM ({d.sql}) c CROSS JOIN resources r INDEXED BY resources_visible"
                f" ON r.id = c.id WHERE {cond}{where} ORDER BY {listing.default_order} LIMIT ? OFFSET ?)"),
                cond_params=[*d.params, *params, *where_params, limit, offset])
        return Source(f"({d.sql}) c CROSS JOIN resources r ON r.id = c.id", d.params)

    return fetch_page(conn, listing, spec, (cond, params), limit, offset, count_from=count_from, page_from=page_from,
                      count=count)


ENTRY_IDS = (1 << (LISTED_EXTENT_SHIFT - 1)) - 1  # the resource id in an entry of listed_extents, shifted by one


def _listed_in_extents(conn: sqlite3.Connection, query: ResourceQuery, limit: int,
                       offset: int, columns: str) -> tuple[int, list[sqlite3.Row]]:
    """The total and one page of what anonymous callers list in the query's extent, from the
    R*Tree of the extents of the resources they list alone (migration 28): its entries are
    counted, then the page is found among the few newest of them.

    An entry's id starts with the hour its resource was created (0 when unknown), so the
    ``offset + limit`` entries of the highest ids were created in hour ``h`` or later; every
    resource created before hour ``h`` comes after them in the default order (created, then id,
    newest first). The page is therefore among the entries of hour ``h`` or later, and those of
    hour 0, whose rows are read and sorted."""
    boxes, params = [], []
    for x0, y0, x1, y1 in query.extents:
        boxes.append("(minx <= ? AND maxx >= ? AND miny <= ? AND maxy >= ?)")
        params += [x1, x0, y1, y0]
    meets, params = _once("listed_extents", " OR ".join(boxes)), params + params
    total = cached_count(conn, f"SELECT count(*) FROM listed_extents e WHERE {meets}", params)
    if total <= offset or limit == 0:
        return total, []
    hour = 0
    if total > offset + limit:
        hour = conn.execute(f"SELECT e.id >> {LISTED_EXTENT_SHIFT} FROM listed_extents e WHERE {meets}"
                            " ORDER BY e.id DESC LIMIT 1 OFFSET ?", [*params, offset + limit - 1]).fetchone()[0]
    rows = conn.execute(
        f"SELECT {columns} FROM (SELECT (e.id >> 1) & {ENTRY_IDS} AS id FROM listed_extents e WHERE {meets}"
        f" AND (e.id >= ? OR e.id < ?)) c CROSS JOIN resources r ON r.id = c.id WHERE {ANONYMOUS_LISTING}"
        f" ORDER BY {LISTING.default_order} LIMIT ? OFFSET ?",
        [*params, hour << LISTED_EXTENT_SHIFT, 1 << LISTED_EXTENT_SHIFT, limit, offset]).fetchall()
    return total, rows


FEW_WORDS = 2  # words that all must match: so few rows do that listing them once serves count and page


def _anonymous_few(conn: sqlite3.Connection, driver: Candidates, limit: int, offset: int,
                   columns: str) -> tuple[int, list[sqlite3.Row]] | None:
    """The total and one page of what anonymous callers list among few candidates (rows that
    hold FEW_WORDS words or more), in one statement: the word index is searched once, its
    matches kept for both the count and the walk in the default order. None when the count is
    known already (the usual plan then searches the index once, for the page)."""
    count_sql, count_params = driver.anonymous_count
    if known_count(conn, count_sql, count_params) is not None:
        return None
    sql, params = driver.anonymous_ids
    found = conn.execute(
        f"WITH c(id) AS MATERIALIZED ({sql}) SELECT (SELECT count(*) FROM c), r.id FROM resources r INDEXED BY"
        f" resources_created WHERE {ANONYMOUS_LISTING} AND r.id IN c ORDER BY {LISTING.default_order} LIMIT ? OFFSET ?",
        [*params, limit, offset]).fetchall()
    if not found:  # past the last page: the count alone
        return cached_count(conn, count_sql, count_params), []
    total = found[0][0]
    remember_count(conn, count_sql, count_params, total)
    ids = [row[1] for row in found]
    return total, conn.execute(f"SELECT {columns} FROM resources r WHERE r.id IN ({','.join('?' * len(ids))})"
                               f" ORDER BY {LISTING.default_order}", ids).fetchall()


FEW = 12_000  # candidates counted and sorted in this process, in the same pass that finds them
FEW_WORTH = 5000.0  # when listing the candidates costs more than that (microseconds): the text index


def _few(conn: sqlite3.Connection, listing: Listing, spec: ListSpec, visible: tuple[str, list[Any]],
         driver: Candidates, count_from: Source, limit: int, offset: int) -> tuple[int, list[sqlite3.Row]] | None:
    """The total and the page in one pass over the candidates when no more than ``FEW`` of them
    are visible, so that their index (the text index above all) is searched once, not twice;
    None when there are more, or when the count is already known."""
    count_sql, count_params = count_query(listing, spec, visible, count_from)
    if known_count(conn, count_sql, count_params) is not None:
        return None
    cond, params = visible
    where, where_params = where_clause(spec, listing.fields, listing.search)
    cursor = conn.execute(f"SELECT r.id, r.created FROM ({driver.sql}) c CROSS JOIN resources r INDEXED BY"
                          f" resources_visible ON r.id = c.id WHERE {cond}{where}", [*driver.params, *params, *where_params])
    found = cursor.fetchmany(FEW + 1)
    cursor.close()
    if len(found) > FEW or not all(isinstance(created, str) for _, created in found):
        return None
    remember_count(conn, count_sql, count_params, len(found))
    # the default order, created then id, newest first (text compares as SQLite's BINARY does)
    ids = [rid for rid, _ in heapq.nlargest(offset + limit, found, key=lambda row: (row[1], row[0]))[offset:]]
    if not ids:
        return len(found), []
    rows = conn.execute(f"SELECT {listing.columns} FROM resources r WHERE r.id IN ({','.join('?' * len(ids))})"
                        f" ORDER BY {listing.default_order}", ids).fetchall()
    return len(found), rows


def rows_by_ids(conn: sqlite3.Connection, ids: list[int]) -> list[sqlite3.Row]:
    """The full rows of these resources, in the order of ``ids`` (those that exist)."""
    if not ids:
        return []
    found = {r["id"]: r for r in conn.execute(
        f"SELECT {COLUMNS} FROM resources r WHERE r.id IN ({','.join('?' * len(ids))})", ids)}
    return [found[i] for i in ids if i in found]


def get_visible(conn: sqlite3.Connection, viewer: Viewer, resource_id: int,
                resource_types: tuple[str, ...] = ()) -> sqlite3.Row | None:
    cond, params = visibility(viewer)
    sql = f"SELECT {COLUMNS} FROM resources r WHERE r.id = ? AND {cond}"
    if resource_types:
        sql += f" AND r.resource_type IN ({','.join('?' * len(resource_types))})"
        params = params + list(resource_types)
    return conn.execute(sql, [resource_id, *params]).fetchone()


def exists(conn: sqlite3.Connection, resource_id: int) -> bool:
    return conn.execute("SELECT 1 FROM resources WHERE id = ?", (resource_id,)).fetchone() is not None


# -- what goes with each row of a page ----------------------------------------------------------
def _by_resource(conn: sqlite3.Connection, sql: str, ids: list[int]) -> dict[int, list[sqlite3.Row]]:
    out: dict[int, list[sqlite3.Row]] = {i: [] for i in ids}
    if ids:
        for row in conn.execute(sql.format(marks=",".join("?" * len(ids))), ids):
            out[row[0]].append(row)
    return out


@dataclass
class Related:
    keywords: dict[int, list[sqlite3.Row]]
    regions: dict[int, list[sqlite3.Row]]
    tkeywords: dict[int, list[sqlite3.Row]]
    contacts: dict[int, list[sqlite3.Row]]
    contact_names: dict[int, list[sqlite3.Row]]
    perms: dict[int, set[str]]
    favorites: set[int]
    ratings: dict[int, float]
    categories: dict[int, sqlite3.Row]
    licenses: dict[int, sqlite3.Row]
    groups: dict[int, str]
    user_ids: set[int]


def related(conn: sqlite3.Connection, rows: list[sqlite3.Row], viewer: Viewer) -> Related:
    """Everything the rows of one page refer to, in a fixed number of queries."""
    ids = [r["id"] for r in rows]
    keywords = _by_resource(conn, "SELECT rk.resource_id, k.name, k.slug FROM resource_keywords rk JOIN keywords k"
                                  " ON k.id = rk.keyword_id WHERE rk.resource_id IN ({marks}) ORDER BY k.name", ids)
    regions = _by_resource(conn, "SELECT rr.resource_id, g.code, g.name FROM resource_regions rr JOIN regions g"
                                 " ON g.id = rr.region_id WHERE rr.resource_id IN ({marks}) ORDER BY g.name", ids)
    tkeywords = _by_resource(conn, "SELECT rt.resource_id, t.alt_label, t.about, t.labels, h.identifier, h.title, h.uri"
                                   " FROM resource_tkeywords rt JOIN thesaurus_keywords t ON t.id = rt.tkeyword_id"
                                   " JOIN thesauri h ON h.id = t.thesaurus_id WHERE rt.resource_id IN ({marks})"
                                   " ORDER BY t.alt_label", ids)
    contacts = _by_resource(conn, "SELECT resource_id, role, user_id FROM resource_contacts"
                                  " WHERE resource_id IN ({marks}) ORDER BY position, user_id", ids)
    contact_names = _by_resource(conn, "SELECT resource_id, role, name, organization, email FROM resource_contact_names"
                                       " WHERE resource_id IN ({marks}) ORDER BY role, position", ids)
    perms = held_on_page(conn, rows, viewer)
    favorites = favorites_on_page(conn, ids, viewer)
    ratings = {r[0]: r[1] for r in conn.execute(
        f"SELECT resource_id, avg(rating) FROM ratings WHERE resource_id IN ({','.join('?' * len(ids))})"
        " GROUP BY resource_id", ids)} if ids else {}
    cat_ids = {r["category_id"] for r in rows if r["category_id"]}
    lic_ids = {r["license_id"] for r in rows if r["license_id"]}
    grp_ids = {r["group_id"] for r in rows if r["group_id"]}
    categories = {r["id"]: r for r in _in(conn, "SELECT id, identifier, gn_description FROM categories", cat_ids)}
    licenses = {r["id"]: r for r in _in(conn, "SELECT id, identifier FROM licenses", lic_ids)}
    groups_ = {r["id"]: r["name"] for r in _in(conn, "SELECT id, name FROM groups", grp_ids)}
    user_ids = {r["owner_id"] for r in rows} | {c["user_id"] for cs in contacts.values() for c in cs}
    return Related(keywords, regions, tkeywords, contacts, contact_names, perms, favorites, ratings, categories, licenses,
                   groups_, user_ids)


def contacts_of(conn: sqlite3.Connection, resource_id: int, role: str) -> list[Any]:
    """The users' ids and the names of a contact role of a resource."""
    return [r[0] for r in conn.execute(
        "SELECT user_id FROM resource_contacts WHERE resource_id = ? AND role = ? UNION ALL"
        " SELECT name FROM resource_contact_names WHERE resource_id = ? AND role = ?",
        (resource_id, role, resource_id, role))]


def held_on_page(conn: sqlite3.Connection, rows: list[Any], viewer: Viewer) -> dict[int, set[str]]:
    """The permission names granted to the viewer or their groups on each row of a page (none
    listed for those who see every resource: the rule book gives them everything)."""
    ids = [r["id"] for r in rows]
    perms: dict[int, set[str]] = {i: set() for i in ids}
    if ids and not rules.sees_every_resource(viewer):
        groups = ",".join(str(int(g)) for g in (viewer.group_ids or (ANONYMOUS_GROUP_ID,)))
        who = f"(p.user_id = ? OR p.group_id IN ({groups}))" if viewer.id is not None else f"p.group_id IN ({groups})"
        marks = ",".join("?" * len(ids))
        args = [*ids, viewer.id] if viewer.id is not None else ids
        for rid, perm in conn.execute(
                f"SELECT p.resource_id, p.perm FROM resource_perms p WHERE p.resource_id IN ({marks}) AND {who}"
                f" AND {READ_ONLY_FOR_EVERYONE}", args):
            perms[rid].add(perm)
    return perms


def favorites_on_page(conn: sqlite3.Connection, ids: list[int], viewer: Viewer) -> set[int]:
    """Which of these resources the viewer has marked as a favorite."""
    if not ids or viewer.id is None:
        return set()
    marks = ",".join("?" * len(ids))
    return {r[0] for r in conn.execute(
        f"SELECT resource_id FROM favorites WHERE user_id = ? AND resource_id IN ({marks})", [viewer.id, *ids])}


def _in(conn: sqlite3.Connection, sql: str, ids: set[int]) -> list[sqlite3.Row]:
    if not ids:
        return []
    ids_ = list(ids)
    return conn.execute(f"{sql} WHERE id IN ({','.join('?' * len(ids_))})", ids_).fetchall()


# -- lists of accounts' resources ------------------------------------------------------------------
def page_visible_to_user(conn: sqlite3.Connection, user: Viewer, viewer: Viewer, limit: int,
                         offset: int) -> tuple[int, list[sqlite3.Row]]:
    """What ``user`` can see, limited to what the viewer can see too, by title."""
    a, pa = visibility(user)
    b, pb = visibility(viewer)
    listing = Listing(COLUMNS, "resources r", FIELDS, SEARCH_FIELDS, "r.title, r.id", "r.id")
    return fetch_page(conn, listing, ListSpec(), (f"{a} AND {b}", pa + pb), limit, offset)


def page_of_group(conn: sqlite3.Connection, group_id: int, viewer: Viewer, limit: int,
                  offset: int) -> tuple[int, list[sqlite3.Row]]:
    """Resources on which the group holds a view or change permission, as the viewer sees them."""
    perms = _names(VIEW_PERMS)
    held = (f"EXISTS (SELECT 1 FROM resource_perms gp WHERE gp.resource_id = r.id AND gp.group_id = ?"
            f" AND gp.perm IN ({perms}))")
    cond, params = visibility(viewer)
    listing = Listing(COLUMNS, "resources r", FIELDS, SEARCH_FIELDS, "r.title, r.id", "r.id")
    return fetch_page(conn, listing, ListSpec(), (f"{held} AND {cond}", [group_id, *params]), limit, offset)


# -- permission rows --------------------------------------------------------------------------------
def grant(conn: sqlite3.Connection, resource_id: int, perms: list[str], *, user_id: int | None = None,
          group_id: int | None = None) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO resource_perms (resource_id, user_id, group_id, perm) VALUES (?, ?, ?, ?)",
        [(resource_id, user_id, group_id, p) for p in perms])
    if group_id == ANONYMOUS_GROUP_ID:
        refresh_public_view(conn, resource_id)


def revoke(conn: sqlite3.Connection, resource_id: int, *, user_id: int | None = None,
           group_id: int | None = None) -> None:
    if user_id is not None:
        conn.execute("DELETE FROM resource_perms WHERE resource_id = ? AND user_id = ?", (resource_id, user_id))
    else:
        conn.execute("DELETE FROM resource_perms WHERE resource_id = ? AND group_id = ?", (resource_id, group_id))
    if group_id == ANONYMOUS_GROUP_ID:
        refresh_public_view(conn, resource_id)


def refresh_public_view(conn: sqlite3.Connection, resource_id: int) -> None:
    perms = _names(VIEW_PERMS)
    conn.execute(
        f"UPDATE resources SET public_view = EXISTS (SELECT 1 FROM resource_perms WHERE resource_id = ?"
        f" AND group_id = {ANONYMOUS_GROUP_ID} AND perm IN ({perms})) WHERE id = ?", (resource_id, resource_id))


def _tally_where(viewer: Viewer, query: ResourceQuery) -> tuple[str, list[Any]] | None:
    """What an anonymous caller or a superuser lists by default, with the query's advertised
    rule and types, as a condition on the rows of ``resource_tally`` (None for other callers,
    whose permissions are rows of their own)."""
    if rules.sees_every_resource(viewer):
        where, params = "dirty = 0", []
    elif viewer.id is None:
        where, params = "dirty = 0 AND public_view = 1", []
        if query.advertised is None and not query.advertised_all:
            where += " AND advertised = 1"
    else:
        return None
    if query.advertised is not None and not query.advertised_all:
        where += " AND advertised = ?"
        params.append(int(query.advertised))
    if query.resource_types:
        where += f" AND resource_type IN ({','.join('?' * len(query.resource_types))})"
        params += list(query.resource_types)
    return where, params


ANONYMOUS = Viewer(None, False, (ANONYMOUS_GROUP_ID,))
SUPERUSER = Viewer(None, True)


def _listed(viewer: Viewer, query: ResourceQuery) -> tuple[str, list[Any]]:
    """SQL condition: the viewer may see the resource and the query's advertised rule and types
    list it (what ``_conditions`` tests of an unfiltered list)."""
    cond, params = visibility(viewer)
    extra, extra_params = _advertised(viewer, query)
    cond, params = cond + extra, params + extra_params
    if query.resource_types:
        cond += f" AND r.resource_type IN ({','.join('?' * len(query.resource_types))})"
        params = params + list(query.resource_types)
    return cond, params


def _shown_beyond_public(viewer: Viewer) -> str:
    """SQL listing, each once, the ids of the resources that visibility() shows the signed-in
    viewer in another way than ``public_view``: those they own (by the index of resources by
    owner) and those on which they or one of their groups hold a view permission (VIEW_PERMS, by
    the indexes of resource_perms by user and by group). The anonymous group is left out: its
    permission rows are those that ``public_view`` marks (store/permissions.py keeps it in step)."""
    perms = _names(VIEW_PERMS)
    groups = ",".join(str(int(g)) for g in viewer.group_ids if g != ANONYMOUS_GROUP_ID) or "0"
    return (f"SELECT id FROM resources WHERE owner_id = {int(viewer.id)}"
            f" UNION SELECT resource_id FROM resource_perms WHERE user_id = {int(viewer.id)} AND perm IN ({perms})"
            f" UNION SELECT resource_id FROM resource_perms WHERE group_id IN ({groups}) AND perm IN ({perms})")


def _member_counts(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery) -> dict[str, int]:
    """How many resources of each type a signed-in user (no superuser) lists unfiltered, without
    testing every row against visibility(): what anonymous callers list (the tally), plus the
    rows shown to the user in another way (``_shown_beyond_public``) that anonymous callers do
    not list. Such a row is seen unless what visibility() asks of every row hides it (a
    superuser's condition: not dirty). Kept until the data changes."""
    key = ("member counts", viewer.id, viewer.group_ids, query.advertised, query.advertised_all, query.resource_types)
    return kept_value(conn, key, lambda: _count_member(conn, viewer, query, by_type=True))


def _member_total(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery) -> int:
    """The sum of ``_member_counts`` (counted without sorting the rows by type)."""
    key = ("member total", viewer.id, viewer.group_ids, query.advertised, query.advertised_all, query.resource_types)
    return kept_value(conn, key, lambda: _count_member(conn, viewer, query, by_type=False)[None])


def _count_member(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery,
                  by_type: bool) -> dict[str | None, int]:
    """``_member_counts`` by type, or their sum under None."""
    kind, by = ("resource_type", " GROUP BY resource_type") if by_type else ("NULL", "")
    everyone, everyone_params = _tally_where(ANONYMOUS, query)
    shown, shown_params = _listed(SUPERUSER, query)
    advertised, advertised_params = _advertised(viewer, query)
    public, public_params = _listed(ANONYMOUS, query)
    counts: dict[str | None, int] = {None: 0}
    for found, n in [
            *cached_rows(conn, f"SELECT {kind}, coalesce(sum(n), 0) FROM resource_tally WHERE {everyone}{by}",
                         everyone_params),
            *cached_rows(conn, f"SELECT {kind}, count(*) FROM ({_shown_beyond_public(viewer)}) c CROSS JOIN"
                               f" resources r INDEXED BY resources_visible ON r.id = c.id"
                               f" WHERE {shown}{advertised} AND NOT ({public}){by}",
                         shown_params + advertised_params + public_params)]:
        counts[found] = counts.get(found, 0) + n
    return {found: n for found, n in counts.items() if n or not by_type}


def _unfiltered_total(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery,
                      cond: str) -> tuple[str, list[Any]] | int | None:
    """The count of an unfiltered list, when nothing but visibility, the advertised rule and the
    types is tested (``cond`` is no more than those), without a test of every row: for anonymous
    callers and superusers, the query on the tally that triggers keep (migration 22); for other
    users, the count itself (``_member_counts``); None otherwise."""
    if cond != _listed(viewer, query)[0] or query.favorites_of is not None or query.tkeyword_groups:
        return None
    found = _tally_where(viewer, query)
    if found is None:
        return _member_total(conn, viewer, query)
    return f"SELECT coalesce(sum(n), 0) FROM resource_tally WHERE {found[0]}", found[1]


def type_counts(conn: sqlite3.Connection, viewer: Viewer) -> dict[str, int]:
    """How many resources of each type the viewer lists by default."""
    tally = _tally_where(viewer, ResourceQuery())
    if tally is not None:
        rows = cached_rows(conn, f"SELECT resource_type, sum(n) FROM resource_tally WHERE {tally[0]}"
                                 " GROUP BY resource_type HAVING sum(n) > 0", tally[1])
        return dict(rows)
    return _member_counts(conn, viewer, ResourceQuery())


def tkeyword_groups(conn: sqlite3.Connection, ids: list[int], force_and: bool) -> list[list[int]]:
    """Thesaurus keyword ids grouped by thesaurus (OR inside a group, AND across groups)."""
    if force_and:
        return [[i] for i in ids]
    marks = ",".join("?" * len(ids))
    found = {r[0]: r[1] for r in conn.execute(
        f"SELECT id, thesaurus_id FROM thesaurus_keywords WHERE id IN ({marks})", ids)}
    groups: dict[int | None, list[int]] = {}
    for i in ids:
        groups.setdefault(found.get(i), []).append(i)
    return list(groups.values())


def held_perms(conn: sqlite3.Connection, viewer: Viewer, resource_id: int) -> set[str]:
    """Permission names granted on one resource to the viewer or to one of their groups (what
    they amount to is the rule book's answer: rules.resource_actions)."""
    if viewer.id is None:
        sql = (f"SELECT perm FROM resource_perms p WHERE resource_id = ? AND group_id = {ANONYMOUS_GROUP_ID}"
               f" AND {READ_ONLY_FOR_EVERYONE}")
        return {r[0] for r in conn.execute(sql, (resource_id,))}
    groups = ",".join(str(int(g)) for g in viewer.group_ids) or "0"
    return {r[0] for r in conn.execute(
        f"SELECT perm FROM resource_perms p WHERE resource_id = ? AND (user_id = ? OR group_id IN ({groups}))"
        f" AND {READ_ONLY_FOR_EVERYONE}", (resource_id, viewer.id))}


def ids_matching(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery) -> list[int]:
    """Ids of every resource the query selects for the viewer (patch-all)."""
    sql, params = matching(conn, viewer, query, "r.id")
    return [r[0] for r in conn.execute(sql, params)]


def matching(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery,
             columns: str) -> tuple[str, list[Any]]:
    """SQL selecting ``columns`` of every resource the query selects for the viewer, in no
    order, and its parameters (the facets count over it). Where nothing but ids and what the
    visibility index holds is tested, the rows are read from that index alone."""
    cond, params, spec, driver = _conditions(conn, viewer, query)
    narrow = " INDEXED BY resources_visible" if _tests_ids_only(spec, query.resource_types) and not query.sql else ""
    source = Source(f"({driver[0].sql}) c CROSS JOIN resources r{narrow} ON r.id = c.id", driver[0].params) if driver \
        else Source(f"resources r{narrow}")
    where, where_params = where_clause(spec, fields_for(query.resource_types), SEARCH_FIELDS)
    return f"SELECT {columns} FROM {source.sql} WHERE {cond}{where}", source.params + params + where_params


def listed_beyond_public(viewer: Viewer, query: ResourceQuery, columns: str) -> tuple[str, list[Any]]:
    """SQL selecting ``columns`` of the resources a signed-in user (no superuser) lists with no
    search beyond those anonymous callers list (see ``_count_member``): few rows, found through
    what they own and hold."""
    shown, shown_params = _listed(SUPERUSER, query)
    advertised, advertised_params = _advertised(viewer, query)
    public, public_params = _listed(ANONYMOUS, query)
    return (f"SELECT {columns} FROM ({_shown_beyond_public(viewer)}) c CROSS JOIN resources r INDEXED BY"
            f" resources_visible ON r.id = c.id WHERE {shown}{advertised} AND NOT ({public})",
            shown_params + advertised_params + public_params)


def id_by_uuid(conn: sqlite3.Connection, uuid: str) -> int | None:
    """The id of the resource with this uuid; None when there is none."""
    row = conn.execute("SELECT id FROM resources WHERE uuid = ?", (uuid,)).fetchone()
    return row[0] if row else None


def uuid_of(conn: sqlite3.Connection, rid: int) -> str | None:
    row = conn.execute("SELECT uuid FROM resources WHERE id = ?", (rid,)).fetchone()
    return row[0] if row else None


def alternate_of(conn: sqlite3.Connection, rid: int) -> str | None:
    row = conn.execute("SELECT alternate FROM resources WHERE id = ?", (rid,)).fetchone()
    return row[0] if row else None


def dataset_alternate(conn: sqlite3.Connection, rid: int) -> sqlite3.Row | None:
    """id and alternate of the dataset with this id; None when it is no (longer a) dataset."""
    return conn.execute("SELECT r.id, r.alternate FROM resources r JOIN datasets d ON d.resource_id = r.id"
                        " WHERE r.id = ?", (rid,)).fetchone()
