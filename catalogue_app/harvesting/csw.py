"""The CSW harvester (type catalogue.harvesting.harvesters.csw.CswHarvester): the records of a
CSW 2.0.2 catalogue, each made a remote dataset (when it names a layer of a WMS), a remote
document (when it links a file to download) or a metadata-only record.

Requests are KVP GETs (GetCapabilities, GetRecords paged with startPosition and maxRecords,
GetRecordById) sent with the harvesting HTTP client (time and size limits, plain errors), and
the records are read with OWSLib's parsers: ISO 19139 (gmd:MD_Metadata) when the server offers
it, Dublin Core (csw:Record) otherwise or when asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, ClassVar, Literal
from urllib.parse import parse_qsl, urlsplit

import httpx
import msgspec
from lxml import etree

from catalogue_app.harvesting import http as http_
from catalogue_app.harvesting.types import (
    Harvested,
    HarvestError,
    Link,
    RemoteDocument,
    RemoteItem,
    RemoteLayer,
)
from catalogue_app.harvesting.wms import service_base

CSW = "http://www.opengis.net/cat/csw/2.0.2"
GMD = "http://www.isotc211.org/2005/gmd"
OWS_NAMESPACES = ("http://www.opengis.net/ows", "http://www.opengis.net/ows/1.1")
PAGE = 50
DATASET_TYPES = {"dataset", "series"}
THUMBNAIL = re.compile(r"thumb|graphicoverview|browse", re.I)
FILE_EXTENSIONS = {"zip", "pdf", "tif", "tiff", "gpkg", "geojson", "json", "csv", "kml", "kmz", "shp", "xlsx", "xls",
                   "doc", "docx", "odt", "ods", "txt", "png", "jpg", "jpeg", "gif", "gz", "7z"}
ISO_TOPICS = {"farming", "biota", "boundaries", "climatologyMeteorologyAtmosphere", "economy", "elevation",
              "environment", "geoscientificInformation", "health", "imageryBaseMapsEarthCover",
              "intelligenceMilitary", "inlandWaters", "location", "oceans", "planningCadastre", "society",
              "structure", "transportation", "utilitiesCommunication"}


class Config(msgspec.Struct, forbid_unknown_fields=True):
    title_filter: str | None = None                   # title contains it, case ignored
    output_schema: Literal["dc", "iso"] = "iso"       # ISO 19139, or Dublin Core (also when ISO is not offered)
    max_records: int | None = None                    # at most this many records offered


def _local(tag: Any) -> str:
    return etree.QName(tag).localname if isinstance(tag, str) else ""


def _parse(url: str, body: bytes) -> etree._Element:
    """The XML of an answer; HarvestError for an exception report (its text) or no XML."""
    try:
        root = etree.fromstring(body, parser=etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
    except etree.XMLSyntaxError:
        raise HarvestError(f"{url} did not answer with XML.") from None
    if _local(root.tag) == "ExceptionReport":
        item = next((e for e in root.iter() if _local(e.tag) == "Exception"), None)
        code = item.get("exceptionCode", "") if item is not None else ""
        text = " ".join(" ".join(e.text or "" for e in root.iter() if _local(e.tag) == "ExceptionText").split())
        raise CswRefusal(code, f"{url} answered {code or 'an exception'}: {text or 'no reason given'}")
    return root


class CswRefusal(HarvestError):
    """The catalogue answered an OWS exception report (``code``: its exceptionCode)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class CswWorker:
    type_name: ClassVar[str] = "catalogue.harvesting.harvesters.csw.CswHarvester"
    Config: ClassVar[type[msgspec.Struct]] = Config

    def __init__(self, remote_url: str, config: Config, http: Any):
        self.remote_url = remote_url.strip()
        self.base = self.remote_url.split("?", 1)[0]
        self.config = config
        self.http = http
        self._schema: str | None = None

    # -- requests -----------------------------------------------------------------------------------
    def _get(self, params: dict[str, str]) -> etree._Element:
        """The XML answer to a KVP request; an exception report (with an error status or not)
        is a CswRefusal saying what the catalogue said."""
        url, params = self.base, {"service": "CSW", "version": "2.0.2", **params}
        try:
            with self.http.stream("GET", url, params=params) as response:
                chunks, size = [], 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > http_.MAX_BODY:
                        raise HarvestError(f"{url} sent more than {http_.MAX_BODY // (1024 * 1024)} MB.")
                    chunks.append(chunk)
                status = response.status_code
        except httpx.TimeoutException:
            raise HarvestError(f"{url} did not answer in time.") from None
        except httpx.HTTPError as exc:
            raise HarvestError(f"{url} could not be reached: {exc}") from None
        body = b"".join(chunks)
        if status >= 400:
            try:
                _parse(url, body)
            except CswRefusal:
                raise
            except HarvestError:
                pass
            raise HarvestError(f"{url} answered {status}.")
        return _parse(url, body)

    def capabilities(self) -> etree._Element:
        root = self._get({"request": "GetCapabilities"})
        if _local(root.tag) != "Capabilities":
            raise HarvestError(f"{self.remote_url} gave no CSW capabilities (its answer is {_local(root.tag)!r}).")
        return root

    def schema(self) -> str:
        """The output schema asked for: ISO when configured and offered, else Dublin Core."""
        if self._schema is None:
            self._schema = CSW
            if self.config.output_schema == "iso":
                offered = self._offered_schemas(self.capabilities())
                self._schema = GMD if not offered or GMD in offered else CSW
        return self._schema

    @staticmethod
    def _offered_schemas(root: etree._Element) -> set[str]:
        found: dict[str, set[str]] = {}
        for op in root.iter():
            if _local(op.tag) == "Operation" and op.get("name") in ("GetRecords", "GetRecordById"):
                for param in op:
                    if _local(param.tag) == "Parameter" and (param.get("name") or "").lower() == "outputschema":
                        found.setdefault(op.get("name"), set()).update(
                            (v.text or "").strip() for v in param.iter() if _local(v.tag) == "Value")
        return found.get("GetRecords") or found.get("GetRecordById") or set()

    def _schema_params(self) -> dict[str, str]:
        if self.schema() == GMD:
            return {"outputSchema": GMD, "typeNames": "gmd:MD_Metadata",
                    "namespace": f"xmlns(gmd={GMD}),xmlns(csw={CSW})"}
        return {"outputSchema": CSW, "typeNames": "csw:Record", "namespace": f"xmlns(csw={CSW})"}

    # -- the worker's three questions -------------------------------------------------------------
    def available(self) -> bool:
        try:
            self.capabilities()
            return True
        except HarvestError:
            return False

    def offered(self) -> Iterator[RemoteItem]:
        wanted = (self.config.title_filter or "").strip().casefold()
        limit = self.config.max_records
        given, start = 0, 1
        while limit is None or given < limit:
            root = self._get({"request": "GetRecords", "resultType": "results", "elementSetName": "full",
                              "startPosition": str(start), "maxRecords": str(PAGE), **self._schema_params()})
            results = next((e for e in root.iter() if _local(e.tag) == "SearchResults"), None)
            if results is None:
                raise HarvestError(f"{self.remote_url} answered GetRecords without search results.")
            records = [e for e in results if isinstance(e.tag, str)]
            for element in records:
                record = read_record(element)
                if not record["identifier"]:
                    continue
                if wanted and wanted not in (record["title"] or "").casefold():
                    continue
                yield RemoteItem(unique_identifier=record["identifier"], title=record["title"] or "",
                                 resource_type=record["kind"], last_updated=record["modified"],
                                 url=self.record_url(record["identifier"]))
                given += 1
                if limit is not None and given >= limit:
                    return
            matched = _int(results.get("numberOfRecordsMatched"))
            following = _int(results.get("nextRecord"))
            if not records or not following or following <= start or (matched is not None and following > matched):
                return
            start = following

    def record_url(self, identifier: str) -> str:
        from urllib.parse import urlencode

        return f"{self.base}?" + urlencode({"service": "CSW", "version": "2.0.2", "request": "GetRecordById",
                                            "id": identifier, "elementSetName": "full",
                                            "outputSchema": self.schema()})

    def harvest(self, item: RemoteItem) -> Harvested:
        root = self._get({"request": "GetRecordById", "id": item.unique_identifier, "elementSetName": "full",
                          "outputSchema": self.schema()})
        element = next((e for e in root if isinstance(e.tag, str)), None)
        if element is None:
            raise HarvestError(f"{self.remote_url} has no record {item.unique_identifier!r} any more.")
        record = read_record(element)
        layer = record["wms"]
        download = record["download"]
        values = {"title": record["title"] or item.title or item.unique_identifier, "abstract": record["abstract"] or ""}
        if record["date"]:
            values["date"] = record["date"]
            if record["date_type"]:
                values["date_type"] = record["date_type"]
        data: RemoteLayer | RemoteDocument | None
        if layer is not None:
            data, kind = RemoteLayer(service_url=layer[0], layer_name=layer[1], download_url=download), "dataset"
        elif download is not None:
            data, kind = RemoteDocument(doc_url=download), "document"
        else:
            data, kind = None, record["kind"]
        return Harvested(resource_type=kind, values=values, keywords=record["keywords"], category=record["category"],
                         ll_bbox=record["bbox"], thumbnail_url=record["thumbnail"], links=record["links"], data=data)


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


