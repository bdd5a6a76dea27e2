"""The packages this catalogue exported or imported (migration 32) and their members, which are
the sync points a later package is compared with.

An import writes its ``packages`` row (direction import, maker: the id of the catalogue that made
the package) and one member per resource with the package's version of it (``peer_version``),
ours after the import (``local_version``) and what was done (``outcome``). The sync point of a
resource for an incoming package is the most recent member row for it in: (a "since" package)
its base package or any imported package whose base is that base; else (a whole package) any
package that catalogue made, or that we exported.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from catalogue_app.clock import now


def our_id(conn: sqlite3.Connection) -> str:
    """This catalogue's own id (catalogue_identity, made by migration 32)."""
    return conn.execute("SELECT id FROM catalogue_identity LIMIT 1").fetchone()[0]


def get(conn: sqlite3.Connection, package_id: str) -> sqlite3.Row | None:
    return conn.execute("SELECT id, direction, created, user_id, maker, base, file_name, size, manifest, report"
                        " FROM packages WHERE id = ?", (package_id,)).fetchone()


def members(conn: sqlite3.Connection, package_id: str) -> dict[str, sqlite3.Row]:
    """The members of a package, by uuid."""
    return {r["uuid"]: r for r in conn.execute(
        "SELECT package_id, uuid, local_version, local_data_version, peer_version, peer_data_version, data, outcome"
        " FROM package_members WHERE package_id = ?", (package_id,))}


def sync_point(conn: sqlite3.Connection, uuid: str, *, maker: str, base: str | None,
               exclude: str | None = None) -> sqlite3.Row | None:
    """The member row the incoming package's copy of ``uuid`` is compared with (see the module's
    docstring), None when there is none; ``exclude`` (the package being imported) is not one.
    An exported member's ``peer_version`` is its ``local_version`` (the other side got our
    versions with their numbers)."""
    if base is not None:
        where, args = "(p.id = ? OR (p.direction = 'import' AND p.base = ?))", [base, base]
    else:
        where, args = "(p.maker = ? OR p.direction = 'export')", [maker]
    return conn.execute(
        "SELECT m.package_id, m.uuid, m.local_version, m.local_data_version,"
        " COALESCE(m.peer_version, m.local_version) AS peer_version,"
        " COALESCE(m.peer_data_version, m.local_data_version) AS peer_data_version, m.data, m.outcome, p.created"
        f" FROM package_members m JOIN packages p ON p.id = m.package_id WHERE m.uuid = ? AND {where}"
        " AND p.id IS NOT ? AND COALESCE(m.outcome, '') NOT IN ('failed', 'refused', 'conflict')"
        " ORDER BY p.created DESC, m.local_version DESC LIMIT 1", [uuid, *args, exclude]).fetchone()


def record_import(conn: sqlite3.Connection, package_id: str, *, maker: str, base: str | None, user_id: int | None,
                  manifest: dict[str, Any]) -> None:
    """The imported package's row (kept when the same package was imported before)."""
    conn.execute("INSERT INTO packages (id, direction, created, user_id, maker, base, manifest)"
                 " VALUES (?, 'import', ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                 (package_id, now(), user_id, maker, base, json.dumps(manifest, ensure_ascii=False)))


def set_report(conn: sqlite3.Connection, package_id: str, report: dict[str, Any]) -> None:
    conn.execute("UPDATE packages SET report = ? WHERE id = ?", (json.dumps(report, ensure_ascii=False), package_id))


def set_member(conn: sqlite3.Connection, package_id: str, uuid: str, *, local_version: int, local_data_version: int,
               peer_version: int | None, peer_data_version: int | None, data: str, outcome: str) -> None:
    """One resource of an imported package: its versions here and there, and what was done."""
    conn.execute(
        "INSERT INTO package_members (package_id, uuid, local_version, local_data_version, peer_version,"
        " peer_data_version, data, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (package_id, uuid) DO UPDATE"
        " SET local_version = excluded.local_version, local_data_version = excluded.local_data_version,"
        " peer_version = excluded.peer_version, peer_data_version = excluded.peer_data_version,"
        " data = excluded.data, outcome = excluded.outcome",
        (package_id, uuid, local_version, local_data_version, peer_version, peer_data_version, data, outcome))


def fid_map(conn: sqlite3.Connection, resource_id: int, peer: str) -> dict[int, int]:
    """The features ``peer`` added to the dataset: {their id there: their id here}."""
    return dict(conn.execute("SELECT peer_fid, local_fid FROM package_fids WHERE resource_id = ? AND peer = ?",
                             (resource_id, peer)).fetchall())


def add_fids(conn: sqlite3.Connection, resource_id: int, peer: str, pairs: dict[int, int]) -> None:
    conn.executemany("INSERT OR REPLACE INTO package_fids (resource_id, peer, peer_fid, local_fid) VALUES (?, ?, ?, ?)",
                     [(resource_id, peer, there, here) for there, here in pairs.items()])


def maker_of(conn: sqlite3.Connection, package_id: str) -> str:
    """The id of the catalogue that made a package known here ('' when it is not)."""
    row = conn.execute("SELECT maker FROM packages WHERE id = ?", (package_id,)).fetchone()
    return row[0] if row else ""
