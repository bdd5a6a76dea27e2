"""Features edited as JSON: POST /api/v2/datasets/{pk}/edits (the web UI's edits of the
attribute table and of points on the map). Geometries are GeoJSON in longitude/latitude
(EPSG:4326). The features themselves, with their ids, are read through WFS GetFeature
(``outputFormat=application/json``: ``"id": "<layer>.<fid>"``)."""

from __future__ import annotations

import logging
import threading
from typing import Any

import msgspec
from litestar import post
from litestar.params import FromPath
from msgspec import UNSET, UnsetType

from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import invalid
from catalogue_app.api.middleware.auth import session_of
from catalogue_app.api.request_bodies import declared_body, path_id
from catalogue_app.geo.geojson_read import geometry_of
from catalogue_app.reads import edits as reads
from catalogue_app.reads.versions import Version
from catalogue_app.services import edits as edits_service

GEOJSON_CRS = "EPSG:4326"
log = logging.getLogger("catalogue.edits")


class FeatureIn(msgspec.Struct, kw_only=True):
    """A new feature: a GeoJSON Feature (its ``id``, if any, is ignored: the dataset gives one)."""

    type: str = "Feature"
    geometry: dict[str, Any] | None = None
    properties: dict[str, Any] | None = None
    id: Any = None


class FeatureChange(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A feature to change, by its id: the properties to set (null sets a field empty) and, when
    ``geometry`` is given, its new geometry (null removes it)."""

    id: int
    properties: dict[str, Any] = {}
    geometry: dict[str, Any] | None | UnsetType = UNSET


class EditsBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One edit, all or nothing: features to insert, change and delete (in that order).
    ``base``: the dataset's ``data_version`` the edit was made on; when it has moved on since,
    the edit is refused with 409 (null: no check)."""

    base: int | None = None
    insert: list[FeatureIn] = []
    update: list[FeatureChange] = []
    delete: list[int] = []


class EditsAnswer(msgspec.Struct):
    """The version the edit made, and the ids of the new features in the order sent."""

    version: Version
    inserted: list[int]


def _geometry(value: Any, where: str):
    if value is None:
        return None
    try:
        return geometry_of(value)
    except ValueError as exc:
        raise invalid(f"{where}: {exc}.") from None


def _changes(body: EditsBody) -> list[Any]:
    out: list[Any] = []
    for i, feature in enumerate(body.insert):
        if feature.type != "Feature":
            raise invalid(f"insert[{i}]: expected a GeoJSON Feature.")
        out.append(edits_service.Insert(dict(feature.properties or {}), _geometry(feature.geometry, f"insert[{i}].geometry"),
                                        GEOJSON_CRS))
    for i, change in enumerate(body.update):
        moved = change.geometry is not UNSET
        out.append(edits_service.Update(change.id, dict(change.properties),
                                        _geometry(change.geometry, f"update[{i}].geometry") if moved else None,
                                        moved, GEOJSON_CRS if moved else None))
    out.extend(edits_service.Delete(fid) for fid in body.delete)
    return out


@post("/api/v2/datasets/{pk:str}/edits", tags=["datasets"], status_code=200, opt={"body": EditsBody},
      summary="Insert, change and delete features of a vector dataset, as one new version (all or nothing)")
async def edit_features(ctx: Ctx, pk: FromPath[str]) -> EditsAnswer:
    ctx.require_login()
    rid = path_id(pk, "Dataset")
    body: EditsBody = await declared_body(ctx.request)
    via = "ui" if session_of(ctx.request) is not None else "api"  # the web UI signs in by the session cookie
    result = await edits_service.apply(ctx.db, ctx.viewer, rid, _changes(body), via, base=body.base)
    return EditsAnswer(version=await ctx.db.read(reads.version, result.uuid), inserted=result.inserted)


def reconcile_at_start(app) -> None:
    """Start-up: settle or drop the versions an edit left pending when the server stopped, then
    (on a thread, not to delay serving) add the data versions GeoPackages hold that the catalogue
    lacks (services/edits.py ``reconcile``)."""
    db = app.state.db
    try:
        edits_service.reconcile(db, app.state.settings.files_dir, scan=False)
    except Exception:  # never keeps the server from starting
        log.warning("pending versions could not be reconciled", exc_info=True)

    def scan() -> None:
        try:
            edits_service.reconcile(db, app.state.settings.files_dir)
        except Exception:
            log.warning("the datasets' histories could not be reconciled", exc_info=True)

    threading.Thread(target=scan, name="reconcile-edits", daemon=True).start()


ROUTES = [edit_features]
