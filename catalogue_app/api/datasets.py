"""Dataset-only endpoints: /api/v2/datasets/{pk}/attribute_set."""

from __future__ import annotations

import sqlite3

import msgspec
from litestar import Request, get
from litestar.params import FromPath

from catalogue_app.api.bodies import path_id
from catalogue_app.api.context import Context
from catalogue_app.api.errors import not_found
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
