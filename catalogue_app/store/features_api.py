"""The collections of OGC API - Features (and of Tiles, which hang from them): the datasets and
maps a viewer may see, with what a collection document says of each (extent, CRS, time, fields)
and whether the viewer may download a dataset's features, in a few queries for the whole list."""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app import rules
from catalogue_app.store import resources
from catalogue_app.store.datasets import WORKSPACE
from catalogue_app.store.resources import Viewer

DEFAULT_WORKSPACE = WORKSPACE  # the catalogue's workspace: its datasets' collection ids are bare layer names
_DATASET_COLUMNS = (
    "r.id, r.uuid, r.owner_id, r.group_id, r.resource_type, r.subtype, r.alternate, r.title, r.abstract, r.srid,"
    " r.ll_x0, r.ll_y0, r.ll_x1, r.ll_y1, r.temporal_extent_start, r.temporal_extent_end, r.metadata_only,"
    " d.name, d.workspace, d.folder, d.geometry_type, d.feature_count, d.crs_wkt, d.has_time, d.time_attribute,"
    " d.data_version, rl.service_url AS remote_url"
)
_DATASET_FROM = ("resources r JOIN datasets d ON d.resource_id = r.id"
                 " LEFT JOIN remote_layers rl ON rl.resource_id = r.id")
_MAP_COLUMNS = ("r.id, r.uuid, r.owner_id, r.group_id, r.resource_type, r.subtype, r.title, r.abstract, r.srid,"
                " r.ll_x0, r.ll_y0, r.ll_x1, r.ll_y1, r.temporal_extent_start, r.temporal_extent_end")


def _attributes(conn: sqlite3.Connection, ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        for row in conn.execute(
                "SELECT resource_id, attribute, attribute_type, attribute_label, description FROM dataset_attributes"
                f" WHERE resource_id IN ({','.join('?' * len(part))}) ORDER BY display_order, id", part):
            out[row["resource_id"]].append(dict(row))
    return out


def _complete(conn: sqlite3.Connection, viewer: Viewer, rows: list[sqlite3.Row]) -> list[dict[str, Any]]:
    """The rows as dicts, with their attributes and ``may_download`` (the rule book's answer)."""
    ids = [row["id"] for row in rows]
    attributes = _attributes(conn, ids)
    held: dict[int, set[str]] = {}
    for i in range(0, len(rows), 500):
        held.update(resources.held_on_page(conn, rows[i:i + 500], viewer))
    out = []
    for row in rows:
        item = dict(row)
        item["attributes"] = attributes[row["id"]]
        actions = rules.resource_actions(viewer, rules.ResourceFacts.of(row, held.get(row["id"], ())))
        item["may_download"] = rules.DOWNLOAD in actions
        out.append(item)
    return out


def visible_datasets(conn: sqlite3.Connection, viewer: Viewer) -> list[dict[str, Any]]:
    """The datasets with data that the viewer may see, by title (see _complete)."""
    cond, params = resources.visibility(viewer)
    rows = conn.execute(f"SELECT {_DATASET_COLUMNS} FROM {_DATASET_FROM} WHERE {cond}"
                        " ORDER BY r.title COLLATE NOCASE, r.id", params).fetchall()
    return _complete(conn, viewer, rows)


def dataset_named(conn: sqlite3.Connection, viewer: Viewer, workspace: str, name: str) -> dict[str, Any] | None:
    """One dataset the viewer may see by its workspace and layer name; None when unknown or hidden."""
    cond, params = resources.visibility(viewer)
    row = conn.execute(f"SELECT {_DATASET_COLUMNS} FROM {_DATASET_FROM} WHERE d.workspace = ? AND d.name = ?"
                       f" AND {cond}", [workspace, name, *params]).fetchone()
    return _complete(conn, viewer, [row])[0] if row is not None else None


def visible_maps(conn: sqlite3.Connection, viewer: Viewer, map_id: int | None = None) -> list[dict[str, Any]]:
    """The maps the viewer may see, by title (or the one with ``map_id``)."""
    cond, params = resources.visibility(viewer)
    sql = f"SELECT {_MAP_COLUMNS} FROM resources r WHERE r.resource_type = 'map' AND {cond}"
    if map_id is not None:
        sql += " AND r.id = ?"
        params = [*params, map_id]
    return [dict(row) for row in conn.execute(sql + " ORDER BY r.title COLLATE NOCASE, r.id", params)]

