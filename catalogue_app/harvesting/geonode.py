"""The GeoNode harvester: reads another catalogue's API v2 (a GeoNode, or another instance of
this one), anonymously or with a token.

It offers the remote's datasets and documents (as GeoNode's harvester does; maps and geoapps
refer to layers of their own catalogue), filtered as its configuration says. A harvested
dataset is shown through the remote's WMS, or, with ``copy_data`` and when the remote lets the
caller download it, its data are copied here; a document points at the remote's file, or its
file is copied. Metadata, keywords, category, extent, thumbnail and the remote's links come along.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import msgspec

from catalogue_app.harvesting import http as remote
from catalogue_app.harvesting.types import (
    DataFiles,
    DocumentFile,
    Harvested,
    HarvestError,
    Link,
    RemoteDocument,
    RemoteItem,
    RemoteLayer,
)

PAGE_SIZE = 100
MAX_PAGES = 10_000
VALUES = ("title", "abstract", "attribution", "purpose", "edition", "constraints_other", "supplemental_information",
          "data_quality_statement", "date", "date_type", "language", "maintenance_frequency", "doi")


class Config(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    harvest_documents: bool = True
    harvest_datasets: bool = True
    resource_title_filter: str | None = None
    start_date_filter: str | None = None
    end_date_filter: str | None = None
    keywords_filter: list[str] | None = None
    categories_filter: list[str] | None = None
    copy_data: bool = False          # copy datasets' data and documents' files when the remote allows it
    token: str | None = None         # a token of the remote's, for what it shows its users only


def _api(remote_url: str) -> str:
    """The remote's API v2 address from what the harvester was given (the site, or its API)."""
    url = remote_url.rstrip("/")
    for tail in ("/api/v2", "/api"):
        if url.endswith(tail):
            url = url[: -len(tail)]
    return url + "/api/v2"


class GeonodeWorker:
    type_name = "geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker"
    Config = Config

    def __init__(self, remote_url: str, config: Config, http: Any):
        self.api = _api(remote_url)
        self.config = config
        self.http = http
        if config.token:
            http.headers["Authorization"] = f"Bearer {config.token}"

    def available(self) -> bool:
        body = remote.get_json(self.http, f"{self.api}/")
        return isinstance(body, dict)

    def _filters(self) -> list[tuple[str, str]]:
        c = self.config
        types = [t for t, wanted in (("dataset", c.harvest_datasets), ("document", c.harvest_documents)) if wanted]
        params = [("filter{resource_type.in}", t) for t in types]
        if c.resource_title_filter:
            params.append(("filter{title.icontains}", c.resource_title_filter))
        if c.start_date_filter:
            params.append(("filter{date.gte}", c.start_date_filter))
        if c.end_date_filter:
            params.append(("filter{date.lte}", c.end_date_filter))
        params += [("filter{keywords.name.in}", k) for k in c.keywords_filter or []]
        params += [("filter{category.identifier.in}", k) for k in c.categories_filter or []]
        return params

    def offered(self) -> Iterator[RemoteItem]:
        if not (self.config.harvest_datasets or self.config.harvest_documents):
            return
        url: str | None = f"{self.api}/resources"
        params: list[tuple[str, str]] | None = [*self._filters(), ("page_size", str(PAGE_SIZE)), ("page", "1"),
                                                ("ordering", "pk")]
        pages_read: set[str] = set()
        for _ in range(MAX_PAGES):
            if not url or url in pages_read:  # the last page, or a page read already (a loop)
                return
            pages_read.add(url if params is None else f"{url}?{params}")
            body = remote.get_json(self.http, url, params)
            if not isinstance(body, dict) or not isinstance(body.get("resources"), list):
                raise HarvestError(f"{url} did not answer with a list of resources.")
            for item in body["resources"]:
                if not isinstance(item, dict) or not item.get("uuid") or item.get("resource_type") not in (
                        "dataset", "document"):
                    continue
                yield RemoteItem(unique_identifier=str(item["uuid"])[:2000], title=_text(item.get("title")),
                                 resource_type=item["resource_type"], last_updated=_string(item.get("last_updated")),
                                 url=f"{self.api}/resources/{item.get('pk')}")
            url, params = (body.get("links") or {}).get("next"), None
            if url and urlsplit(url).netloc != urlsplit(self.api).netloc:  # a page link elsewhere: its path here
                parts = urlsplit(url)
                url = f"{self.api.split('/api/v2')[0]}{parts.path}?{parts.query}"

    def harvest(self, item: RemoteItem) -> Harvested:
        url = item.url or f"{self.api}/resources?filter{{uuid}}={item.unique_identifier}"
        body = remote.get_json(self.http, url)
        record = body.get("resource") if isinstance(body, dict) else None
        if not isinstance(record, dict):
            found = body.get("resources") if isinstance(body, dict) else None
            record = found[0] if isinstance(found, list) and found else None
        if not isinstance(record, dict) or str(record.get("uuid")) != item.unique_identifier:
            raise HarvestError(f"{url} no longer has the record {item.unique_identifier}.")
        kind = record.get("resource_type")
        if kind == "dataset":
            detail = remote.get_json(self.http, f"{self.api}/datasets/{record.get('pk')}")
            if isinstance(detail, dict) and isinstance(detail.get("dataset"), dict):
                record = {**record, **detail["dataset"]}
        return Harvested(resource_type=kind if kind in ("dataset", "document") else "document",
                         uuid=item.unique_identifier, values=_values(record), keywords=_keywords(record),
                         category=(record.get("category") or {}).get("identifier")
                         if isinstance(record.get("category"), dict) else None,
                         ll_bbox=_extent(record), thumbnail_url=_string(record.get("thumbnail_url")),
                         links=_links(record), page_url=_page(record), data=self._data(record))

    def _data(self, record: dict[str, Any]) -> Any:
        download = _download(record)
        may_download = "download_resourcebase" in _list(record.get("perms")) and download
        if record.get("resource_type") == "document":
            if self.config.copy_data and may_download and record.get("sourcetype") != "REMOTE":
                return DocumentFile(url=download, name=_document_name(record))
            doc_url = _string(record.get("doc_url")) or download
            return RemoteDocument(doc_url=doc_url) if doc_url else None
        if self.config.copy_data and may_download:
            return DataFiles(urls=[download], names=[f"{_layer_name(record)}.download"])
        wms = _wms(record)
        if wms is None:
            raise HarvestError(f"The remote dataset {record.get('uuid')} has no WMS to be shown through.")
        return RemoteLayer(service_url=wms, layer_name=str(record.get("alternate") or _layer_name(record)),
                           download_url=download if may_download else None)


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _text(value: Any) -> str:
    """A title as the remote lists it: a string, or nothing (never the text of another type)."""
    return value[:255] if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    """A list field of the remote's record; anything else there (a number, a string) is no list."""
    return value if isinstance(value, list) else []


