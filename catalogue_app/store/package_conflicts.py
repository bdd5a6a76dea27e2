"""Conflicts of field packages (migration 32, ``package_conflicts``): a resource changed on both
sides since a package, the incoming copy kept aside until a user chooses (packages/conflicts.py).

A conflict row holds the incoming record as JSON, the folder of its files under files/, and the
uuid of the version row (kind ``incoming``) it added to the local resource's history. Its state
is ``open`` until it is resolved: ``kept_local``, ``kept_incoming`` or ``kept_both``.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from catalogue_app.clock import now


COLUMNS = ("c.id, c.package_id, c.uuid, c.resource_id, c.kind, c.title, c.created, c.version_uuid, c.folder,"
           " c.record, c.state, c.resolved, c.resolved_by, p.user_id AS importer_id, p.maker, p.manifest,"
           " u.username AS resolved_by_name")
_FROM = (" FROM package_conflicts c LEFT JOIN packages p ON p.id = c.package_id"
         " LEFT JOIN users u ON u.id = c.resolved_by")


def add(conn: sqlite3.Connection, package_id: str, uuid: str, resource_id: int | None, kind: str, title: str,
        record: dict[str, Any]) -> int:
    """A new open conflict; returns its id."""
    cursor = conn.execute(
        "INSERT INTO package_conflicts (package_id, uuid, resource_id, kind, title, created, record)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (package_id, uuid, resource_id, kind, title or "", now(),
         json.dumps(record, separators=(",", ":"), default=str)))
    return int(cursor.lastrowid)


def set_kept(conn: sqlite3.Connection, conflict_id: int, version_uuid: str | None, folder: str | None) -> None:
    """Where the incoming copy is kept: its version row and its folder under files/."""
    conn.execute("UPDATE package_conflicts SET version_uuid = ?, folder = ? WHERE id = ?",
                 (version_uuid, folder, conflict_id))


def get(conn: sqlite3.Connection, conflict_id: int) -> sqlite3.Row | None:
    """One conflict with its package's importer, maker and manifest, and who resolved it."""
    return conn.execute(f"SELECT {COLUMNS}{_FROM} WHERE c.id = ?", (conflict_id,)).fetchone()


def open_ones(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Every open conflict, newest first (whose are they: the caller asks the rule book)."""
    return conn.execute(f"SELECT {COLUMNS}{_FROM} WHERE c.state = 'open' ORDER BY c.id DESC").fetchall()


def claim(conn: sqlite3.Connection, conflict_id: int, state: str, user_id: int | None) -> bool:
    """Mark an open conflict resolved as ``state`` by the user; False when it was not open."""
    return conn.execute("UPDATE package_conflicts SET state = ?, resolved = ?, resolved_by = ?"
                        " WHERE id = ? AND state = 'open'", (state, now(), user_id, conflict_id)).rowcount == 1


def set_resource(conn: sqlite3.Connection, conflict_id: int, resource_id: int | None) -> None:
    conn.execute("UPDATE package_conflicts SET resource_id = ? WHERE id = ?", (resource_id, conflict_id))


def drop_folder(conn: sqlite3.Connection, conflict_id: int) -> None:
    """The incoming files were swept."""
    conn.execute("UPDATE package_conflicts SET folder = NULL WHERE id = ?", (conflict_id,))


def settle_member(conn: sqlite3.Connection, package_id: str, uuid: str, local_version: int, local_data_version: int,
                  outcome: str) -> None:
    """The package's sync point for the resource once its conflict is resolved: the two
    catalogues agree again, on our version now and the package's (``outcome``: the resolution)."""
    conn.execute("UPDATE package_members SET local_version = ?, local_data_version = ?, outcome = ?"
                 " WHERE package_id = ? AND uuid = ?", (local_version, local_data_version, outcome, package_id, uuid))


def member_data(conn: sqlite3.Connection, package_id: str, uuid: str) -> str | None:
    """What the package carried of the resource's data (whole, clipped, changes, ...), as its
    import recorded it (None: not recorded)."""
    row = conn.execute("SELECT data FROM package_members WHERE package_id = ? AND uuid = ?", (package_id, uuid)).fetchone()
    return row[0] if row else None


def version_row(conn: sqlite3.Connection, resource_id: int, number: int) -> sqlite3.Row | None:
    """A version of the resource kept aside by a conflict (kind ``incoming``), by its number, in the
    shape of store/versions.py's rows."""
    return conn.execute("SELECT id, uuid, resource_id, number, created, user_id, username, via, kind, state, summary,"
                        " changes, reverts_to FROM resource_versions WHERE resource_id = ? AND number = ?"
                        " AND kind = 'incoming'", (resource_id, number)).fetchone()


def mark_version(conn: sqlite3.Connection, version_uuid: str, state: str, summary: dict[str, Any]) -> None:
    """The conflict's version row after its resolution (its state and summary say what was kept)."""
    conn.execute("UPDATE resource_versions SET state = ?, summary = ? WHERE uuid = ? AND kind = 'incoming'",
                 (state, json.dumps(summary, separators=(",", ":")), version_uuid))


def package_facts(conn: sqlite3.Connection, package_id: str) -> dict[str, Any]:
    """What a conflict says of its package: who made it (``made_by``) and in which catalogue
    (``maker``, ``url``); empty when the package row is not there."""
    row = conn.execute("SELECT maker, manifest FROM packages WHERE id = ?", (package_id,)).fetchone()
    if row is None:
        return {}
    try:
        manifest = json.loads(row["manifest"] or "{}")
    except ValueError:
        manifest = {}
    catalogue = manifest.get("catalogue") if isinstance(manifest.get("catalogue"), dict) else {}
    return {"maker": row["maker"], "made_by": manifest.get("made_by"), "url": catalogue.get("url")}


def user_named(conn: sqlite3.Connection, username: str | None) -> int | None:
    if not username:
        return None
    row = conn.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()
    return row[0] if row else None


def latest_version(conn: sqlite3.Connection, resource_id: int) -> sqlite3.Row | None:
    """The resource's newest done version (number, username, created), or None."""
    return conn.execute("SELECT number, username, created FROM resource_versions WHERE resource_id = ?"
                        " AND state = 'done' ORDER BY number DESC LIMIT 1", (resource_id,)).fetchone()


def data_version(conn: sqlite3.Connection, resource_id: int) -> int:
    row = conn.execute("SELECT data_version FROM datasets WHERE resource_id = ?", (resource_id,)).fetchone()
    return (row[0] or 0) if row else 0


def local_facts(conn: sqlite3.Connection, resource_id: int) -> sqlite3.Row | None:
    """The local resource as a conflict summarises it, with what the rule book needs of it."""
    return conn.execute("SELECT r.id, r.uuid, r.title, r.last_updated, r.owner_id, r.group_id, r.resource_type,"
                        " r.subtype, d.data_version FROM resources r LEFT JOIN datasets d ON d.resource_id = r.id"
                        " WHERE r.id = ?", (resource_id,)).fetchone()


def tkeyword_id(conn: sqlite3.Connection, thesaurus: Any, about: Any) -> int | None:
    """The id of a thesaurus keyword here, by its thesaurus' identifier and its ``about``."""
    row = conn.execute("SELECT k.id FROM thesaurus_keywords k JOIN thesauri t ON t.id = k.thesaurus_id"
                       " WHERE t.identifier = ? AND k.about = ?", (thesaurus, about)).fetchone()
    return row[0] if row else None
