"""/api/v2/metadata: GeoNode 5's metadata editor API, over the resource fields this catalogue keeps.

``metadata`` names the two addresses; ``metadata/schema`` is the JSON schema of the editable
fields; ``metadata/instance/{pk}`` is one resource's values (GET, to those who may see it) and
takes changes (PUT or PATCH, to those who may change it, with the checks of a resource PATCH):
200 ``{"message", "extraErrors": {}}``, or 422 with the refused value under ``extraErrors``.
The QGIS plugin saves title and abstract here when the API root lists ``metadata``.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response, get, patch, put
from litestar.params import FromPath

from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import ApiError, status_of
from catalogue_app.api.request_bodies import read_body
from catalogue_app.api.resources.routes import RESOURCES, detail_answer
from catalogue_app.services import resources as resources_service
from catalogue_app.services.errors import Refused

TEXT_OR_NULL = ("attribution", "data_quality_statement", "constraints_other", "edition", "doi", "purpose",
                "supplemental_information", "maintenance_frequency")
DATES_OR_NULL = ("temporal_extent_start", "temporal_extent_end")
CHOICE = {"type": "object", "properties": {"id": {"type": "string"}, "label": {"type": "string"}}, "required": ["id"]}


def schema(base: str) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "uuid": {"type": "string", "title": "UUID", "maxLength": 36, "readOnly": True},
        "title": {"type": "string", "title": "Title", "maxLength": 255},
        "abstract": {"type": "string", "title": "Abstract", "maxLength": 2000},
        "date": {"type": "string", "format": "date-time", "title": "Date"},
        "date_type": {"type": "string", "title": "Date type",
                      "oneOf": [{"const": c, "title": c.capitalize()} for c in ("creation", "publication", "revision")]},
        "category": {**CHOICE, "title": "Category"},
        "hkeywords": {"type": "array", "title": "Keywords", "items": {"type": "string"}},
        "language": {"type": "string", "title": "Language", "maxLength": 16},
        "license": {**CHOICE, "title": "License"},
        **{name: {"type": ["string", "null"], "title": name.replace("_", " ").capitalize()} for name in TEXT_OR_NULL},
        **{name: {"type": ["string", "null"], "format": "date-time", "title": name.replace("_", " ").capitalize()}
           for name in DATES_OR_NULL},
    }
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{base}/api/v2/metadata/schema/",
            "title": "Catalogue resource", "type": "object", "properties": properties,
            "required": ["title", "abstract", "date", "date_type"]}


def _instance(item: dict[str, Any]) -> dict[str, Any]:
    category, license_ = item.get("category"), item.get("license")
    out = {"uuid": item["uuid"], "title": item["title"], "abstract": item["abstract"], "date": item["date"],
           "date_type": item["date_type"],
           "category": {"id": category["identifier"], "label": category.get("gn_description") or category["identifier"]}
           if category else None,
           "hkeywords": [k["name"] for k in item.get("keywords") or []], "language": item.get("language"),
           "license": {"id": license_["identifier"], "label": license_.get("name") or license_["identifier"]}
           if license_ else None}
    for name in (*TEXT_OR_NULL, *DATES_OR_NULL):
        out[name] = item.get(name)
    return out


def _changes(body: Any) -> dict[str, Any]:
    """The instance's values in the shape a resource PATCH takes."""
    if not isinstance(body, dict):
        raise _unprocessable("__all__", "Expected a JSON object of metadata fields.")
    changes: dict[str, Any] = {}
    for name, value in body.items():
        if name in ("title", "abstract", "date", "date_type", "language", *TEXT_OR_NULL, *DATES_OR_NULL):
            changes[name] = value
        elif name in ("category", "license"):
            ident = value.get("id") if isinstance(value, dict) else value
            changes[name] = {"identifier": ident} if isinstance(ident, str) and ident else None
        elif name in ("hkeywords", "keywords"):
            changes["keywords"] = value
        elif name != "uuid":
            raise _unprocessable(name, "This field is not stored by this catalogue.")
    return changes


def _unprocessable(field: str, message: str) -> ApiError:
    return ApiError(422, "Some errors were found while updating the resource", "invalid",
                    extra={"message": "Some errors were found while updating the resource",
                           "extraErrors": {field: {"__errors": [message]}}})


def _not_found() -> ApiError:
    return ApiError(404, "The dataset was not found", "not_found", extra={"message": "The dataset was not found"})


@get(["/api/v2/metadata", "/api/v2/metadata/"], tags=["metadata"], summary="The addresses of the metadata editor API")
async def metadata_root(ctx: Ctx) -> dict[str, str]:
    base = ctx.base
    return {"schema": f"{base}/api/v2/metadata/schema/", "instance": f"{base}/api/v2/metadata/instance/<pk>/"}


@get(["/api/v2/metadata/schema", "/api/v2/metadata/schema/"], tags=["metadata"],
     summary="JSON schema of the editable metadata fields")
async def metadata_schema(ctx: Ctx) -> dict[str, Any]:
    return schema(ctx.base)


async def _read(ctx: Context, pk: str) -> dict[str, Any]:
    try:
        answer = await detail_answer(ctx, RESOURCES, pk)
    except (ApiError, Refused) as exc:
        if status_of(exc) == 404:
            raise _not_found() from None
        raise
    item = answer.content["resource"]
    return msgspec.json.decode(item) if isinstance(item, msgspec.Raw) else msgspec.to_builtins(item)


@get(["/api/v2/metadata/instance/{pk:str}", "/api/v2/metadata/instance/{pk:str}/"], tags=["metadata"],
     summary="One resource's metadata values", media_type="application/schema-instance+json")
async def get_instance(ctx: Ctx, pk: FromPath[str]) -> Response[dict[str, Any]]:
    return Response(_instance(await _read(ctx, pk)), media_type="application/schema-instance+json")


async def _change(ctx: Context, pk: str) -> dict[str, Any]:
    ctx.require_login()
    rid = int((await _read(ctx, pk))["pk"])  # 404 in GeoNode's words when the caller cannot see it
    changes = _changes(await read_body(ctx.request))
    viewer = ctx.viewer

    try:
        await ctx.db.write(resources_service.change, viewer, rid, changes)
    except (ApiError, Refused) as exc:
        if status_of(exc) == 400:
            field = exc.message.split(":", 1)[0] if ":" in exc.message[:40] else "__all__"
            raise _unprocessable(field, exc.message) from None
        raise
    return {"message": "The resource was updated successfully", "extraErrors": {}}


@put(["/api/v2/metadata/instance/{pk:str}", "/api/v2/metadata/instance/{pk:str}/"], status_code=200, tags=["metadata"],
     summary="Change a resource's metadata values")
async def put_instance(ctx: Ctx, pk: FromPath[str]) -> dict[str, Any]:
    return await _change(ctx, pk)


@patch(["/api/v2/metadata/instance/{pk:str}", "/api/v2/metadata/instance/{pk:str}/"], status_code=200,
       tags=["metadata"], summary="Change some of a resource's metadata values")
async def patch_instance(ctx: Ctx, pk: FromPath[str]) -> dict[str, Any]:
    return await _change(ctx, pk)


ROUTES = [metadata_root, metadata_schema, get_instance, put_instance, patch_instance]
