"""What every OGC API route shares: its errors (the standard's {"code", "description"}, made by
api/errors.py for any error under /ogcapi/), the choice of format (``f=`` or ``Accept``; JSON when
a client says nothing, as OWSLib does), the common parameters (limit, offset, bbox, datetime),
links, and the plain HTML page the HTML answers are written into."""

from __future__ import annotations

import html
import math
import re
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlencode

from litestar import MediaType, Response

from catalogue_app.api.context import Context
from catalogue_app.api.errors import ApiError

PREFIX = "/ogcapi"
RECORDS_ID = "metadata:main"  # the catalogue as a record collection (no layer name has a colon)

# f= values and the media types they answer with
MEDIA = {
    "json": "application/json",
    "geojson": "application/geo+json",
    "html": "text/html",
    "jsonld": "application/ld+json",
    "ttl": "text/turtle",
    "openapi": "application/vnd.oai.openapi+json;version=3.0",
    "png": "image/png",
    "mvt": "application/vnd.mapbox-vector-tile",
}
# Accept media types that name a format, beyond those above
_ACCEPT_ALIASES = {"application/geo+json": "geojson", "application/vnd.oai.openapi+json": "openapi",
                   "application/xhtml+xml": "html", "application/x-protobuf": "mvt"}

DEFAULT_LIMIT = 10
MAX_LIMIT = 10_000


