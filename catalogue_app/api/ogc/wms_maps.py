"""Maps of the catalogue as WMS layers: ``catalogue:map_<pk>`` (or ``map_<pk>``) in LAYERS stands
for the map's visible layers, bottom first, each with its opacity and current style.

A layer whose dataset the caller may not see, that has no dataset (a layer from elsewhere), or
whose style is gone is left out or drawn with its default style: the map shows what the caller
may see, as its page does. An unknown or hidden map is LayerNotDefined, like any layer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from catalogue_app.api.ogc.common import OgcError, OgcRequest
from catalogue_app.reads import ogc as ogc_reads

MAP_NAME = re.compile(r"^(?:catalogue:)?map_(\d{1,18})$")


@dataclass(frozen=True)
class MapPart:
    """One layer of a map, as GetMap draws it."""

    alternate: str
    style: str | None
    opacity: float


def map_id(name: str) -> int | None:
    found = MAP_NAME.match(name.strip())
    return int(found.group(1)) if found else None


def map_parts(req: OgcRequest, name: str, locator: str) -> list[MapPart]:
    """What a map named in LAYERS draws; raises LayerNotDefined for an unknown or hidden map."""
    layers = req.ctx.db.read_sync(ogc_reads.map_layers, req.ctx.viewer, map_id(name))
    if layers is None:
        raise OgcError("LayerNotDefined", f'Unknown layer "{name}".', locator)
    parts = []
    for layer in layers:
        if not layer["visibility"] or not layer["alternate"] or layer["opacity"] <= 0:
            continue
        try:
            req.layer(layer["alternate"], locator, code="LayerNotDefined")
        except OgcError:
            continue  # a dataset the caller may not see: the map is drawn without it
        parts.append(MapPart(layer["alternate"], layer["current_style"], min(float(layer["opacity"]), 1.0)))
    return parts
