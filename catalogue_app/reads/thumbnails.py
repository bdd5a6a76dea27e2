"""What the thumbnail routes read: the resource a caller is about to change the thumbnail of, and
whether a thumbnail file may be shown to a viewer."""

from __future__ import annotations

from typing import Any

from catalogue_app.rules import Viewer
from catalogue_app.services import resources as resources_service
from catalogue_app.services.errors import NotFound
from catalogue_app.store import Connection, Row
from catalogue_app.store import thumbnails as store


def changeable(conn: Connection, viewer: Viewer, resource_id: int, missing: str | None = None) -> Row:
    """The resource, for a viewer who may change it: NotFound when unknown or hidden (with
    ``missing`` as its message, when given), Forbidden without change_resourcebase(_metadata)."""
    try:
        return resources_service.changeable(conn, viewer, resource_id)
    except NotFound:
        if missing:
            raise NotFound(message=missing) from None
        raise


def shown_file(conn: Connection, viewer: Viewer, url: str, uuid: str) -> dict[str, Any] | None:
    """Whether the viewer sees a resource whose thumbnail is ``url`` (the file made for the
    resource ``uuid``): None if not."""
    return store.visible_with_url(conn, viewer, url, uuid)


def moved_to(conn: Connection, viewer: Viewer, uuid: str, prefix: str) -> str | None:
    """The address of the thumbnail the resource ``uuid`` has now, when the viewer may see it:
    a page opened before the thumbnail was drawn again still shows one."""
    return store.current_for(conn, viewer, uuid, prefix)
