"""Geoapps (geostory, dashboard) on /api/v2/geoapps: the resource fields plus ``name``, and the
rules of writing one: ``name`` and ``resource_type`` are required on create, a name is used by
one geoapp only (409), the JSON document comes as ``blob`` or ``data`` (resource_writes.clean)."""

from __future__ import annotations

import sqlite3
from typing import Any

import msgspec

from catalogue_app.api.errors import ApiError, invalid
from catalogue_app.api.resource_schema import Resource
from catalogue_app.store import geoapps

CODE = "geoapp_exception"
MANDATORY = "No valid data: ['name', 'owner', 'resource_type'] are mandatory fields!"
DUPLICATE = "A GeoApp with the same 'name' already exists!"
MAX_NAME = 255


class GeoApp(Resource, kw_only=True):
    """A geoapp, in a list or on its own."""

    name: str


def extend(conn: sqlite3.Connection, items: list[Resource], base: str, detail: bool) -> list[GeoApp]:
    """The geoapp fields added to rendered resources; one made without a name (through
    /resources) shows its title."""
    names = geoapps.names(conn, [int(i.pk) for i in items])
    return [GeoApp(**msgspec.structs.asdict(item), name=names.get(int(item.pk), item.title)) for item in items]


def check_new(item: dict[str, Any]) -> None:
    """A geoapp to create names itself and its type (the owner is the caller); the title
    defaults to the name."""
    name, kind = item.get("name"), item.get("resource_type")
    if not name or not kind:
        raise ApiError(400, MANDATORY, CODE)
    _check_name(name)
    item.setdefault("title", name)


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise invalid("name: Not a valid string.")
    if len(name) > MAX_NAME:
        raise invalid(f"name: Ensure this field has no more than {MAX_NAME} characters.")
    return name


def save_name(conn: sqlite3.Connection, resource_id: int, name: Any) -> None:
    """Give the geoapp this name (inside the write's transaction); 409 if another has it."""
    _check_name(name)
    if geoapps.taken(conn, name, other_than=resource_id):
        raise ApiError(409, DUPLICATE, CODE)
    geoapps.set_name(conn, resource_id, name)
