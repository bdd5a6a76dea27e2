"""Request bodies: JSON or form data in, typed Structs out, and the bulk shapes of the API.

A handler declares its body with ``opt={"body": Struct}``: the OpenAPI document shows that
Struct (api/openapi.py) and ``declared_body`` (``declared_records``, ``declared_updates``)
decodes the request into that very Struct, so what is documented is what is checked. A body that
does not fit answers 400 in the error envelope, naming the field.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Request

from catalogue_app import json_text
from catalogue_app.api.errors import ApiError, invalid, not_found, parse_error
from catalogue_app.services.bodies import kinds, typed


# A database id: what a body may name as a user, group or resource.
Id = Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)]
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


async def read_body(request: Request, cls: Any = None) -> Any:
    """The decoded body: JSON value, a dict of form fields, or None when there is no body.
    Form fields are read as a body for ``cls`` when it is given (see ``form_body``)."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media in FORM_TYPES:
        form = await request.form()
        if not form:
            return None
        if cls is None:
            return {key: value for key, value in form.multi_items()}
        return form_body(form.multi_items(), cls)
    return decode_json(media, await request.body())


def decode_json(media: str, raw: bytes) -> Any:
    """A JSON body already read (None when empty); 415 for another media type, 400 for bad JSON."""
    if not raw.strip():
        return None
    if media and media != "application/json" and not media.endswith("+json"):
        raise ApiError(415, f'Unsupported media type "{media}" in request.', "unsupported_media_type")
    try:
        return json_text.decode(raw)
    except msgspec.DecodeError as exc:
        raise parse_error(f"JSON parse error - {exc}") from None


def declared(request: Request) -> Any:
    """The body type the handler declares (``opt["body"]``)."""
    return request.route_handler.opt["body"]


async def declared_body(request: Request, *, singular: str | None = None) -> Any:
    """The body as the declared Struct (or list type); ``{singular: {...}}`` is unwrapped, and
    no body at all is an empty object, so that a required field is named as missing (a JSON
    ``null`` is no object, and refused as such)."""
    cls = declared(request)
    body = await read_body(request, cls)
    if body is None and not _is_form(request) and (await request.body()).strip():
        return typed(None, cls)
    if singular is not None:
        body = unwrap(body, singular)
    if body is None:
        body = None if _is_list(cls) else {}
    return typed(body, cls)


def _is_form(request: Request) -> bool:
    return request.headers.get("content-type", "").split(";")[0].strip().lower() in FORM_TYPES


async def declared_records(request: Request, singular: str, plural: str) -> tuple[list[Any], bool]:
    """The records of a create body (see ``records``), each as the declared Struct, and whether
    the answer should be a list."""
    cls = declared(request)
    items, many = records(await read_body(request, cls), singular, plural)
    return [typed(item, cls) for item in items], many


async def declared_updates(request: Request, plural: str) -> list[Any]:
    """The records of a bulk update (see ``update_records``) as the declared ``list[Struct]``."""
    return typed(update_records(await read_body(request), plural), declared(request))


def _is_list(cls: Any) -> bool:
    return getattr(cls, "__origin__", None) is list


def form_body(pairs: Any, cls: Any) -> dict[str, Any]:
    """Form fields ((name, value) pairs) as a body for ``cls``: a field that takes a list gathers
    every value sent under its name, a field that takes an object or a list may also come as JSON
    text, and an empty value of a field that takes no text is null, or false for a boolean (an
    unticked box)."""
    taken = kinds(cls) if cls is not None else {}
    out: dict[str, Any] = {}
    for key, value in pairs:
        kind = taken.get(key, frozenset())
        if isinstance(value, str) and "str" not in kind and ({"object", "list"} & kind) and value.strip()[:1] in "[{":
            try:
                value = json_text.decode(value.encode())
            except msgspec.DecodeError:
                pass
        if isinstance(value, str) and not value.strip() and kind and "str" not in kind:
            value = None if "null" in kind else False if "bool" in kind else value
        if "list" in kind and "str" not in kind:
            out.setdefault(key, [])
            out[key] += value if isinstance(value, list) else [value]
        else:
            out[key] = value
    return out


def records(body: Any, singular: str, plural: str) -> tuple[list[dict], bool]:
    """The records of a bulk body and whether the answer should be a list.

    Accepted: one object, ``{singular: object}``, ``{plural: [objects]}`` or a bare list.
    """
    if isinstance(body, list):
        items, many = body, True
    elif isinstance(body, dict) and isinstance(body.get(singular), dict) and len(body) == 1:
        items, many = [body[singular]], False
    elif isinstance(body, dict) and isinstance(body.get(plural), list) and len(body) == 1:
        items, many = body[plural], True
    elif isinstance(body, dict):
        items, many = [body], False
    else:
        raise invalid("Expected a JSON object or a list of objects.")
    if not items:
        raise invalid("The list of records is empty.")
    if not all(isinstance(item, dict) for item in items):
        raise invalid("Every record must be a JSON object.")
    return items, many


def unwrap(body: Any, singular: str) -> Any:
    """The fields of a detail update: the body itself, or what it holds under ``singular``."""
    if isinstance(body, dict) and isinstance(body.get(singular), dict) and len(body) == 1:
        return body[singular]
    return {} if body is None else body


def update_records(body: Any, plural: str) -> list[dict]:
    """The records of a bulk update: a list of objects, or ``{plural: [...]}``, each with an id."""
    items = body.get(plural) if isinstance(body, dict) else body
    if not isinstance(items, list) or not items:
        raise invalid('Bulk update expects a list of objects, each with its "id".')
    return items


def record_ids(body: Any, plural: str) -> list[int]:
    """Ids of a bulk delete or update body: ``[{"id": n}, ...]`` or ``{plural: [...]}``."""
    if isinstance(body, dict) and isinstance(body.get(plural), list):
        body = body[plural]
    if not isinstance(body, list) or not body:
        raise invalid(f'Expected a list of objects with "id", or {{"{plural}": [...]}}.')
    ids = []
    for item in body:
        raw = item.get("id", item.get("pk")) if isinstance(item, dict) else item
        if isinstance(raw, bool) or not isinstance(raw, (int, str)):
            raise invalid('Every record needs an integer "id".')
        try:
            number = int(raw)
        except ValueError:
            number = 0
        if not 1 <= number < 2**63:
            raise invalid(f'"{raw}" is not a valid id.')
        ids.append(number)
    return ids


def path_id(value: str, model: str) -> int:
    """A numeric id from the URL; anything else is simply not found."""
    if not value.isdecimal() or len(value) > 18:
        raise not_found(model)
    return int(value)
