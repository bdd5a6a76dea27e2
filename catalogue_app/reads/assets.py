"""The stored files of resources as /api/v2/assets shows them (GeoNode 5's assets), for a viewer:
every visible resource's files; a file itself only to those who may download its resource."""

from __future__ import annotations

from typing import Any

import msgspec

from catalogue_app.rules import Viewer
from catalogue_app.services import access
from catalogue_app.services.errors import NotFound, refusal_for
from catalogue_app.store import Connection, Row, assets, resources


class Asset(msgspec.Struct):
    pk: int
    title: str
    description: str
    type: str
    owner: int
    created: str
    asset_type: str
    subinfo: dict[str, Any] | None
    deletable: bool
    download_url: str
    size: int


class AssetOwner(msgspec.Struct):
    pk: int
    username: str


class AssetPage(msgspec.Struct):
    total: int
    users: list[AssetOwner]  # the owners of the assets on the page, highest id first
    assets: list[Asset]


def _shape(row: Row, base: str) -> Asset:
    return Asset(pk=row["id"], title=row["name"], description="", type=row["mime_type"], owner=row["owner_id"],
                 created=row["created"], asset_type="Asset", subinfo=None, deletable=False,
                 download_url=f"{base}/api/v2/assets/{row['id']}/download", size=row["size"])


def page(conn: Connection, viewer: Viewer, limit: int, offset: int, base: str) -> AssetPage:
    """A page of assets, newest first, and how many there are."""
    total, rows = assets.page(conn, viewer, limit, offset)
    owners = {r["owner_id"]: r["username"] for r in rows}
    return AssetPage(total, [AssetOwner(pk, name) for pk, name in sorted(owners.items(), reverse=True)],
                     [_shape(r, base) for r in rows])


def asset(conn: Connection, viewer: Viewer, asset_id: int, base: str) -> Asset | None:
    row = assets.get(conn, viewer, asset_id)
    return _shape(row, base) if row is not None else None


def asset_file(conn: Connection, viewer: Viewer, asset_id: int) -> Row:
    """The asset's row (its folder, name and type), for a viewer who may download its resource:
    NotFound when the viewer does not see it, NotSignedIn or Forbidden when they may not download."""
    row = assets.get(conn, viewer, asset_id)
    if row is None:
        raise NotFound("Asset")
    resource = resources.get_visible(conn, viewer, row["resource_id"])
    if resource is None:
        raise NotFound("Asset")
    if not access.may(conn, viewer, resource, access.DOWNLOAD):
        raise refusal_for(viewer)
    return row
