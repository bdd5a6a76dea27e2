"""What GeoNode 5's metadata editor API reads beside a resource: the choices its schema offers
(categories, licences, thesauri) and the resources one links to."""

from __future__ import annotations

from typing import Any

from catalogue_app.reads import extras
from catalogue_app.store import Connection, metadata
from catalogue_app.store.resources import Viewer


def choices(conn: Connection) -> dict[str, list[dict[str, Any]]]:
    """The ISO topic categories, the licences and the thesauri, in a stable order."""
    return metadata.choices(conn)


def linked_to(conn: Connection, viewer: Viewer, resource_id: int, base: str) -> list[dict[str, Any]]:
    """The resources this one links to (not those the catalogue linked itself) that the viewer
    sees, as {"id", "label"}."""
    found = extras.linked(conn, viewer, resource_id, base, [("link_type", "linked_to")])
    return [{"id": str(item.pk), "label": item.title} for item in found.get("linked_to", []) if not item.internal]
