"""/api/v2/schema/: the OpenAPI 3.0 document, and /api/v2/docs/: a browsable page that works offline.

Litestar builds an OpenAPI 3.1 document from the handlers' msgspec types. Request bodies, which
handlers read themselves to accept the API's several shapes, are declared with
``opt={"body": Struct}`` (and ``"body_media"``: the media types it comes in, when not JSON and
both forms; ``"body_required"``, see ``_required``) and added here; api/request_bodies.py decodes each body into that same Struct.
``opt={"answers": {status: Struct}}`` names an error answer that is not the envelope (GeoNode's
own shape for that action), declared beside the envelope; ``{status: "what it means"}`` declares
one more status answered in the envelope. The document is then lowered to
OpenAPI 3.0.3.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect
import swagger_ui_bundle
import yaml
from litestar import Litestar, Request, Response, get
from litestar.params import FromQuery
from litestar.static_files import create_static_files_router

OPENAPI_YAML = "application/vnd.oai.openapi"
OPENAPI_JSON = "application/vnd.oai.openapi+json"
SCHEMA_KEYS_SINGLE = ("items", "additionalProperties", "not")
SCHEMA_KEYS_LIST = ("allOf", "oneOf", "anyOf")
DROPPED_SCHEMA_KEYS = ("$schema", "$id", "contentMediaType", "contentEncoding", "prefixItems",
                       "unevaluatedProperties", "dependentRequired", "$comment")


# -- OpenAPI 3.1 -> 3.0 ----------------------------------------------------------------------
def _schema_30(node: Any) -> Any:
    """Lower one JSON Schema (2020-12 flavour) object to the OpenAPI 3.0 schema dialect."""
    if not isinstance(node, dict):
        return node
    node = {k: v for k, v in node.items() if k not in DROPPED_SCHEMA_KEYS}
    nullable = False
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        nullable = len(kinds) < len(kind)
        if len(kinds) == 1:
            node["type"] = kinds[0]
        elif kinds:
            del node["type"]
            node["anyOf"] = [{"type": k} for k in kinds]
        else:
            del node["type"]
    elif kind == "null":
        del node["type"]
        nullable = True
    if node.get("required") == []:
        del node["required"]  # 3.0 wants at least one name
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if "examples" in node:
        examples = node.pop("examples")
        if isinstance(examples, list) and examples:
            node["example"] = examples[0]
    for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(node.get(bound), (int, float)) and not isinstance(node.get(bound), bool):
            node[plain] = node[bound]
            node[bound] = True
    for key in SCHEMA_KEYS_SINGLE:
        if isinstance(node.get(key), dict):
            node[key] = _schema_30(node[key])
    if isinstance(node.get("properties"), dict):
        node["properties"] = {k: _schema_30(v) for k, v in node["properties"].items()}
    for key in SCHEMA_KEYS_LIST:
        if isinstance(node.get(key), list):
            parts = [p for p in node[key] if not (isinstance(p, dict) and p.get("type") == "null")]
            if len(parts) < len(node[key]):
                nullable = True
            parts = [_schema_30(p) for p in parts]
            if len(parts) == 1 and key != "allOf":
                del node[key]
                only = parts[0]
                if "$ref" in only:
                    node["allOf"] = [only]
                else:
                    node.update(only)
            elif parts:
                node[key] = parts
            else:
                del node[key]
    if nullable:
        if "$ref" in node:
            node = {"allOf": [{"$ref": node.pop("$ref")}], **node}
        node["nullable"] = True
    return node


def _walk_30(node: Any) -> Any:
    """Lower every schema found under a ``schema`` key, anywhere in the document."""
    if isinstance(node, dict):
        return {k: (_schema_30(v) if k == "schema" else _walk_30(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_walk_30(v) for v in node]
    return node


def to_openapi_30(doc: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    doc["openapi"] = "3.0.3"
    for key in ("jsonSchemaDialect", "webhooks"):
        doc.pop(key, None)
    info = doc.setdefault("info", {})
    info.pop("summary", None)
    if isinstance(info.get("license"), dict):
        info["license"].pop("identifier", None)
    components = doc.get("components", {})
    components.pop("pathItems", None)
    if "schemas" in components:
        components["schemas"] = {k: _schema_30(v) for k, v in components["schemas"].items()}
    # The API answers with and without a trailing slash; document the form GeoNode's schema uses.
    doc["paths"] = {(p if p.endswith("/") else p + "/"): v for p, v in _walk_30(doc.get("paths", {})).items()}
    if "components" in doc:
        doc["components"] = {k: (v if k == "schemas" else _walk_30(v)) for k, v in components.items()}
    return doc


# -- request bodies ----------------------------------------------------------------------------
def _openapi_path(path: str) -> str:
    """Litestar route path ('/api/v2/users/{pk:str}') -> OpenAPI path ('/api/v2/users/{pk}')."""
    parts = []
    for part in path.split("/"):
        if part.startswith("{") and ":" in part:
            part = part.split(":")[0] + "}"
        parts.append(part)
    return "/".join(parts) or "/"


def _required(method: str, body: Any) -> bool:
    """Whether the operation needs a body: a change (PUT, PATCH) whose fields are all optional
    takes none (nothing changes), as request_bodies.declared_body reads no body as {};
    ``opt["body_required"]`` says otherwise where a handler needs one all the same."""
    info = msgspec.inspect.type_info(body)
    optional = isinstance(info, msgspec.inspect.StructType) and not any(f.required for f in info.fields)
    return not (method in ("put", "patch") and optional)


def add_request_bodies(app: Litestar, doc: dict[str, Any]) -> dict[tuple[str, str], dict[int, Any]]:
    """Declare the bodies of ``opt["body"]``; returns the other answers of ``opt["answers"]``,
    {(path, method): {status: schema or description}}, for ``declare_answers``."""
    declared: list[tuple[str, str, Any, Any, bool | None]] = []
    answers: list[tuple[str, str, int, Any]] = []
    for route in app.routes:
        for handler in getattr(route, "route_handlers", []):
            for method in handler.http_methods:
                path = _openapi_path(route.path)
                if handler.opt.get("body") is not None:
                    declared.append((path, method.lower(), handler.opt["body"], handler.opt.get("body_media"),
                                     handler.opt.get("body_required")))
                answers += [(path, method.lower(), status, kind) for status, kind in handler.opt.get("answers", {}).items()]
    typed = [kind for *_, kind in answers if not isinstance(kind, str)]
    refs, components = msgspec.json.schema_components(
        [body for _, _, body, *_ in declared] + typed, ref_template="#/components/schemas/{name}")
    doc.setdefault("components", {}).setdefault("schemas", {}).update(components)
    answer_refs = iter(refs[len(declared):])
    others: dict[tuple[str, str], dict[int, Any]] = {}
    for path, method, status, kind in answers:
        others.setdefault((_openapi_path_30(path), method), {})[status] = kind if isinstance(kind, str) else next(answer_refs)
    for (path, method, body, only, needed), ref in zip(declared, refs):
        operation = doc.get("paths", {}).get(path, {}).get(method)
        if operation is None:
            continue
        media = {"schema": ref}
        kinds = only or ("application/json", "application/x-www-form-urlencoded", "multipart/form-data")
        required = needed if needed is not None else _required(method, body)
        operation["requestBody"] = {"required": required, "content": {k: media for k in kinds}}
    return others


# -- answers -----------------------------------------------------------------------------------
ERROR = {"type": "object", "required": ["success", "errors", "code"], "properties": {
    "success": {"type": "boolean", "enum": [False]},
    "errors": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    "code": {"type": "string"},
    "detail": {"type": "string"}, "message": {"type": "string"}, "extraErrors": {"type": "object"}}}
ERROR_TEXT = {400: "The request is not valid: the message says why", 401: "Credentials are needed (or were wrong)",
              403: "The caller may not do this", 404: "Not found, or not visible to the caller",
              409: "The change conflicts with the stored data or a change still being applied",
              413: "The body is larger than this address takes", 415: "The body is of a media type not taken here",
              422: "Values the metadata editor refuses, under extraErrors"}
EVERY = (400, 401, 403, 404)
WRITES = ("post", "put", "patch", "delete")
# RFC 6749's error body, which /o/token/ answers as OAuth2 clients expect
OAUTH_ERROR = {"type": "object", "required": ["error"], "properties": {
    "error": {"type": "string"}, "error_description": {"type": "string"}}}
OWS_EXCEPTION = {"application/xml": {"schema": {"type": "string"}}}
HTML_PAGE = {"text/html": {"schema": {"type": "string"}}}
# list addresses that take PATCH or DELETE of many records only where a setting allows it
BULK = ("/api/v2/resources", "/api/v2/datasets", "/api/v2/documents", "/api/v2/maps", "/api/v2/geoapps",
        "/api/v2/users", "/api/v2/groups")


def _openapi_path_30(path: str) -> str:
    return path if path.endswith("/") else path + "/"


def declare_answers(doc: dict[str, Any], others: dict[tuple[str, str], dict[int, Any]] | None = None) -> None:
    """What the API really answers: errors in its envelope (Litestar's default error schema is
    not what is sent), or in the shape ``others`` names for an operation and status, the error
    statuses each kind of operation can give, and no body for 204."""
    others = others or {}
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"], schemas["OAuthError"] = ERROR, OAUTH_ERROR
    envelope = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, item in doc.get("paths", {}).items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses = operation.setdefault("responses", {})
            for status in [s for s in responses if s[:1] in ("4", "5")]:
                del responses[status]
            statuses = list(EVERY)
            if method in WRITES:
                statuses += [409, 413, 415]
            if path.startswith("/api/v2/metadata/instance"):
                statuses.append(422)
            if method in ("patch", "delete") and path.rstrip("/") in BULK:
                statuses.append(405)
            statuses += [s for s in others.get((_openapi_path_30(path), method), {}) if s not in statuses]
            error = envelope
            if path.rstrip("/").endswith("/embed"):
                error = HTML_PAGE  # a page for an iframe: its errors are pages too
            elif path.startswith("/catalogue/csw"):
                error = OWS_EXCEPTION
            oauth = {"application/json": {"schema": {"$ref": "#/components/schemas/OAuthError"}}}
            for status in statuses:
                text = ERROR_TEXT.get(status, "This method is not enabled on this server")
                content = oauth if path.startswith("/o/") and status in (400, 401) else error
                other = others.get((_openapi_path_30(path), method), {}).get(status)
                if isinstance(other, str):
                    text = other
                elif other is not None:
                    content = {"application/json": {"schema": {"anyOf": [envelope["application/json"]["schema"], other]}}}
                responses[str(status)] = {"description": text, "content": content}
            if "204" in responses:
                responses["204"].pop("content", None)


def build_document(app: Litestar) -> dict[str, Any]:
    doc = app.openapi_schema.to_schema()
    declare_answers(doc, add_request_bodies(app, doc))
    doc = to_openapi_30(doc)
    # the same bytes on every start: paths and schemas in the order of their names (the order
    # they were met in depends on the order of sets inside the route and schema generators)
    doc["paths"] = dict(sorted(doc.get("paths", {}).items()))
    schemas = doc.get("components", {}).get("schemas")
    if schemas:
        doc["components"]["schemas"] = dict(sorted(schemas.items()))
    return doc


def document(app: Litestar) -> dict[str, Any]:
    """The 3.0 document, built once per process (the routes do not change while it runs)."""
    cached = getattr(app.state, "openapi_30", None)
    if cached is None:
        cached = build_document(app)
        app.state.openapi_30 = cached
    return cached


@get("/api/v2/schema/", tags=["schema"], include_in_schema=True,
     summary="OpenAPI 3.0 description of this API (YAML by default, JSON on request)")
async def schema(request: Request, format: FromQuery[str | None] = None,
                 lang: FromQuery[str | None] = None) -> Response[bytes]:
    accept = request.headers.get("accept", "")
    as_json = format == "json" or (format != "yaml" and (OPENAPI_JSON in accept or "application/json" in accept))
    doc = document(request.app)
    if as_json:
        media = "application/json" if "application/json" in accept and format != "json" else OPENAPI_JSON
        content, filename = msgspec.json.encode(doc), "schema.json"
    else:
        media = "application/yaml" if "application/yaml" in accept else OPENAPI_YAML
        content = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True).encode()
        filename = "schema.yaml"
    return Response(content, media_type=f"{media}; charset=utf-8",
                    headers={"Content-Disposition": f'inline; filename="{filename}"'})


DOCS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Catalogue API v2</title>
<link rel="stylesheet" href="/api/v2/docs/static/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/api/v2/docs/static/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({url: "/api/v2/schema/?format=json", dom_id: "#ui"});</script>
</body></html>"""


@get("/api/v2/docs/", tags=["schema"], include_in_schema=False)
async def docs_page() -> Response[str]:
    return Response(DOCS_PAGE, media_type="text/html")


docs_static = create_static_files_router(
    path="/api/v2/docs/static", directories=[Path(swagger_ui_bundle.swagger_ui_path)],
    include_in_schema=False,
)


ROUTES = [schema, docs_page, docs_static]
