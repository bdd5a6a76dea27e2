"""Maps and their layers: the map representation on /api/v2/maps (``featuredurl``, ``urlsuffix``,
``maplayers`` in the detail), the routes maps/{pk}/maplayers,
maps/{pk}/datasets, datasets/{pk}/maplayers, datasets/{pk}/maps, and the map template that
geonodectl reads before it creates a map (/static/mapstore/configs/map.json).

A layer shows the dataset it names only to those who may view that dataset; to others, and for
layers from elsewhere, its ``dataset`` is null.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import msgspec
from litestar import get
from msgspec import UNSET, UnsetType
from litestar.params import FromPath

from catalogue_app.reads import datasets as dataset_view
from catalogue_app.api.middleware.auth import ANONYMOUS
from catalogue_app.api.context import Ctx
from catalogue_app.reads.datasets import Style
from catalogue_app.reads.links import Link
from catalogue_app.api.request_bodies import path_id
from catalogue_app.reads.resources import Resource, render
from catalogue_app.services import resources as resources_service
from catalogue_app.store import Connection, Row
from catalogue_app.store import map_layers as store
from catalogue_app.store.datasets import WORKSPACE
from catalogue_app.store.resources import Viewer


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


class LayerWrite(msgspec.Struct, kw_only=True):
    """One item of ``maplayers`` in a map write: with the pk (or id) of one of the map's layers
    it changes that layer, without one it is a new layer. The dataset is named by ``dataset``
    (its pk, or an object with it) or by ``name`` being its alternate."""

    pk: int | str | None | UnsetType = UNSET  # text that is no number: a layer id of MapStore's own
    id: int | str | None | UnsetType = UNSET
    name: str | None | UnsetType = UNSET
    dataset: int | str | dict[str, Any] | None | UnsetType = UNSET
    order: Annotated[int, msgspec.Meta(ge=0, lt=2**31)] | None | UnsetType = UNSET
    visibility: bool | None | UnsetType = UNSET
    opacity: Annotated[float, msgspec.Meta(ge=0, le=1)] | None | UnsetType = UNSET
    current_style: str | None | UnsetType = UNSET
    extra_params: dict[str, Any] | str | None | UnsetType = UNSET  # an object, or it as JSON text


class MapItem(Resource, kw_only=True):
    """A map in a list."""

    featuredurl: str
    urlsuffix: str


class Map(MapItem, kw_only=True):
    """A map on its own (detail): with its layers."""

    maplayers: list[MapLayer]


# -- reading -------------------------------------------------------------------------------------
def layer_datasets(conn: Connection, ids: list[int], viewer: Viewer, base: str) -> dict[int, LayerDataset]:
    """The embedded objects of the datasets among ``ids`` that the viewer may view."""
    rows = store.visible_datasets(conn, viewer, ids)
    if not rows:
        return {}
    # the caller only shapes user objects, which the embedded dataset has none of
    items = dataset_view.extend(conn, render(conn, list(rows.values()), ANONYMOUS, viewer, base), base, False)
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


# -- routes --------------------------------------------------------------------------------------
def _visible(conn: Connection, viewer: Viewer, pk: str, kind: str, model: str) -> Row:
    return resources_service.visible(conn, viewer, path_id(pk, model), resources_service.Scope((kind,), model))


@get("/api/v2/maps/{pk:str}/maplayers", tags=["maps"], summary="The layers of a map, in order")
async def map_maplayers(ctx: Ctx, pk: FromPath[str]) -> list[MapLayer]:
    def load(conn: Connection) -> list[MapLayer]:
        viewer = ctx.viewer
        rid = _visible(conn, viewer, pk, "map", "Map")["id"]
        return maplayers_of(conn, [rid], viewer, ctx.base)[rid]

    return await ctx.db.read(load)


@get("/api/v2/maps/{pk:str}/datasets", tags=["maps"],
     summary="The datasets of a map's layers that the caller may view, in layer order")
async def map_datasets(ctx: Ctx, pk: FromPath[str]) -> list[LayerDataset]:
    def load(conn: Connection) -> list[LayerDataset]:
        viewer = ctx.viewer
        rid = _visible(conn, viewer, pk, "map", "Map")["id"]
        ids = list(dict.fromkeys(r["dataset_id"] for r in store.layers_of(conn, [rid])[rid] if r["dataset_id"]))
        shown = layer_datasets(conn, ids, viewer, ctx.base)
        return [shown[i] for i in ids if i in shown]

    return await ctx.db.read(load)


@get("/api/v2/datasets/{pk:str}/maplayers", tags=["datasets"],
     summary="The layers that show a dataset, in maps the caller may view")
async def dataset_maplayers(ctx: Ctx, pk: FromPath[str]) -> list[DatasetLayer]:
    def load(conn: Connection) -> list[DatasetLayer]:
        viewer = ctx.viewer
        rid = _visible(conn, viewer, pk, "dataset", "Dataset")["id"]
        return [DatasetLayer(pk=r["id"], name=r["name"], extra_params=_extra(r["extra_params"]),
                             current_style=r["current_style"], order=r["position"],
                             visibility=bool(r["visibility"]), opacity=r["opacity"])
                for r in store.layers_of_dataset(conn, rid, viewer)]

    return await ctx.db.read(load)


@get("/api/v2/datasets/{pk:str}/maps", tags=["datasets"], summary="The maps the caller may view that show a dataset")
async def dataset_maps(ctx: Ctx, pk: FromPath[str]) -> list[MapRef]:
    def load(conn: Connection) -> list[MapRef]:
        viewer = ctx.viewer
        rid = _visible(conn, viewer, pk, "dataset", "Dataset")["id"]
        return [MapRef(r["id"], r["title"], f"{ctx.base}/catalogue/#/map/{r['id']}", f"{ctx.base}/api/v2/maps/{r['id']}")
                for r in store.maps_of_dataset(conn, rid, viewer)]

    return await ctx.db.read(load)


# -- the map template ----------------------------------------------------------------------------
class TemplateLayer(msgspec.Struct):
    type: str
    url: str
    name: str
    title: str
    group: str
    visibility: bool
    format: str


class TemplateCenter(msgspec.Struct):
    x: float
    y: float
    crs: str


class TemplateMap(msgspec.Struct):
    projection: str
    units: str
    center: TemplateCenter
    zoom: int
    maxExtent: list[float]  # MapStore's key
    layers: list[TemplateLayer]


class MapTemplate(msgspec.Struct):
    version: int
    map: TemplateMap


WEB_MERCATOR_EXTENT = [-20037508.34, -20037508.34, 20037508.34, 20037508.34]


@get("/static/mapstore/configs/map.json", tags=["maps"], include_in_schema=False,
     summary="The template of a new map's configuration (MapStore's), with the built-in basemap")
async def map_template(ctx: Ctx) -> MapTemplate:
    base = ctx.base
    basemap = TemplateLayer(type="wms", url=f"{base}/geoserver/ows", name=f"{WORKSPACE}:basemap",
                            title="Basemap (Natural Earth countries)", group="background", visibility=True,
                            format="image/png")
    return MapTemplate(version=2, map=TemplateMap(
        projection="EPSG:900913", units="m", center=TemplateCenter(0, 0, "EPSG:4326"), zoom=2,
        maxExtent=list(WEB_MERCATOR_EXTENT), layers=[basemap]))


ROUTES = [map_maplayers, map_datasets, dataset_maplayers, dataset_maps, map_template]
