"""The fields GeoNode sends only when asked with ``include[]``: ``metadata``,
``linked_resources``, ``executions``, and a map's ``maplayers`` on lists."""

from __future__ import annotations

from typing import Any

import msgspec

from catalogue_app.reads.extras import linked_payload
from catalogue_app.reads.maps import maplayers_payload
from catalogue_app.rules import Viewer
from catalogue_app.store import Connection, resource_extras, resources

INCLUDED = {"metadata", "linked_resources", "executions", "maplayers"}


def fields(conn: Connection, ids: list[int], sel, viewer: Viewer, base: str) -> list[dict[str, Any]]:
    """The included fields of each resource of ``ids`` (already seen by the viewer), in order."""
    if not INCLUDED & set(sel.include):
        return [{} for _ in ids]
    layers = maplayers_payload(conn, ids, viewer, base) if "maplayers" in sel.include else {}
    out: list[dict[str, Any]] = []
    for rid in ids:
        extra: dict[str, Any] = {}
        if "maplayers" in sel.include:
            extra["maplayers"] = layers[rid]
        if "metadata" in sel.include:
            extra["metadata"] = resource_extras.extra_metadata(conn, rid)
        if "linked_resources" in sel.include:
            row = resources.get_visible(conn, viewer, rid)
            extra["linked_resources"] = msgspec.to_builtins(linked_payload(conn, row, viewer, base, []))
        if "executions" in sel.include:
            extra["executions"] = []
        out.append(extra)
    return out
