"""The rules of what hangs on a resource besides its fields: extra metadata items and links to
other resources (those who may change the resource), favorites and ratings (whoever sees it)."""

from __future__ import annotations

from typing import Any

from catalogue_app.services import resources as resources_service
from catalogue_app.services.errors import Invalid, NotFound
from catalogue_app.store import Connection, resource_extras, resources
from catalogue_app.store.resources import Viewer


def add_favorite(conn: Connection, viewer: Viewer, rid: int) -> None:
    resources_service.visible(conn, viewer, rid)
    if not resource_extras.add_favorite(conn, viewer.id, rid):
        raise Invalid("Resource is already in favorites", extra={"message": "Resource is already in favorites"})


def remove_favorite(conn: Connection, viewer: Viewer, rid: int) -> None:
    resources_service.visible(conn, viewer, rid)
    if not resource_extras.remove_favorite(conn, viewer.id, rid):
        raise NotFound(message="Resource not in favorites", extra={"message": "Resource not in favorites"})


def rate(conn: Connection, viewer: Viewer, rid: int, value: int) -> None:
    resources_service.visible(conn, viewer, rid)
    resource_extras.rate(conn, viewer.id, rid, value)


def add_extra_metadata(conn: Connection, viewer: Viewer, rid: int, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add checked items (their ids are given by the store); returns all the resource's items."""
    resources_service.changeable(conn, viewer, rid)
    resource_extras.add_extra_metadata(conn, rid, [{k: v for k, v in i.items() if k != "id"} for i in items])
    return resource_extras.extra_metadata(conn, rid)


def replace_extra_metadata(conn: Connection, viewer: Viewer, rid: int,
                           items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace items by their ids; an id the resource does not have refuses them all."""
    resources_service.changeable(conn, viewer, rid)
    for item in items:
        fields = {k: v for k, v in item.items() if k != "id"}
        if not resource_extras.replace_extra_metadata(conn, rid, item["id"], fields):
            raise Invalid(f"No extra metadata item {item['id']} on this resource.")
    return resource_extras.extra_metadata(conn, rid)


def delete_extra_metadata(conn: Connection, viewer: Viewer, rid: int, ids: list[int]) -> list[dict[str, Any]]:
    resources_service.changeable(conn, viewer, rid)
    resource_extras.delete_extra_metadata(conn, rid, ids)
    return resource_extras.extra_metadata(conn, rid)


def change_links(conn: Connection, viewer: Viewer, rid: int, targets: list[Any], adding: bool) -> tuple[list[int], list[int]]:
    """Link the resource to ``targets`` (or unlink it): each target the viewer sees, other than
    the resource itself, is done; the others fail. Returns (done, failed)."""
    resources_service.changeable(conn, viewer, rid)
    done, failed = [], []
    for target in targets:
        ok = (isinstance(target, int) and not isinstance(target, bool) and target != rid
              and 0 < target < 2**63 and resources.get_visible(conn, viewer, target) is not None)
        if ok:
            ok = (resource_extras.link if adding else resource_extras.unlink)(conn, rid, target)
        (done if ok else failed).append(target)
    return done, failed