# -- reading one record --------------------------------------------------------------------------
def read_record(element: etree._Element) -> dict[str, Any]:
    """The facts of an ISO or Dublin Core record, as the worker uses them."""
    record = _iso(element) if _local(element.tag) == "MD_Metadata" else _dublin_core(element)
    links = record["links"]
    record["wms"] = _wms_layer(links)
    record["download"] = _download(links)
    if record["thumbnail"] is None:
        record["thumbnail"] = next((link.url for link in links if THUMBNAIL.search(
            f"{link.name} {link.link_type} {urlsplit(link.url).path}")), None)
    kind = (record["type"] or "").strip().lower()
    record["kind"] = "dataset" if kind in DATASET_TYPES or record["wms"] is not None else "document"
    return record


def _text(value: Any) -> str | None:
    text = " ".join(str(value).split()) if value is not None else ""
    return text or None


def _box(x0: Any, y0: Any, x1: Any, y1: Any) -> list[float] | None:
    try:
        box = [float(x0), float(y0), float(x1), float(y1)]
    except (TypeError, ValueError):
        return None
    if not (-180.0 <= box[0] <= 180.0 and -180.0 <= box[2] <= 180.0 and -90.0 <= box[1] <= box[3] <= 90.0):
        return None
    return box


def _link_type(protocol: str) -> str:
    upper = protocol.upper()
    if upper.startswith("OGC:"):
        return upper.split("-")[0]
    if "DOWNLOAD" in upper or protocol in ("data", "original"):
        return "data"
    if protocol in ("image", "html", "metadata"):
        return protocol
    return "url"


