"""Map layers: the layers of a map, in order, each showing a dataset of the catalogue or a layer
from elsewhere (dataset null).

A map links to the datasets of its layers through internal rows of ``linked_resources``, kept in
step here, so that linked_resources shows them as GeoNode does.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from catalogue_app.store.resources import COLUMNS, Viewer, visibility

LAYER_COLUMNS = ("l.id, l.map_id, l.dataset_id, l.name, l.position, l.visibility, l.opacity, l.current_style,"
                 " l.extra_params")
# Columns a layer write may set (the API's "order" is ``position``).
WRITABLE = ("dataset_id", "name", "position", "visibility", "opacity", "current_style", "extra_params")


def _marks(ids: list[int]) -> str:
    return ",".join("?" * len(ids))


def layers_of(conn: sqlite3.Connection, map_ids: list[int]) -> dict[int, list[sqlite3.Row]]:
    """The layers of each map, in their order."""
    out: dict[int, list[sqlite3.Row]] = {i: [] for i in map_ids}
    if map_ids:
        for row in conn.execute(f"SELECT {LAYER_COLUMNS} FROM map_layers l WHERE l.map_id IN ({_marks(map_ids)})"
                                " ORDER BY l.map_id, l.position, l.id", map_ids):
            out[row["map_id"]].append(row)
    return out


def layers_of_dataset(conn: sqlite3.Connection, dataset_id: int, viewer: Viewer) -> list[sqlite3.Row]:
    """The layers that show the dataset, in maps the viewer may see."""
    cond, params = visibility(viewer, "m")
    return conn.execute(
        f"SELECT {LAYER_COLUMNS} FROM map_layers l JOIN resources m ON m.id = l.map_id"
        f" WHERE l.dataset_id = ? AND {cond} ORDER BY l.map_id, l.position, l.id", [dataset_id, *params]).fetchall()


def maps_of_dataset(conn: sqlite3.Connection, dataset_id: int, viewer: Viewer) -> list[sqlite3.Row]:
    """The maps the viewer may see that have a layer showing the dataset, by id."""
    cond, params = visibility(viewer, "r")
    return conn.execute(
        f"SELECT r.id, r.title FROM resources r WHERE r.resource_type = 'map' AND {cond}"
        " AND r.id IN (SELECT map_id FROM map_layers WHERE dataset_id = ?) ORDER BY r.id",
        [*params, dataset_id]).fetchall()


def visible_datasets(conn: sqlite3.Connection, viewer: Viewer, ids: list[int]) -> dict[int, sqlite3.Row]:
    """The resource rows of the datasets among ``ids`` that the viewer may see."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return {}
    cond, params = visibility(viewer)
    rows = conn.execute(f"SELECT {COLUMNS} FROM resources r WHERE r.id IN ({_marks(ids)})"
                        f" AND r.resource_type = 'dataset' AND {cond}", [*ids, *params])
    return {row["id"]: row for row in rows}


def dataset_named(conn: sqlite3.Connection, alternate: str) -> int | None:
    """The dataset whose alternate (``workspace:name``) this is."""
    row = conn.execute("SELECT id FROM resources WHERE alternate = ? AND resource_type = 'dataset'",
                       (alternate,)).fetchone()
    return row[0] if row else None


def _row_values(values: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in values.items() if k in WRITABLE}
    if "extra_params" in out:
        out["extra_params"] = json.dumps(out["extra_params"], ensure_ascii=False)
    if "visibility" in out:
        out["visibility"] = int(bool(out["visibility"]))
    return out


def insert(conn: sqlite3.Connection, map_id: int, values: dict[str, Any]) -> int:
    """A new layer of the map; returns its id."""
    row = {"map_id": map_id, **_row_values(values)}
    return conn.execute(f"INSERT INTO map_layers ({', '.join(row)}) VALUES ({_marks(list(row))})",
                        list(row.values())).lastrowid


def update(conn: sqlite3.Connection, layer_id: int, values: dict[str, Any]) -> None:
    row = _row_values(values)
    if row:
        conn.execute(f"UPDATE map_layers SET {', '.join(f'{k} = ?' for k in row)} WHERE id = ?",
                     [*row.values(), layer_id])


def delete(conn: sqlite3.Connection, layer_ids: list[int]) -> None:
    if layer_ids:
        conn.execute(f"DELETE FROM map_layers WHERE id IN ({_marks(layer_ids)})", layer_ids)


def sync_links(conn: sqlite3.Connection, map_id: int) -> None:
    """The map's internal links: one to each dataset its layers show (links made by hand stay)."""
    conn.execute("DELETE FROM linked_resources WHERE source_id = ? AND internal = 1 AND target_id NOT IN"
                 " (SELECT dataset_id FROM map_layers WHERE map_id = ? AND dataset_id IS NOT NULL)", (map_id, map_id))
    conn.execute("INSERT OR IGNORE INTO linked_resources (source_id, target_id, internal)"
                 " SELECT DISTINCT map_id, dataset_id, 1 FROM map_layers WHERE map_id = ? AND dataset_id IS NOT NULL"
                 " AND dataset_id <> map_id", (map_id,))


def copy(conn: sqlite3.Connection, source_map_id: int, new_map_id: int) -> None:
    """The layers of a map copied to another (new ids; the same datasets)."""
    conn.execute(
        "INSERT INTO map_layers (map_id, dataset_id, name, position, visibility, opacity, current_style, extra_params)"
        " SELECT ?, dataset_id, name, position, visibility, opacity, current_style, extra_params FROM map_layers"
        " WHERE map_id = ? ORDER BY position, id", (new_map_id, source_map_id))
    sync_links(conn, new_map_id)


def fit_extent(conn: sqlite3.Connection, map_id: int) -> None:
    """The map's extent made the union of its layers' datasets' (WGS84) extents; left as it is
    when no layer shows a dataset with one."""
    box = conn.execute(
        "SELECT min(d.ll_x0), min(d.ll_y0), max(d.ll_x1), max(d.ll_y1) FROM map_layers l"
        " JOIN resources d ON d.id = l.dataset_id WHERE l.map_id = ? AND d.ll_x0 IS NOT NULL AND d.ll_x0 <= d.ll_x1",
        (map_id,)).fetchone()
    if box[0] is None:
        return
    conn.execute("UPDATE resources SET srid = 'EPSG:4326', bbox_x0 = ?, bbox_y0 = ?, bbox_x1 = ?, bbox_y1 = ?,"
                 " ll_x0 = ?, ll_y0 = ?, ll_x1 = ?, ll_y1 = ? WHERE id = ?", (*box, *box, map_id))
