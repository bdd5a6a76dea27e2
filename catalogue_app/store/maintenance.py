"""What the operator's commands (catalogue_app/management) read and fix beyond the other
modules: choosing resources by id, title or owner; a dataset's facts recomputed from its data;
the metadata an upload fills in when it is missing; the levels users and groups hold."""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.store import datasets, permissions, resource_writes

BOX = ("bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1")
LL_BOX = ("ll_x0", "ll_y0", "ll_x1", "ll_y1")


def chosen(conn: sqlite3.Connection, resource_type: str, *, ids: list[int] | None = None,
           title_contains: str | None = None, owner_id: int | None = None) -> list[sqlite3.Row]:
    """id, uuid and title of the resources of ``resource_type`` that meet every criterion
    given (ids; a title containing the text, case-insensitively; an owner), by id."""
    sql = "SELECT id, uuid, title FROM resources WHERE resource_type = ?"
    args: list[Any] = [resource_type]
    if ids is not None:
        sql += f" AND id IN ({','.join('?' * len(ids)) or 'NULL'})"
        args += ids
    if title_contains:
        sql += " AND instr(lower(title), lower(?)) > 0"
        args.append(title_contains)
    if owner_id is not None:
        sql += " AND owner_id = ?"
        args.append(owner_id)
    return conn.execute(sql + " ORDER BY id", args).fetchall()


def titled(conn: sqlite3.Connection, resource_type: str, name: str) -> list[sqlite3.Row]:
    """id, uuid and title of the resources of ``resource_type`` with this title (case aside) or,
    for datasets, this layer name (``roads`` or ``catalogue:roads``), by id."""
    return conn.execute(
        "SELECT id, uuid, title FROM resources WHERE resource_type = ? AND (lower(title) = lower(?)"
        " OR alternate = ? OR alternate = ?) ORDER BY id",
        (resource_type, name, name, f"{datasets.WORKSPACE}:{name}")).fetchall()


# -- datasets and their data ----------------------------------------------------------------------
def dataset_facts(conn: sqlite3.Connection, rid: int) -> sqlite3.Row | None:
    """What a dataset's record says of its data and metadata (None for a dataset without data:
    a remote layer, or one made up by ``seed``)."""
    return conn.execute(
        "SELECT r.id, r.uuid, r.title, r.subtype, r.srid, r.created, r.date, r.language, r.thumbnail_url,"
        f" {', '.join('r.' + c for c in BOX + LL_BOX)}, d.folder, d.source_name, d.charset, d.geometry_type,"
        " d.feature_count, d.crs_wkt, d.name, d.workspace, d.default_style_id,"
        " (SELECT count(*) FROM resource_regions g WHERE g.resource_id = r.id) AS regions"
        " FROM resources r JOIN datasets d ON d.resource_id = r.id WHERE r.id = ?", (rid,)).fetchone()


def refresh_from_data(conn: sqlite3.Connection, rid: int, *, srid: str | None, bbox: list[float] | None,
                      ll_bbox: list[float] | None, details: dict[str, Any],
                      attributes: list[dict[str, Any]] | None) -> None:
    """Write what the data say: the extent (and the regions it meets) when ``bbox`` is given,
    the details (geometry type, feature count, CRS), and the fields when ``attributes`` is given
    (a field that keeps its name and type keeps its label, description and order)."""
    if bbox is not None and ll_bbox is not None:
        resource_writes.update(conn, rid, {"srid": srid or datasets.UNKNOWN_SRID, **dict(zip(BOX, bbox)),
                                           **dict(zip(LL_BOX, ll_bbox))})
        resource_writes.set_regions_from_extent(conn, rid)
    changes = {k: v for k, v in details.items() if k in ("geometry_type", "feature_count", "crs_wkt")}
    if changes:
        conn.execute(f"UPDATE datasets SET {', '.join(f'{k} = ?' for k in changes)} WHERE resource_id = ?",
                     [*changes.values(), rid])
    if attributes is not None:
        datasets.replace_attributes(conn, rid, attributes)


def fill_defaults(conn: sqlite3.Connection, rid: int, values: dict[str, Any], regions_from_extent: bool) -> None:
    """Set the missing metadata an upload would have filled in."""
    if values:
        resource_writes.update(conn, rid, values)
    if regions_from_extent:
        resource_writes.set_regions_from_extent(conn, rid)


# -- permissions ----------------------------------------------------------------------------------
def held_levels(conn: sqlite3.Connection, rid: int) -> tuple[int, str, dict[int, str], dict[int, str]]:
    """The resource's owner, type, and the level each user and group holds through its rows."""
    row = permissions.resource(conn, rid)
    if row is None:
        raise LookupError(f"Resource {rid} does not exist.")
    users: dict[int, set[str]] = {}
    groups: dict[int, set[str]] = {}
    for user_id, group_id, perm in conn.execute(
            "SELECT user_id, group_id, perm FROM resource_perms WHERE resource_id = ?", (rid,)):
        if user_id is not None:
            users.setdefault(user_id, set()).add(perm)
        else:
            groups.setdefault(group_id, set()).add(perm)
    kind = row["resource_type"]
    return (row["owner_id"], kind, {u: permissions.level_of(p, kind) for u, p in users.items()},
            {g: permissions.level_of(p, kind) for g, p in groups.items()})


def superuser_ids(conn: sqlite3.Connection) -> set[int]:
    return {r[0] for r in conn.execute("SELECT id FROM users WHERE is_superuser = 1")}


def category_identifiers(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT identifier FROM categories ORDER BY identifier")]


def map_extent(conn: sqlite3.Connection, map_id: int) -> tuple[Any, ...] | None:
    row = conn.execute(f"SELECT {', '.join(LL_BOX)} FROM resources WHERE id = ? AND resource_type = 'map'",
                       (map_id,)).fetchone()
    return None if row is None else tuple(row)
