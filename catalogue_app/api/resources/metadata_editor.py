"""/api/v2/metadata: GeoNode 5's metadata editor API, over every metadata field of a resource.

``metadata`` names the two addresses; ``metadata/schema`` is the JSON schema of the fields, each
with its title and description in the asked language (``lang``, else Accept-Language), GeoNode's
markers (``geonode:required``, ``geonode:handler``, ``ui:options``) and the code lists as
``oneOf``; ``metadata/instance/{pk}`` is one resource's values (GET, to those who may see it) and
takes changes (PUT or PATCH, to those who may change its metadata): 200 ``{"message",
"extraErrors": {}}``, or 422 ``{"message", "extraErrors": {field: {"__errors": [...]}}}`` naming
every refused field (nested as the schema nests them), and nothing is stored
(services/metadata.py). Error messages stay English, as GeoNode's.
The QGIS plugin saves title and abstract here when the API root lists ``metadata``.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response, get, patch, put
from litestar.params import FromPath

from catalogue_app import metadata_codes
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import ApiError, status_of
from catalogue_app.api.request_bodies import read_body
from catalogue_app.api.resources.routes import RESOURCES, detail_answer
from catalogue_app.reads import metadata as metadata_reads
from catalogue_app.services import metadata as metadata_service
from catalogue_app.services.errors import Refused
from catalogue_app.translations import translated

OK = "The resource was updated successfully"
NULLABLE = ("attribution", "data_quality_statement", "constraints_other", "edition", "doi", "purpose",
            "supplemental_information", "maintenance_frequency", "restriction_code_type",
            "spatial_representation_type", "temporal_extent_start", "temporal_extent_end")
TEXTAREA = {"widget": "textarea", "rows": 5}
AUTOCOMPLETE = "geonode-ui:autocomplete"

# (field, English title, English description): the order of the editor's form
FIELDS = (
    ("uuid", "UUID", ""),
    ("title", "Title", "name by which the cited resource is known"),
    ("abstract", "Abstract", "brief narrative summary of the content of the resource(s)"),
    ("date", "Date", "reference date for the cited resource"),
    ("date_type", "date type", "event used for the reference date"),
    ("category", "Category", "high-level geographic data thematic classification to assist in the grouping and "
                             "search of available geographic data sets."),
    ("tkeywords", "Keywords from Thesaurus", "List of keywords from Thesaurus"),
    ("hkeywords", "Keywords", "Hierarchical keywords"),
    ("language", "Language", "language used within the dataset"),
    ("license", "License", "license of the dataset"),
    ("attribution", "Attribution", "authority or function assigned, as to a ruler, legislative assembly, delegate, "
                                   "or the like."),
    ("regions", "Regions", "keyword identifies a location"),
    ("data_quality_statement", "data quality statement", "general explanation of the data producer's knowledge about "
                                                         "the lineage of a dataset"),
    ("restriction_code_type", "restrictions", "limitation(s) placed upon the access or use of the data."),
    ("constraints_other", "Other constraints", "other restrictions and legal prerequisites for accessing and using "
                                               "the resource or metadata"),
    ("edition", "edition", "version of the cited resource"),
    ("doi", "DOI", "a DOI will be added by Admin before publication."),
    ("purpose", "purpose", "summary of the intentions with which the resource(s) was developed"),
    ("supplemental_information", "supplemental information", "any other descriptive information about the dataset"),
    ("temporal_extent_start", "temporal extent start", "time period covered by the content of the dataset (start)"),
    ("temporal_extent_end", "temporal extent end", "time period covered by the content of the dataset (end)"),
    ("maintenance_frequency", "maintenance frequency", "frequency with which modifications and deletions are made "
                                                       "to the data after it is first produced"),
    ("spatial_representation_type", "spatial representation type", "method used to represent geographic "
                                                                   "information in the dataset."),
    ("linkedresources", "Related resources", "Resources related to this one"),
    ("contacts", "contacts", "the people and organisations responsible for the resource, in each role"),
)
REQUIRED = ("title", "abstract", "date", "date_type", "category", "language", "license", "contacts")
# words of the schema's inner parts, translated as the fields' are
WORDS = {"user_id": "User id", "user_name": "User name", "name": "Name", "organization": "Organization",
         "email": "Email", "keyword_id": "keyword id", "keyword_label": "Label", "none": "-", "owner": "Owner"}


def _t(key: str, lang: str, english: str) -> str:
    return translated("metadata", key, lang, english) or english


def _choice(lang: str, key: str, code: str | None, title: str, description: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"const": code, "title": _t(f"{key}.{code}" if code else f"{key}._none", lang, title)}
    if description:
        out["description"] = _t(f"{key}.{code}.description", lang, description)
    return out


def _contact_schema(lang: str, role: str, title: str, required: bool, many: bool) -> dict[str, Any]:
    person = {"type": "object", "properties": {
        "id": {"type": "string", "title": _t("word.user_id", lang, WORDS["user_id"])},
        "label": {"type": "string", "title": _t("word.user_name", lang, WORDS["user_name"])},
        # a contact that is no user of the catalogue (beyond GeoNode's)
        "name": {"type": "string", "maxLength": 255, "title": _t("word.name", lang, WORDS["name"])},
        "organization": {"type": "string", "maxLength": 255,
                         "title": _t("word.organization", lang, WORDS["organization"])},
        "email": {"type": "string", "format": "email", "maxLength": 255,
                  "title": _t("word.email", lang, WORDS["email"])}}}
    title = _t(f"contacts.{role}", lang, title)
    autocomplete = {AUTOCOMPLETE: "/api/v2/metadata/autocomplete/users"}
    if not many:
        return {"type": "object", "title": title, "properties": {
            "id": {"type": "string", "title": _t("word.user_id", lang, WORDS["user_id"]), "ui:widget": "hidden"},
            "label": {"type": "string", "title": _t("word.user_name", lang, WORDS["user_name"])}},
            "ui:options": autocomplete, "required": ["id"]}
    return {"type": "array", "title": title, "minItems": 1 if required else 0, "items": person,
            "ui:options": autocomplete}


def schema(base: str, lang: str, choices: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The JSON schema of a resource's metadata, its words in ``lang``."""
    props: dict[str, Any] = {}
    for name, title, description in FIELDS:
        prop: dict[str, Any] = {"type": ["string", "null"] if name in NULLABLE else "string",
                                "title": _t(f"{name}.title", lang, title)}
        if description:
            prop["description"] = _t(f"{name}.description", lang, description)
        props[name] = prop
    for name, limit in metadata_service.TEXTS.items():
        if name != "constraints_other":
            props[name]["maxLength"] = limit
    props["uuid"].update({"maxLength": 36, "readOnly": True})
    for name in ("abstract", "data_quality_statement", "constraints_other", "purpose", "supplemental_information"):
        props[name]["ui:options"] = dict(TEXTAREA)
    for name in ("date", "temporal_extent_start", "temporal_extent_end"):
        props[name]["format"] = "date-time"
    props["supplemental_information"]["default"] = "No information provided"
    props["date_type"].update({"maxLength": 255, "default": "publication", "oneOf": [
        _choice(lang, "date_type", code, title) for code, title in metadata_codes.DATE_TYPES]})
    props["language"].update({"maxLength": 16, "default": "eng", "oneOf": [
        _choice(lang, "language", code, title) for code, title in metadata_codes.LANGUAGES]})
    none = _choice(lang, "choice", None, WORDS["none"])
    props["restriction_code_type"].update({"maxLength": 255, "oneOf": [none, *(
        _choice(lang, "restriction_code_type", code, code, text) for code, text in metadata_codes.RESTRICTIONS)]})
    props["maintenance_frequency"].update({"maxLength": 255, "oneOf": [none, *(
        _choice(lang, "maintenance_frequency", code, title) for code, title in metadata_codes.FREQUENCIES)]})
    props["spatial_representation_type"].update({"maxLength": 255, "oneOf": [none, *(
        _choice(lang, "spatial_representation_type", code, code, text) for code, text in metadata_codes.REPRESENTATIONS)]})
    props["category"].update({"type": "object", "properties": {
        "id": {"type": "string", "oneOf": [
            {"const": c["identifier"], "title": translated("category", c["identifier"], lang, c["gn_description"])}
            for c in choices["categories"]]},
        "label": {"type": "string"}}, "required": ["id"],
        "ui:options": {AUTOCOMPLETE: "/api/v2/metadata/autocomplete/categories"}})
    props["license"].update({"type": "object", "maxLength": 255, "properties": {
        "id": {"type": "string", "oneOf": [
            {"const": c["identifier"], "title": translated("license", c["identifier"], lang, c["name"])}
            for c in choices["licenses"]]},
        "label": {"type": "string"}}, "required": ["id"],
        "ui:options": {AUTOCOMPLETE: "/api/v2/metadata/autocomplete/licenses"}})
    keyword_item = {"type": "object", "properties": {
        "id": {"type": "string", "title": _t("word.keyword_id", lang, WORDS["keyword_id"])},
        "label": {"type": "string", "title": _t("word.keyword_label", lang, WORDS["keyword_label"])}}}
    props["tkeywords"].update({"type": "object", "properties": {
        t["identifier"]: {"type": "array", "title": t["title"], "description": t["uri"], "items": keyword_item,
                          "minItems": 0, "ui:options": {AUTOCOMPLETE: f"/api/v2/metadata/autocomplete/thesaurus/{t['identifier']}/keywords"}}
        for t in choices["thesauri"]}})
    if not choices["thesauri"]:
        props["tkeywords"]["ui:widget"] = "hidden"
    props["hkeywords"].update({"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 255},
                               "ui:options": {AUTOCOMPLETE: {"url": "/api/v2/metadata/autocomplete/hkeywords",
                                                             "creatable": True}}})
    item = {"type": "object", "properties": {"id": {"type": "string"}, "label": {"type": "string", "title": "title"}}}
    props["regions"].update({"type": "array", "items": item,
                             "ui:options": {AUTOCOMPLETE: "/api/v2/metadata/autocomplete/regions"}})
    props["linkedresources"].update({"type": "array", "items": item,
                                     "ui:options": {AUTOCOMPLETE: "/api/v2/metadata/autocomplete/resources"}})
    roles = {"owner": _contact_schema(lang, "owner", WORDS["owner"], True, False)}
    for _api, key, _iso, title in metadata_codes.ROLES:
        roles[key] = _contact_schema(lang, key, title, key in metadata_codes.REQUIRED_ROLES, True)
    props["contacts"].update({"type": "object", "properties": roles, "required": list(metadata_codes.REQUIRED_ROLES)})
    handlers = {"tkeywords": "thesaurus", "hkeywords": "hkeyword", "regions": "region", "doi": "doi",
                "linkedresources": "linkedresource", "contacts": "contact"}
    for name, prop in props.items():
        prop["geonode:handler"] = handlers.get(name, "base")
        if name in REQUIRED:
            prop["geonode:required"] = True
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{base}/api/v2/metadata/schema/",
            "title": _t("schema.title", lang, "Catalogue resource"), "type": "object", "properties": props,
            "required": list(REQUIRED)}


