"""What the embeddable pages (api/resources/embed.py) show of a resource, for a viewer who may
see it (None otherwise: the page says "not found")."""

from __future__ import annotations

from typing import NamedTuple

from catalogue_app.rules import Viewer
from catalogue_app.services import access
from catalogue_app.store import Connection, Row, documents, records, resources, users
from catalogue_app.store.resources import GEOAPP_TYPES

MAX_ALTERNATE = 300  # longer names are no dataset's


class EmbeddedDataset(NamedTuple):
    row: Row
    has_data: bool
    attribution: str


class EmbeddedDocument(NamedTuple):
    row: Row
    document: Row | None  # the document's own row: its file or remote address
    may_download: bool


def attribution(conn: Connection, row: Row) -> str:
    """The resource's attribution, else its owner's name."""
    if row["attribution"]:
        return row["attribution"]
    owner = next(iter(users.by_ids(conn, {row["owner_id"]})), None)
    if owner is None:
        return ""
    return f"{owner['first_name'] or ''} {owner['last_name'] or ''}".strip() or owner["username"]


def dataset(conn: Connection, viewer: Viewer, alternate: str) -> EmbeddedDataset | None:
    """The dataset named ``alternate``, whether it has data to draw, and its credit line."""
    row = records.visible_dataset(conn, viewer, alternate) if len(alternate) <= MAX_ALTERNATE else None
    if row is None:
        return None
    facts = records.link_facts(conn, [row["id"]]).get(row["id"])
    return EmbeddedDataset(row, facts is not None and facts.has_data, attribution(conn, row))


def document(conn: Connection, viewer: Viewer, resource_id: int) -> EmbeddedDocument | None:
    """The document, its file or address, and whether the viewer may download the file."""
    row = resources.get_visible(conn, viewer, resource_id, ("document",))
    if row is None:
        return None
    return EmbeddedDocument(row, documents.get(conn, row["id"]), access.may(conn, viewer, row, access.DOWNLOAD))


def map_(conn: Connection, viewer: Viewer, resource_id: int) -> Row | None:
    """The map, for its box, title and abstract."""
    return resources.get_visible(conn, viewer, resource_id, ("map",))


def app(conn: Connection, viewer: Viewer, resource_id: int) -> Row | None:
    """The geoapp, for its thumbnail, title and abstract."""
    return resources.get_visible(conn, viewer, resource_id, GEOAPP_TYPES)
