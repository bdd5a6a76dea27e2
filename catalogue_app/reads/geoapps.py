"""Geoapps (geostory, dashboard) on /api/v2/geoapps: the resource fields plus ``name`` (the rules
of writing one are in services/geoapps.py)."""

from __future__ import annotations

import msgspec

from catalogue_app.reads.resources import Resource
from catalogue_app.store import Connection, geoapps


class GeoApp(Resource, kw_only=True):
    """A geoapp, in a list or on its own."""

    name: str


def extend(conn: Connection, items: list[Resource], base: str, detail: bool) -> list[GeoApp]:
    """The geoapp fields added to rendered resources; one made without a name (through
    /resources) shows its title."""
    names = geoapps.names(conn, [int(i.pk) for i in items])
    return [GeoApp(**msgspec.structs.asdict(item), name=names.get(int(item.pk), item.title)) for item in items]
