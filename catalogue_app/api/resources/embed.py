"""Embeddable views, the ``embed_url`` of resources: small HTML pages meant for an iframe.

- /datasets/{alternate}/embed: a map preview of the dataset drawn by this catalogue's own WMS
  (the viewer's script and style are served from /static/embed/, nothing comes from elsewhere);
- /documents/{pk}/embed: the document itself (an image, a PDF, a video or a sound; other files
  and remote documents as a link);
- /maps/{pk}/embed and /apps/{pk}/embed: the title and abstract.

Who may not see a resource gets a 404 page, as the API would say. Showing a document's file
needs download permission, as its download does. Framing is allowed from anywhere.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from litestar import MediaType, Response, get
from litestar.datastructures import CacheControlHeader
from litestar.params import FromPath
from litestar.static_files import create_static_files_router

from catalogue_app.api.context import Context, Ctx
from catalogue_app.reads import embed as reads
from catalogue_app.reads.links import DATA_SUBTYPES, absolute
from catalogue_app.reads.resources import raw, urls
from catalogue_app.store import Row

UI = Path(__file__).resolve().parents[2] / "ui" / "embed"
STATIC = "/static/embed"
MERCATOR_LAT = 85.0511  # beyond it Web Mercator has no room: such datasets are shown in EPSG:4326
BROWSER_IMAGES = ("image/png", "image/jpeg", "image/gif", "image/bmp", "image/webp", "image/svg+xml")

static_files = create_static_files_router(path=STATIC, directories=[UI], name="embed_static",
                                          cache_control=CacheControlHeader(max_age=3600), include_in_schema=False)


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def page(base: str, title: str, body: str, status: int = 200, script: bool = False) -> Response[str]:
    scripts = f'<script src="{esc(base)}{STATIC}/viewer.js"></script>' if script else ""
    text = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{esc(title)}</title>'
            f'<link rel="stylesheet" href="{esc(base)}{STATIC}/embed.css"></head>'
            f'<body class="embed">{body}{scripts}</body></html>\n')
    return Response(text, media_type="text/html", status_code=status,
                    headers={"Cache-Control": "private, no-cache", "Referrer-Policy": "same-origin"})


def not_found(base: str) -> Response[str]:
    return page(base, "Not found", '<main class="embed-message"><h1>Not found</h1>'
                "<p>There is nothing here, or you may not see it.</p></main>", status=404)


def heading(row: Row, base: str) -> str:
    detail = urls(row, base)[0]
    return (f'<header class="embed-title"><a href="{esc(detail)}" target="_blank" rel="noopener">'
            f'{esc(row["title"] or row["uuid"])}</a></header>')


def _start_view(row: Row) -> tuple[str, str] | None:
    """The CRS the viewer works in and the box it starts at (lon/lat, "x0,y0,x1,y1")."""
    box = (row["ll_x0"], row["ll_y0"], row["ll_x1"], row["ll_y1"])
    if None in box:
        return None
    crs = "EPSG:3857" if -MERCATOR_LAT <= box[1] and box[3] <= MERCATOR_LAT else "EPSG:4326"
    return crs, ",".join(repr(float(v)) for v in box)


# -- datasets ------------------------------------------------------------------------------------
@get("/datasets/{alternate:str}/embed", tags=["datasets"], media_type=MediaType.HTML, summary="An embeddable map preview of a dataset (HTML)")
async def dataset_embed(ctx: Ctx, alternate: FromPath[str]) -> Response[str]:
    base = ctx.base
    found = await ctx.db.read(reads.dataset, ctx.viewer, alternate)
    if found is None:
        return not_found(base)
    row, has_data, credit = found
    view = _start_view(row)
    # a remote dataset is drawn by the catalogue's WMS from its remote service
    show_map = has_data and row["subtype"] in (*DATA_SUBTYPES, "remote") and view is not None
    if show_map:
        crs, box = view
        stage = (f'<div class="embed-map" data-wms="{esc(base)}/geoserver/ows" data-layer="{esc(row["alternate"])}"'
                 f' data-crs="{crs}" data-bbox="{box}" role="img" aria-label="Map of {esc(row["title"])}">'
                 '<noscript><p class="embed-message">The map preview needs JavaScript.</p></noscript></div>')
    else:
        stage = '<main class="embed-message"><p>This dataset has no data to show on a map.</p></main>'
    body = f'{stage}{heading(row, base)}<footer class="embed-attribution">{esc(credit)}</footer>'
    return page(base, row["title"] or row["alternate"], body, script=show_map)


# -- documents -----------------------------------------------------------------------------------
def document_body(row: Row, doc: Row | None, may_download: bool, base: str) -> str:
    """What shows the document: the file in the element that fits its type, or a link."""
    title = esc(row["title"] or row["uuid"])
    if doc is not None and doc["doc_url"]:
        return (f'<p class="embed-link"><a href="{esc(doc["doc_url"])}" target="_blank" rel="noopener noreferrer">'
                f'Open the document</a></p>')
    if doc is None or not doc["file_name"]:
        return '<p class="embed-message">This document has no file.</p>'
    if not may_download:
        return '<p class="embed-message">You may read the description of this document, but not its file.</p>'
    inline, download = f"{base}/documents/{row['id']}/link", f"{base}/documents/{row['id']}/download"
    mime = doc["mime_type"] or ""
    if mime in BROWSER_IMAGES:
        return f'<img class="embed-content" src="{esc(inline)}" alt="{title}">'
    if mime == "application/pdf":
        return f'<iframe class="embed-content" src="{esc(inline)}" title="{title}"></iframe>'
    if mime.startswith("video/"):
        return (f'<video class="embed-content" controls preload="metadata" src="{esc(inline)}">'
                f'<a href="{esc(download)}">Download the video</a></video>')
    if mime.startswith("audio/"):
        return (f'<audio class="embed-content" controls preload="metadata" src="{esc(inline)}">'
                f'<a href="{esc(download)}">Download the sound</a></audio>')
    return f'<p class="embed-link"><a href="{esc(download)}">Download {esc(doc["file_name"])}</a></p>'


@get("/documents/{pk:str}/embed", tags=["documents"], media_type=MediaType.HTML, summary="An embeddable view of a document (HTML)")
async def document_embed(ctx: Ctx, pk: FromPath[str]) -> Response[str]:
    base = ctx.base
    if not pk.isdecimal() or len(pk) > 18:
        return not_found(base)
    found = await ctx.db.read(reads.document, ctx.viewer, int(pk))
    if found is None:
        return not_found(base)
    row, doc, may_download = found
    body = (f'{heading(row, base)}<main class="embed-document">{document_body(row, doc, may_download, base)}'
            f'</main>')
    return page(base, row["title"] or "Document", body)


# -- maps and apps -------------------------------------------------------------------------------
async def _described(ctx: Context, pk: str) -> Response[str]:
    base = ctx.base
    row = await ctx.db.read(reads.app, ctx.viewer, int(pk)) if pk.isdecimal() and len(pk) <= 18 else None
    if row is None:
        return not_found(base)
    thumbnail = absolute(base, row["thumbnail_url"])
    picture = f'<img class="embed-content" src="{esc(thumbnail)}" alt="">' if thumbnail else ""
    body = (f'{heading(row, base)}<main class="embed-document">{picture}'
            f'<p class="embed-abstract">{esc(raw(row["abstract"] or ""))}</p></main>')
    return page(base, row["title"] or "Map", body)


@get("/maps/{pk:str}/embed", tags=["maps"], media_type=MediaType.HTML, summary="An embeddable view of a map (HTML)")
async def map_embed(ctx: Ctx, pk: FromPath[str]) -> Response[str]:
    """The map drawn by the catalogue's WMS (its layers over the offline basemap), in the same
    small viewer as a dataset's preview."""
    base = ctx.base
    row = await ctx.db.read(reads.map_, ctx.viewer, int(pk)) if pk.isdecimal() and len(pk) <= 18 else None
    if row is None:
        return not_found(base)
    crs, box = _start_view(row) or ("EPSG:3857", "-180.0,-60.0,180.0,75.0")
    stage = (f'<div class="embed-map" data-wms="{esc(base)}/geoserver/ows" data-layer="catalogue:basemap,'
             f'catalogue:map_{row["id"]}" data-crs="{crs}" data-bbox="{box}" role="img" aria-label="Map: '
             f'{esc(row["title"])}"><noscript><p class="embed-message">The map needs JavaScript.</p></noscript></div>')
    about = f'<p class="embed-abstract">{esc(raw(row["abstract"] or ""))}</p>' if row["abstract"] else ""
    return page(base, row["title"] or "Map", f"{stage}{heading(row, base)}{about}", script=True)


@get("/apps/{pk:str}/embed", tags=["geoapps"], media_type=MediaType.HTML, summary="An embeddable view of a geoapp (HTML)")
async def app_embed(ctx: Ctx, pk: FromPath[str]) -> Response[str]:
    return await _described(ctx, pk)


ROUTES = [static_files, dataset_embed, document_embed, map_embed, app_embed]
