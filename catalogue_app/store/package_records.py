"""One resource as a package record (docs/package-format.md, ``resources/<uuid>/record.json``): its
rows, every reference to another row by a natural key (usernames, group names, identifiers,
uuids), so that another catalogue can write it with ids of its own.

``record_of`` fills what the database holds. Where a member of the package stands for a file
(the thumbnail, the styles' SLD, the data, a document's file), the record names the member path
the export writes it at; the export sets ``dataset.files``, ``dataset.clip`` and ``document.files``
and clears ``thumbnail`` when it carries no file.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

# columns of ``resources`` that are not a record's "fields": ids, references written by their
# natural keys, counters and states of this catalogue, what is derived from permissions
NOT_FIELDS = {"id", "uuid", "resource_type", "owner_id", "group_id", "category_id", "license_id", "thumbnail_url",
              "popular_count", "share_count", "dirty", "state", "blob", "public_view"}
HISTORY = "uuid, number, created, username, via, kind, state, summary, changes, reverts_to"


def member_prefix(uuid: str) -> str:
    return f"resources/{uuid}/"


def _json(text: Any) -> Any:
    if text is None or text == "":
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def _one(conn: sqlite3.Connection, sql: str, params: tuple) -> Any:
    row = conn.execute(sql, params).fetchone()
    return row[0] if row is not None else None


def _dict(row: sqlite3.Row | None, leave: set[str] = frozenset()) -> dict[str, Any] | None:
    return None if row is None else {k: row[k] for k in row.keys() if k not in leave}


def record_of(conn: sqlite3.Connection, resource_id: int, history_after: int = 0) -> dict[str, Any] | None:
    """The record of resource ``resource_id`` (None when there is none), with the history versions
    numbered above ``history_after`` (0: all of them)."""
    row = conn.execute("SELECT * FROM resources WHERE id = ?", (resource_id,)).fetchone()
    if row is None:
        return None
    rid, uuid = row["id"], row["uuid"]
    prefix = member_prefix(uuid)
    fields = {k: row[k] for k in row.keys() if k not in NOT_FIELDS}
    thumbnail_ext = None
    url = row["thumbnail_url"] or ""
    if url:
        thumbnail_ext = "jpg" if url.lower().endswith((".jpg", ".jpeg")) else "png"
    record: dict[str, Any] = {
        "uuid": uuid, "resource_type": row["resource_type"], "fields": fields, "blob": _json(row["blob"]),
        "owner": _one(conn, "SELECT username FROM users WHERE id = ?", (row["owner_id"],)),
        "group": _one(conn, "SELECT name FROM groups WHERE id = ?", (row["group_id"],)),
        "category": _one(conn, "SELECT identifier FROM categories WHERE id = ?", (row["category_id"],)),
        "license": _one(conn, "SELECT identifier FROM licenses WHERE id = ?", (row["license_id"],)),
        "keywords": [r[0] for r in conn.execute(
            "SELECT k.name FROM resource_keywords rk JOIN keywords k ON k.id = rk.keyword_id WHERE rk.resource_id = ?"
            " ORDER BY k.name", (rid,))],
        "tkeywords": [{"thesaurus": r[0], "about": r[1]} for r in conn.execute(
            "SELECT th.identifier, t.about FROM resource_tkeywords rt JOIN thesaurus_keywords t ON t.id = rt.tkeyword_id"
            " JOIN thesauri th ON th.id = t.thesaurus_id WHERE rt.resource_id = ? ORDER BY th.identifier, t.about",
            (rid,))],
        "regions": [r[0] for r in conn.execute(
            "SELECT g.code FROM resource_regions rr JOIN regions g ON g.id = rr.region_id WHERE rr.resource_id = ?"
            " ORDER BY g.code", (rid,))],
        "contacts": [{"role": r[0], "username": r[1], "position": r[2]} for r in conn.execute(
            "SELECT c.role, u.username, c.position FROM resource_contacts c JOIN users u ON u.id = c.user_id"
            " WHERE c.resource_id = ? ORDER BY c.role, c.position, u.username", (rid,))],
        "contact_names": [dict(r) for r in conn.execute(
            "SELECT role, position, name, organization, email FROM resource_contact_names WHERE resource_id = ?"
            " ORDER BY role, position", (rid,))],
        "extra_metadata": [_json(r[0]) for r in conn.execute(
            "SELECT metadata FROM extra_metadata WHERE resource_id = ? ORDER BY id", (rid,))],
        "links": [_dict(r, {"resource_id"}) for r in conn.execute(
            "SELECT * FROM remote_links WHERE resource_id = ? ORDER BY rowid", (rid,))],
        "linked_resources": [{"uuid": r[0], "internal": r[1]} for r in conn.execute(
            "SELECT t.uuid, l.internal FROM linked_resources l JOIN resources t ON t.id = l.target_id"
            " WHERE l.source_id = ? ORDER BY t.uuid", (rid,))],
        "permissions": permissions_of(conn, rid),
        "thumbnail": f"{prefix}thumbnail.{thumbnail_ext}" if thumbnail_ext else None,
        "iso_metadata": f"{prefix}uploaded-iso.xml" if _one(
            conn, "SELECT 1 FROM iso_metadata WHERE resource_id = ?", (rid,)) else None,
        "styles": [],
        "dataset": None, "remote_layer": None, "document": None, "map": None, "geoapp": None,
        "origin": _dict(conn.execute(
            "SELECT kind, title, url, harvester, remote_url FROM resource_origins WHERE resource_id = ?",
            (rid,)).fetchone()),
        "version": {"number": latest_version(conn, rid), "data_version": 0, "last_updated": row["last_updated"]},
        "history": [dict(r, summary=_json(r["summary"]), changes=_json(r["changes"])) for r in conn.execute(
            f"SELECT {HISTORY} FROM resource_versions WHERE resource_id = ? AND number > ? AND state = 'done'"
            " ORDER BY number", (rid, history_after))],
    }
    dataset = conn.execute("SELECT * FROM datasets WHERE resource_id = ?", (rid,)).fetchone()
    if dataset is not None:
        record["dataset"] = {**_dict(dataset, {"resource_id", "folder", "default_style_id"}),
                             "attributes": [_dict(a, {"id", "resource_id"}) for a in conn.execute(
                                 "SELECT * FROM dataset_attributes WHERE resource_id = ? ORDER BY display_order, id",
                                 (rid,))],
                             "files": [], "clip": None}
        record["version"]["data_version"] = dataset["data_version"]
        record["styles"] = [
            {"name": s["name"], "workspace": s["workspace"], "sld_title": s["sld_title"], "generated": s["generated"],
             "default": s["id"] == dataset["default_style_id"], "sld": f"{prefix}styles/{s['name']}.sld"}
            for s in conn.execute("SELECT id, name, workspace, sld_title, generated FROM styles WHERE resource_id = ?"
                                  " ORDER BY id", (rid,))]
    record["remote_layer"] = _dict(conn.execute("SELECT * FROM remote_layers WHERE resource_id = ?", (rid,)).fetchone(),
                                   {"resource_id"})
    document = conn.execute("SELECT * FROM documents WHERE resource_id = ?", (rid,)).fetchone()
    if document is not None:
        record["document"] = {**_dict(document, {"resource_id"}), "files": []}
    if row["resource_type"] == "map":
        record["map"] = {"layers": [
            {"dataset": r["uuid"], "name": r["name"], "position": r["position"], "visibility": r["visibility"],
             "opacity": r["opacity"], "current_style": r["current_style"], "extra_params": _json(r["extra_params"])}
            for r in conn.execute("SELECT l.*, d.uuid FROM map_layers l LEFT JOIN resources d ON d.id = l.dataset_id"
                                  " WHERE l.map_id = ? ORDER BY l.position, l.id", (rid,))]}
    geoapp = _one(conn, "SELECT name FROM geoapps WHERE resource_id = ?", (rid,))
    if geoapp is not None:
        record["geoapp"] = {"name": geoapp}
    return record


def permissions_of(conn: sqlite3.Connection, resource_id: int) -> dict[str, dict[str, list[str]]]:
    """The permissions granted on a resource, by username and by group name."""
    users: dict[str, list[str]] = {}
    groups: dict[str, list[str]] = {}
    for name, perm in conn.execute("SELECT u.username, p.perm FROM resource_perms p JOIN users u ON u.id = p.user_id"
                                   " WHERE p.resource_id = ? ORDER BY u.username, p.perm", (resource_id,)):
        users.setdefault(name, []).append(perm)
    for name, perm in conn.execute("SELECT g.name, p.perm FROM resource_perms p JOIN groups g ON g.id = p.group_id"
                                   " WHERE p.resource_id = ? ORDER BY g.name, p.perm", (resource_id,)):
        groups.setdefault(name, []).append(perm)
    return {"users": users, "groups": groups}


def latest_version(conn: sqlite3.Connection, resource_id: int) -> int:
    """The number of the resource's latest done version (0: none)."""
    return _one(conn, "SELECT MAX(number) FROM resource_versions WHERE resource_id = ? AND state = 'done'",
                (resource_id,)) or 0


def style_bodies(conn: sqlite3.Connection, resource_id: int) -> dict[str, bytes]:
    """The SLD document of each style of a dataset, by style name."""
    return {r[0]: (r[1].encode("utf-8") if isinstance(r[1], str) else bytes(r[1])) for r in conn.execute(
        "SELECT name, sld_body FROM styles WHERE resource_id = ? ORDER BY id", (resource_id,))}


def uploaded_iso(conn: sqlite3.Connection, resource_id: int) -> bytes | None:
    """The ISO XML document uploaded for the resource, as it was sent."""
    xml = _one(conn, "SELECT xml FROM iso_metadata WHERE resource_id = ?", (resource_id,))
    return None if xml is None else (xml.encode("utf-8") if isinstance(xml, str) else bytes(xml))
