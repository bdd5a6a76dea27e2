"""Datasets: the resource record of an uploaded layer, its attributes and its files."""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.clock import now
from catalogue_app.store import resource_writes

WORKSPACE = "catalogue"


def unique_alternate(conn: sqlite3.Connection, name: str) -> str:
    """``catalogue:<name>``, with _2, _3... added when another dataset has it."""
    candidate, n = f"{WORKSPACE}:{name}", 1
    while conn.execute("SELECT 1 FROM resources WHERE alternate = ?", (candidate,)).fetchone():
        n += 1
        candidate = f"{WORKSPACE}:{name}_{n}"
    return candidate


def create(conn: sqlite3.Connection, *, uuid: str, owner_id: int, name: str, subtype: str, srid: str | None,
           bbox: list[float], ll_bbox: list[float], values: dict[str, Any]) -> tuple[int, str]:
    """A dataset record (not public: the caller grants what the upload asked); returns its id and
    alternate. ``values`` are checked resource fields (title, abstract...)."""
    alternate = unique_alternate(conn, name)
    row = {"uuid": uuid, "subtype": subtype, "srid": srid or "", "title": values.pop("title", None) or name,
           **dict(zip(("bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1"), bbox)),
           **dict(zip(("ll_x0", "ll_y0", "ll_x1", "ll_y1"), ll_bbox)), **values}
    rid = resource_writes.create(conn, "dataset", owner_id, row, public=False)
    conn.execute("UPDATE resources SET alternate = ? WHERE id = ?", (alternate, rid))
    resource_writes.set_regions_from_extent(conn, rid)
    return rid, alternate


def add_attributes(conn: sqlite3.Connection, resource_id: int, attributes: list[dict[str, Any]]) -> None:
    conn.executemany(
        "INSERT INTO dataset_attributes (resource_id, attribute, attribute_type, attribute_label, description,"
        " display_order, visible) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(resource_id, a["attribute"], a["attribute_type"], a.get("attribute_label"), a.get("description"),
          a.get("display_order", i + 1), int(a.get("visible", True))) for i, a in enumerate(attributes)])


def add_files(conn: sqlite3.Connection, resource_id: int, files: list[tuple[str, int, str]]) -> None:
    """(name, size, mime type) of each file under files/<uuid>/."""
    stamp = now()
    conn.executemany("INSERT INTO resource_files (resource_id, name, size, mime_type, created) VALUES (?, ?, ?, ?, ?)",
                     [(resource_id, name, size, mime, stamp) for name, size, mime in files])


def attributes(conn: sqlite3.Connection, resource_id: int) -> list[sqlite3.Row]:
    return conn.execute("SELECT id, attribute, attribute_type, attribute_label, description, display_order, visible"
                        " FROM dataset_attributes WHERE resource_id = ? ORDER BY display_order, id",
                        (resource_id,)).fetchall()


def by_alternate(conn: sqlite3.Connection, alternate: str) -> int | None:
    row = conn.execute("SELECT id FROM resources WHERE alternate = ? AND resource_type = 'dataset'",
                       (alternate,)).fetchone()
    return row[0] if row else None


def file_names(conn: sqlite3.Connection, resource_id: int) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM resource_files WHERE resource_id = ? ORDER BY name",
                                       (resource_id,))]