class OgcApiError(ApiError):
    """An error answered as {"code", "description"} with the given OGC code."""

    def __init__(self, status: int, description: str, code: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(status, description, headers=headers)
        self.ogc_code = code


def bad_parameter(name: str, message: str) -> OgcApiError:
    """400 InvalidParameterValue; the message names the parameter."""
    return OgcApiError(400, f"{name}: {message}", "InvalidParameterValue")


def not_found(what: str = "Not found.") -> OgcApiError:
    return OgcApiError(404, what, "NotFound")


def param(ctx: Context, name: str) -> str | None:
    """The first value of a query parameter, None when absent (names are case-sensitive, as the
    standards say)."""
    for key, value in ctx.params:
        if key == name:
            return value
    return None


def negotiate(ctx: Context, offered: tuple[str, ...], default: str | None = None) -> str:
    """The format to answer in, one of ``offered`` (keys of MEDIA): ``f=`` first, then the
    Accept header's most wanted offered type; ``default`` (else the first offered) when the
    client names none (no Accept, or */*). An ``f`` not offered is a 400."""
    default = default or offered[0]
    f = param(ctx, "f")
    if f is not None:
        if f not in offered:
            raise bad_parameter("f", f"unknown format {f!r}; one of {', '.join(offered)}")
        return f
    accept = ctx.request.headers.get("accept", "")
    if not accept.strip():
        return default
    best, best_q = None, 0.0
    for position, part in enumerate(accept.split(",")):
        pieces = [p.strip() for p in part.split(";")]
        media = pieces[0].lower()
        q = 1.0
        for extra in pieces[1:]:
            if extra.startswith("q="):
                try:
                    q = float(extra[2:])
                except ValueError:
                    q = 0.0
        if media in ("*/*", "application/*") and q > best_q:
            best, best_q = default, q
            continue
        name = _ACCEPT_ALIASES.get(media) or next((k for k, v in MEDIA.items() if v.split(";")[0] == media), None)
        if name in offered and q > best_q:
            best, best_q = name, q
    return best or default


def parse_limit(ctx: Context, default: int = DEFAULT_LIMIT, maximum: int = MAX_LIMIT) -> int:
    """limit: a positive integer; above ``maximum`` it is capped (as the standards allow)."""
    text = param(ctx, "limit")
    if text is None:
        return default
    if not re.fullmatch(r"\s*\+?\d{1,30}\s*", text):
        raise bad_parameter("limit", f"{text!r} is not a positive integer")
    value = int(text)
    if value < 1:
        raise bad_parameter("limit", "must be at least 1")
    return min(value, maximum)


def parse_offset(ctx: Context) -> int:
    text = param(ctx, "offset")
    if text is None:
        return 0
    if not re.fullmatch(r"\s*\+?\d{1,18}\s*", text):
        raise bad_parameter("offset", f"{text!r} is not an integer of 0 or more")
    return int(text)


def parse_bbox(ctx: Context, name: str = "bbox") -> tuple[float, ...] | None:
    """bbox: 4 numbers (x0,y0,x1,y1) or 6 (with heights: x0,y0,z0,x1,y1,z1, returned as the 4);
    anything else is a 400. The axis order is the bbox-crs's east-first order (CRS84 by default)."""
    text = param(ctx, name)
    if text is None:
        return None
    parts = text.split(",")
    if len(parts) not in (4, 6):
        raise bad_parameter(name, f"4 or 6 numbers separated by commas, not {len(parts)}")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        raise bad_parameter(name, f"{text!r} holds something that is not a number") from None
    if not all(math.isfinite(n) for n in numbers):
        raise bad_parameter(name, "every number must be finite")
    if len(numbers) == 6:
        numbers = [numbers[0], numbers[1], numbers[3], numbers[4]]
    if numbers[1] > numbers[3]:
        raise bad_parameter(name, "the lower corner's y is above the upper corner's")
    return tuple(numbers)


def _instant(text: str, name: str, end: bool) -> datetime | None:
    text = text.strip()
    if text in ("..", ""):
        return None
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            day = datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
            return day.replace(hour=23, minute=59, second=59, microsecond=999999) if end else day
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise bad_parameter(name, f"{text!r} is not an RFC 3339 date or date-time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def parse_datetime(ctx: Context, name: str = "datetime") -> tuple[datetime | None, datetime | None] | None:
    """datetime: an instant ("2020-01-02", "2020-01-02T03:04:05Z") or an interval with "/" and
    open ends ("..", or empty): (start, end), in UTC; None when absent. A day as an instant means
    the whole day."""
    text = param(ctx, name)
    if text is None:
        return None
    if "/" in text:
        first, _, second = text.partition("/")
        if "/" in second:
            raise bad_parameter(name, "an interval has two ends")
        start, end = _instant(first, name, False), _instant(second, name, True)
        if start is None and end is None and first.strip() == second.strip() == "":
            raise bad_parameter(name, "an interval needs at least one end")
        if start and end and start > end:
            raise bad_parameter(name, "the interval ends before it starts")
        return start, end
    if text.strip() == "..":
        raise bad_parameter(name, "'..' is only an end of an interval")
    return _instant(text, name, False), _instant(text, name, True)


def link(href: str, rel: str, media: str | None = None, title: str | None = None, **extra: Any) -> dict[str, Any]:
    """A link object of the OGC APIs."""
    out: dict[str, Any] = {"href": href, "rel": rel}
    if media:
        out["type"] = media
    if title:
        out["title"] = title
    out.update(extra)
    return out


def self_links(ctx: Context, path: str, formats: tuple[str, ...], current: str, titles: dict[str, str] | None = None,
               keep: list[tuple[str, str]] | None = None) -> list[dict[str, Any]]:
    """``self`` for the format answered and ``alternate`` for the others, at ``path`` (under the
    base URL) with the query parameters ``keep`` (f is set for each)."""
    out = []
    for f in formats:
        query = urlencode([*(keep or []), ("f", f)])
        out.append(link(f"{ctx.base}{path}?{query}", "self" if f == current else "alternate", MEDIA[f],
                        (titles or {}).get(f, f"This document as {f.upper()}")))
    return out


def paging_links(ctx: Context, path: str, offset: int, limit: int, returned: int, matched: int | None,
                 media: str = "application/geo+json", f: str | None = None) -> list[dict[str, Any]]:
    """``next`` and ``prev`` for a page of items, keeping the request's other parameters."""
    kept = [(k, v) for k, v in ctx.params if k not in ("offset", "limit", "f")]
    if f:
        kept.append(("f", f))
    out = []
    more = returned == limit if matched is None else offset + returned < matched
    if more:
        out.append(link(f"{ctx.base}{path}?{urlencode([*kept, ('limit', limit), ('offset', offset + limit)])}",
                        "next", media, "Next page"))
    if offset > 0:
        out.append(link(f"{ctx.base}{path}?{urlencode([*kept, ('limit', limit), ('offset', max(0, offset - limit))])}",
                        "prev", media, "Previous page"))
    return out


def timestamp() -> str:
    """Now, as the items' timeStamp."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def html_page(ctx: Context, title: str, body: str, head: str = "") -> Response:
    """A plain HTML page under the site's CSP (no script runs; the web UI's stylesheet): the
    HTML answers of the OGC APIs. ``body`` and ``head`` are HTML the caller escaped."""
    page = (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{esc(title)}</title><link rel=\"icon\" href=\"/ui/img/logo.svg\" type=\"image/svg+xml\"><link rel=\"stylesheet\" href=\"/ui/app.css\">{head}</head>"
        "<body class=\"ogcapi-page\"><header class=\"site-header\"><a class=\"brand\" href=\"/\">Catalogue</a>"
        f" <nav aria-label=\"OGC API\"><a href=\"{PREFIX}/\">OGC API</a></nav></header>"
        f"<main id=\"main\" class=\"ogcapi\"><h1>{esc(title)}</h1>{body}</main></body></html>"
    )
    return Response(page, media_type=MediaType.HTML)


def json_answer(content: Any, f: str = "json", headers: dict[str, str] | None = None) -> Response:
    """A JSON answer with the media type of ``f``."""
    return Response(content, media_type=MEDIA[f], headers=headers)
