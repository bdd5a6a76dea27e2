"""The rules of writing a geoapp (geostory, dashboard): ``name`` and ``resource_type`` are
required on create, a name is used by one geoapp only (409), the JSON document comes as ``blob``
or ``data`` (resource_changes.clean)."""

from __future__ import annotations

from typing import Any

from catalogue_app.services.errors import Busy, Invalid
from catalogue_app.store import Connection, geoapps

CODE = "geoapp_exception"
MANDATORY = "No valid data: ['name', 'owner', 'resource_type'] are mandatory fields!"
DUPLICATE = "A GeoApp with the same 'name' already exists!"
MAX_NAME = 255


def check_new(item: dict[str, Any]) -> None:
    """A geoapp to create names itself and its type (the owner is the caller); the title
    defaults to the name."""
    name, kind = item.get("name"), item.get("resource_type")
    if not name or not kind:
        raise Invalid(MANDATORY, code=CODE)
    _check_name(name)
    item.setdefault("title", name)


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise Invalid("name: Not a valid string.")
    if len(name) > MAX_NAME:
        raise Invalid(f"name: Ensure this field has no more than {MAX_NAME} characters.")
    return name


def save_name(conn: Connection, resource_id: int, name: Any) -> None:
    """Give the geoapp this name (inside the write's transaction); 409 if another has it."""
    _check_name(name)
    if geoapps.taken(conn, name, other_than=resource_id):
        raise Busy(DUPLICATE, code=CODE)
    geoapps.set_name(conn, resource_id, name)
