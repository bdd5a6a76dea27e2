"""Dataset-only endpoints: /api/v2/datasets/{pk}/attribute_set and the download,
/datasets/{alternate}/dataset_download (a zipped Shapefile for vectors, the GeoTIFF for rasters)."""

from __future__ import annotations

import sqlite3
import uuid

import msgspec
from litestar import Request, get
from litestar.background_tasks import BackgroundTask
from litestar.params import FromPath
from litestar.response import File

from catalogue_app import files
from catalogue_app.api import resource_writes
from catalogue_app.api.bodies import path_id
from catalogue_app.api.context import Context
from catalogue_app.api.errors import ApiError, denied, not_found
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.export import shapefile_zip
from catalogue_app.store import datasets, resources

STATISTICS = ("count", "min", "max", "average", "median", "stddev", "sum", "unique_values")


class Attribute(msgspec.Struct):
    pk: int
    attribute: str
    description: str | None
    attribute_label: str | None
    attribute_type: str
    visible: bool
    display_order: int
    featureinfo_type: str
    count: str
    min: str
    max: str
    average: str
    median: str
    stddev: str
    sum: str
    unique_values: str
    last_stats_updated: str | None


class AttributeSet(msgspec.Struct):
    attributes: list[Attribute]


@get("/api/v2/datasets/{pk:str}/attribute_set", tags=["datasets"],
     summary="The fields of a vector dataset (or the bands of a raster), as GeoNode's attribute_set")
async def attribute_set(request: Request, pk: FromPath[str]) -> AttributeSet:
    ctx = Context(request)
    viewer = ctx.viewer

    def load(conn: sqlite3.Connection) -> list[sqlite3.Row]:
        row = resources.get_visible(conn, viewer, path_id(pk, "Dataset"), ("dataset",))
        if row is None:
            raise not_found("Dataset")
        return datasets.attributes(conn, row["id"])

    return AttributeSet([
        Attribute(pk=r["id"], attribute=r["attribute"], description=r["description"],
                  attribute_label=r["attribute_label"], attribute_type=r["attribute_type"], visible=bool(r["visible"]),
                  display_order=r["display_order"], featureinfo_type="type_property", last_stats_updated=None,
                  **dict.fromkeys(STATISTICS, "NA"))  # statistics are not computed (GeoNode's default)
        for r in ctx.db.read(load)])


@get("/datasets/{alternate:str}/dataset_download", tags=["datasets"],
     summary="Download a dataset: a zipped Shapefile for vectors, the GeoTIFF for rasters")
async def dataset_download(request: Request, alternate: FromPath[str]) -> File:
    ctx = Context(request)
    viewer = ctx.viewer

    def load(conn: sqlite3.Connection):
        rid = datasets.by_alternate(conn, alternate)
        row = resources.get_visible(conn, viewer, rid, ("dataset",)) if rid else None
        if row is None:
            raise not_found("Dataset")
        if not resource_writes.may(conn, viewer, row, {"download_resourcebase"}):
            raise denied(ctx.caller)
        return row, datasets.file_names(conn, rid)

    row, names = ctx.db.read(load)
    folder = ctx.settings.files_dir / row["uuid"]
    name = alternate.split(":")[-1]
    if row["subtype"] == "raster":
        original = next((n for n in names if n.lower().endswith((".tif", ".tiff")) and not n.startswith("working.")),
                        "working.tif")
        return File(folder / original, filename=f"{name}.tif", media_type="image/tiff")
    scratch = ctx.settings.tmp_dir / f"download-{uuid.uuid4()}"
    scratch.mkdir(parents=True)
    try:
        archive = shapefile_zip(folder / "working.gpkg", scratch, name)
    except GeoError as exc:
        files.remove(scratch)
        raise ApiError(409, str(exc), "conflict") from None
    return File(archive, filename=f"{name}.zip", media_type="application/zip",
                background=BackgroundTask(files.remove, scratch))