def _values(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record[k] for k in VALUES if isinstance(record.get(k), str)}


def _keywords(record: dict[str, Any]) -> list[str]:
    out = []
    for k in _list(record.get("keywords")):
        name = k.get("name") if isinstance(k, dict) else k
        if isinstance(name, str) and name.strip():
            out.append(name.strip())
    return out


def _extent(record: dict[str, Any]) -> list[float] | None:
    extent = record.get("extent")
    coords = extent.get("coords") if isinstance(extent, dict) else None
    if isinstance(coords, list) and len(coords) == 4 and all(isinstance(v, int | float) for v in coords):
        x0, y0, x1, y1 = (float(v) for v in coords)
        if -180 <= x0 <= x1 <= 180 and -90 <= y0 <= y1 <= 90:
            return [x0, y0, x1, y1]
    return None


def _links(record: dict[str, Any]) -> list[Link]:
    out = []
    for link in _list(record.get("links")):
        if isinstance(link, dict) and isinstance(link.get("url"), str) and link["url"].startswith(("http://", "https://")):
            out.append(Link(url=link["url"][:2000], name=str(link.get("name") or "")[:255],
                            mime=str(link.get("mime") or "")[:100], link_type=str(link.get("link_type") or "url")[:50],
                            extension=str(link.get("extension") or "")[:20]))
    page = _page(record)
    if page:
        out.append(Link(url=page, name="Page on the remote catalogue", mime="text/html", link_type="html"))
    return out[:100]


def _page(record: dict[str, Any]) -> str | None:
    """The record's page on the remote (its ``detail_url``), when it is a web address."""
    page = _string(record.get("detail_url"))
    return page[:2000] if page and page.startswith(("http://", "https://")) else None


def _download(record: dict[str, Any]) -> str | None:
    for item in _list(record.get("download_urls")):
        if isinstance(item, dict) and item.get("default") and isinstance(item.get("url"), str):
            return item["url"]
    return _string(record.get("download_url"))


def _wms(record: dict[str, Any]) -> str | None:
    for link in _list(record.get("links")):
        if isinstance(link, dict) and link.get("link_type") == "OGC:WMS" and isinstance(link.get("url"), str):
            return link["url"]
    return _string(record.get("ows_url"))


def _layer_name(record: dict[str, Any]) -> str:
    name = str(record.get("name") or record.get("alternate") or record.get("uuid") or "layer")
    return name.split(":")[-1]


def _document_name(record: dict[str, Any]) -> str:
    extension = _string(record.get("extension")) or "bin"
    return f"{_layer_name(record)}.{extension}"
