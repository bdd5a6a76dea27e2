"""The datasets and maps as the OGC services (WMS, WFS, WCS) see them, for a viewer. The OGC
renderers run on a thread of their own: they read with ``db.read_sync(fn, ...)``."""

from __future__ import annotations

from typing import Any

from catalogue_app.store import Connection, ogc
from catalogue_app.store.resources import Viewer


def layers(conn: Connection, viewer: Viewer, workspace: str | None, name: str | None,
           attributes: bool, editable: bool = False) -> list[dict[str, Any]]:
    """The datasets with data the viewer may see, by title, narrowed to a virtual service's
    workspace or layer; with their attributes when asked (``may_download`` is left None), and
    with ``may_edit`` (may the viewer change the features?) when ``editable``."""
    return ogc.visible_layers(conn, viewer, workspace, name, attributes, editable)


def layer(conn: Connection, viewer: Viewer, name: str) -> dict[str, Any] | None:
    """One dataset the viewer may see, by any of its names, with whether the viewer may download
    its data (``may_download``) and change its features (``may_edit``); None when it is unknown
    or hidden."""
    return ogc.layer_named(conn, viewer, name)


def style(conn: Connection, resource_id: int, name: str | None) -> bytes | None:
    """The SLD of a dataset's style named ``name``, or of its default style; None when there is none."""
    return ogc.style_body(conn, resource_id, name)


def map_layers(conn: Connection, viewer: Viewer, map_id: int | None) -> list[dict[str, Any]] | None:
    """The layers of a map the viewer may see, bottom first; None when the map is unknown or hidden."""
    return ogc.map_layer_names(conn, viewer, map_id)
