"""The WMS harvester (GeoNode's type geonode.harvesting.harvesters.wms.OgcWmsHarvester): each
named layer of a WMS's capabilities becomes a remote dataset, whose maps the remote keeps
drawing (see store/remote_layers.py).

The capabilities are fetched with the harvesting HTTP client (time and size limits) and read
with OWSLib, in WMS 1.3.0, or 1.1.1 when the server does not answer 1.3.0 readably. One
worker reads them once; harvest() of many layers uses that copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import msgspec

from catalogue_app.harvesting import http as http_
from catalogue_app.harvesting.types import Harvested, HarvestError, Link, RemoteItem, RemoteLayer

THUMBNAIL_SIZE = (240, 180)
WMS_KEYS = {"service", "request", "version", "layers", "layer", "styles", "srs", "crs", "bbox", "width", "height",
            "format", "transparent"}


class Config(msgspec.Struct, forbid_unknown_fields=True):
    """What GeoNode's WMS harvester takes: a filter on the layers' titles."""

    dataset_title_filter: str | None = None  # title contains it, case ignored


def service_base(url: str) -> str:
    """A WMS address without the WMS request keys of its query (other keys, a MapServer
    ``map=`` say, are kept)."""
    parts = urlsplit(url)
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() not in WMS_KEYS]
    return urlunsplit(parts._replace(query=urlencode(kept)))


def with_query(url: str, params: dict[str, str]) -> str:
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode(params)) if q)
    return urlunsplit(parts._replace(query=query))


class WmsWorker:
    type_name: ClassVar[str] = "geonode.harvesting.harvesters.wms.OgcWmsHarvester"
    Config: ClassVar[type[msgspec.Struct]] = Config

    def __init__(self, remote_url: str, config: Config, http: Any):
        self.remote_url = remote_url.strip()
        self.config = config
        self.http = http
        self.base = service_base(self.remote_url)
        self._service: Any = None

    # -- reading the capabilities --------------------------------------------------------------
    def capabilities_url(self, version: str = "1.3.0") -> str:
        return with_query(self.base, {"service": "WMS", "request": "GetCapabilities", "version": version})

    def service(self) -> Any:
        """OWSLib's WebMapService of the remote's capabilities; HarvestError when it cannot be
        read (the remote's answer, or why it is no WMS capabilities document)."""
        if self._service is not None:
            return self._service
        from owslib.wms import WebMapService

        problem = ""
        for version in ("1.3.0", "1.1.1"):
            body = http_.get_bytes(self.http, self.base, {"service": "WMS", "request": "GetCapabilities",
                                                           "version": version})
            try:
                self._service = WebMapService(self.base, version=version, xml=body)
                return self._service
            except Exception as exc:  # OWSLib raises whatever its parser meets
                problem = str(exc) or type(exc).__name__
        raise HarvestError(f"{self.remote_url} gave no WMS capabilities that can be read: {problem}")

    def getmap_url(self) -> str:
        """Where the remote says GetMap is asked (its own address when it does not say)."""
        try:
            methods = self.service().getOperationByName("GetMap").methods
            url = next((m["url"] for m in methods if m.get("type", "").lower() == "get" and m.get("url")), None)
        except (KeyError, AttributeError, StopIteration):
            url = None
        return service_base(url) if url else self.base

    def _layers(self) -> Iterator[Any]:
        for name, layer in self.service().contents.items():
            if name and getattr(layer, "name", None):
                yield layer

    def _wanted(self, title: str) -> bool:
        wanted = (self.config.dataset_title_filter or "").strip().casefold()
        return not wanted or wanted in title.casefold()

    # -- the worker's three questions -------------------------------------------------------------
    def available(self) -> bool:
        try:
            self._service = None
            self.service()
            return True
        except HarvestError:
            return False

    def offered(self) -> Iterator[RemoteItem]:
        for layer in self._layers():
            title = layer.title or layer.name
            if self._wanted(title):
                yield RemoteItem(unique_identifier=layer.name, title=title, resource_type="dataset",
                                 url=self.capabilities_url())

    def harvest(self, item: RemoteItem) -> Harvested:
        layer = self.service().contents.get(item.unique_identifier)
        if layer is None or not getattr(layer, "name", None):
            raise HarvestError(f"{self.remote_url} offers no layer {item.unique_identifier!r} any more.")
        box = _wgs84_box(layer)
        getmap = self.getmap_url()
        thumbnail = None
        if box is not None:
            width, height = THUMBNAIL_SIZE
            thumbnail = with_query(getmap, {
                "service": "WMS", "version": "1.1.1", "request": "GetMap", "layers": layer.name, "styles": "",
                "srs": "EPSG:4326", "bbox": ",".join(repr(v) for v in box), "width": str(width),
                "height": str(height), "format": "image/png", "transparent": "true"})
        keywords = [k.strip() for k in (layer.keywords or []) if isinstance(k, str) and k.strip()]
        return Harvested(
            resource_type="dataset",
            values={"title": layer.title or layer.name, "abstract": layer.abstract or ""},
            keywords=keywords, ll_bbox=list(box) if box else None, thumbnail_url=thumbnail,
            links=[Link(url=self.capabilities_url(), name=layer.name, mime="OGC:WMS", link_type="OGC:WMS",
                        extension="html")],
            data=RemoteLayer(service_url=getmap, layer_name=layer.name, service_type="WMS"))


def _wgs84_box(layer: Any) -> tuple[float, float, float, float] | None:
    """The layer's longitude/latitude box (its parent's when it gives none)."""
    while layer is not None:
        box = getattr(layer, "boundingBoxWGS84", None)
        if box and len(box) >= 4 and None not in box[:4]:
            try:
                x0, y0, x1, y1 = (float(v) for v in box[:4])
            except (TypeError, ValueError):
                return None
            return x0, y0, x1, y1
        layer = getattr(layer, "parent", None)
    return None
