"""The rows of a copy: the record with its metadata (resource_writes.copy) and what its type
keeps beside it (copy_type_rows), written in the copy job's transaction."""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from catalogue_app.store import datasets, geoapps, map_layers, resource_writes
from catalogue_app.store.resources import GEOAPP_TYPES


class Source(NamedTuple):
    """What copying a resource's files needs: its type, its folder under files/ and the files
    recorded in it (paths relative to the folder)."""

    resource_type: str
    folder: str
    files: list[str]


def source(conn: sqlite3.Connection, resource_id: int) -> Source | None:
    """The resource's files as recorded (None if the resource is gone). A dataset's folder is the
    one its data is in; any other resource's is named after its uuid."""
    row = conn.execute("SELECT r.resource_type, coalesce(d.folder, r.uuid) FROM resources r"
                       " LEFT JOIN datasets d ON d.resource_id = r.id WHERE r.id = ?", (resource_id,)).fetchone()
    if row is None:
        return None
    names = [r[0] for r in conn.execute("SELECT name FROM resource_files WHERE resource_id = ? AND name <> ''"
                                        " ORDER BY name", (resource_id,))]
    return Source(row[0], row[1], names)


def copy(conn: sqlite3.Connection, source_id: int, owner_id: int, new_uuid: str, folder: str,
         title: str | None = None) -> int:
    """A copy of the resource owned by ``owner_id``, its files in ``folder`` under files/; its
    permissions are those of a new resource (the original's grants are not copied). Returns its id."""
    new_id = resource_writes.copy(conn, source_id, owner_id, title, new_uuid=new_uuid)
    kind = conn.execute("SELECT resource_type FROM resources WHERE id = ?", (new_id,)).fetchone()[0]
    copy_type_rows(conn, kind, source_id, new_id, folder)
    return new_id


def copy_type_rows(conn: sqlite3.Connection, kind: str, source_id: int, new_id: int, folder: str) -> None:
    """The rows a resource type keeps beside its record, copied from ``source_id`` to ``new_id``.
    Documents need nothing more (resource_writes.copy takes their documents row)."""
    if kind == "dataset":
        datasets.copy(conn, source_id, new_id, folder)
    elif kind == "map":
        _map_rows(conn, source_id, new_id)
    elif kind in GEOAPP_TYPES:
        geoapps.copy(conn, source_id, new_id)


def _map_rows(conn: sqlite3.Connection, source_id: int, new_id: int) -> None:
    """A map's layers (new ids, the same datasets; the record and its config are copied already)."""
    map_layers.copy(conn, source_id, new_id)