"""The pagination envelope: ``links``, ``total``, ``page``, ``page_size`` and the plural key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import msgspec
from litestar import Request

from catalogue_app.api.errors import ApiError
from catalogue_app.api.query import positive_int


class Links(msgspec.Struct):
    next: str | None
    previous: str | None


class ListPage(msgspec.Struct):
    """The envelope of a list answer; each list's class adds its plural key, a list of items."""

    links: Links
    total: int
    page: int
    page_size: int


class Page(msgspec.Struct):
    number: int
    size: int

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size


def requested_page(request: Request, params: list[tuple[str, str]]) -> Page:
    settings = request.app.state.settings
    number = positive_int(params, "page", 1)
    size = min(positive_int(params, "page_size", settings.default_page_size), settings.max_page_size)
    return Page(number, size)


def base_url(request: Request) -> str:
    """Scheme, host and port that absolute links start with."""
    configured = request.app.state.settings.public_url
    if configured:
        return configured.rstrip("/")
    scope = request.scope  # read directly: building the request's headers costs more than a page link
    host = next((value.decode("latin-1") for name, value in scope["headers"] if name == b"host"), "")
    return f"{scope.get('scheme', 'http')}://{host or request.url.netloc}"


def _page_link(request: Request, params: list[tuple[str, str]], number: int | None, base: str) -> str:
    kept = [(k, v) for k, v in params if k != "page"]
    if number is not None:
        kept.append(("page", str(number)))
    kept.sort(key=lambda kv: kv[0])
    query = urlencode(kept, safe="{}[]-.,:*")
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if raw else request.url.path  # as the client wrote it
    return f"{base}{path}" + (f"?{query}" if query else "")


MAX_PAGE_NUMBER = 10**9  # no list is that long; larger numbers are past the end


def wanted(request: Request, params: list[tuple[str, str]]) -> Page:
    """The requested page; 404 when its number is past any list's end."""
    page = requested_page(request, params)
    if page.number > MAX_PAGE_NUMBER:
        raise ApiError(404, "Invalid page.", "not_found")
    return page


def check(page: Page, total: int) -> None:
    """404 when the page is past the end of a list of ``total`` items."""
    if page.number > 1 and page.offset >= total:
        raise ApiError(404, "Invalid page.", "not_found")


def paginate(request: Request, params: list[tuple[str, str]],
             fetch: Callable[[int, int], tuple[int, list[Any]]]) -> tuple[Page, int, list[Any]]:
    """Run ``fetch(limit, offset)`` for the requested page; 404 when the page is past the end."""
    page = wanted(request, params)
    total, rows = fetch(page.size, page.offset)
    check(page, total)
    return page, total, rows


def envelope_links(request: Request, params: list[tuple[str, str]], page: Page, total: int,
                   base: str | None = None) -> Links:
    """``next`` and ``previous``; ``base`` is base_url(request) when the caller has it already."""
    base = base or base_url(request)
    has_next = page.number * page.size < total
    nxt = _page_link(request, params, page.number + 1, base) if has_next else None
    if page.number <= 1:
        prev = None
    elif page.number == 2:
        prev = _page_link(request, params, None, base)
    else:
        prev = _page_link(request, params, page.number - 1, base)
    return Links(nxt, prev)


def build(request: Request, params: list[tuple[str, str]], cls: type, page: Page, total: int,
          items: list[Any]) -> Any:
    plural = cls.__struct_fields__[-1]
    return cls(**{
        "links": envelope_links(request, params, page, total),
        "total": total,
        "page": page.number,
        "page_size": page.size,
        plural: items,
    })


def page_of(request: Request, params: list[tuple[str, str]], cls: type, rows: list[Any],
            shape: Callable[[Any], Any]) -> Any:
    """The requested page of a short list read whole (a user's tokens, the remotes), each
    row shaped by ``shape``, in the envelope ``cls``."""
    page, total, shown = paginate(request, params, lambda limit, offset: (len(rows), rows[offset:offset + limit]))
    return build(request, params, cls, page, total, [shape(r) for r in shown])
