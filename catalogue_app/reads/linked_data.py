"""Linked data of the resources: schema.org for pages that search engines read, and DCAT-AP 3
for portals (reads/dcat.py)."""

from __future__ import annotations

import math
from typing import Any
from xml.sax.saxutils import escape

from catalogue_app.store import Connection
from catalogue_app.store import sitemap as store
from catalogue_app.store.db import kept

SCHEMA_TYPES = {"dataset": "Dataset", "document": "DigitalDocument", "map": "Map"}  # others: CreativeWork


def _name(user: dict[str, Any]) -> str:
    return (f"{user.get('first_name') or ''} {user.get('last_name') or ''}".strip() or user.get("username")
            or user.get("organization") or "")


def schema_org(resource: dict[str, Any], base: str, *, licence: dict[str, Any] | None = None,
               publisher: str | None = None) -> dict[str, Any]:
    """The schema.org JSON-LD object (a Dataset, a DigitalDocument, a Map, else a CreativeWork)
    of one resource, given as the API renders it (the body's "resource"), with absolute
    addresses under ``base``. ``licence`` ({"name", "url"}) and ``publisher`` (a name) say more
    where the caller knows them; without them the licence is named by its identifier and the
    publisher by the resource's publisher contact."""
    if not resource or not resource.get("uuid"):
        return {}
    kind = resource.get("resource_type") or ""
    abstract = resource.get("raw_abstract")
    out: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": SCHEMA_TYPES.get(kind, "CreativeWork"),
        "@id": f"{base}/dcat/resources/{resource['uuid']}",
        "name": resource.get("title") or "",
        "description": abstract if abstract and abstract != "None" else (resource.get("title") or ""),
        "url": resource.get("detail_url") or f"{base}/",
        "identifier": [resource["uuid"]] + ([f"https://doi.org/{resource['doi']}"] if resource.get("doi") else []),
    }
    words = [k["name"] for k in resource.get("keywords") or []] + [t["name"] for t in resource.get("tkeywords") or []]
    if words:
        out["keywords"] = list(dict.fromkeys(words))
    chosen = resource.get("license")
    if licence and (licence.get("url") or licence.get("name")):
        out["license"] = licence.get("url") or licence["name"]
    elif chosen:
        out["license"] = chosen["identifier"]
    creators = resource.get("originator") or ([resource["owner"]] if resource.get("owner") else [])
    if creators:
        out["creator"] = [{"@type": "Person", "name": _name(user)} for user in creators]
    publishers = resource.get("publisher") or []
    if publisher:
        out["publisher"] = {"@type": "Organization", "name": publisher}
    elif publishers:
        out["publisher"] = {"@type": "Person", "name": _name(publishers[0])}
    for key, field in (("dateCreated", "created"), ("dateModified", "last_updated")):
        if resource.get(field):
            out[key] = resource[field]
    if resource.get("date_type") == "publication" and resource.get("date"):
        out["datePublished"] = resource["date"]
    if resource.get("thumbnail_url"):
        out["thumbnailUrl"] = resource["thumbnail_url"]
    box = resource.get("ll_bbox_polygon")
    if box:
        ring = box["coordinates"][0]
        xs, ys = [p[0] for p in ring], [p[1] for p in ring]
        if all(math.isfinite(v) for v in xs + ys):
            # GeoShape's box: the south-west and north-east corners, latitude first
            out["spatialCoverage"] = {"@type": "Place", "geo": {
                "@type": "GeoShape", "box": f"{min(ys)} {min(xs)} {max(ys)} {max(xs)}"}}
    start, end = resource.get("temporal_extent_start"), resource.get("temporal_extent_end")
    if start or end:
        out["temporalCoverage"] = f"{start or '..'}/{end or '..'}"
    if kind == "dataset":
        downloads = [{"@type": "DataDownload", "name": link["name"], "encodingFormat": link["mime"],
                      "contentUrl": link["url"]}
                     for link in resource.get("links") or [] if link.get("link_type") in ("data", "original")]
        if downloads:
            out["distribution"] = downloads
    elif kind == "document":
        files = [link for link in resource.get("links") or [] if link.get("link_type") == "original"]
        if files:
            out["encodingFormat"] = files[0]["mime"]
            out["contentUrl"] = files[0]["url"]
    return out


# -- the sitemap ----------------------------------------------------------------------------------
PER_FILE = 50_000  # addresses one sitemap file may hold (sitemaps.org)
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def record_page(base: str, uuid: str) -> str:
    """The page of a resource that search engines read without running scripts: its record's
    HTML (OGC API - Records), which carries its schema.org JSON-LD and links to the web UI."""
    return f"{base}/ogcapi/collections/metadata:main/items/{uuid}?f=html"


def sitemap_files(conn: Connection) -> int:
    """How many sitemap files the public resources fill (at least one)."""
    return max(1, math.ceil(store.public_count(conn) / PER_FILE))


def sitemap(conn: Connection, base: str, number: int | None) -> bytes | None:
    """/sitemap.xml (``number`` None): the addresses of the public resources' pages, or past
    PER_FILE of them an index of the files /sitemaps/{n}.xml; file ``number`` (from 1), None past
    the last. Only what anyone may see is listed, whoever asks. /sitemap.xml is kept until the
    data change (the files, up to some 8 MB each, are read once a crawl and not kept)."""
    here = kept(conn) if number is None else {}
    key = ("sitemap", base)
    found = here.get(key)
    if found is not None:
        return found
    files = sitemap_files(conn)
    if number is not None and not 1 <= number <= files:
        return None
    if number is None and files > 1:
        entries = "".join(f"<sitemap><loc>{escape(base)}/sitemaps/{n}.xml</loc></sitemap>"
                          for n in range(1, files + 1))
        found = (f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{SITEMAP_NS}">'
                 f"{entries}</sitemapindex>\n").encode()
    else:
        rows = store.public_page(conn, PER_FILE, ((number or 1) - 1) * PER_FILE)
        entries = "".join(f"<url><loc>{escape(record_page(base, row['uuid']))}</loc>"
                          f"{_lastmod(row['last_updated'])}</url>" for row in rows)
        found = (f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">'
                 f"{entries}</urlset>\n").encode()
    here[key] = found
    return found


def _lastmod(stamp: str | None) -> str:
    """A W3C date-time of the last change, to the second ("2026-01-02T03:04:05Z")."""
    if not stamp or len(stamp) < 19:
        return ""
    return f"<lastmod>{escape(stamp[:19])}Z</lastmod>"
