"""Datasets: the record of an uploaded layer, its details, attributes, styles and files.

A dataset's files live in files/<folder>/ (``datasets.folder``, its uuid at first). Replacing
its data writes the new files into another folder and switches ``folder`` in the same
transaction that records the new facts; the old folder is removed after the commit.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from catalogue_app.clock import now
from catalogue_app.store import resource_writes

WORKSPACE = "catalogue"
# Names no dataset gets: the WMS's built-in basemap (api/ogc/wms_params.py) and its maps,
# catalogue:map_<pk> (api/ogc/wms_maps.py).
RESERVED = frozenset({f"{WORKSPACE}:basemap"})
MAP_NAME = re.compile(rf"^{WORKSPACE}:map_\d+$")
# The srid of data in a CRS without an EPSG equivalent: GeoServer's code for "unknown", which
# GeoNode copies; the exact CRS is kept in datasets.crs_wkt.
UNKNOWN_SRID = "EPSG:404000"
DETAIL_COLUMNS = ("d.resource_id, d.name, d.workspace, d.store, d.source_name, d.folder, d.charset, d.geometry_type,"
                  " d.feature_count, d.crs_wkt, d.has_time, d.time_attribute, d.featureinfo_custom_template,"
                  " d.use_featureinfo_custom_template, d.default_style_id")


def unique_alternate(conn: sqlite3.Connection, name: str) -> str:
    """``catalogue:<name>``, with _2, _3... added when another dataset has it or it is reserved."""
    candidate, n = f"{WORKSPACE}:{name}", 1
    while candidate in RESERVED or MAP_NAME.match(candidate) or conn.execute("SELECT 1 FROM resources WHERE alternate = ?", (candidate,)).fetchone():
        n += 1
        candidate = f"{WORKSPACE}:{name}_{n}"
    return candidate


def create(conn: sqlite3.Connection, *, uuid: str, owner_id: int, name: str, subtype: str, srid: str | None,
           bbox: list[float], ll_bbox: list[float], values: dict[str, Any], details: dict[str, Any]) -> tuple[int, str]:
    """A dataset record (not public: the caller grants what the upload asked) with its details
    row; returns its id and alternate. ``values`` are checked resource fields (title,
    abstract...); ``details`` columns of ``datasets`` (charset, geometry_type, ...)."""
    alternate = unique_alternate(conn, name)
    row = {"uuid": uuid, "subtype": subtype, "srid": srid or UNKNOWN_SRID, "title": values.pop("title", None) or name,
           **dict(zip(("bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1"), bbox)),
           **dict(zip(("ll_x0", "ll_y0", "ll_x1", "ll_y1"), ll_bbox)), **values}
    rid = resource_writes.create(conn, "dataset", owner_id, row, public=False)
    conn.execute("UPDATE resources SET alternate = ? WHERE id = ?", (alternate, rid))
    resource_writes.set_regions_from_extent(conn, rid)
    workspace, _, layer = alternate.partition(":")
    columns = {"resource_id": rid, "name": layer, "workspace": workspace, "source_name": name, "folder": uuid,
               **{k: v for k, v in details.items() if k in DETAIL_FIELDS}}
    conn.execute(f"INSERT INTO datasets ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                 list(columns.values()))
    return rid, alternate


DETAIL_FIELDS = ("store", "charset", "geometry_type", "feature_count", "crs_wkt", "has_time", "time_attribute", "folder",
                 "featureinfo_custom_template", "use_featureinfo_custom_template")


def replace_data(conn: sqlite3.Connection, rid: int, *, subtype: str, srid: str | None, bbox: list[float],
                 ll_bbox: list[float], details: dict[str, Any]) -> str:
    """New data for an existing dataset: its extent, subtype and details (the new ``folder``
    among them); returns the folder it had before."""
    old = conn.execute("SELECT folder FROM datasets WHERE resource_id = ?", (rid,)).fetchone()[0]
    resource_writes.update(conn, rid, {"subtype": subtype, "srid": srid or UNKNOWN_SRID,
                                       **dict(zip(("bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1"), bbox)),
                                       **dict(zip(("ll_x0", "ll_y0", "ll_x1", "ll_y1"), ll_bbox))})
    resource_writes.set_regions_from_extent(conn, rid)
    changes = {k: v for k, v in details.items() if k in DETAIL_FIELDS}
    conn.execute(f"UPDATE datasets SET {', '.join(f'{k} = ?' for k in changes)} WHERE resource_id = ?",
                 [*changes.values(), rid])
    conn.execute("DELETE FROM resource_files WHERE resource_id = ?", (rid,))
    # a remote dataset (store/remote_layers.py) given data of its own is remote no more
    if conn.execute("DELETE FROM remote_layers WHERE resource_id = ?", (rid,)).rowcount:
        conn.execute("UPDATE resources SET sourcetype = 'LOCAL' WHERE id = ?", (rid,))
    return old


def details(conn: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    if not ids:
        return {}
    return {r["resource_id"]: r for r in conn.execute(
        f"SELECT {DETAIL_COLUMNS} FROM datasets d WHERE d.resource_id IN ({','.join('?' * len(ids))})", ids)}


def detail(conn: sqlite3.Connection, rid: int) -> sqlite3.Row | None:
    return details(conn, [rid]).get(rid)


def of_owner_named(conn: sqlite3.Connection, owner_id: int, source_name: str) -> int | None:
    """The newest dataset of this owner whose file gave it this name."""
    row = conn.execute("SELECT d.resource_id FROM datasets d JOIN resources r ON r.id = d.resource_id"
                       " WHERE d.source_name = ? AND r.owner_id = ? ORDER BY d.resource_id DESC LIMIT 1",
                       (source_name, owner_id)).fetchone()
    return row[0] if row else None


# -- attributes -------------------------------------------------------------------------------------
def add_attributes(conn: sqlite3.Connection, resource_id: int, attributes: list[dict[str, Any]]) -> None:
    conn.executemany(
        "INSERT INTO dataset_attributes (resource_id, attribute, attribute_type, attribute_label, description,"
        " display_order, visible) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(resource_id, a["attribute"], a["attribute_type"], a.get("attribute_label"), a.get("description"),
          a.get("display_order", i + 1), int(a.get("visible", True))) for i, a in enumerate(attributes)])


def replace_attributes(conn: sqlite3.Connection, resource_id: int, attributes: list[dict[str, Any]]) -> None:
    """The fields of new data; a field that keeps its name and type keeps its label, description,
    visibility and order."""
    kept = {(r["attribute"], r["attribute_type"]): r for r in attributes_of(conn, [resource_id])[resource_id]}
    merged = []
    for a in attributes:
        old = kept.get((a["attribute"], a["attribute_type"]))
        if old is not None:
            a = {**a, "attribute_label": old["attribute_label"], "description": old["description"],
                 "visible": bool(old["visible"]), "display_order": old["display_order"]}
        merged.append(a)
    conn.execute("DELETE FROM dataset_attributes WHERE resource_id = ?", (resource_id,))
    add_attributes(conn, resource_id, merged)


def attributes(conn: sqlite3.Connection, resource_id: int) -> list[sqlite3.Row]:
    return attributes_of(conn, [resource_id])[resource_id]


def attributes_of(conn: sqlite3.Connection, ids: list[int]) -> dict[int, list[sqlite3.Row]]:
    out: dict[int, list[sqlite3.Row]] = {i: [] for i in ids}
    if ids:
        for row in conn.execute(
                "SELECT id, resource_id, attribute, attribute_type, attribute_label, description, display_order,"
                f" visible FROM dataset_attributes WHERE resource_id IN ({','.join('?' * len(ids))})"
                " ORDER BY display_order, id", ids):
            out[row["resource_id"]].append(row)
    return out


ATTRIBUTE_FIELDS = ("attribute_label", "description", "visible", "display_order")


def update_attribute(conn: sqlite3.Connection, resource_id: int, attribute_id: int, values: dict[str, Any]) -> bool:
    """Change the label, description, visibility or order of one attribute of the dataset."""
    changes = {k: v for k, v in values.items() if k in ATTRIBUTE_FIELDS}
    if not changes:
        return conn.execute("SELECT 1 FROM dataset_attributes WHERE id = ? AND resource_id = ?",
                            (attribute_id, resource_id)).fetchone() is not None
    return conn.execute(f"UPDATE dataset_attributes SET {', '.join(f'{k} = ?' for k in changes)}"
                        " WHERE id = ? AND resource_id = ?", [*changes.values(), attribute_id, resource_id]).rowcount > 0


def attribute_id_named(conn: sqlite3.Connection, resource_id: int, name: str) -> int | None:
    row = conn.execute("SELECT id FROM dataset_attributes WHERE resource_id = ? AND attribute = ?",
                       (resource_id, name)).fetchone()
    return row[0] if row else None


# -- styles ---------------------------------------------------------------------------------------
def set_default_style(conn: sqlite3.Connection, resource_id: int, *, name: str, workspace: str,
                      title: str | None, sld: bytes | str, generated: bool) -> int:
    """Store ``sld`` as the dataset's default style (replacing the style of that name). The
    document is kept as its bytes: an SLD may declare an encoding other than UTF-8."""
    stamp = now()
    sld = sld.encode("utf-8") if isinstance(sld, str) else bytes(sld)
    existing = conn.execute("SELECT id FROM styles WHERE name = ? AND resource_id = ?", (name, resource_id)).fetchone()
    if existing:
        style_id = existing[0]
        conn.execute("UPDATE styles SET sld_title = ?, sld_body = ?, generated = ?, last_updated = ? WHERE id = ?",
                     (title, sld, int(generated), stamp, style_id))
    else:
        style_id = conn.execute(
            "INSERT INTO styles (resource_id, name, workspace, sld_title, sld_body, generated, created, last_updated)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (resource_id, name, workspace, title, sld, int(generated), stamp,
                                                 stamp)).lastrowid
    conn.execute("UPDATE datasets SET default_style_id = ? WHERE resource_id = ?", (style_id, resource_id))
    return style_id


def styles_of(conn: sqlite3.Connection, ids: list[int]) -> dict[int, list[sqlite3.Row]]:
    out: dict[int, list[sqlite3.Row]] = {i: [] for i in ids}
    if ids:
        for row in conn.execute(
                "SELECT id, resource_id, name, workspace, sld_title, generated FROM styles"
                f" WHERE resource_id IN ({','.join('?' * len(ids))}) ORDER BY id", ids):
            out[row["resource_id"]].append(row)
    return out


def style_named(conn: sqlite3.Connection, workspace: str | None, name: str) -> sqlite3.Row | None:
    sql = "SELECT id, resource_id, name, workspace, sld_title, sld_body, generated FROM styles WHERE name = ?"
    args: list[Any] = [name]
    if workspace:
        sql += " AND workspace = ?"
        args.append(workspace)
    return conn.execute(sql, args).fetchone()


# -- files and lookups ----------------------------------------------------------------------------
def by_alternate(conn: sqlite3.Connection, alternate: str) -> int | None:
    row = conn.execute("SELECT id FROM resources WHERE alternate = ? AND resource_type = 'dataset'",
                       (alternate,)).fetchone()
    return row[0] if row else None


def file_names(conn: sqlite3.Connection, resource_id: int) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM resource_files WHERE resource_id = ? ORDER BY name",
                                       (resource_id,))]


def folder_of(conn: sqlite3.Connection, resource_id: int) -> str | None:
    """The folder under files/ holding the dataset's data (None for other resources)."""
    row = conn.execute("SELECT folder FROM datasets WHERE resource_id = ?", (resource_id,)).fetchone()
    return row[0] if row else None


