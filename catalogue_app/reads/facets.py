"""Facets of a resource search as a caller sees them (store/facets.py counts them): what GeoNode's
facets API (/api/v2/facets/, /api/v2/facets/{name}) and the OGC API - Records items
(facets=true) answer with. Labels the catalogue supplies (categories, regions, the facets' own
names) come in the asked language (translations.py); the counts do not depend on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from catalogue_app import translations
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


# -- GeoNode's facets API ----------------------------------------------------------------------

class TopicItem(msgspec.Struct, omit_defaults=True):
    """One value of a facet as GeoNode's facets API shows it: ``key`` is what the facet's filter
    takes (a type, true/false, a category identifier, a keyword slug, a region code, a user's or
    a group's id, a thesaurus keyword's id); ``label`` is in the asked language where the
    catalogue has a translation."""

    key: str | int | bool
    label: str
    count: int
    fa_class: str | UnsetType = UNSET
    is_localized: bool | UnsetType = UNSET


class TopicPage(msgspec.Struct):
    """A page of a facet's values (``page`` counts from 0), most frequent first, and how many there are."""

    page: int
    page_size: int
    start: int
    total: int
    items: list[TopicItem]


class FacetInfo(msgspec.Struct, omit_defaults=True):
    """A facet: its name, the resource list filter its keys go into, its label (English) and
    ``localized_label`` (the asked language), its type, whether its values nest, and its
    suggested place among the facets; ``topics`` when asked for."""

    name: str
    filter: str
    label: str
    localized_label: str
    type: str
    hierarchical: bool
    order: int | UnsetType = UNSET
    is_localized: bool | UnsetType = UNSET
    config: dict[str, Any] | UnsetType = UNSET
    link: str | UnsetType = UNSET
    prev: str | None | UnsetType = UNSET
    next: str | None | UnsetType = UNSET
    topic_contains: str | UnsetType = UNSET
    topics: TopicPage | UnsetType = UNSET


@dataclass(frozen=True)
class Provider:
    """What the API names a facet, what the engine counts it as, its filter, label and type."""

    name: str
    engine: str
    filter: str
    label: str
    type: str
    hierarchical: bool = False
    order: int | None = None


PROVIDERS = (
    Provider("resourcetype", "type", "filter{resource_type.in}", "Resource type", "base", hierarchical=True),
    Provider("featured", "featured", "filter{featured}", "Featured", "base", order=0),
    Provider("category", "category", "filter{category.identifier.in}", "Category", "category"),
    Provider("keyword", "keyword", "filter{keywords.slug.in}", "Keyword", "keyword"),
    Provider("region", "region", "filter{regions.code.in}", "Region", "place"),
    Provider("owner", "owner", "filter{owner.pk.in}", "Owner", "user"),
    Provider("group", "group", "filter{group.in}", "Group", "group"),
)
THESAURUS_PREFIX = "t_"  # a thesaurus's facet: t_<thesaurus id>


def providers(conn: Connection) -> list[Provider]:
    """Every facet: GeoNode's fixed ones, then one per thesaurus."""
    out = list(PROVIDERS)
    for tid, identifier, title, _labels in facets.thesauri(conn):
        out.append(Provider(f"{THESAURUS_PREFIX}{tid}", f"{facets.THESAURUS}{tid}", "filter{tkeywords}", title,
                            "thesaurus", order=100 + len(out)))
    return out


def provider(conn: Connection, name: str) -> Provider | None:
    """The facet called ``name``; None when there is none."""
    fixed = next((p for p in PROVIDERS if p.name == name), None)
    if fixed is not None:
        return fixed
    if name.startswith(THESAURUS_PREFIX) and name[len(THESAURUS_PREFIX):].isdigit():
        return next((p for p in providers(conn) if p.name == name), None)
    return None


@dataclass
class Ask:
    """What a facets request asks besides the resource search: the page (from 0), the keys that
    must be shown, a piece of text the labels must contain, the language, and what to add."""

    page: int = 0
    page_size: int = 10
    keys: tuple[str, ...] = ()
    topic_contains: str | None = None
    lang: str = "en"
    include_config: bool = False


def info(p: Provider, lang: str, include_config: bool = False) -> FacetInfo:
    """A facet's description, its label in ``lang``."""
    localized = translations.translated("facet", p.name if p.type != "thesaurus" else None, lang, p.label) or p.label
    out = FacetInfo(p.name, p.filter, p.label, localized, p.type, p.hierarchical)
    if p.order is not None:
        out.order = p.order
    if p.type == "thesaurus":
        out.is_localized = False
    if include_config:
        out.config = {"type": "select" if p.type != "base" else "switch", "order": p.order if p.order is not None else 0}
    return out


