"""/api/v2/facets/ and /api/v2/facets/{name}: GeoNode's facets API (4.1 and later), the counts
of each value of a facet (type, featured, category, keyword, region, owner, group, a
thesaurus's keywords) over the resources a search selects, as the caller sees them.

The search is every parameter /api/v2/resources takes (``filter{...}``, ``search``,
``search_fields``, ``extent``, ``favorite``, ``advertised``, thesaurus keywords), so the counts
follow the whole search, text included (GeoNode's follow ``filter{...}`` only). The facets' own
parameters: ``page`` (from 0) and ``page_size``, ``key`` (repeatable: show these values),
``topic_contains``, ``lang``, and the booleans ``include_topics``, ``include_config`` and
``add_links``. The counting is reads/facets.py over store/facets.py, the engine the OGC API -
Records facets use."""

from __future__ import annotations

from urllib.parse import urlencode

import msgspec
from litestar import Controller, Response, get
from litestar.params import FromPath

from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import ApiError, invalid
from catalogue_app.api.resources.params import resource_query
from catalogue_app.reads import facets as reads
from catalogue_app.reads.facets import Ask, FacetInfo

# The facets' own parameters: everything else is the resource search.
OWN = {"page", "page_size", "key", "topic_contains", "lang", "include_topics", "include_config", "add_links",
       "format"}
MAX_PAGE_SIZE = 1000
MAX_KEYS = 100


class FacetList(msgspec.Struct):
    facets: list[FacetInfo]


def boolean(ctx: Context, name: str) -> bool:
    """A boolean parameter as GeoNode reads it (a word starting with t or y, or 1: true; f or n,
    or 0: false); absent: false; anything else: 400."""
    raw = next((v for k, v in ctx.params if k == name), None)
    if raw is None:
        return False
    text = raw.strip().lower()
    if text == "1" or text[:1] in ("t", "y"):
        return True
    if text == "0" or text[:1] in ("f", "n"):
        return False
    raise invalid(f"Invalid value for {name}: '{raw}' is not a boolean (true or false).")


def _whole(ctx: Context, name: str, default: int, least: int, most: int) -> int:
    raw = next((v for k, v in ctx.params if k == name), None)
    if raw is None or raw.strip() == "":
        return default
    try:
        number = int(raw.strip())
    except ValueError:
        raise invalid(f"Invalid {name}: '{raw}' is not a whole number.") from None
    if not least <= number <= most:
        raise invalid(f"Invalid {name}: {number} is not between {least} and {most}.")
    return number


def _ask(ctx: Context) -> Ask:
    keys = tuple(v for k, v in ctx.params if k == "key")
    if len(keys) > MAX_KEYS:
        raise invalid(f"Too many key parameters: at most {MAX_KEYS}.")
    if any(len(k) > 200 or "\x00" in k for k in keys):
        raise invalid("Invalid key: at most 200 characters, no NUL.")
    contains = next((v for k, v in ctx.params if k == "topic_contains"), None)
    if contains is not None and (len(contains) > 200 or "\x00" in contains):
        raise invalid("Invalid topic_contains: at most 200 characters, no NUL.")
    boolean(ctx, "include_topics"), boolean(ctx, "add_links")  # checked wherever they are given
    return Ask(page=_whole(ctx, "page", 0, 0, 10**6), page_size=_whole(ctx, "page_size", 10, 1, MAX_PAGE_SIZE),
               keys=keys, topic_contains=contains or None, lang=ctx.lang,
               include_config=boolean(ctx, "include_config"))


def _search(ctx: Context):
    """The resource search of the request: what /api/v2/resources would list."""
    return resource_query([(k, v) for k, v in ctx.params if k not in OWN], ctx.viewer.id)


def _headers(ctx: Context) -> dict[str, str]:
    return {"Vary": "Accept-Language, Authorization, Cookie", "Content-Language": ctx.lang}


def _link(ctx: Context, name: str, **params: object) -> str:
    return f"{ctx.base}/api/v2/facets/{name}?{urlencode(params)}"


def _lang_asked(ctx: Context) -> dict[str, str]:
    return {"lang": ctx.lang} if any(k == "lang" for k, _ in ctx.params) else {}


class FacetsController(Controller):
    path, tags = "/api/v2/facets", ["facets"]

    @get("/", summary="The facets, optionally with the first page of each one's values and counts")
    async def list_facets(self, ctx: Ctx) -> Response[FacetList]:
        ask = _ask(ctx)
        include_topics, add_links = boolean(ctx, "include_topics"), boolean(ctx, "add_links")
        query, tkeyword_ids, force_and = _search(ctx) if include_topics else (None, [], False)
        found = await ctx.db.read(reads.every, ctx.viewer, query, tkeyword_ids, force_and, ask)
        if add_links:
            for one in found:
                one.link = _link(ctx, one.name, add_links="True", **_lang_asked(ctx))
        return Response(FacetList(found), headers=_headers(ctx))

    @get("/{name:str}", summary="One facet with a page of its values and how many resources of the search have each")
    async def get_facet(self, ctx: Ctx, name: FromPath[str]) -> Response[FacetInfo]:
        ask = _ask(ctx)
        add_links = boolean(ctx, "add_links")
        query, tkeyword_ids, force_and = _search(ctx)
        found = await ctx.db.read(reads.facet, ctx.viewer, query, tkeyword_ids, force_and, name, ask)
        if found is None:
            raise ApiError(404, "Not found.", "not_found")
        if add_links:
            topics = found.topics
            more = {"page_size": ask.page_size, "add_links": "True", **_lang_asked(ctx)}
            if ask.topic_contains:
                more["topic_contains"] = ask.topic_contains
            found.prev = _link(ctx, name, page=ask.page - 1, **more) if ask.page > 0 else None
            found.next = _link(ctx, name, page=ask.page + 1, **more) \
                if topics.total > (ask.page + 1) * ask.page_size else None
        return Response(found, headers=_headers(ctx))


ROUTES = [FacetsController]