def _user_entry(user: dict[str, Any]) -> dict[str, Any]:
    if user.get("pk") is None:  # a contact that is no user
        return {"name": user.get("first_name") or "", "organization": user.get("organization") or "",
                "email": user.get("email") or ""}
    names = " ".join(n for n in (user.get("first_name"), user.get("last_name")) if n)
    return {"id": str(user["pk"]), "label": f"{user['username']} ({names})" if names else user["username"]}


def instance(item: dict[str, Any], linked: list[dict[str, Any]], lang: str) -> dict[str, Any]:
    """A resource's metadata values, as GeoNode 5's JSON schema instance."""
    category, license_ = item.get("category"), item.get("license")
    tkeywords: dict[str, list[dict[str, str]]] = {}
    for t in item.get("tkeywords") or []:
        label = (t.get("i18n") or {}).get(lang) or t["name"]
        tkeywords.setdefault(t["thesaurus"]["slug"], []).append({"id": t["uri"], "label": label})
    contacts: dict[str, Any] = {"owner": _user_entry(item["owner"])}
    for api, key, _iso, _title in metadata_codes.ROLES:
        contacts[key] = [_user_entry(u) for u in item.get(api) or []]
    out = {
        "uuid": item["uuid"], "title": item["title"], "abstract": item["abstract"], "date": item["date"],
        "date_type": item["date_type"],
        "category": {"id": category["identifier"],
                     "label": translated("category", category["identifier"], lang, category.get("gn_description"))
                     or category["identifier"]} if category else None,
        "tkeywords": tkeywords,
        "hkeywords": [k["name"] for k in item.get("keywords") or []],
        "language": item.get("language"),
        "license": {"id": license_["identifier"],
                    "label": translated("license", license_["identifier"], lang, license_.get("name"))
                    or license_["identifier"]} if license_ else None,
        "attribution": item.get("attribution"),
        "regions": [{"id": r["code"], "label": translated("region", r["code"], lang, r["name"]) or r["name"]}
                    for r in item.get("regions") or []],
        "restriction_code_type": (item.get("restriction_code_type") or {}).get("identifier"),
        "spatial_representation_type": (item.get("spatial_representation_type") or {}).get("identifier"),
        "linkedresources": linked,
        "contacts": contacts,
    }
    for name in ("data_quality_statement", "constraints_other", "edition", "doi", "purpose",
                 "supplemental_information", "temporal_extent_start", "temporal_extent_end", "maintenance_frequency"):
        out[name] = item.get(name)
    return {name: out[name] for name, _title, _description in FIELDS}