def _link(url: str | None, protocol: str | None, name: str | None = None, description: str | None = None) -> Link | None:
    url = (url or "").strip()
    if not url.lower().startswith(("http://", "https://")):
        return None
    path = urlsplit(url).path
    extension = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return Link(url=url, name=_text(name) or _text(description) or "", mime=_text(protocol) or "",
                link_type=_link_type(_text(protocol) or ""), extension=extension if len(extension) <= 8 else "")


def _iso(element: etree._Element) -> dict[str, Any]:
    from owslib.iso import MD_Metadata

    md = MD_Metadata(element)
    ident = md.identification[0] if isinstance(md.identification, list) and md.identification else \
        (md.identification if not isinstance(md.identification, list) else None)
    date, date_type = None, None
    for found in getattr(ident, "date", None) or []:
        if getattr(found, "date", None):
            date, date_type = found.date, getattr(found, "type", None)
            break
    keywords: list[str] = []
    for group in getattr(ident, "keywords", None) or []:
        for word in getattr(group, "keywords", None) or []:
            name = _text(getattr(word, "name", word))
            if name and name not in keywords:
                keywords.append(name)
    topics = [t for t in getattr(ident, "topiccategory", None) or [] if t in ISO_TOPICS]
    bbox = getattr(ident, "bbox", None)
    links = []
    for online in (md.distribution.online if md.distribution is not None else []) or []:
        link = _link(online.url, online.protocol, online.name, online.description)
        if link is not None:
            links.append(link)
    overviews = [g for g in getattr(ident, "graphicoverview", None) or [] if g and str(g).startswith("http")]
    return {"identifier": _text(md.identifier), "title": _text(getattr(ident, "title", None)),
            "abstract": getattr(ident, "abstract", None), "date": date or _text(md.datestamp),
            "date_type": date_type if date else None, "modified": _text(md.datestamp), "keywords": keywords,
            "category": topics[0] if topics else None, "type": md.hierarchy or "dataset",
            "bbox": _box(bbox.minx, bbox.miny, bbox.maxx, bbox.maxy) if bbox is not None else None,
            "links": links, "thumbnail": overviews[0] if overviews else None}


