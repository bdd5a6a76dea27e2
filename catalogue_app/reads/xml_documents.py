"""The XML documents kept for resources, as they were stored: a dataset's styles (SLD) and the
ISO metadata document uploaded for a resource. None when there is none or the viewer may not
see its resource."""

from __future__ import annotations

from catalogue_app.rules import Viewer
from catalogue_app.store import Connection, datasets, metadata, resources


def sld(conn: Connection, viewer: Viewer, workspace: str, name: str) -> bytes | None:
    """The SLD document of the style ``workspace:name``."""
    style = datasets.style_named(conn, workspace, name)
    if style is None or resources.get_visible(conn, viewer, style["resource_id"]) is None:
        return None
    body = style["sld_body"]
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


def iso_xml(conn: Connection, viewer: Viewer, resource_id: int) -> bytes | None:
    """The ISO metadata document uploaded for the resource."""
    row = resources.get_visible(conn, viewer, resource_id)
    return metadata.iso_xml(conn, row["id"]) if row is not None else None