def _refused(errors: dict[str, Any]) -> ApiError:
    return ApiError(422, metadata_service.MESSAGE, "invalid",
                    extra={"message": metadata_service.MESSAGE, "extraErrors": errors})


def _not_found() -> ApiError:
    return ApiError(404, "The dataset was not found", "not_found", extra={"message": "The dataset was not found"})


def _translated(ctx: Context, content: Any, media_type: str = "application/json") -> Response[Any]:
    return Response(content, media_type=media_type,
                    headers={"Vary": "Accept-Language", "Content-Language": ctx.lang})


@get(["/api/v2/metadata", "/api/v2/metadata/"], tags=["metadata"], summary="The addresses of the metadata editor API")
async def metadata_root(ctx: Ctx) -> dict[str, str]:
    base = ctx.base
    return {"schema": f"{base}/api/v2/metadata/schema/", "instance": f"{base}/api/v2/metadata/instance/<pk>/"}


@get(["/api/v2/metadata/schema", "/api/v2/metadata/schema/"], tags=["metadata"],
     summary="JSON schema of the metadata fields, labelled in the asked language (lang, else Accept-Language)")
async def metadata_schema(ctx: Ctx) -> Response[dict[str, Any]]:
    choices = await ctx.db.read(metadata_reads.choices)
    return _translated(ctx, schema(ctx.base, ctx.lang, choices))


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
    item = await _read(ctx, pk)
    linked = await ctx.db.read(metadata_reads.linked_to, ctx.viewer, int(item["pk"]), ctx.base)
    return _translated(ctx, instance(item, linked, ctx.lang), "application/schema-instance+json")


