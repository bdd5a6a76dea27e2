"""Harvester types by the name the API gives them (GeoNode's dotted class names where GeoNode
has the type), and their type-specific configuration checked on create and update."""

from __future__ import annotations

import importlib
from typing import Any

import msgspec

WMS = "geonode.harvesting.harvesters.wms.OgcWmsHarvester"
GEONODE = "geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker"
CSW = "catalogue.harvesting.harvesters.csw.CswHarvester"
DEFAULT = WMS

TYPES = {
    WMS: "catalogue_app.harvesting.wms:WmsWorker",
    GEONODE: "catalogue_app.harvesting.geonode:GeonodeWorker",
    CSW: "catalogue_app.harvesting.csw:CswWorker",
}


class BadConfiguration(ValueError):
    pass


def worker_class(type_name: str) -> Any:
    target = TYPES.get(type_name)
    if target is None:
        raise BadConfiguration(f"{type_name!r} is not a harvester type of this catalogue; use one of: "
                               + ", ".join(TYPES) + ".")
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def checked_config(type_name: str, config: Any) -> dict[str, Any]:
    """The configuration with its defaults filled in, or BadConfiguration saying what is wrong."""
    cls = worker_class(type_name)
    try:
        return msgspec.to_builtins(msgspec.convert(config or {}, cls.Config, strict=False))
    except msgspec.ValidationError as exc:
        raise BadConfiguration(str(exc)) from None


def worker(type_name: str, remote_url: str, config: dict[str, Any], http: Any) -> Any:
    cls = worker_class(type_name)
    return cls(remote_url, msgspec.convert(config, cls.Config, strict=False), http)
