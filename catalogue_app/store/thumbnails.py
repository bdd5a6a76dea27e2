"""Thumbnails in the database: a resource's thumbnail_url (an address under /uploaded/thumbs/
for a file of the data folder, or an image address given by a user), who may see a file, and
what drawing a dataset's thumbnail needs."""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.store import ogc, resources
from catalogue_app.store.resources import Viewer


def set_url(conn: sqlite3.Connection, resource_id: int, url: str | None) -> tuple[bool, str | None]:
    """Record the resource's thumbnail address (None: it has none); returns whether the
    resource exists and the address it had."""
    row = conn.execute("SELECT thumbnail_url FROM resources WHERE id = ?", (resource_id,)).fetchone()
    if row is None:
        return False, None
    conn.execute("UPDATE resources SET thumbnail_url = ? WHERE id = ?", (url, resource_id))
    return True, row[0]


def urls_of(conn: sqlite3.Connection, resource_ids: list[int]) -> dict[int, str | None]:
    """The thumbnail address each of these resources has now."""
    marks = ",".join("?" * len(resource_ids))
    return {r[0]: r[1] for r in conn.execute(f"SELECT id, thumbnail_url FROM resources WHERE id IN ({marks})",
                                             list(resource_ids))} if resource_ids else {}


def replace_url(conn: sqlite3.Connection, resource_id: int, url: str, expected: str | None) -> tuple[bool, bool]:
    """Record the thumbnail address only if the resource still has ``expected``: whether the
    resource exists, and whether the address was recorded."""
    row = conn.execute("SELECT thumbnail_url FROM resources WHERE id = ?", (resource_id,)).fetchone()
    if row is None:
        return False, False
    if row[0] != expected:
        return True, False
    conn.execute("UPDATE resources SET thumbnail_url = ? WHERE id = ?", (url, resource_id))
    return True, True


def is_used(conn: sqlite3.Connection, url: str) -> bool:
    """Whether some resource (a copy shares its original's) names this thumbnail address."""
    return conn.execute("SELECT 1 FROM resources WHERE thumbnail_url = ? LIMIT 1", (url,)).fetchone() is not None


def urls_under(conn: sqlite3.Connection, prefix: str) -> set[str]:
    """Every thumbnail address that starts with ``prefix``."""
    return {r[0] for r in conn.execute("SELECT thumbnail_url FROM resources WHERE thumbnail_url >= ?"
                                       " AND thumbnail_url < ?", (prefix, prefix + "\U0010ffff"))}


def visible_with_url(conn: sqlite3.Connection, viewer: Viewer, url: str, uuid: str) -> dict[str, Any] | None:
    """Whether the viewer may see a resource whose thumbnail is ``url``: None if not, else
    {"public": anonymous callers may see one too}. ``uuid``, the resource the file was made
    for, is looked at first (one indexed row); copies that share the file are found after."""
    cond, params = resources.visibility(viewer)
    rows = conn.execute(f"SELECT r.public_view FROM resources r WHERE r.uuid = ? AND r.thumbnail_url = ? AND {cond}",
                        [uuid, url, *params]).fetchall()
    if not rows:
        rows = conn.execute(f"SELECT r.public_view FROM resources r WHERE r.thumbnail_url = ? AND {cond}",
                            [url, *params]).fetchall()
    if not rows:
        return None
    return {"public": any(r[0] for r in rows)}


def current_for(conn: sqlite3.Connection, viewer: Viewer, uuid: str, prefix: str) -> str | None:
    """The thumbnail address of ours (under ``prefix``) that the resource ``uuid`` has now, when
    the viewer may see it: where an address it had before leads."""
    cond, params = resources.visibility(viewer)
    row = conn.execute(f"SELECT r.thumbnail_url FROM resources r WHERE r.uuid = ? AND {cond}", [uuid, *params]).fetchone()
    url = row[0] if row else None
    return url if url and url.startswith(prefix) else None


def drawing_source(conn: sqlite3.Connection, resource_id: int) -> dict[str, Any] | None:
    """What drawing a dataset needs: uuid, subtype, srid, crs_wkt, folder, bbox (native:
    x0, y0, x1, y1), ll_bbox, sld (its default style) and data_version; None for other resources."""
    row = conn.execute(
        "SELECT r.uuid, r.subtype, r.srid, r.bbox_x0, r.bbox_y0, r.bbox_x1, r.bbox_y1,"
        " r.ll_x0, r.ll_y0, r.ll_x1, r.ll_y1, d.folder, d.crs_wkt, d.data_version"
        " FROM resources r JOIN datasets d ON d.resource_id = r.id WHERE r.id = ?", (resource_id,)).fetchone()
    if row is None:
        return None
    return {"uuid": row["uuid"], "subtype": row["subtype"], "srid": row["srid"], "crs_wkt": row["crs_wkt"],
            "folder": row["folder"], "bbox": (row["bbox_x0"], row["bbox_y0"], row["bbox_x1"], row["bbox_y1"]),
            "ll_bbox": (row["ll_x0"], row["ll_y0"], row["ll_x1"], row["ll_y1"]),
            "sld": ogc.style_body(conn, resource_id, None), "data_version": row["data_version"]}


def map_drawing_source(conn: sqlite3.Connection, map_id: int) -> dict[str, Any] | None:
    """What drawing a map's thumbnail needs: its uuid, its longitude/latitude box and its
    visible layers, bottom first, that everyone may see (a thumbnail is shown to all who see the
    map: a private dataset never appears in it), each with its data folder, CRS, style, opacity
    and data version. None when it is no map."""
    row = conn.execute("SELECT uuid, ll_x0, ll_y0, ll_x1, ll_y1 FROM resources WHERE id = ? AND resource_type = 'map'",
                       (map_id,)).fetchone()
    if row is None:
        return None
    layers = []
    for layer in conn.execute(
            "SELECT l.dataset_id, l.current_style, l.opacity, r.subtype, r.srid, d.crs_wkt, d.folder, d.data_version"
            " FROM map_layers l"
            " JOIN resources r ON r.id = l.dataset_id JOIN datasets d ON d.resource_id = r.id"
            " WHERE l.map_id = ? AND l.visibility = 1 AND l.opacity > 0 AND r.public_view = 1 AND r.dirty = 0"
            " AND d.folder IS NOT NULL ORDER BY l.position, l.id", (map_id,)):
        sld = ogc.style_body(conn, layer["dataset_id"], layer["current_style"]) if layer["current_style"] else None
        layers.append({"folder": layer["folder"], "subtype": layer["subtype"], "crs": layer["crs_wkt"] or layer["srid"],
                       "sld": sld or ogc.style_body(conn, layer["dataset_id"], None), "opacity": layer["opacity"],
                       "data_version": layer["data_version"]})
    return {"uuid": row["uuid"], "ll_bbox": (row["ll_x0"], row["ll_y0"], row["ll_x1"], row["ll_y1"]), "layers": layers}


def document_drawing_source(conn: sqlite3.Connection, resource_id: int) -> dict[str, Any] | None:
    """What drawing a document's thumbnail needs: its uuid, the extension and name of its file
    (kept under files/<uuid>/) and the thumbnail address it has now; None for a resource that is
    no document or a document without a file (a remote address)."""
    row = conn.execute(
        "SELECT r.uuid, r.thumbnail_url, d.extension, d.file_name FROM resources r"
        " JOIN documents d ON d.resource_id = r.id WHERE r.id = ? AND d.file_name IS NOT NULL", (resource_id,)).fetchone()
    return None if row is None else dict(row)
