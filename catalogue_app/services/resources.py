"""The rules of working with one resource or several: who may see, change, delete or copy it,
and what a change writes (its fields, a map's layers, a geoapp's name). Each function runs in the
caller's transaction (a read snapshot or the one write), so that a check and the write it allows
see the same data. Who holds which right is decided in access.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catalogue_app import rules
from catalogue_app.services import access, datasets, geoapps, history, maps, resource_changes
from catalogue_app.services.errors import Busy, Forbidden, Invalid, NotFound
from catalogue_app.store import Connection, Row, executions, resources
from catalogue_app.store import resource_writes as store_writes
from catalogue_app.store import thumbnails as thumbnail_store
from catalogue_app.store.datasets import folder_of
from catalogue_app.store.resources import DOWNLOADABLE, GEOAPP_TYPES, ResourceQuery, Viewer

# Created through the API; datasets come from uploads.
CREATABLE = ("document", "map", *GEOAPP_TYPES)


@dataclass(frozen=True)
class Scope:
    """What a family of endpoints reaches: its resource types (none: all), the model its "not
    found" answer names, and what a body writes besides the fields (a map's ``maplayers``, a
    geoapp's ``name``)."""

    types: tuple[str, ...] = ()
    model: str = "ResourceBase"
    layers: bool = False
    app_name: bool = False


ANY = Scope()
DATASETS = Scope(("dataset",), "Dataset")


def visible(conn: Connection, viewer: Viewer, rid: int, scope: Scope = ANY) -> Row:
    """The resource if the viewer may see it; NotFound otherwise (hidden and missing look alike)."""
    row = resources.get_visible(conn, viewer, rid, scope.types)
    if row is None:
        raise NotFound(scope.model)
    return row


def allowed(conn: Connection, viewer: Viewer, rid: int, action: str, scope: Scope = ANY) -> Row:
    """The resource if the viewer sees it and the rule book lets them take ``action`` on it."""
    row = visible(conn, viewer, rid, scope)
    access.require(conn, viewer, row, action)
    return row


def changeable(conn: Connection, viewer: Viewer, rid: int, scope: Scope = ANY) -> Row:
    return allowed(conn, viewer, rid, access.CHANGE, scope)


def set_thumbnail(conn: Connection, viewer: Viewer, rid: int, url: str | None) -> tuple[bool, str | None]:
    """Record a thumbnail address (None: none) for a viewer who may still change the resource,
    asked again inside the write; returns True and the address it had (NotFound, Forbidden)."""
    changeable(conn, viewer, rid)
    return thumbnail_store.set_url(conn, rid, url)


def deletable(conn: Connection, viewer: Viewer, rid: int, scope: Scope = ANY) -> Row:
    return allowed(conn, viewer, rid, access.DELETE, scope)


def copyable(conn: Connection, viewer: Viewer, rid: int) -> Row:
    """The resource to copy: seeing it is enough, downloading it too for a dataset or a document
    (any signed-in user may add resources), and a dataset must have data to copy."""
    row = visible(conn, viewer, rid)
    access.require(conn, viewer, row, access.DOWNLOAD if row["resource_type"] in DOWNLOADABLE else access.VIEW)
    if row["resource_type"] == "dataset" and folder_of(conn, row["id"]) is None:
        raise Invalid("Resource can not be cloned: this dataset has no data to copy (is_copyable is false).",
                      extra={"message": "Resource can not be cloned."})
    if row["resource_type"] == "dataset" and row["sourcetype"] == "REMOTE":
        raise Invalid("Resource can not be cloned: the data of this dataset stay on its remote service "
                      "(is_copyable is false).", extra={"message": "Resource can not be cloned."})
    return row


