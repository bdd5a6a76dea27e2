"""Packages in the database (migration 32): this catalogue's id, the ``packages`` row of an export
and its ``package_members`` (the sync points a later "since" package is compared with), what a
"since" export needs to know of its base package, and the lists of packages a user sees."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from catalogue_app.store.package_records import latest_version

PACKAGE_COLUMNS = "p.id, p.direction, p.created, p.user_id, u.username, p.maker, p.base, p.file_name, p.size, p.report"


def catalogue_id(conn: sqlite3.Connection) -> str:
    """This catalogue's own id (made by migration 32)."""
    return conn.execute("SELECT id FROM catalogue_identity").fetchone()[0]


def get(conn: sqlite3.Connection, package_id: str) -> sqlite3.Row | None:
    """The package row (exported or imported here) with its user's name; None when unknown."""
    return conn.execute(f"SELECT {PACKAGE_COLUMNS}, p.manifest FROM packages p LEFT JOIN users u ON u.id = p.user_id"
                        " WHERE p.id = ?", (package_id,)).fetchone()


def listed(conn: sqlite3.Connection, user_id: int | None, limit: int, offset: int) -> tuple[int, list[sqlite3.Row]]:
    """The packages a user exported or imported (None: everyone's), newest first, and how many."""
    where, params = ("WHERE p.user_id = ?", [user_id]) if user_id is not None else ("", [])
    total = conn.execute(f"SELECT COUNT(*) FROM packages p {where}", params).fetchone()[0]
    rows = conn.execute(f"SELECT {PACKAGE_COLUMNS} FROM packages p LEFT JOIN users u ON u.id = p.user_id {where}"
                        " ORDER BY p.created DESC, p.rowid DESC LIMIT ? OFFSET ?", [*params, limit, offset]).fetchall()
    return total, rows


def member_count(conn: sqlite3.Connection, package_id: str) -> int:
    return conn.execute("SELECT COUNT(*) FROM package_members WHERE package_id = ?", (package_id,)).fetchone()[0]


def record_export(conn: sqlite3.Connection, *, package_id: str, user_id: int | None, created: str, maker: str,
                  base: str | None, file_name: str, size: int, manifest: dict[str, Any], report: dict[str, Any],
                  members: list[tuple[str, int, int, str]]) -> None:
    """Store an export: its row and one member per resource it carried, (uuid, our latest
    version number, our data version, how its data travelled)."""
    conn.execute("INSERT INTO packages (id, direction, created, user_id, maker, base, file_name, size, manifest, report)"
                 " VALUES (?, 'export', ?, ?, ?, ?, ?, ?, ?, ?)",
                 (package_id, created, user_id, maker, base, file_name, size, json.dumps(manifest), json.dumps(report)))
    conn.executemany("INSERT INTO package_members (package_id, uuid, local_version, local_data_version, data)"
                     " VALUES (?, ?, ?, ?, ?)", [(package_id, *m) for m in members])


def current_versions(conn: sqlite3.Connection, resource_id: int) -> tuple[int, int]:
    """The resource's latest version number and its data version (0 for no dataset)."""
    row = conn.execute("SELECT data_version FROM datasets WHERE resource_id = ?", (resource_id,)).fetchone()
    return latest_version(conn, resource_id), (row[0] if row else 0)


def since(conn: sqlite3.Connection, base_id: str) -> dict[str, Any] | None:
    """What changed here since the package ``base_id`` (exported or imported here; None when it is
    unknown): ``changed`` {resource id: {"uuid", "base_version", "local_data_version"}} for its
    members whose latest version is above the one recorded for them, ``new`` the ids of the
    resources created here after it and not in it, ``deleted`` its members deleted here since
    (their tombstones, with ``base_version``)."""
    base = conn.execute("SELECT id, created FROM packages WHERE id = ?", (base_id,)).fetchone()
    if base is None:
        return None
    changed: dict[int, dict[str, Any]] = {}
    deleted: list[dict[str, Any]] = []
    members = conn.execute(
        "SELECT m.uuid, m.local_version, m.local_data_version, coalesce(m.peer_version, m.local_version),"
        " r.id, t.resource_type, t.title, t.deleted FROM package_members m"
        " LEFT JOIN resources r ON r.uuid = m.uuid LEFT JOIN resource_tombstones t ON t.uuid = m.uuid"
        " WHERE m.package_id = ? ORDER BY m.uuid", (base_id,)).fetchall()
    for uuid, local_version, local_data, base_version, rid, kind, title, when in members:
        if rid is not None:
            if latest_version(conn, rid) > local_version:
                changed[rid] = {"uuid": uuid, "base_version": base_version, "local_data_version": local_data}
        elif when is not None:
            deleted.append({"uuid": uuid, "resource_type": kind, "title": title, "deleted": when,
                            "base_version": base_version})
    new = [r[0] for r in conn.execute(
        "SELECT r.id FROM resources r WHERE r.created > ? AND r.dirty = 0 AND NOT EXISTS"
        " (SELECT 1 FROM package_members m WHERE m.package_id = ? AND m.uuid = r.uuid) ORDER BY r.id",
        (base["created"], base_id))]
    return {"changed": changed, "new": new, "deleted": deleted}


def data_target(conn: sqlite3.Connection, resource_id: int) -> sqlite3.Row | None:
    """A dataset's folder (under files/), subtype, CRS and data version; None when it is no dataset."""
    return conn.execute("SELECT d.folder, d.data_version, d.crs_wkt, r.subtype, r.srid, r.uuid FROM datasets d"
                        " JOIN resources r ON r.id = d.resource_id WHERE d.resource_id = ?", (resource_id,)).fetchone()


def document_file(conn: sqlite3.Connection, resource_id: int) -> sqlite3.Row | None:
    """A document's stored file name, media type and remote address."""
    return conn.execute("SELECT r.uuid, d.file_name, d.mime_type, d.doc_url FROM documents d"
                        " JOIN resources r ON r.id = d.resource_id WHERE d.resource_id = ?", (resource_id,)).fetchone()


def map_datasets(conn: sqlite3.Connection, map_ids: list[int]) -> list[int]:
    """The ids of the datasets the layers of these maps show."""
    if not map_ids:
        return []
    marks = ",".join("?" * len(map_ids))
    return [r[0] for r in conn.execute(f"SELECT DISTINCT dataset_id FROM map_layers WHERE map_id IN ({marks})"
                                       " AND dataset_id IS NOT NULL ORDER BY dataset_id", map_ids)]


def kinds(conn: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    """id, uuid, resource_type, subtype, title, sourcetype and thumbnail address of these resources,
    and whether each is a remote (harvested) one."""
    out: dict[int, sqlite3.Row] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
                f"SELECT r.id, r.uuid, r.resource_type, r.subtype, r.title, r.sourcetype, r.thumbnail_url,"
                f" (SELECT 1 FROM remote_layers l WHERE l.resource_id = r.id) AS remote_layer"
                f" FROM resources r WHERE r.id IN ({marks})", chunk):
            out[row["id"]] = row
    return out


def local_version(conn: sqlite3.Connection, package_id: str, uuid: str) -> int:
    """Our version number of a resource recorded for a package (0: none)."""
    row = conn.execute("SELECT local_version FROM package_members WHERE package_id = ? AND uuid = ?",
                       (package_id, uuid)).fetchone()
    return row[0] if row else 0