def copy(conn: sqlite3.Connection, source_id: int, new_id: int, folder: str) -> None:
    """The dataset parts of a copy (whose record resource_writes.copy made): a new alternate, the
    details, attributes and styles (renamed after the new layer name); the files are in ``folder``."""
    row = conn.execute(f"SELECT {DETAIL_COLUMNS} FROM datasets d WHERE d.resource_id = ?", (source_id,)).fetchone()
    if row is None:
        return
    alternate = unique_alternate(conn, row["source_name"])
    workspace, _, name = alternate.partition(":")
    conn.execute("UPDATE resources SET alternate = ? WHERE id = ?", (alternate, new_id))
    conn.execute(
        "INSERT INTO datasets (resource_id, name, workspace, store, source_name, folder, charset, geometry_type,"
        " feature_count, crs_wkt, has_time, time_attribute, featureinfo_custom_template,"
        " use_featureinfo_custom_template) SELECT ?, ?, ?, ?, source_name, ?, charset, geometry_type, feature_count,"
        " crs_wkt, has_time, time_attribute, featureinfo_custom_template, use_featureinfo_custom_template"
        " FROM datasets WHERE resource_id = ?", (new_id, name, workspace, name, folder, source_id))
    conn.execute(
        "INSERT INTO dataset_attributes (resource_id, attribute, attribute_type, attribute_label, description,"
        " display_order, visible) SELECT ?, attribute, attribute_type, attribute_label, description, display_order,"
        " visible FROM dataset_attributes WHERE resource_id = ? ORDER BY id", (new_id, source_id))
    style = conn.execute("SELECT sld_title, sld_body, generated FROM styles WHERE id = ?",
                         (row["default_style_id"],)).fetchone()
    if style is not None:
        set_default_style(conn, new_id, name=name, workspace=workspace, title=style["sld_title"],
                          sld=style["sld_body"], generated=bool(style["generated"]))
