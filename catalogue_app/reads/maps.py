"""Maps and their layers: the map representation on /api/v2/maps (``featuredurl``, ``urlsuffix``,
``maplayers`` in the detail), the layers of a map and the datasets they show, and the layers and
maps that show a dataset.

A layer shows the dataset it names only to those who may view that dataset; to others, and for
layers from elsewhere, its ``dataset`` is null.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from catalogue_app.reads import datasets as dataset_view
from catalogue_app.reads.datasets import Style
from catalogue_app.reads.links import Link
from catalogue_app.reads.resources import Resource, render
from catalogue_app.rules import Viewer
from catalogue_app.services import resources as resources_service
from catalogue_app.store import Connection
from catalogue_app.store import map_layers as store
from catalogue_app.store.datasets import WORKSPACE

BASEMAP = f"{WORKSPACE}:basemap"  # the layer of the built-in basemap in the catalogue's WMS
NOBODY = Viewer()  # the caller an embedded dataset is rendered for: it has no user objects to shape


class LayerDataset(msgspec.Struct):
    """The dataset a map layer shows, as GeoNode embeds it."""

    pk: int
    alternate: str | None
    title: str
    featureinfo_custom_template: str | None
    perms: list[str]
    links: list[Link]
    has_time: bool
    default_style: Style | None
    styles: list[Style]
    ptype: str


class MapLayer(msgspec.Struct):
    pk: int
    extra_params: dict[str, Any]
    current_style: str | None
    name: str
    order: int
    visibility: bool
    opacity: float
    dataset: LayerDataset | None


class DatasetLayer(msgspec.Struct):
    """A layer showing a dataset, as datasets/{pk}/maplayers lists it."""

    pk: int
    name: str
    extra_params: dict[str, Any]
    current_style: str | None
    order: int
    visibility: bool
    opacity: float


class MapRef(msgspec.Struct):
    """A map showing a dataset, as datasets/{pk}/maps lists it."""

    pk: int
    title: str
    detail_url: str
    link: str


class MapItem(Resource, kw_only=True):
    """A map in a list."""

    featuredurl: str
    urlsuffix: str


class Map(MapItem, kw_only=True):
    """A map on its own (detail): with its layers."""

    maplayers: list[MapLayer]


def layer_datasets(conn: Connection, ids: list[int], viewer: Viewer, base: str) -> dict[int, LayerDataset]:
    """The embedded objects of the datasets among ``ids`` that the viewer may view."""
    rows = store.visible_datasets(conn, viewer, ids)
    if not rows:
        return {}
    items = dataset_view.extend(conn, render(conn, list(rows.values()), NOBODY, viewer, base), base, False)
    return {int(d.pk): LayerDataset(pk=int(d.pk), alternate=d.alternate, title=d.title,
                                    featureinfo_custom_template=d.featureinfo_custom_template, perms=d.perms,
                                    links=d.links, has_time=d.has_time, default_style=d.default_style,
                                    styles=d.styles, ptype=d.ptype) for d in items}


def _extra(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def maplayers_of(conn: Connection, map_ids: list[int], viewer: Viewer, base: str) -> dict[int, list[MapLayer]]:
    """The layers of each map, with the datasets the viewer may view."""
    layers = store.layers_of(conn, map_ids)
    shown = layer_datasets(conn, [r["dataset_id"] for rows in layers.values() for r in rows if r["dataset_id"]],
                           viewer, base)
    return {mid: [MapLayer(pk=r["id"], extra_params=_extra(r["extra_params"]), current_style=r["current_style"],
                           name=r["name"], order=r["position"], visibility=bool(r["visibility"]),
                           opacity=r["opacity"], dataset=shown.get(r["dataset_id"]))
                  for r in rows] for mid, rows in layers.items()}


def extend(conn: Connection, items: list[Resource], base: str, detail: bool, viewer: Viewer) -> list[MapItem]:
    """The map fields added to rendered resources (all of them maps); layers in the detail only."""
    layers = maplayers_of(conn, [int(i.pk) for i in items], viewer, base) if detail else {}
    out: list[MapItem] = []
    for item in items:
        fields = msgspec.structs.asdict(item)
        if detail:
            out.append(Map(**fields, featuredurl="", urlsuffix="", maplayers=layers[int(item.pk)]))
        else:
            out.append(MapItem(**fields, featuredurl="", urlsuffix=""))
    return out


def maplayers_payload(conn: Connection, ids: list[int], viewer: Viewer, base: str) -> dict[int, list[Any]]:
    """``maplayers`` as plain JSON for each of ``ids`` (include[]=maplayers on lists)."""
    return {rid: msgspec.to_builtins(layers) for rid, layers in maplayers_of(conn, ids, viewer, base).items()}


# -- one map, one dataset ------------------------------------------------------------------------
MAPS = resources_service.Scope(("map",), "Map")
DATASETS = resources_service.DATASETS


def map_layers(conn: Connection, viewer: Viewer, map_id: int, base: str) -> list[MapLayer]:
    """The layers of a map the viewer sees, in order."""
    rid = resources_service.visible(conn, viewer, map_id, MAPS)["id"]
    return maplayers_of(conn, [rid], viewer, base)[rid]


def map_datasets(conn: Connection, viewer: Viewer, map_id: int, base: str) -> list[LayerDataset]:
    """The datasets of a map's layers that the viewer may view, in layer order."""
    rid = resources_service.visible(conn, viewer, map_id, MAPS)["id"]
    ids = list(dict.fromkeys(r["dataset_id"] for r in store.layers_of(conn, [rid])[rid] if r["dataset_id"]))
    shown = layer_datasets(conn, ids, viewer, base)
    return [shown[i] for i in ids if i in shown]


def dataset_layers(conn: Connection, viewer: Viewer, dataset_id: int) -> list[DatasetLayer]:
    """The layers that show a dataset the viewer sees, in maps the viewer sees."""
    rid = resources_service.visible(conn, viewer, dataset_id, DATASETS)["id"]
    return [DatasetLayer(pk=r["id"], name=r["name"], extra_params=_extra(r["extra_params"]),
                         current_style=r["current_style"], order=r["position"],
                         visibility=bool(r["visibility"]), opacity=r["opacity"])
            for r in store.layers_of_dataset(conn, rid, viewer)]


def dataset_maps(conn: Connection, viewer: Viewer, dataset_id: int, base: str) -> list[MapRef]:
    """The maps the viewer sees that show a dataset the viewer sees."""
    rid = resources_service.visible(conn, viewer, dataset_id, DATASETS)["id"]
    return [MapRef(r["id"], r["title"], f"{base}/catalogue/#/map/{r['id']}", f"{base}/api/v2/maps/{r['id']}")
            for r in store.maps_of_dataset(conn, rid, viewer)]