async def _change(ctx: Context, pk: str) -> dict[str, Any]:
    ctx.require_login()
    rid = int((await _read(ctx, pk))["pk"])  # 404 in GeoNode's words when the caller cannot see it
    body = await read_body(ctx.request)
    try:
        await ctx.db.write(metadata_service.change, ctx.viewer, rid, body)
    except metadata_service.MetadataRefused as exc:
        raise _refused(exc.errors) from None
    return {"message": OK, "extraErrors": {}}


@put(["/api/v2/metadata/instance/{pk:str}", "/api/v2/metadata/instance/{pk:str}/"], status_code=200, tags=["metadata"],
     summary="Change a resource's metadata values (fields left out stay as they are)")
async def put_instance(ctx: Ctx, pk: FromPath[str]) -> dict[str, Any]:
    return await _change(ctx, pk)


@patch(["/api/v2/metadata/instance/{pk:str}", "/api/v2/metadata/instance/{pk:str}/"], status_code=200,
       tags=["metadata"], summary="Change some of a resource's metadata values")
async def patch_instance(ctx: Ctx, pk: FromPath[str]) -> dict[str, Any]:
    return await _change(ctx, pk)


class Choices(msgspec.Struct):
    """What an autocomplete address answers: {"id", "label"} choices (keywords: their names)."""

    results: list[Any]


def _asked(ctx: Context) -> str:
    return next((v for k, v in ctx.params if k == "q"), "")[:200]


@get("/api/v2/metadata/autocomplete/{kind:str}", tags=["metadata"],
     summary="Choices of a metadata field whose label holds q: categories, licenses, regions, hkeywords, users "
             "or resources (users and resources as far as the caller sees them)")
async def autocomplete(ctx: Ctx, kind: FromPath[str]) -> Response[Choices]:
    if kind not in metadata_reads.KINDS:
        raise ApiError(404, "Not found.", "not_found")
    found = await ctx.db.read(metadata_reads.autocomplete, ctx.caller, ctx.viewer, kind, _asked(ctx), ctx.lang)
    return _translated(ctx, Choices(found))


@get("/api/v2/metadata/autocomplete/thesaurus/{thesaurus:str}/keywords", tags=["metadata"],
     summary="Keywords of a thesaurus (by its identifier) whose label holds q, labelled in the asked language")
async def autocomplete_tkeywords(ctx: Ctx, thesaurus: FromPath[str]) -> Response[Choices]:
    found = await ctx.db.read(metadata_reads.autocomplete, ctx.caller, ctx.viewer, "tkeywords", _asked(ctx),
                              ctx.lang, thesaurus[:255])
    return _translated(ctx, Choices(found))


ROUTES = [metadata_root, metadata_schema, get_instance, put_instance, patch_instance, autocomplete,
          autocomplete_tkeywords]
