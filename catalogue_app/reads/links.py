"""The ``links`` of a resource: its metadata documents, its page, its thumbnail, and for datasets
with data the OGC services, map images, the legend and the data in several formats; for documents
the file or the remote address.

Every URL is absolute, from the request's base. Links are built from the resource row and its
LinkFacts (store/records.py), which a page loads in one query, so building them costs no query.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import msgspec

from catalogue_app.store.documents import mime_type
from catalogue_app.store.records import NO_FACTS, LinkFacts

ISO_NS = "http://www.isotc211.org/2005/gmd"
CSW_NS = "http://www.opengis.net/cat/csw/2.0.2"
ATOM_NS = "http://www.w3.org/2005/Atom"
# (name, output schema): the records the catalogue endpoint (api/ogc/csw/endpoint.py) writes
METADATA_FORMATS = (("ISO", ISO_NS), ("Dublin Core", CSW_NS), ("Atom", ATOM_NS))
UPLOADED_ISO = "ISO (uploaded)"
DCAT = "DCAT"
DATA_SUBTYPES = ("vector", "vector_time", "raster")
UNKNOWN_SRID = "EPSG:404000"
IMAGE_SIZE = 1024  # the longer side of the PNG and JPEG links' images
GML32 = "application/gml+xml; version=3.2"
PLAIN = re.compile(r"[A-Za-z0-9_.:-]*")  # what query values usually hold, and need no quoting
GML32_QUOTED = quote(GML32, safe="")
SCHEMAS = {schema: quote(schema, safe="") for _, schema in METADATA_FORMATS}


class Link(msgspec.Struct):
    extension: str
    link_type: str
    name: str
    mime: str
    url: str
    extras: dict[str, Any] = msgspec.field(default_factory=dict)  # clients read it on every link


def value(text: str) -> str:
    """A query value, quoted only when it needs it (quoting costs more than the rest of a link)."""
    return text if PLAIN.fullmatch(text) else quote(text, safe=":")


def absolute(base: str, url: str | None) -> str | None:
    """A stored URL as clients read it: one starting with "/" is put under the base."""
    if url and url.startswith("/") and not url.startswith("//"):
        return base + url
    return url


def resource_links(row: dict[str, Any], facts: LinkFacts | None, base: str, detail_url: str,
                   thumbnail_url: str | None, download_url: str | None,
                   remote: list[Any] | None = None) -> list[Link]:
    """The links of one resource (``row`` as resource_schema reads it); ``remote``: the links
    it brought from the remote it was harvested from (store/remote_layers.links_of)."""
    facts = facts or NO_FACTS
    uuid = row["uuid"]
    start = (f"{base}/catalogue/csw?service=CSW&version=2.0.2&request=GetRecordById&id={value(uuid)}"
             "&elementsetname=full&outputschema=")
    links = [Link("xml", "metadata", name, "text/xml", start + SCHEMAS[schema]) for name, schema in METADATA_FORMATS]
    # DCAT-AP 3 as JSON-LD (api/linked_data.py), named by its format as the CSW records are
    links.append(Link("jsonld", "metadata", DCAT, "application/ld+json", f"{base}/dcat/resources/{uuid}"))
    if facts.has_iso:
        links.append(uploaded_iso_link(base, row["id"]))
    # named by the layer for datasets, as GeoNode's; a fixed name otherwise: a title could be "ISO"
    links.append(Link("html", "html", row["alternate"] or "Detail page", "text/html", detail_url))
    if thumbnail_url:
        links.append(Link(_extension(thumbnail_url, "png"), "image", "Thumbnail", _image_mime(thumbnail_url),
                          thumbnail_url))
    kind = row["resource_type"]
    if kind == "dataset" and facts.remote_url:
        links += remote_dataset_links(row, facts)
    elif kind == "dataset" and facts.has_data and row["alternate"] and row["subtype"] in DATA_SUBTYPES:
        links += dataset_links(row, base, download_url)
    elif kind == "document":
        links += document_links(facts, download_url)
    elif kind == "map":
        links += map_links(row, base)
    if remote:
        seen = {link.url for link in links}
        for r in remote:
            if r["url"] not in seen:
                seen.add(r["url"])
                links.append(Link(r["extension"] or "", r["link_type"] or "url", r["name"] or "", r["mime"] or "",
                                  r["url"]))
    return links


def joined(url: str, query: str) -> str:
    """``query`` added to a service address that may hold a query of its own."""
    if "?" not in url:
        return f"{url}?{query}"
    return url + ("" if url.endswith(("?", "&")) else "&") + query


def remote_dataset_links(row: dict[str, Any], facts: LinkFacts) -> list[Link]:
    """A dataset whose data stay on a remote WMS: that service, an image of the layer and its
    legend from it, and its download address there when it has one (no WFS or WCS here: the
    data are not here to serve)."""
    url, layer = facts.remote_url or "", facts.remote_layer or ""
    links = [Link("html", "OGC:WMS", layer, "OGC:WMS", url)]
    getmap = _getmap(row, "", value(layer))
    if getmap:
        links.append(Link("png", "image", "PNG", "image/png",
                          joined(url, getmap.lstrip("?") + "&format=image%2Fpng&transparent=true")))
    links.append(Link("png", "image", "Legend", "image/png",
                      joined(url, "service=WMS&version=1.1.1&request=GetLegendGraphic&format=image%2Fpng"
                              f"&width=20&height=20&layer={value(layer)}")))
    if facts.remote_download:
        extension = _extension(facts.remote_download, "")
        links.append(Link(extension, "data", "Download", DATA_MIMES.get(extension, "application/octet-stream"),
                          facts.remote_download))
    return links


DATA_MIMES = {"zip": "application/zip", "tif": "image/tiff", "tiff": "image/tiff", "gpkg": "application/geopackage+sqlite3",
              "json": "application/json", "geojson": "application/geo+json", "csv": "text/csv",
              "kml": "application/vnd.google-earth.kml+xml"}


def map_links(row: dict[str, Any], base: str) -> list[Link]:
    """A map is a layer of the catalogue's WMS (catalogue:map_<pk>: its visible layers, in
    order); an image of it over its box, when it has one."""
    ows = f"{base}/geoserver/ows"
    name = f"catalogue:map_{row['id']}"
    links = [Link("html", "OGC:WMS", name, "OGC:WMS", ows)]
    getmap = _getmap(row, ows, value(name))
    if getmap:
        links.append(Link("png", "image", "PNG", "image/png", f"{getmap}&format=image%2Fpng"))
    return links


def uploaded_iso_link(base: str, rid: int) -> Link:
    """The ISO XML document uploaded for the resource, as it was sent."""
    return Link("xml", "metadata", UPLOADED_ISO, "text/xml", f"{base}/api/v2/resources/{rid}/iso_metadata_xml")


def dataset_links(row: dict[str, Any], base: str, download_url: str | None) -> list[Link]:
    """OGC services, map images, legend and data of a dataset with data."""
    alternate = row["alternate"]
    ows = f"{base}/geoserver/ows"
    layer = value(alternate)
    raster = row["subtype"] == "raster"
    links = [Link("html", "OGC:WMS", alternate, "OGC:WMS", ows)]
    links.append(Link("html", "OGC:WCS", alternate, "OGC:WCS", ows) if raster
                 else Link("html", "OGC:WFS", alternate, "OGC:WFS", ows))
    getmap = _getmap(row, ows, layer)
    if getmap:
        links.append(Link("png", "image", "PNG", "image/png", f"{getmap}&format=image%2Fpng"))
        links.append(Link("jpg", "image", "JPEG", "image/jpeg", f"{getmap}&format=image%2Fjpeg"))
    links.append(Link("png", "image", "Legend", "image/png",
                      f"{ows}?service=WMS&version=1.3.0&request=GetLegendGraphic&format=image%2Fpng"
                      f"&sld_version=1.1.0&width=20&height=20&layer={layer}"))
    if raster:
        if download_url:
            links.append(Link("tif", "data", "GeoTIFF", "image/tiff", download_url))
        coverage = value(alternate.replace(":", "__"))
        links.append(Link("tif", "data", "GeoTIFF (WCS)", "image/tiff",
                          f"{ows}?service=WCS&version=2.0.1&request=GetCoverage&coverageId={coverage}"
                          "&format=image%2Ftiff"))
    else:
        if download_url:
            links.append(Link("zip", "data", "Zipped Shapefile", "application/zip", download_url))
        getfeature = f"{ows}?service=WFS&version=2.0.0&request=GetFeature&typeNames={layer}&outputFormat="
        links.append(Link("json", "data", "GeoJSON", "application/json", f"{getfeature}application%2Fjson"))
        links.append(Link("gml", "data", "GML 3.2", GML32, getfeature + GML32_QUOTED))
    return links


def _getmap(row: dict[str, Any], ows: str, layer: str) -> str | None:
    """A WMS 1.1.1 GetMap of the whole dataset, without its format; None without an extent.
    A dataset in a CRS without an EPSG code is drawn in EPSG:4326."""
    srs = row["srid"]
    box = (row["bbox_x0"], row["bbox_y0"], row["bbox_x1"], row["bbox_y1"])
    if not srs or srs == UNKNOWN_SRID or None in box:
        srs, box = "EPSG:4326", (row["ll_x0"], row["ll_y0"], row["ll_x1"], row["ll_y1"])
    if None in box:
        return None
    x0, y0, x1, y1 = box
    dx, dy = x1 - x0, y1 - y0
    if dx <= 0 or dy <= 0:  # a single point or a line: a little room around it
        pad = max(dx, dy, 0.0) * 0.05 or 0.01
        x0, y0, x1, y1 = x0 - pad, y0 - pad, x1 + pad, y1 + pad
        dx, dy = x1 - x0, y1 - y0
    if dx >= dy:
        width, height = IMAGE_SIZE, max(1, round(IMAGE_SIZE * dy / dx))
    else:
        width, height = max(1, round(IMAGE_SIZE * dx / dy)), IMAGE_SIZE
    return (f"{ows}?service=WMS&version=1.1.1&request=GetMap&layers={layer}&styles=&srs={value(srs)}"
            f"&bbox={x0!r},{y0!r},{x1!r},{y1!r}&width={width}&height={height}")


def document_links(facts: LinkFacts, download_url: str | None) -> list[Link]:
    """A remote document's address, or the uploaded file (documents made without either have none)."""
    if facts.doc_url:
        return [Link(facts.extension or "", "original", "Remote document",
                     mime_type(facts.extension) or "text/html", facts.doc_url)]
    if facts.file_name and download_url:
        return [Link(facts.extension or "", "original", facts.file_name,
                     facts.mime_type or "application/octet-stream", download_url)]
    return []


def _extension(url: str, default: str) -> str:
    tail = url.split("?", 1)[0].rsplit("/", 1)[-1]
    return tail.rsplit(".", 1)[-1].lower() if "." in tail else default


def _image_mime(url: str) -> str:
    ext = _extension(url, "png")
    return {"jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
            "svg": "image/svg+xml"}.get(ext, "image/png")
