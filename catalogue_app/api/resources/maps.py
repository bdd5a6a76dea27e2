"""Maps and their layers: the routes maps/{pk}/maplayers, maps/{pk}/datasets,
datasets/{pk}/maplayers, datasets/{pk}/maps (read in reads/maps.py, with the map
representation), what a map write's ``maplayers`` holds, and the map template that geonodectl
reads before it creates a map (/static/mapstore/configs/map.json).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import get
from msgspec import UNSET, UnsetType
from litestar.params import FromPath

from catalogue_app.api.context import Ctx
from catalogue_app.api.request_bodies import path_id
from catalogue_app.reads import maps as reads
from catalogue_app.reads.maps import DatasetLayer, LayerDataset, MapLayer, MapRef


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


# -- routes --------------------------------------------------------------------------------------
@get("/api/v2/maps/{pk:str}/maplayers", tags=["maps"], summary="The layers of a map, in order")
async def map_maplayers(ctx: Ctx, pk: FromPath[str]) -> list[MapLayer]:
    return await ctx.db.read(reads.map_layers, ctx.viewer, path_id(pk, "Map"), ctx.base)


@get("/api/v2/maps/{pk:str}/datasets", tags=["maps"],
     summary="The datasets of a map's layers that the caller may view, in layer order")
async def map_datasets(ctx: Ctx, pk: FromPath[str]) -> list[LayerDataset]:
    return await ctx.db.read(reads.map_datasets, ctx.viewer, path_id(pk, "Map"), ctx.base)


@get("/api/v2/datasets/{pk:str}/maplayers", tags=["datasets"],
     summary="The layers that show a dataset, in maps the caller may view")
async def dataset_maplayers(ctx: Ctx, pk: FromPath[str]) -> list[DatasetLayer]:
    return await ctx.db.read(reads.dataset_layers, ctx.viewer, path_id(pk, "Dataset"))


@get("/api/v2/datasets/{pk:str}/maps", tags=["datasets"], summary="The maps the caller may view that show a dataset")
async def dataset_maps(ctx: Ctx, pk: FromPath[str]) -> list[MapRef]:
    return await ctx.db.read(reads.dataset_maps, ctx.viewer, path_id(pk, "Dataset"), ctx.base)


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
    basemap = TemplateLayer(type="wms", url=f"{base}/geoserver/ows", name=reads.BASEMAP,
                            title="Basemap (Natural Earth countries)", group="background", visibility=True,
                            format="image/png")
    return MapTemplate(version=2, map=TemplateMap(
        projection="EPSG:900913", units="m", center=TemplateCenter(0, 0, "EPSG:4326"), zoom=2,
        maxExtent=list(WEB_MERCATOR_EXTENT), layers=[basemap]))


ROUTES = [map_maplayers, map_datasets, dataset_maplayers, dataset_maps, map_template]
