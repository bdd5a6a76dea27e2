"""Dataset-only endpoints: /api/v2/datasets/{pk}/attribute_set (read and change) and the download,
/datasets/{alternate}/dataset_download (a zipped Shapefile for vectors, the GeoTIFF for rasters).
(datasets/{pk}/maplayers and /maps are in maps.py.)"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec
from litestar import get, patch
from msgspec import UNSET, UnsetType
from litestar.background_tasks import BackgroundTask
from litestar.params import FromPath
from litestar.response import File, Redirect, Response

from catalogue_app import files
from catalogue_app.api.context import Ctx
from catalogue_app.reads import datasets as reads
from catalogue_app.reads.datasets import AttributeSet
from catalogue_app.api.errors import ApiError
from catalogue_app.api.request_bodies import declared, path_id, read_body
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.export import shapefile_zip
from catalogue_app.services import resources as resources_service
from catalogue_app.services.bodies import fields_of, typed


class AttributeItem(msgspec.Struct, kw_only=True):
    """One attribute to change, named by its pk or its name (``attribute``); the fields left out
    stay as they are. ``label`` is geonodectl's name for ``attribute_label``."""

    pk: int | None | UnsetType = UNSET
    attribute: str | None | UnsetType = UNSET
    attribute_label: str | None | UnsetType = UNSET
    label: str | None | UnsetType = UNSET
    description: str | None | UnsetType = UNSET
    visible: bool | None | UnsetType = UNSET
    display_order: int | None | UnsetType = UNSET


class AttributeSetChange(msgspec.Struct, kw_only=True):
    """The attributes to change, under ``attributes`` (or ``attribute_set``)."""

    attributes: list[AttributeItem] | UnsetType = UNSET
    attribute_set: list[AttributeItem] | UnsetType = UNSET


@get("/api/v2/datasets/{pk:str}/attribute_set", tags=["datasets"],
     summary="The fields of a vector dataset (or the bands of a raster), as GeoNode's attribute_set")
async def attribute_set(ctx: Ctx, pk: FromPath[str]) -> AttributeSet:
    return await ctx.db.read(reads.attribute_set, ctx.viewer, path_id(pk, "Dataset"))


@patch("/api/v2/datasets/{pk:str}/attribute_set", tags=["datasets"], opt={"body": list[AttributeItem] | AttributeSetChange},
       summary="Change labels, descriptions, visibility or order of a dataset's attributes")
async def change_attribute_set(ctx: Ctx, pk: FromPath[str]) -> AttributeSet:
    ctx.require_login()
    changes = fields_of(typed(await read_body(ctx.request, AttributeSetChange) or {}, declared(ctx.request)))
    items = changes if isinstance(changes, list) else changes.get("attributes", changes.get("attribute_set"))
    viewer, rid = ctx.viewer, path_id(pk, "Dataset")
    await ctx.db.write(resources_service.change_attributes, viewer, rid, items)
    return await ctx.db.read(reads.attribute_set, viewer, rid)


@get("/datasets/{alternate:str}/dataset_download", tags=["datasets"],
     summary="Download a dataset: a zipped Shapefile for vectors, the GeoTIFF for rasters")
async def dataset_download(ctx: Ctx, alternate: FromPath[str]) -> Response[Any]:
    found = await ctx.db.read(reads.download, ctx.viewer, ctx.caller, alternate)
    if found.url is not None:  # a remote dataset's download, on its remote
        return Redirect(found.url, status_code=302)
    folder, names = ctx.settings.files_dir / found.folder, found.names
    name = alternate.split(":")[-1]
    working = files.working_copy(folder)
    old_layout = working is not None and working.parent == folder  # working.tif beside the originals
    originals = [n for n in names if "/" not in n and n.lower().endswith((".tif", ".tiff"))
                 and not (old_layout and n.startswith("working."))]
    if working is not None and working.suffix == ".tif":  # a raster: its original GeoTIFF
        original = folder / originals[0] if originals and (folder / originals[0]).is_file() else working
        return File(original, filename=f"{name}.tif", media_type="image/tiff")
    if working is None:
        raise ApiError(404, "This dataset's data is not there (it is being replaced, or was removed); try again.",
                       "not_found")
    scratch = files.claim_workspace(ctx.settings.tmp_dir / f"download-{uuid.uuid4()}")
    try:
        archive = shapefile_zip(working, scratch, name)
    except GeoError as exc:
        files.remove(scratch)
        raise ApiError(409, str(exc), "conflict") from None
    return File(archive, filename=f"{name}.zip", media_type="application/zip",
                background=BackgroundTask(files.remove, scratch))


ROUTES = [attribute_set, change_attribute_set, dataset_download]