def _label(p: Provider, bucket: facets.Bucket, lang: str) -> str:
    if p.engine == "category":
        return translations.translated("category", bucket.key, lang, bucket.label) or bucket.label
    if p.engine == "region":
        return translations.translated("region", bucket.key, lang, bucket.label) or bucket.label
    if p.engine == "featured":
        return translations.translated("facet", bucket.key, lang, bucket.label) or bucket.label
    return bucket.label


def _key(p: Provider, bucket: facets.Bucket) -> str | int | bool:
    """The key a facet's filter takes: ids for owners, groups and thesaurus keywords."""
    if p.engine in ("owner", "group") or p.engine.startswith(facets.THESAURUS):
        return bucket.id
    if p.engine == "featured":
        return bool(bucket.id)
    return bucket.key


def _item(conn: Connection, p: Provider, bucket: facets.Bucket, lang: str, fa: dict[str, str]) -> TopicItem:
    item = TopicItem(_key(p, bucket), _label(p, bucket, lang), bucket.count)
    if p.engine == "category":
        item.fa_class = fa.get(bucket.key, "fa-times")
    elif p.engine.startswith(facets.THESAURUS):
        item.is_localized = False
    return item


def topic_page(conn: Connection, viewer: Viewer, query: ResourceQuery, tkeyword_ids: list[int], force_and: bool,
               p: Provider, ask: Ask) -> TopicPage:
    """A page of a facet's values over what ``query`` selects for the viewer. With ``keys``,
    only those values are shown, each with its count (0 when nothing selected has it), as
    GeoNode does; ``topic_contains`` keeps the values whose label (in the asked language)
    contains it, case aside."""
    if tkeyword_ids:
        query.tkeyword_groups = resources.tkeyword_groups(conn, tkeyword_ids, force_and)
    buckets = facets.counts(conn, viewer, query, (p.engine,))[p.engine]
    fa = dict(conn.execute("SELECT identifier, fa_class FROM categories")) if p.engine == "category" else {}
    items = [_item(conn, p, b, ask.lang, fa) for b in buckets]
    if ask.topic_contains and p.engine not in ("type", "featured"):
        wanted = ask.topic_contains.casefold()
        items = [i for i in items if wanted in i.label.casefold()]
    if ask.keys:
        wanted_keys = set(ask.keys)
        shown = [i for i in items if _matches(i.key, wanted_keys)]
        missing = [k for k in ask.keys if not any(_matches(i.key, {k}) for i in shown)]
        extra = [_item(conn, p, b, ask.lang, fa) for b in facets.known_values(conn, p.engine, missing, viewer)]
        items = shown + [i for i in extra if not any(i.key == s.key for s in shown)]
    start = ask.page * ask.page_size
    return TopicPage(ask.page, ask.page_size, start, len(items), items[start:start + ask.page_size])


def _matches(key: str | int | bool, keys: set[str]) -> bool:
    text = ("true" if key else "false") if isinstance(key, bool) else str(key)
    return text in keys or (isinstance(key, bool) and str(key) in keys)


def facet(conn: Connection, viewer: Viewer, query: ResourceQuery, tkeyword_ids: list[int], force_and: bool,
          name: str, ask: Ask) -> FacetInfo | None:
    """One facet with a page of its values; None when there is no facet of that name."""
    p = provider(conn, name)
    if p is None:
        return None
    out = info(p, ask.lang, ask.include_config)
    out.topics = topic_page(conn, viewer, query, tkeyword_ids, force_and, p, ask)
    if ask.topic_contains:
        out.topic_contains = ask.topic_contains
    return out


def every(conn: Connection, viewer: Viewer, query: ResourceQuery | None, tkeyword_ids: list[int], force_and: bool,
          ask: Ask) -> list[FacetInfo]:
    """Every facet, with the first page of its values when ``query`` is given."""
    out = []
    for p in providers(conn):
        one = info(p, ask.lang, ask.include_config)
        if query is not None:
            one.topics = topic_page(conn, viewer, query, tkeyword_ids, force_and, p, Ask(lang=ask.lang))
            tkeyword_ids = []  # (grouped into the query once)
        out.append(one)
    return out
