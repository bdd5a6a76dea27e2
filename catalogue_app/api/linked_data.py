"""Metadata for portals and search engines: DCAT-AP 3 of the catalogue and of each resource
(JSON-LD, or Turtle with ``f=ttl`` or ``Accept: text/turtle``), /sitemap.xml and /robots.txt.

/dcat/catalog lists, a page of 100 at a time (``?page=``, from 1, hydra paging links as CKAN's
DCAT writes them), what the caller may view: anonymous callers see only public resources. The
sitemap lists only public resources, whoever asks; past 50,000 it is an index of
/sitemaps/{n}.xml. Errors are the API's JSON envelope."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from litestar import Response, get
from litestar.openapi import ResponseSpec
from litestar.params import FromPath

from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import ApiError
from catalogue_app.api.ogcapi.common import MEDIA, negotiate, param
from catalogue_app.reads import dcat
from catalogue_app.reads import linked_data as reads

FORMATS = ("jsonld", "ttl")
# what the OpenAPI document says of the answers (JSON-LD; Turtle with f=ttl)
JSON_LD = {200: ResponseSpec(dict[str, Any], description="JSON-LD (Turtle with f=ttl or Accept: text/turtle)",
                             media_type="application/ld+json")}
XML = {"media_type": "application/xml", "responses": {200: ResponseSpec(str, description="A sitemap (sitemaps.org)",
                                                                        media_type="application/xml")}}
MAX_PAGE = 10**12  # a larger page number is past the end of any catalogue (and too large for SQL)
ROBOTS = """User-agent: *
Allow: /
Allow: /ogcapi/collections/metadata:main/items/
Disallow: /api/
Disallow: /ogcapi/
Disallow: /geoserver/
Disallow: /catalogue/csw
Disallow: /dcat/
Disallow: /datasets/
Disallow: /documents/
Disallow: /maps/
Disallow: /apps/
Disallow: /account/
Disallow: /o/
"""


def publisher(ctx: Ctx) -> dcat.Publisher:
    """The catalogue's publisher: the settings, else the host of the base URL and the base URL."""
    settings = ctx.settings
    name = settings.publisher_name.strip() or urlsplit(ctx.base).netloc or "Catalogue"
    return dcat.Publisher(name, settings.publisher_url.strip() or f"{ctx.base}/", settings.publisher_email.strip())


def page_number(ctx: Ctx) -> int:
    text = param(ctx, "page")
    if text is None:
        return 1
    if not re.fullmatch(r"\s*\+?\d{1,1000}\s*", text) or int(text) < 1:
        raise ApiError(400, f"page: {text!r} is not a page number (1, 2, ...)", "invalid")
    return min(int(text), MAX_PAGE)


def answer(body: bytes, fmt: str) -> Response[bytes]:
    return Response(body, media_type=MEDIA[fmt], headers={"Vary": "Accept"})


@get("/dcat/catalog", tags=["linked data"], summary="The catalogue as DCAT-AP 3 (JSON-LD, or Turtle with f=ttl), "
     "100 resources a page (page=1, 2...), as the caller may view them", media_type="application/ld+json",
     responses=JSON_LD)
async def dcat_catalog(ctx: Ctx) -> Response[bytes]:
    fmt = negotiate(ctx, FORMATS, "jsonld")
    page = page_number(ctx)
    found = await ctx.db.read(dcat.catalog, ctx.caller, ctx.viewer, ctx.base, publisher(ctx), page, fmt,
                              like=("dcat catalog", fmt))
    if found.body is None:
        raise ApiError(404, f"page {page} is past the last page of the catalogue ({found.last})", "not_found")
    return answer(found.body, fmt)


@get("/dcat/resources/{uuid:str}", tags=["linked data"], summary="One resource as DCAT-AP 3 (JSON-LD, or Turtle "
     "with f=ttl), or as schema.org JSON-LD (f=schemaorg)", media_type="application/ld+json", responses=JSON_LD)
async def dcat_resource(ctx: Ctx, uuid: FromPath[str]) -> Response[bytes]:
    fmt = negotiate(ctx, (*FORMATS, "schemaorg"), "jsonld")
    if fmt == "schemaorg":
        body = await ctx.db.read(dcat.schema_org_of, ctx.caller, ctx.viewer, ctx.base, publisher(ctx), uuid)
    else:
        body = await ctx.db.read(dcat.one, ctx.caller, ctx.viewer, ctx.base, publisher(ctx), uuid, fmt,
                                 like=("dcat resource", fmt))
    if body is None:
        raise ApiError(404, f"No resource {uuid!r} that you may view.", "not_found")
    return answer(body, "jsonld" if fmt == "schemaorg" else fmt)


@get("/sitemap.xml", tags=["linked data"], summary="The public resources' pages for search engines (an index of "
     "/sitemaps/{n}.xml past 50,000)", **XML)
async def sitemap(ctx: Ctx) -> Response[bytes]:
    body = await ctx.db.read(reads.sitemap, ctx.base, None)
    return Response(body, media_type="application/xml")


@get("/sitemaps/{name:str}", tags=["linked data"], summary="One file of the sitemap index: /sitemaps/1.xml, ...",
     **XML)
async def sitemap_file(ctx: Ctx, name: FromPath[str]) -> Response[bytes]:
    found = re.fullmatch(r"([1-9]\d{0,8})\.xml", name)
    body = await ctx.db.read(reads.sitemap, ctx.base, int(found.group(1))) if found else None
    if body is None:
        raise ApiError(404, f"No sitemap {name!r}: the files are /sitemaps/1.xml, /sitemaps/2.xml...", "not_found")
    return Response(body, media_type="application/xml")


@get("/robots.txt", tags=["linked data"], summary="What crawlers may read, and where the sitemap is",
     media_type="text/plain")
async def robots(ctx: Ctx) -> Response[str]:
    return Response(f"{ROBOTS}\nSitemap: {ctx.base}/sitemap.xml\n", media_type="text/plain")


ROUTES = [dcat_catalog, dcat_resource, sitemap, sitemap_file, robots]
