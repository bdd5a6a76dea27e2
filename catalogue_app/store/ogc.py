"""The datasets as the OGC services (WMS, WFS, WCS) see them: the ones a viewer may see, with
what drawing and serving their data needs, in one query for a capabilities document and in a
few for one layer."""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app import rules
from catalogue_app.store import resources
from catalogue_app.store.datasets import WORKSPACE
from catalogue_app.store.resources import Viewer

_COLUMNS = (
    "r.id, r.uuid, r.owner_id, r.group_id, r.resource_type, r.alternate, r.title, r.abstract, r.subtype, r.srid, r.last_updated,"
    " r.bbox_x0, r.bbox_y0, r.bbox_x1, r.bbox_y1, r.ll_x0, r.ll_y0, r.ll_x1, r.ll_y1,"
    " d.name, d.workspace, d.source_name, d.folder, d.geometry_type, d.feature_count, d.crs_wkt,"
    " d.has_time, d.time_attribute, d.default_style_id, d.data_version,"
    " rl.service_url AS remote_url, rl.layer_name AS remote_layer, rl.service_type AS remote_type"
)
# A remote dataset's layer is drawn by its remote service (store/remote_layers.py).
_FROM = "resources r JOIN datasets d ON d.resource_id = r.id LEFT JOIN remote_layers rl ON rl.resource_id = r.id"


def _keywords(conn: sqlite3.Connection, ids: list[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {i: [] for i in ids}
    if ids:
        for rid, name in conn.execute(
                "SELECT rk.resource_id, k.name FROM resource_keywords rk JOIN keywords k ON k.id = rk.keyword_id"
                f" WHERE rk.resource_id IN ({','.join('?' * len(ids))}) ORDER BY k.name", ids):
            out[rid].append(name)
    return out


def _styles(conn: sqlite3.Connection, ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    if ids:
        for row in conn.execute(
                "SELECT id, resource_id, name, workspace, sld_title FROM styles"
                f" WHERE resource_id IN ({','.join('?' * len(ids))}) ORDER BY id", ids):
            out[row["resource_id"]].append(dict(row))
    return out


def _attributes(conn: sqlite3.Connection, ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    if ids:
        for row in conn.execute(
                "SELECT resource_id, attribute, attribute_type, attribute_label, description, display_order, visible"
                f" FROM dataset_attributes WHERE resource_id IN ({','.join('?' * len(ids))})"
                " ORDER BY display_order, id", ids):
            out[row["resource_id"]].append(dict(row))
    return out


def _complete(conn: sqlite3.Connection, rows: list[sqlite3.Row], viewer: Viewer,
              attributes: bool, download: bool = False, editable: bool = False) -> list[dict[str, Any]]:
    ids = [row["id"] for row in rows]
    keywords, styles = _keywords(conn, ids), _styles(conn, ids)
    attrs = _attributes(conn, ids) if attributes else {}
    held: dict[int, set[str]] = {}
    if download:
        held = {row["id"]: resources.held_perms(conn, viewer, row["id"]) for row in rows}
    elif editable and viewer.id is not None:
        for i in range(0, len(rows), 500):
            held.update(resources.held_on_page(conn, rows[i:i + 500], viewer))
    out = []
    for row in rows:
        layer = dict(row)
        layer["keywords"] = keywords[row["id"]]
        layer["styles"] = styles[row["id"]]
        layer["attributes"] = attrs.get(row["id"], [])
        actions = rules.resource_actions(viewer, rules.ResourceFacts.of(row, held.get(row["id"], ())))
        layer["may_download"] = rules.DOWNLOAD in actions if download else None
        # may the viewer change the features (WFS-T)? None when not asked
        layer["may_edit"] = (viewer.id is not None and rules.CHANGE_DATA in actions) if editable else None
        out.append(layer)
    return out


def visible_layers(conn: sqlite3.Connection, viewer: Viewer, workspace: str | None = None,
                   name: str | None = None, attributes: bool = False, editable: bool = False) -> list[dict[str, Any]]:
    """Datasets with data that the viewer may see, by title; ``workspace`` and ``name`` narrow
    the list (the per-workspace and per-layer service addresses). ``may_download`` is left None
    here (a capabilities document does not need it; one query a layer): layer_named gives it.
    With ``editable``, ``may_edit`` says whether the viewer may change each one's features."""
    cond, params = resources.visibility(viewer)
    sql = f"SELECT {_COLUMNS} FROM {_FROM} WHERE {cond}"
    if workspace:
        sql += " AND d.workspace = ?"
        params = [*params, workspace]
    if name:
        sql += " AND d.name = ?"
        params = [*params, name]
    rows = conn.execute(sql + " ORDER BY r.title COLLATE NOCASE, r.id", params).fetchall()
    return _complete(conn, rows, viewer, attributes, editable=editable)


def _candidates(name: str) -> list[tuple[str, str]]:
    """(workspace, layer) pairs a name may mean: ``ws:name``; ``ws__name`` (a WCS coverage id) or
    else a bare name that holds "__"; a bare ``name`` in the catalogue's workspace."""
    if ":" in name:
        workspace, _, layer = name.partition(":")
        return [(workspace, layer)]
    if "__" in name:
        workspace, _, layer = name.partition("__")
        return [(workspace, layer), (WORKSPACE, name)]
    return [(WORKSPACE, name)]


def layer_named(conn: sqlite3.Connection, viewer: Viewer, name: str,
                attributes: bool = True) -> dict[str, Any] | None:
    """One dataset the viewer may see, by any of its names; None when unknown or hidden."""
    cond, params = resources.visibility(viewer)
    for workspace, layer in _candidates(name.strip()):
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM {_FROM}"
            f" WHERE d.workspace = ? AND d.name = ? AND {cond}", [workspace, layer, *params]).fetchone()
        if row:
            return _complete(conn, [row], viewer, attributes, download=True, editable=True)[0]
    return None


def style_body(conn: sqlite3.Connection, resource_id: int, name: str | None) -> bytes | None:
    """The SLD of a dataset's style: the one named (with or without its workspace), or its default."""
    if name:
        style = conn.execute("SELECT sld_body FROM styles WHERE resource_id = ? AND name = ?",
                             (resource_id, name.rpartition(":")[2])).fetchone()
    else:
        style = conn.execute("SELECT s.sld_body FROM datasets d JOIN styles s ON s.id = d.default_style_id"
                             " WHERE d.resource_id = ?", (resource_id,)).fetchone()
    if style is None:
        return None
    body = style[0]
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


def map_layer_names(conn: sqlite3.Connection, viewer: Viewer, map_id: int) -> list[dict[str, Any]] | None:
    """The layers of a map the viewer may see, bottom first, with the alternate of each layer's
    dataset (None for a layer from outside the catalogue or whose dataset was deleted); None when
    the map is unknown or hidden. Whether each dataset may be seen is the caller's next question."""
    cond, params = resources.visibility(viewer)
    if conn.execute(f"SELECT 1 FROM resources r WHERE r.id = ? AND r.resource_type = 'map' AND {cond}",
                    [map_id, *params]).fetchone() is None:
        return None
    rows = conn.execute(
        "SELECT l.id, l.visibility, l.opacity, l.current_style, d.alternate FROM map_layers l"
        " LEFT JOIN resources d ON d.id = l.dataset_id WHERE l.map_id = ? ORDER BY l.position, l.id", (map_id,))
    return [dict(row) for row in rows]