def _dublin_core(element: etree._Element) -> dict[str, Any]:
    from owslib.catalogue.csw2 import CswRecord

    rec = CswRecord(element)
    links: list[Link] = []
    for uri in rec.uris or []:
        link = _link(uri.get("url"), uri.get("protocol"), uri.get("name"), uri.get("description"))
        if link is not None:
            links.append(link)
    for ref in rec.references or []:
        link = _link(ref.get("url"), ref.get("scheme"))
        if link is not None and link.url not in {x.url for x in links}:
            links.append(link)
    bbox = None
    if rec.bbox is not None:
        bbox = _box(rec.bbox.minx, rec.bbox.miny, rec.bbox.maxx, rec.bbox.maxy)
    subjects = [s for s in dict.fromkeys(_text(s) for s in rec.subjects or []) if s]
    topics = [s for s in subjects if s in ISO_TOPICS]
    return {"identifier": _text(rec.identifier), "title": _text(rec.title),
            "abstract": rec.abstract or getattr(rec, "description", None), "date": _text(rec.date) or _text(rec.modified),
            "date_type": None, "modified": _text(rec.modified), "keywords": [s for s in subjects if s not in topics],
            "category": topics[0] if topics else None, "type": _text(rec.type), "bbox": bbox, "links": links,
            "thumbnail": None}


def _query(url: str) -> dict[str, str]:
    return {k.lower(): v for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)}


def _wms_layer(links: list[Link]) -> tuple[str, str] | None:
    """(service address, layer name) of the first WMS link that names its layer, by its name
    or a LAYERS key; a WMS link without a name takes the layer a GetMap link of it names."""
    services, named = [], []
    for link in links:
        query = _query(link.url)
        is_wms = link.link_type.startswith("OGC:WMS") or query.get("service", "").upper() == "WMS"
        if not is_wms:
            continue
        base = service_base(link.url)
        layer = (link.name if link.link_type.startswith("OGC:WMS") else "") or query.get("layers", "").split(",")[0]
        if layer:
            named.append((base, layer))
        elif link.link_type.startswith("OGC:WMS"):
            services.append(base)
    for base, layer in named:
        if not services or base in services:
            return base, layer
    return named[0] if named else None


def _download(links: list[Link]) -> str | None:
    """The first link to a file: a download by its protocol, else an address ending in a file
    extension (not a service's)."""
    for link in links:
        if link.link_type == "data" and not _query(link.url).get("service"):
            return link.url
    for link in links:
        if link.extension in FILE_EXTENSIONS and link.link_type not in ("image", "metadata") \
                and not _query(link.url).get("service"):
            return link.url
    return None