def change(conn: Connection, viewer: Viewer, rid: int, body: dict[str, Any],
           scope: Scope = ANY, attributes: Any = None) -> None:
    """Apply a PUT or PATCH body to the resource, if the viewer may change it (and a dataset's
    ``attributes`` changes, which geonodectl sends with the dataset)."""
    row = visible(conn, viewer, rid, scope)
    if not rules.may_change(access.resource_actions(conn, viewer, row), body):
        raise Forbidden()
    cleaned = resource_changes.clean(conn, body, viewer, row, row["resource_type"])
    with history.recorded(conn, history.By(viewer.id), rid):
        if scope.layers and "maplayers" in body:  # the layers first, in the same transaction
            maps.write_layers(conn, viewer, rid, body["maplayers"], creating=False)
        resource_changes.apply(conn, rid, cleaned)
        if scope.app_name and "name" in body:
            geoapps.save_name(conn, rid, body["name"])
        if attributes is not None:
            datasets.change_attributes(conn, rid, attributes)


def change_attributes(conn: Connection, viewer: Viewer, rid: int, items: Any) -> None:
    """Change a dataset's attributes, if the viewer may change the dataset."""
    changeable(conn, viewer, rid, DATASETS)
    with history.recorded(conn, history.By(viewer.id), rid):
        datasets.change_attributes(conn, rid, items)


def change_each(conn: Connection, viewer: Viewer, batch: list[tuple[int, dict[str, Any]]],
                scope: Scope = ANY) -> None:
    """Several changes in one transaction: all are applied or none (each checked as ``change``)."""
    for rid, body in batch:
        change(conn, viewer, rid, body, scope)


def change_matching(conn: Connection, viewer: Viewer, query: ResourceQuery,
                    body: dict[str, Any], scope: Scope = ANY) -> int:
    """The same change on every resource the query finds for the viewer; returns how many."""
    ids = resources.ids_matching(conn, viewer, query)
    for rid in ids:
        change(conn, viewer, rid, dict(body), scope)
    return len(ids)


def delete(conn: Connection, viewer: Viewer, rid: int, scope: Scope = ANY) -> str:
    """Delete the record, if the viewer may and no job is changing it; returns its uuid (its
    files go once the transaction has committed)."""
    row = deletable(conn, viewer, rid, scope)
    if executions.busy(conn, rid):
        raise Busy("A change of this resource is still being applied; wait until its execution request "
                   "is finished, then send this again.")
    store_writes.delete(conn, rid, viewer.id)
    return row["uuid"]


def delete_each(conn: Connection, viewer: Viewer, ids: list[int], scope: Scope = ANY) -> list[str]:
    """Several deletions in one transaction: all or none; returns the uuids."""
    return [delete(conn, viewer, rid, scope) for rid in ids]


def creatable_type(item: dict[str, Any], scope: Scope) -> str:
    """The type of a resource to create: the item's own or the scope's only one, which must be
    one the API creates (and within the scope)."""
    if scope.app_name:
        geoapps.check_new(item)
    kind = item.get("resource_type") or (scope.types[0] if len(scope.types) == 1 else None)
    if kind not in CREATABLE or (scope.types and kind not in scope.types):
        allowed_types = [t for t in CREATABLE if not scope.types or t in scope.types]
        raise Invalid(f"resource_type: expected one of {', '.join(allowed_types)} (datasets come from uploads).")
    return kind


def create(conn: Connection, viewer: Viewer, owner_id: int, items: list[dict[str, Any]],
           scope: Scope = ANY) -> list[int]:
    """New resources owned by ``owner_id``, one per item (its ``resource_type`` checked by
    ``creatable_type``); all or none. Returns their ids."""
    ids = []
    for item in items:
        cleaned = resource_changes.clean(conn, item, viewer, None, item["resource_type"])
        rid = store_writes.create(conn, item["resource_type"], owner_id, {})
        if scope.layers and "maplayers" in item:  # the layers first, in the same transaction
            maps.write_layers(conn, viewer, rid, item["maplayers"], creating=True)
        resource_changes.apply(conn, rid, cleaned)
        if scope.app_name:
            geoapps.save_name(conn, rid, item["name"])
        ids.append(rid)
    return ids
