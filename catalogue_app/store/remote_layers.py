"""Remote datasets: a dataset whose data stay on another OGC service (a WMS layer there), and
the links a harvested resource of any type brings from its remote.

A remote dataset is a ``dataset`` resource (subtype ``remote``, sourcetype ``REMOTE``) with a
``remote_layers`` row naming the service and its layer, and a ``datasets`` row so that the
services, pages and lists that know datasets know it too. Its alternate is ``remote:<name>``
(the local WMS serves it under that name, drawing it from the remote). Its ``datasets.folder``
is ``remote-<uuid>``: a folder that is never created under files/ (no upload, copy or ingest
writes one by that name; a copy of a remote dataset is refused), so whatever reads a dataset's
files finds none, and the sweep, which only looks at folders that exist, never sees it.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from catalogue_app.store import resource_writes
from catalogue_app.store.datasets import MAP_NAME, RESERVED

WORKSPACE = "remote"
FOLDER_PREFIX = "remote-"
COLUMNS = "resource_id, service_type, service_url, layer_name, download_url"
LINK_COLUMNS = ("url", "name", "mime", "link_type", "extension")
UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def folder_name(uuid: str) -> str:
    return FOLDER_PREFIX + uuid


def unique_alternate(conn: sqlite3.Connection, name: str) -> str:
    """``remote:<name>`` (characters other than letters, digits, "_", "." and "-" made "_"),
    with _2, _3... added when another resource has it."""
    base = UNSAFE.sub("_", name).strip("_") or "layer"
    candidate, n = f"{WORKSPACE}:{base}", 1
    while candidate in RESERVED or MAP_NAME.match(candidate) or conn.execute(
            "SELECT 1 FROM resources WHERE alternate = ?", (candidate,)).fetchone():
        n += 1
        candidate = f"{WORKSPACE}:{base}_{n}"
    return candidate


def _box(ll_bbox: list[float] | None) -> dict[str, Any]:
    if not ll_bbox or len(ll_bbox) != 4 or None in ll_bbox:
        return dict.fromkeys(("bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1", "ll_x0", "ll_y0", "ll_x1", "ll_y1"))
    box = [float(v) for v in ll_bbox]
    return {**dict(zip(("bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1"), box)),
            **dict(zip(("ll_x0", "ll_y0", "ll_x1", "ll_y1"), box))}


def create(conn: sqlite3.Connection, *, uuid: str, owner_id: int, name: str, values: dict[str, Any],
           ll_bbox: list[float] | None, service_type: str, service_url: str, layer_name: str,
           download_url: str | None) -> int:
    """A remote dataset (not public: the caller grants what it should have); returns its id.
    ``values`` are resource fields by their API names (title, abstract, date...; others are
    left out); ``ll_bbox`` is [x0, y0, x1, y1] in EPSG:4326 (its only box)."""
    values = dict(values)
    alternate = unique_alternate(conn, name)
    row = {**values, "uuid": uuid, "subtype": "remote", "srid": "EPSG:4326",
           "title": values.get("title") or name, **_box(ll_bbox)}
    rid = resource_writes.create(conn, "dataset", owner_id, row, public=False)
    conn.execute("UPDATE resources SET alternate = ?, sourcetype = 'REMOTE' WHERE id = ?", (alternate, rid))
    resource_writes.set_regions_from_extent(conn, rid)
    workspace, _, layer = alternate.partition(":")
    conn.execute("INSERT INTO datasets (resource_id, name, workspace, store, source_name, folder)"
                 " VALUES (?, ?, ?, ?, ?, ?)", (rid, layer, workspace, service_type.lower(), alternate,
                                                folder_name(uuid)))
    conn.execute(f"INSERT INTO remote_layers ({COLUMNS}) VALUES (?, ?, ?, ?, ?)",
                 (rid, service_type, service_url, layer_name, download_url))
    return rid


def update(conn: sqlite3.Connection, rid: int, *, ll_bbox: list[float] | None, service_type: str,
           service_url: str, layer_name: str, download_url: str | None) -> None:
    """New facts of the remote layer: its extent and where it is served."""
    resource_writes.update(conn, rid, _box(ll_bbox))
    resource_writes.set_regions_from_extent(conn, rid)
    conn.execute("UPDATE datasets SET store = ? WHERE resource_id = ?", (service_type.lower(), rid))
    conn.execute(f"INSERT OR REPLACE INTO remote_layers ({COLUMNS}) VALUES (?, ?, ?, ?, ?)",
                 (rid, service_type, service_url, layer_name, download_url))


def get(conn: sqlite3.Connection, rid: int) -> sqlite3.Row | None:
    return of_many(conn, [rid]).get(rid)


def of_many(conn: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    if not ids:
        return {}
    return {row["resource_id"]: row for row in conn.execute(
        f"SELECT {COLUMNS} FROM remote_layers WHERE resource_id IN ({','.join('?' * len(ids))})", ids)}


# -- links ----------------------------------------------------------------------------------------
def set_links(conn: sqlite3.Connection, rid: int, links: list[dict[str, Any]]) -> None:
    """Replace the links the resource brought from its remote (dicts with url, and optionally
    name, mime, link_type, extension)."""
    conn.execute("DELETE FROM remote_links WHERE resource_id = ?", (rid,))
    conn.executemany(
        "INSERT INTO remote_links (resource_id, url, name, mime, link_type, extension) VALUES (?, ?, ?, ?, ?, ?)",
        [(rid, link["url"], link.get("name") or "", link.get("mime") or "", link.get("link_type") or "url",
          link.get("extension") or "") for link in links if link.get("url")])


def links_of(conn: sqlite3.Connection, ids: list[int]) -> dict[int, list[sqlite3.Row]]:
    """The remote links of each resource, in the order they were given (resources without any
    are left out)."""
    out: dict[int, list[sqlite3.Row]] = {}
    if ids:
        for row in conn.execute(
                f"SELECT resource_id, {', '.join(LINK_COLUMNS)} FROM remote_links"
                f" WHERE resource_id IN ({','.join('?' * len(ids))}) ORDER BY rowid", ids):
            out.setdefault(row["resource_id"], []).append(row)
    return out
