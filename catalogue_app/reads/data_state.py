"""The state of a dataset's data, as the web UI's editing needs it: the data version an edit is
made on (``base``), the feature count, the geometry type, and whether its features can be edited
in place at all."""

from __future__ import annotations

from pathlib import Path

import msgspec

from catalogue_app import files
from catalogue_app.services.errors import NotFound
from catalogue_app.store import Connection, datasets, resources, versions
from catalogue_app.store.resources import Viewer

VECTOR = ("vector", "vector_time")


class DataState(msgspec.Struct, kw_only=True):
    """``data_version``: the number of the last version that changed the data (0: the upload as it
    came), the ``base`` an edit sends. ``features_editable``: the dataset holds vector data of its
    own, kept where edits go (a raster or a remote dataset does not); whether the caller may edit
    them is ``change_dataset_data`` in the dataset's ``perms``."""

    data_version: int
    feature_count: int | None
    geometry_type: str | None  # as the data name it: Point, MultiPolygon, LineString...
    features_editable: bool


def state(conn: Connection, viewer: Viewer, rid: int, files_dir: Path) -> DataState:
    """The dataset's data state, for a viewer who may see the dataset (NotFound otherwise)."""
    if resources.get_visible(conn, viewer, rid, ("dataset",)) is None:
        raise NotFound("Dataset")
    target = versions.data_target(conn, rid)
    detail = datasets.detail(conn, rid)
    if target is None or detail is None:
        raise NotFound("Dataset")
    path = files.working_copy(files_dir / target["folder"]) if target["folder"] else None
    editable = (not target["remote"] and target["subtype"] in VECTOR and path is not None and path.suffix == ".gpkg")
    return DataState(data_version=int(target["data_version"] or 0), feature_count=detail["feature_count"],
                     geometry_type=detail["geometry_type"], features_editable=editable)
