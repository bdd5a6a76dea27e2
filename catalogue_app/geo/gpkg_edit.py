"""Edits of a vector working copy (a GeoPackage of one layer) in place, with their history.

One edit is one SQLite transaction on the GeoPackage: the changes are checked and applied, then
the version is numbered (``reserve``, a call the caller gives: the catalogue reserves the number
and uuid) and its history and the applied mark are written, then it commits. A crash leaves all
of it or none. The history lives beside the data, in tables GDAL does not list as layers:

- ``gpkgext_catalogue_versions``: one row per data version applied to this file (number, uuid,
  when, who, through what, kind, the version it reverts to, a summary);
- ``gpkgext_catalogue_changes``: the features each version changed: inserted (after), updated
  (the changed columns only, before and after) and deleted (before); geometries as WKB;
- ``gpkgext_catalogue_state``: the number and uuid of the last version applied.

Edited files are put in WAL mode, so that readers in other processes are never blocked and see
the last commit. Within this process, connections of Python's SQLite and GDAL's opens of one
file take turns (gpkg_access.py). GDAL's R*Tree triggers call ST_IsEmpty and ST_MinX..ST_MaxY,
which are registered on each connection here.

Feature ids are the GeoPackage's fids (``INTEGER PRIMARY KEY AUTOINCREMENT``: never reused); a
feature re-inserted by a revert keeps its old fid.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import shapely
from shapely.geometry.base import BaseGeometry

from . import gpkg_access

BUSY_TIMEOUT = 60.0  # seconds an edit waits for another one on the same file

VERSIONS = "gpkgext_catalogue_versions"
CHANGES = "gpkgext_catalogue_changes"
STATE = "gpkgext_catalogue_state"

_HISTORY_SQL = f"""
CREATE TABLE IF NOT EXISTS {VERSIONS} (
    number      INTEGER PRIMARY KEY,
    uuid        TEXT NOT NULL UNIQUE,
    created     TEXT NOT NULL,
    user_id     INTEGER,
    username    TEXT,
    via         TEXT NOT NULL,
    kind        TEXT NOT NULL,
    reverts_to  TEXT,
    summary     TEXT NOT NULL DEFAULT '{{}}'
);
CREATE TABLE IF NOT EXISTS {CHANGES} (
    id          INTEGER PRIMARY KEY,
    version     INTEGER NOT NULL,
    fid         INTEGER NOT NULL,
    op          TEXT NOT NULL,
    before      TEXT,
    after       TEXT,
    geometry    INTEGER NOT NULL DEFAULT 0,
    before_wkb  BLOB,
    after_wkb   BLOB
);
CREATE INDEX IF NOT EXISTS {CHANGES}_version ON {CHANGES}(version);
CREATE TABLE IF NOT EXISTS {STATE} (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    applied_version INTEGER NOT NULL,
    applied_uuid    TEXT
);
"""


# --- what an edit is made of -----------------------------------------------------------------


@dataclass(frozen=True)
class Insert:
    properties: dict[str, Any]              # field name -> value (str/int/float/bool/None; dates as ISO text)
    geometry: BaseGeometry | None = None    # shapely, x = east (longitude), y = north, in `crs`
    crs: str | None = None                  # "EPSG:4326", "EPSG:3857"...; None: the layer's own CRS
    fid: int | None = None                  # only for a revert re-inserting a deleted feature


@dataclass(frozen=True)
class Update:
    fid: int
    properties: dict[str, Any]              # only the fields to set; None sets NULL
    geometry: BaseGeometry | None = None
    set_geometry: bool = False              # True: replace the geometry with `geometry`
    crs: str | None = None
    replace: bool = False                   # True: the fields not in `properties` are set NULL (a whole new feature)


@dataclass(frozen=True)
class Delete:
    fid: int


Change = Insert | Update | Delete


class EditError(ValueError):
    """A change the layer cannot take; the message names the feature and the field."""


class StaleBase(Exception):
    """The edit was made against another version than the file's last one."""

    def __init__(self, base: int, current: int):
        super().__init__(f"The data changed since version {base}: it is at version {current} now.")
        self.base, self.current = base, current


class EditBusy(Exception):
    """Another edit held the file longer than an edit waits (BUSY_TIMEOUT)."""


class NotVector(Exception):
    """The file holds no feature table."""


class MissingFeature(EditError):
    """A feature an expectation names does not exist."""

    def __init__(self, fid: int):
        super().__init__(f"feature {fid} does not exist.")
        self.fid = fid


class TagMismatch(Exception):
    """A feature is no longer as the caller read it: its entity tag is another one now."""

    def __init__(self, fid: int, current: str):
        super().__init__(f"Feature {fid} changed since it was read (its entity tag is {current} now).")
        self.fid, self.current = fid, current


@dataclass(frozen=True)
class Reserved:
    """The version an edit becomes, given by the caller's ``reserve``."""

    number: int
    uuid: str
    created: str
    user_id: int | None = None
    username: str | None = None


@dataclass
class Applied:
    """What an edit did: its version, the new fids (in the order of the Inserts), counts, the
    layer's feature count and extent (x0, y0, x1, y1 in the layer's CRS; None when empty) after."""

    number: int
    uuid: str
    inserted: list[int]
    updated: int
    deleted: int
    count: int
    extent: tuple[float, float, float, float] | None
    crs: str | None
    summary: dict[str, Any] = field(default_factory=dict)
    tags: dict[int, str] = field(default_factory=dict)  # entity tags of the features inserted and updated, when asked


# --- GeoPackage geometry blobs and the functions GDAL's triggers call --------------------------

_ENVELOPE = {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}  # envelope bytes by indicator


def _wkb_of(blob: bytes) -> bytes:
    """The WKB inside a GeoPackage geometry blob."""
    return bytes(blob[8 + _ENVELOPE[(blob[3] >> 1) & 7]:])


def _empty_flag(blob: bytes) -> bool:
    return bool(blob[3] & 0x10)


_POINT_TYPES = frozenset({1, 1001, 2001, 3001})  # WKB Point, ISO Z, M, ZM


def _blob_bounds(blob: bytes) -> tuple[float, float, float, float] | None:
    if blob is None or _empty_flag(blob):
        return None
    size = _ENVELOPE[(blob[3] >> 1) & 7]
    if size:
        x0, x1, y0, y1 = struct.unpack_from("<4d" if blob[3] & 1 else ">4d", blob, 8)
        return x0, y0, x1, y1
    if len(blob) >= 29:  # a point without an envelope (as GDAL writes them): its coordinates read directly
        order = "<" if blob[8] == 1 else ">"
        if struct.unpack_from(order + "I", blob, 9)[0] in _POINT_TYPES:
            x, y = struct.unpack_from(order + "2d", blob, 13)
            return None if math.isnan(x) or math.isnan(y) else (x, y, x, y)
    bounds = shapely.from_wkb(_wkb_of(blob)).bounds
    return None if any(math.isnan(v) for v in bounds) else bounds


def _blob(geometry: BaseGeometry, srs_id: int) -> bytes:
    """A GeoPackage geometry blob: little-endian header with the srs id, an xy envelope for all
    but points (as GDAL writes), then ISO WKB."""
    wkb = shapely.to_wkb(geometry, flavor="iso", byte_order=1)
    if geometry.is_empty:
        return b"GP\x00" + bytes([0x11]) + struct.pack("<i", srs_id) + wkb
    if geometry.geom_type == "Point":
        return b"GP\x00\x01" + struct.pack("<i", srs_id) + wkb
    x0, y0, x1, y1 = geometry.bounds
    return b"GP\x00\x03" + struct.pack("<i4d", srs_id, x0, x1, y0, y1) + wkb


def _register(conn: sqlite3.Connection) -> None:
    conn.create_function("ST_IsEmpty", 1, lambda b: None if b is None else int(_empty_flag(b)), deterministic=True)
    last: list = [None, None]  # the last blob asked about and its bounds: a trigger asks four times per row

    def bounds(blob):
        if blob == last[0]:
            return last[1]
        box = _blob_bounds(blob)
        last[0], last[1] = blob, box
        return box

    def bound(index: int):
        def fn(blob):
            if blob is None:
                return None
            box = bounds(blob)
            return None if box is None else box[index]
        return fn

    for name, i in (("ST_MinX", 0), ("ST_MinY", 1), ("ST_MaxX", 2), ("ST_MaxY", 3)):
        conn.create_function(name, 1, bound(i), deterministic=True)


def connect(path: str | Path, *, wal: bool = True) -> sqlite3.Connection:
    """A connection to the GeoPackage for edits: WAL, a busy timeout, the trigger functions.
    Open it inside ``gpkg_access.sqlite(path)`` and close it before leaving."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        if wal and conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        _register(conn)
    except BaseException:
        conn.close()
        raise
    return conn


# --- the layer -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    name: str
    kind: str           # int, float, bool, text, date, datetime, blob
    width: int | None   # TEXT(n)
    notnull: bool
    low: int | None = None
    high: int | None = None


@dataclass(frozen=True)
class Layer:
    table: str
    fid: str
    geometry: str | None
    geometry_type: str       # POINT, MULTIPOLYGON, GEOMETRY...
    geometry_notnull: bool
    srs_id: int
    crs: str | None          # "EPSG:n", a WKT, or None when undefined
    z: int
    fields: dict[str, Field]
    rtree: str | None

    def field_named(self, name: str) -> Field | None:
        found = self.fields.get(name)
        if found is not None:
            return found
        by_case = [f for n, f in self.fields.items() if n.lower() == name.lower()]
        return by_case[0] if len(by_case) == 1 else None


_INT_RANGES = {"TINYINT": (-128, 127), "SMALLINT": (-32768, 32767), "MEDIUMINT": (-2**31, 2**31 - 1),
               "INTEGER": (-2**63, 2**63 - 1), "INT": (-2**63, 2**63 - 1)}


def _field(name: str, declared: str, notnull: bool) -> Field:
    upper = (declared or "").upper().strip()
    match = re.match(r"^TEXT\s*\((\d+)\)$", upper)
    if match:
        return Field(name, "text", int(match.group(1)) or None, notnull)
    if upper in _INT_RANGES:
        low, high = _INT_RANGES[upper]
        return Field(name, "int", None, notnull, low, high)
    if upper == "BOOLEAN":
        return Field(name, "bool", None, notnull)
    if upper in ("REAL", "DOUBLE", "FLOAT"):
        return Field(name, "float", None, notnull)
    if upper == "DATE":
        return Field(name, "date", None, notnull)
    if upper == "DATETIME":
        return Field(name, "datetime", None, notnull)
    if upper == "BLOB" or upper.startswith("BLOB"):
        return Field(name, "blob", None, notnull)
    return Field(name, "text", None, notnull)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def layer_of(conn: sqlite3.Connection) -> Layer:
    """The feature table of the GeoPackage; NotVector when it has none."""
    row = conn.execute("SELECT table_name FROM gpkg_contents WHERE data_type = 'features' ORDER BY rowid LIMIT 1"
                       ).fetchone()
    if row is None:
        raise NotVector("The GeoPackage holds no feature table.")
    table = row[0]
    geo = conn.execute("SELECT column_name, geometry_type_name, srs_id, z FROM gpkg_geometry_columns"
                       " WHERE table_name = ?", (table,)).fetchone()
    columns = conn.execute(f"PRAGMA table_info({_quote(table)})").fetchall()
    fid = next((c[1] for c in columns if c[5]), "fid")
    geometry = geo[0] if geo else None
    fields = {c[1]: _field(c[1], c[2], bool(c[3])) for c in columns if c[1] not in (fid, geometry)}
    srs_id = int(geo[2]) if geo else 0
    crs = None
    srs = conn.execute("SELECT organization, organization_coordsys_id, definition FROM gpkg_spatial_ref_sys"
                       " WHERE srs_id = ?", (srs_id,)).fetchone()
    if srs is not None and srs_id > 0:
        if (srs[0] or "").upper() == "EPSG" and srs[1]:
            crs = f"EPSG:{srs[1]}"
        elif srs[2] and srs[2].strip().lower() != "undefined":
            crs = srs[2]
    rtree = None
    if geometry is not None:
        name = f"rtree_{table}_{geometry}"
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone():
            rtree = name
    notnull = bool(geometry and next((c[3] for c in columns if c[1] == geometry), 0))
    return Layer(table, fid, geometry, (geo[1] if geo else "GEOMETRY").upper(), notnull, srs_id, crs,
                 int(geo[3]) if geo else 0, fields, rtree)


# --- values ----------------------------------------------------------------------------------


def _where(fid: int | None, name: str) -> str:
    return f"feature {fid}, field {name}" if fid is not None else f"the new feature's field {name}"


_TRUE, _FALSE = {"true", "1", "t", "yes", "y"}, {"false", "0", "f", "no", "n"}
_GDAL_DATETIME = re.compile(r"^(\d{4})/(\d{2})/(\d{2})(?:[ T](.*))?$")


def _value(f: Field, value: Any, fid: int | None) -> Any:
    """``value`` as stored in field ``f``; EditError when it is of the wrong type."""
    where = _where(fid, f.name)
    if value is None:
        if f.notnull:
            raise EditError(f"{where}: a value is required.")
        return None
    if f.kind == "int":
        number: Any = value
        if isinstance(value, bool):
            raise EditError(f"{where}: expected an integer, got {json.dumps(value)}.")
        if isinstance(value, float) and value.is_integer():
            number = int(value)
        elif isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
            number = int(value)
        if not isinstance(number, int):
            raise EditError(f"{where}: expected an integer, got {_shown(value)}.")
        if not (f.low <= number <= f.high):
            raise EditError(f"{where}: {number} is out of the field's range ({f.low} to {f.high}).")
        return number
    if f.kind == "float":
        number = value
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                raise EditError(f"{where}: expected a number, got {_shown(value)}.") from None
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise EditError(f"{where}: expected a number, got {_shown(value)}.")
        number = float(number)
        if not math.isfinite(number):
            raise EditError(f"{where}: expected a finite number, got {_shown(value)}.")
        return number
    if f.kind == "bool":
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int) and value in (0, 1):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return int(value.strip().lower() in _TRUE)
        raise EditError(f"{where}: expected true or false, got {_shown(value)}.")
    if f.kind == "text":
        if not isinstance(value, str):
            raise EditError(f"{where}: expected text, got {_shown(value)}.")
        if "\x00" in value:
            raise EditError(f"{where}: text may not hold a NUL character.")
        return value
    if f.kind == "date":
        match = re.fullmatch(r"(\d{4})[-/](\d{2})[-/](\d{2})(?:[T ].*)?", value.strip()) if isinstance(value, str) else None
        try:
            return dt.date(*(int(g) for g in match.groups())).isoformat() if match else _no_date()
        except ValueError:
            raise EditError(f"{where}: expected a date (YYYY-MM-DD), got {_shown(value)}.") from None
    if f.kind == "datetime":
        if not isinstance(value, str):
            raise EditError(f"{where}: expected a date and time (ISO 8601), got {_shown(value)}.")
        text = value.strip()
        gdal = _GDAL_DATETIME.match(text)
        if gdal:
            text = f"{gdal.group(1)}-{gdal.group(2)}-{gdal.group(3)}" + (f"T{gdal.group(4)}" if gdal.group(4) else "")
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            raise EditError(f"{where}: expected a date and time (ISO 8601), got {_shown(value)}.") from None
        if moment.tzinfo is not None:
            moment = moment.astimezone(dt.timezone.utc)
            return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    raise EditError(f"{where}: this field cannot be edited here.")


def _no_date():
    raise ValueError("not a date")


def _shown(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (str, int, float, bool)) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _plain(f: Field | None, value: Any) -> Any:
    """A stored value as an answer shows it (booleans as true/false)."""
    if f is not None and f.kind == "bool" and value is not None:
        return bool(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


# --- geometries ------------------------------------------------------------------------------

_FAMILY = {"POINT": ("Point",), "LINESTRING": ("LineString",), "POLYGON": ("Polygon",),
           "MULTIPOINT": ("MultiPoint", "Point"), "MULTILINESTRING": ("MultiLineString", "LineString"),
           "MULTIPOLYGON": ("MultiPolygon", "Polygon"),
           "GEOMETRYCOLLECTION": ("GeometryCollection", "MultiPoint", "MultiLineString", "MultiPolygon")}


@functools.lru_cache(maxsize=64)
def _crs_obj(text: str):
    from pyproj import CRS
    return CRS.from_user_input(text)


def _transformer(source: str, target: str):
    from pyproj import Transformer
    return Transformer.from_crs(_crs_obj(source), _crs_obj(target), always_xy=True)


_TRANSFORMERS: dict[tuple[str, str], Any] = {}


@functools.lru_cache(maxsize=256)
def _same_crs(a: str, b: str) -> bool:
    if a.upper() == b.upper():
        return True
    try:
        return _crs_obj(a) == _crs_obj(b)
    except Exception:
        return False


def _geometry(layer: Layer, geometry: BaseGeometry | None, crs: str | None, fid: int | None,
              trusted: bool = False) -> bytes | None:
    """The blob to store for ``geometry``; EditError when the layer cannot take it. ``trusted``:
    a geometry the layer held before (a revert), stored as it was."""
    where = f"feature {fid}" if fid is not None else "the new feature"
    if geometry is None:
        if layer.geometry_notnull:
            raise EditError(f"{where}: a geometry is required.")
        return None
    if layer.geometry is None:
        raise EditError(f"{where}: the layer has no geometry.")
    if trusted:
        return _blob(geometry, layer.srs_id)
    if not isinstance(geometry, BaseGeometry):
        raise EditError(f"{where}: the geometry could not be read.")
    if geometry.is_empty:
        raise EditError(f"{where}: the geometry is empty.")
    allowed = _FAMILY.get(layer.geometry_type)
    if allowed is not None and geometry.geom_type not in allowed:
        raise EditError(f"{where}: a {geometry.geom_type} does not fit the layer's geometry type "
                        f"({layer.geometry_type}).")
    if not layer.z and shapely.has_z(geometry):
        geometry = shapely.force_2d(geometry)
    import numpy as np
    if not np.isfinite(shapely.get_coordinates(geometry)).all():
        raise EditError(f"{where}: the geometry has coordinates that are not finite numbers.")
    if crs is not None and (layer.crs is None or not _same_crs(crs, layer.crs)):
        geometry = _into_layer(layer, geometry, crs, where)
    if layer.crs is not None and _geographic(layer.crs):
        x0, y0, x1, y1 = geometry.bounds
        if y0 < -90 - 1e-9 or y1 > 90 + 1e-9 or x0 < -360 or x1 > 360:
            raise EditError(f"{where}: the geometry lies outside the area where the layer's coordinate reference "
                            f"system ({layer.crs}) is defined (longitude and latitude, in degrees).")
    if not shapely.is_valid(geometry):
        raise EditError(f"{where}: the geometry is invalid ({shapely.is_valid_reason(geometry)}).")
    return _blob(geometry, layer.srs_id)


def _into_layer(layer: Layer, geometry, crs: str, where: str):
    """``geometry`` (one, or an array of them) moved from ``crs`` into the layer's CRS;
    EditError when the CRS is unknown or a geometry lies outside the layer's CRS's area."""
    import numpy as np
    try:
        source = _crs_obj(crs)
    except Exception:
        raise EditError(f"{where}: {crs!r} is not a coordinate reference system this service knows.") from None
    if layer.crs is None:
        raise EditError(f"{where}: the layer's coordinate reference system is undefined, so a geometry in "
                        f"{crs} cannot be put into it; send it in the layer's own coordinates.")
    key = (crs, layer.crs)
    transformer = _TRANSFORMERS.get(key)
    if transformer is None:
        try:
            transformer = _TRANSFORMERS[key] = _transformer(source.to_wkt(), layer.crs)
        except Exception:
            raise EditError(f"{where}: a geometry in {crs} cannot be transformed into the layer's "
                            f"{layer.crs}.") from None
    sent = shapely.get_coordinates(geometry)
    geometry = shapely.transform(geometry, lambda xy: np.column_stack(transformer.transform(xy[:, 0], xy[:, 1])))
    coords = shapely.get_coordinates(geometry)
    back = np.column_stack(transformer.transform(coords[:, 0], coords[:, 1], direction="INVERSE"))
    # a point far outside the CRS's area may come out clamped to its edge: it does not come back
    if not np.isfinite(coords).all() or not np.allclose(back, sent, rtol=1e-6, atol=1e-3):
        raise EditError(f"{where}: the geometry lies outside the area where the layer's coordinate reference "
                        f"system ({layer.crs}) is defined.")
    return geometry


_GEOGRAPHIC: dict[str, bool] = {}


def _geographic(crs: str) -> bool:
    found = _GEOGRAPHIC.get(crs)
    if found is None:
        try:
            found = bool(_crs_obj(crs).is_geographic)
        except Exception:
            found = False
        _GEOGRAPHIC[crs] = found
    return found


# --- history ---------------------------------------------------------------------------------


def _has_history(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (STATE,)).fetchone() is not None


def ensure_history(conn: sqlite3.Connection) -> None:
    """Create the history tables (inside the caller's transaction)."""
    if not _has_history(conn):
        for statement in _HISTORY_SQL.split(";"):
            if statement.strip():
                conn.execute(statement)


def _state(conn: sqlite3.Connection) -> tuple[int, str | None]:
    if not _has_history(conn):
        return 0, None
    row = conn.execute(f"SELECT applied_version, applied_uuid FROM {STATE} WHERE id = 1").fetchone()
    return (row[0], row[1]) if row else (0, None)


def _json(value: dict[str, Any] | str | None) -> str | None:
    """A history record's values as JSON text (text: made already)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _row(conn: sqlite3.Connection, layer: Layer, fid: int) -> tuple[dict[str, Any], bytes | None] | None:
    """A stored feature: its field values and geometry blob."""
    names = list(layer.fields)
    cols = ", ".join(_quote(n) for n in [*names, *([layer.geometry] if layer.geometry else [])])
    found = conn.execute(f"SELECT {cols or '1'} FROM {_quote(layer.table)} WHERE {_quote(layer.fid)} = ?",
                         (fid,)).fetchone()
    if found is None:
        return None
    props = dict(zip(names, found[:len(names)]))
    return props, (found[len(names)] if layer.geometry else None)


def feature_tag(conn: sqlite3.Connection, layer: Layer, fid: int) -> str | None:
    """The entity tag of a stored feature (quoted, as HTTP sends it): a hash of its whole row as
    stored, every column with its name, so that it changes whenever the feature does, whatever
    wrote it; None when there is no such feature. One lookup by the table's primary key."""
    return row_tag(conn, layer.table, layer.fid, fid)


def row_tag(conn: sqlite3.Connection, table: str, fid_column: str, fid: int) -> str | None:
    """``feature_tag`` by the feature table's name and primary key column."""
    cursor = conn.execute(f"SELECT * FROM {_quote(table)} WHERE {_quote(fid_column)} = ?", (fid,))
    row = cursor.fetchone()
    if row is None:
        return None
    digest = hashlib.blake2b(msgspec.msgpack.encode([[d[0] for d in cursor.description], list(row)]),
                             digest_size=16).hexdigest()
    return f'"{digest}"'


def _check_expected(conn: sqlite3.Connection, layer: Layer, expected: dict[int, str | tuple[str, ...]]) -> None:
    """Each feature named is there (MissingFeature) and, unless "*" is expected, its entity tag
    is one of those expected (TagMismatch). Asked under the edit's write lock."""
    for fid, wanted in expected.items():
        current = feature_tag(conn, layer, fid) if isinstance(fid, int) and not isinstance(fid, bool) else None
        if current is None:
            raise MissingFeature(fid)
        if wanted == "*":
            continue
        if current not in ((wanted,) if isinstance(wanted, str) else tuple(wanted)):
            raise TagMismatch(fid, current)


def _bounds_of(blob: bytes | None) -> tuple[float, float, float, float] | None:
    return None if blob is None else _blob_bounds(blob)


@dataclass
class _Work:
    """What an edit did so far, before it is numbered."""

    records: list[tuple] = field(default_factory=list)  # (fid, op, before, after, geometry, before_wkb, after_wkb);
    # before and after: dicts of values, or their JSON text
    inserted: list[int] = field(default_factory=list)
    updated: int = 0
    deleted: int = 0
    grown: list[tuple[float, float, float, float]] = field(default_factory=list)
    shrunk: list[tuple[float, float, float, float]] = field(default_factory=list)


def _resolve_fields(layer: Layer, properties: dict[str, Any], fid: int | None) -> dict[str, Any]:
    out = {}
    for name, value in properties.items():
        f = layer.field_named(str(name))
        if f is None:
            where = f"feature {fid}" if fid is not None else "the new feature"
            known = ", ".join(layer.fields) or "none"
            raise EditError(f"{where}: the layer has no field {name!r} (its fields: {known}).")
        out[f.name] = _value(f, value, fid)
    return out


def _insert(conn: sqlite3.Connection, layer: Layer, change: Insert, work: _Work, trusted: bool) -> None:
    if change.fid is not None:
        if not isinstance(change.fid, int) or isinstance(change.fid, bool) or change.fid < 1:
            raise EditError(f"{change.fid!r} is not a feature id.")
        if _row(conn, layer, change.fid) is not None:
            raise EditError(f"feature {change.fid} exists already.")
    values = _resolve_fields(layer, dict(change.properties or {}), None)
    missing = [f.name for f in layer.fields.values() if f.notnull and values.get(f.name) is None]
    if missing:
        raise EditError(f"the new feature: a value is required for {', '.join(missing)}.")
    blob = _geometry(layer, change.geometry, change.crs, None, trusted)
    columns = dict(values)
    if layer.geometry:
        columns[layer.geometry] = blob
    if change.fid is not None:
        columns[layer.fid] = change.fid
    if columns:
        cursor = conn.execute(f"INSERT INTO {_quote(layer.table)} ({', '.join(_quote(c) for c in columns)})"
                              f" VALUES ({', '.join('?' * len(columns))})", list(columns.values()))
    else:
        cursor = conn.execute(f"INSERT INTO {_quote(layer.table)} DEFAULT VALUES")
    fid = change.fid if change.fid is not None else cursor.lastrowid
    work.inserted.append(fid)
    stored = {name: values.get(name) for name in layer.fields}
    work.records.append((fid, "insert", None, stored, 1, None, None if blob is None else _wkb_of(blob)))
    if (box := _bounds_of(blob)) is not None:
        work.grown.append(box)


def _insert_one(conn: sqlite3.Connection, layer: Layer, change: Insert, work: _Work, trusted: bool) -> None:
    try:
        _insert(conn, layer, change, work, trusted)
    except EditError as exc:  # which of the new features: by its place among the inserts
        place = len(work.inserted) + 1
        raise EditError(str(exc).replace("the new feature", f"the new feature {place}", 1)) from None


def _grouped(todo: Iterable[Change], trusted: bool) -> Iterable[Change | list[Insert]]:
    """The changes in order, each run of two or more new features (no fid given, not a revert)
    as one list, which ``_insert_many`` takes at once."""
    run: list[Insert] = []
    for change in todo:
        if not trusted and isinstance(change, Insert) and change.fid is None:
            run.append(change)
            continue
        if run:
            yield run if len(run) > 1 else run[0]
            run = []
        yield change
    if run:
        yield run if len(run) > 1 else run[0]


def _insert_many(conn: sqlite3.Connection, layer: Layer, changes: list[Insert], work: _Work) -> None:
    """New features: checked together, then written with one statement per run of rows that
    set the same columns. When one is refused, they are taken one by one instead (nothing was
    written), so that the refusal is the same as ``_insert`` gives, naming the first refused."""
    batch = _checked_batch(layer, changes)
    start = _next_fid(conn, layer, len(changes)) if batch is not None else None
    if batch is None or start is None:
        for change in changes:
            _insert_one(conn, layer, change, work, False)
        return
    rows, blobs, wkbs, bounds = batch
    table = _quote(layer.table)
    fids = range(start, start + len(rows))
    trigger = _rtree_insert_trigger(conn, layer)
    if trigger is not None:  # the spatial index filled below, without a call back into Python per row
        conn.execute(f"DROP TRIGGER {_quote(trigger[0])}")
    at = 0
    while at < len(rows):  # the rows that set the same columns (in the same order), one statement each run
        names = tuple(rows[at])
        end = at + 1
        while end < len(rows) and tuple(rows[end]) == names:
            end += 1
        columns = [layer.fid, *names, layer.geometry]
        conn.executemany(f"INSERT INTO {table} ({', '.join(_quote(c) for c in columns)})"
                         f" VALUES ({', '.join('?' * len(columns))})",
                         [(fids[i], *rows[i].values(), blobs[i]) for i in range(at, end)])
        at = end
    if trigger is not None:  # what the trigger would have written, then the trigger as it was
        conn.executemany(f"INSERT OR REPLACE INTO {_quote(layer.rtree)} VALUES (?, ?, ?, ?, ?)",
                         [(fid, x0, x1, y0, y1) for fid, (x0, y0, x1, y1) in zip(fids, bounds.tolist())])
        conn.execute(trigger[1])
    work.inserted.extend(fids)
    every = tuple(layer.fields)
    encode = msgspec.json.Encoder().encode  # the values are text, numbers or None here: JSON as _json makes it
    work.records.extend((fid, "insert", None, encode(values if tuple(values) == every else
                                                     {name: values.get(name) for name in every}).decode(), 1, None, wkb)
                        for fid, values, wkb in zip(fids, rows, wkbs))
    work.grown.append((float(bounds[:, 0].min()), float(bounds[:, 1].min()), float(bounds[:, 2].max()),
                       float(bounds[:, 3].max())))


_TYPE_IDS = {"Point": 0, "LineString": 1, "LinearRing": 2, "Polygon": 3, "MultiPoint": 4, "MultiLineString": 5,
             "MultiPolygon": 6, "GeometryCollection": 7}


def _checked_batch(layer: Layer, changes: list[Insert]):
    """The rows (field values), geometry blobs, their WKB and bounds (an n x 4 array) of new
    features, checked as ``_insert`` checks each; None when one of them would be refused or is
    not of the kinds done here (no geometry, geometries in several CRSs)."""
    import numpy as np
    if layer.geometry is None:
        return None
    crs = changes[0].crs
    geometries = np.empty(len(changes), dtype=object)
    for i, change in enumerate(changes):
        if not isinstance(change.geometry, BaseGeometry) or change.crs != crs:
            return None
        geometries[i] = change.geometry
    rows = _checked_rows(layer, changes)
    if rows is None:
        return None
    if shapely.is_empty(geometries).any():
        return None
    kinds = np.unique(shapely.get_type_id(geometries))
    allowed = _FAMILY.get(layer.geometry_type)
    if allowed is not None and not set(kinds.tolist()) <= {_TYPE_IDS[name] for name in allowed}:
        return None
    if not layer.z:
        with_z = shapely.has_z(geometries)
        if with_z.any():
            geometries[with_z] = shapely.force_2d(geometries[with_z])
    if not np.isfinite(shapely.get_coordinates(geometries)).all():
        return None
    if crs is not None and (layer.crs is None or not _same_crs(crs, layer.crs)):
        try:
            geometries = _into_layer(layer, geometries, crs, "the new feature")
        except EditError:
            return None
    bounds = shapely.bounds(geometries)
    if layer.crs is not None and _geographic(layer.crs):
        if ((bounds[:, 1] < -90 - 1e-9).any() or (bounds[:, 3] > 90 + 1e-9).any() or (bounds[:, 0] < -360).any()
                or (bounds[:, 2] > 360).any()):
            return None
    if not shapely.is_valid(geometries).all():
        return None
    wkbs = shapely.to_wkb(geometries, flavor="iso", byte_order=1).tolist()
    point = b"GP\x00\x01" + struct.pack("<i", layer.srs_id)
    if kinds.tolist() == [0]:  # points: no envelope, as _blob writes them
        blobs = [point + wkb for wkb in wkbs]
    else:
        points = shapely.get_type_id(geometries) == 0
        boxed = struct.Struct("<i4d")
        blobs = [point + wkb if is_point else b"GP\x00\x03" + boxed.pack(layer.srs_id, x0, x1, y0, y1) + wkb
                 for wkb, is_point, (x0, y0, x1, y1) in zip(wkbs, points.tolist(), bounds.tolist())]
    return rows, blobs, wkbs, bounds


def _checked_rows(layer: Layer, changes: list[Insert]) -> list[dict[str, Any]] | None:
    """The field values of new features as ``_resolve_fields`` makes them; None when one is
    refused."""
    fields: dict[Any, Field | None] = {}
    required = [f.name for f in layer.fields.values() if f.notnull]
    rows = []
    try:
        for change in changes:
            values = {}
            for name, value in (change.properties or {}).items():
                f = fields.get(name, _UNSET)
                if f is _UNSET:
                    f = fields[name] = layer.field_named(str(name))
                if f is None:
                    return None
                values[f.name] = _quick_value(f, value)
            if required and any(values.get(name) is None for name in required):
                return None
            rows.append(values)
    except EditError:
        return None
    return rows


_UNSET = object()


def _quick_value(f: Field, value: Any) -> Any:
    """``_value`` for a new feature, the commonest cases first."""
    kind, of = f.kind, type(value)
    if kind == "text" and of is str and "\x00" not in value:
        return value
    if kind == "int" and of is int and f.low <= value <= f.high:
        return value
    if kind == "float" and of is float and math.isfinite(value):
        return value
    if kind == "date" and of is str and len(value) == 10 and value[4] == value[7] == "-":
        try:
            return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    return _value(f, value, None)


def _rtree_insert_trigger(conn: sqlite3.Connection, layer: Layer) -> tuple[str, str] | None:
    """The name and SQL of the trigger that adds a new row to the layer's spatial index, when
    it is the GeoPackage standard's (as GDAL writes it: spacing and quotes aside); None else."""
    if layer.rtree is None or layer.geometry is None:
        return None
    name = f"{layer.rtree}_insert"
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ? AND tbl_name = ?",
                       (name, layer.table)).fetchone()
    if row is None or not row[0]:
        return None
    t, g, i = layer.table, layer.geometry, layer.fid
    standard = (f"CREATE TRIGGER {name} AFTER INSERT ON {t} WHEN (new.{g} NOT NULL AND NOT ST_IsEmpty(NEW.{g})) "
                f"BEGIN INSERT OR REPLACE INTO {layer.rtree} VALUES (NEW.{i}, ST_MinX(NEW.{g}), ST_MaxX(NEW.{g}), "
                f"ST_MinY(NEW.{g}), ST_MaxY(NEW.{g})); END")
    return (name, row[0]) if _bare_sql(row[0]) == _bare_sql(standard) else None


def _bare_sql(sql: str) -> str:
    return re.sub(r"[\s\"'`\[\];]", "", sql).lower()


def _next_fid(conn: sqlite3.Connection, layer: Layer, count: int) -> int | None:
    """The fid SQLite would give the next new row (those after it follow one by one while the
    edit holds the write lock); None when ``count`` of them would not fit."""
    last = conn.execute(f"SELECT MAX({_quote(layer.fid)}) FROM {_quote(layer.table)}").fetchone()[0] or 0
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").fetchone():
        seq = conn.execute("SELECT MAX(seq) FROM sqlite_sequence WHERE lower(name) = lower(?)",
                           (layer.table,)).fetchone()[0]
        last = max(last, seq or 0)
    return last + 1 if last + count < 2**63 else None


def _existing(conn: sqlite3.Connection, layer: Layer, fid: Any) -> tuple[dict[str, Any], bytes | None]:
    if not isinstance(fid, int) or isinstance(fid, bool):
        raise EditError(f"{fid!r} is not a feature id.")
    found = _row(conn, layer, fid)
    if found is None:
        raise EditError(f"feature {fid} does not exist.")
    return found


def _update(conn: sqlite3.Connection, layer: Layer, change: Update, work: _Work, trusted: bool) -> None:
    old, old_blob = _existing(conn, layer, change.fid)
    values = _resolve_fields(layer, dict(change.properties or {}), change.fid)
    if change.replace:  # a whole new feature: what it does not name is empty
        for name, f in layer.fields.items():
            if name not in values:
                values[name] = _value(f, None, change.fid)
    changed = {k: v for k, v in values.items() if old.get(k) != v or type(old.get(k)) is not type(v)}
    assignments = dict(changed)
    geometry_changed = False
    new_blob = old_blob
    if change.set_geometry:
        new_blob = _geometry(layer, change.geometry, change.crs, change.fid, trusted)
        old_wkb = None if old_blob is None else _wkb_of(old_blob)
        new_wkb = None if new_blob is None else _wkb_of(new_blob)
        if old_wkb != new_wkb:
            geometry_changed = True
            assignments[layer.geometry] = new_blob
    work.updated += 1
    if not assignments:
        return
    conn.execute(f"UPDATE {_quote(layer.table)} SET {', '.join(f'{_quote(c)} = ?' for c in assignments)}"
                 f" WHERE {_quote(layer.fid)} = ?", [*assignments.values(), change.fid])
    work.records.append((change.fid, "update", {k: old.get(k) for k in changed}, changed, int(geometry_changed),
                         None if not geometry_changed or old_blob is None else _wkb_of(old_blob),
                         None if not geometry_changed or new_blob is None else _wkb_of(new_blob)))
    if geometry_changed:
        if (box := _bounds_of(old_blob)) is not None:
            work.shrunk.append(box)
        if (box := _bounds_of(new_blob)) is not None:
            work.grown.append(box)


def _delete(conn: sqlite3.Connection, layer: Layer, change: Delete, work: _Work) -> None:
    old, old_blob = _existing(conn, layer, change.fid)
    conn.execute(f"DELETE FROM {_quote(layer.table)} WHERE {_quote(layer.fid)} = ?", (change.fid,))
    work.deleted += 1
    work.records.append((change.fid, "delete", old, None, 1, None if old_blob is None else _wkb_of(old_blob), None))
    if (box := _bounds_of(old_blob)) is not None:
        work.shrunk.append(box)


def _count(conn: sqlite3.Connection, layer: Layer) -> int:
    try:
        row = conn.execute("SELECT feature_count FROM gpkg_ogr_contents WHERE lower(table_name) = lower(?)",
                           (layer.table,)).fetchone()
    except sqlite3.OperationalError:
        row = None
    if row is not None and row[0] is not None:
        return int(row[0])
    return int(conn.execute(f"SELECT COUNT(*) FROM {_quote(layer.table)}").fetchone()[0])


def _full_extent(conn: sqlite3.Connection, layer: Layer) -> tuple[float, float, float, float] | None:
    if layer.geometry is None:
        return None
    if layer.rtree:
        row = conn.execute(f"SELECT MIN(minx), MIN(miny), MAX(maxx), MAX(maxy) FROM {_quote(layer.rtree)}").fetchone()
    else:
        g = _quote(layer.geometry)
        row = conn.execute(f"SELECT MIN(ST_MinX({g})), MIN(ST_MinY({g})), MAX(ST_MaxX({g})), MAX(ST_MaxY({g}))"
                           f" FROM {_quote(layer.table)}").fetchone()
    return None if row is None or row[0] is None else tuple(float(v) for v in row)


def _extent(conn: sqlite3.Connection, layer: Layer, work: _Work) -> tuple[float, float, float, float] | None:
    """The layer's extent after the edit: the stored one grown by the new shapes, or read again
    from the spatial index when a shape that touched its edge moved or went."""
    row = conn.execute("SELECT min_x, min_y, max_x, max_y FROM gpkg_contents WHERE table_name = ?",
                       (layer.table,)).fetchone()
    old = tuple(row) if row is not None and None not in row else None
    if old is None or any(b[0] <= old[0] or b[1] <= old[1] or b[2] >= old[2] or b[3] >= old[3] for b in work.shrunk):
        extent = _full_extent(conn, layer)
    else:
        extent = old
        for b in work.grown:
            extent = (min(extent[0], b[0]), min(extent[1], b[1]), max(extent[2], b[2]), max(extent[3], b[3]))
    if extent != old:
        conn.execute("UPDATE gpkg_contents SET min_x = ?, min_y = ?, max_x = ?, max_y = ? WHERE table_name = ?",
                     (*(extent or (None, None, None, None)), layer.table))
    return extent


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _write_version(conn: sqlite3.Connection, version: Reserved, *, via: str, kind: str, reverts_to: str | None,
                   summary: dict[str, Any], records: Iterable[tuple]) -> None:
    ensure_history(conn)
    conn.execute(f"INSERT INTO {VERSIONS} (number, uuid, created, user_id, username, via, kind, reverts_to, summary)"
                 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (version.number, version.uuid, version.created, version.user_id, version.username, via, kind,
                  reverts_to, _json(summary)))
    every = (f"INSERT INTO {CHANGES} (version, fid, op, before, after, geometry, before_wkb, after_wkb)"
             " VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    new = f"INSERT INTO {CHANGES} (version, fid, op, after, geometry, after_wkb) VALUES (?, ?, 'insert', ?, 1, ?)"
    statement, rows = every, []
    for fid, op, before, after, geometry, bw, aw in records:  # in order, one statement per run of one kind
        plain = op == "insert" and before is None and bw is None and geometry == 1  # a new feature: fewer values
        if (new if plain else every) is not statement and rows:
            conn.executemany(statement, rows)
            rows = []
        statement = new if plain else every
        rows.append((version.number, fid, _json(after), aw) if plain else
                    (version.number, fid, op, _json(before), _json(after), geometry, bw, aw))
    if rows:
        conn.executemany(statement, rows)
    conn.execute(f"INSERT INTO {STATE} (id, applied_version, applied_uuid) VALUES (1, ?, ?)"
                 " ON CONFLICT (id) DO UPDATE SET applied_version = excluded.applied_version,"
                 " applied_uuid = excluded.applied_uuid", (version.number, version.uuid))


@contextlib.contextmanager
def _busy_as_refusal():
    try:
        yield
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise EditBusy(str(exc)) from None
        raise


def apply(path: str | Path, changes: Sequence[Change] | Callable[[sqlite3.Connection, Layer], Sequence[Change]], *,
          reserve: Callable[[], Reserved], via: str, kind: str = "data", reverts_to: str | None = None,
          base: int | None = None, expected: dict[int, str | tuple[str, ...]] | None = None,
          tags: bool = False) -> Applied:
    """Apply ``changes`` (or the changes ``changes(conn, layer)`` gives inside the transaction)
    to the GeoPackage at ``path`` in one transaction, with their history. ``reserve()`` is called
    once the changes are checked and applied, and names the version; if it raises, nothing is
    written. EditError for a change the layer cannot take, StaleBase when ``base`` is not the
    last version applied, NotVector for a file without features. A second edit of the same file
    waits for the first (the SQLite write lock, with a busy timeout).

    ``expected`` ({fid: entity tag, a tuple of them, or "*"}) is checked once the write lock is
    held, before any change: MissingFeature when a feature named is not there, TagMismatch when
    its tag (``feature_tag``) is none of those expected ("*": any). Two edits that expect the
    same tag of a feature cannot both pass: the second checks after the first committed. With
    ``tags``, ``Applied.tags`` gives the tags of the features inserted and updated, as committed."""
    with gpkg_access.sqlite(path), _busy_as_refusal():
        conn = connect(path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                layer = layer_of(conn)
                current, _ = _state(conn)
                if base is not None and base != current:
                    raise StaleBase(base, current)
                if expected:
                    _check_expected(conn, layer, expected)
                trusted = callable(changes)  # changes made here (a revert) bring back what the layer held
                todo = changes(conn, layer) if trusted else changes
                work = _Work()
                for change in _grouped(todo, trusted):
                    if isinstance(change, list):
                        _insert_many(conn, layer, change, work)
                    elif isinstance(change, Insert):
                        _insert_one(conn, layer, change, work, trusted)
                    elif isinstance(change, Update):
                        _update(conn, layer, change, work, trusted)
                    elif isinstance(change, Delete):
                        _delete(conn, layer, change, work)
                    else:
                        raise EditError(f"{change!r} is not an insert, an update or a delete.")
                count = _count(conn, layer)
                extent = _extent(conn, layer, work)
                conn.execute("UPDATE gpkg_contents SET last_change = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
                             " WHERE table_name = ?", (layer.table,))
                summary = {"inserted": len(work.inserted), "updated": work.updated, "deleted": work.deleted,
                           "feature_count": count}
                found_tags: dict[int, str] = {}
                if tags:
                    for fid in [*work.inserted, *(c.fid for c in todo if isinstance(c, Update))]:
                        if (tag := feature_tag(conn, layer, fid)) is not None:
                            found_tags[fid] = tag
                version = reserve()
                _write_version(conn, version, via=via, kind=kind, reverts_to=reverts_to, summary=summary,
                               records=work.records)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()
    return Applied(version.number, version.uuid, work.inserted, work.updated, work.deleted, count, extent,
                   layer.crs, summary, found_tags)


def record_version(path: str | Path, version: Reserved, *, via: str, kind: str, summary: dict[str, Any] | None = None,
                   reverts_to: str | None = None) -> None:
    """A version without feature changes (a new upload of the data) recorded as the last applied."""
    with gpkg_access.sqlite(path):
        conn = connect(path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                _write_version(conn, version, via=via, kind=kind, reverts_to=reverts_to, summary=summary or {},
                               records=())
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()


def wait_for_edits(path: str | Path) -> None:
    """Return once no edit of the file is in progress (its write lock taken and given back)."""
    with gpkg_access.sqlite(path):
        conn = connect(path, wal=False)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
        finally:
            conn.close()


# --- reading the history ---------------------------------------------------------------------


def _reading(path: str | Path):
    """A connection for reading history (no journal mode change), inside the SQLite turn."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
    _register(conn)
    return conn


def _version_dict(row: sqlite3.Row | tuple) -> dict[str, Any]:
    number, uuid, created, user_id, username, via, kind, reverts_to, summary = row
    return {"number": number, "uuid": uuid, "created": created, "user_id": user_id, "username": username, "via": via,
            "kind": kind, "reverts_to": reverts_to, "summary": json.loads(summary or "{}")}


def state(path: str | Path) -> dict[str, Any]:
    """The file's applied mark, its feature count and extent, and its CRS:
    {"applied": number, "uuid": uuid or None, "count": n, "extent": box or None, "crs": text or None}."""
    with gpkg_access.sqlite(path):
        conn = _reading(path)
        try:
            conn.execute("BEGIN")
            layer = layer_of(conn)
            applied, uuid = _state(conn)
            row = conn.execute("SELECT min_x, min_y, max_x, max_y FROM gpkg_contents WHERE table_name = ?",
                               (layer.table,)).fetchone()
            extent = tuple(row) if row is not None and None not in row else None
            out = {"applied": applied, "uuid": uuid, "count": _count(conn, layer), "extent": extent, "crs": layer.crs}
            conn.execute("COMMIT")
            return out
        finally:
            conn.close()


def applied(path: str | Path) -> tuple[int, str | None]:
    """The number and uuid of the last version applied to the file ((0, None): never edited)."""
    with gpkg_access.sqlite(path):
        conn = _reading(path)
        try:
            return _state(conn)
        finally:
            conn.close()


def versions(path: str | Path, after: int = 0) -> list[dict[str, Any]]:
    """The data versions recorded in the file numbered above ``after``, oldest first: dicts of
    number, uuid, created, user_id, username, via, kind, reverts_to, summary."""
    with gpkg_access.sqlite(path):
        conn = _reading(path)
        try:
            if not _has_history(conn):
                return []
            rows = conn.execute(f"SELECT number, uuid, created, user_id, username, via, kind, reverts_to, summary"
                                f" FROM {VERSIONS} WHERE number > ? ORDER BY number", (after,)).fetchall()
            return [_version_dict(r) for r in rows]
        finally:
            conn.close()


def renumber(path: str | Path, uuid: str, number: int) -> None:
    """Give the version ``uuid`` another number (the catalogue had given its number to another
    version, e.g. after an older catalogue was restored)."""
    with gpkg_access.sqlite(path):
        conn = connect(path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            old = conn.execute(f"SELECT number FROM {VERSIONS} WHERE uuid = ?", (uuid,)).fetchone()
            if old is not None and old[0] != number:
                conn.execute(f"UPDATE {VERSIONS} SET number = ? WHERE uuid = ?", (number, uuid))
                conn.execute(f"UPDATE {CHANGES} SET version = ? WHERE version = ?", (number, old[0]))
                conn.execute(f"UPDATE {STATE} SET applied_version = ? WHERE applied_uuid = ?", (number, uuid))
            conn.execute("COMMIT")
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.close()


def _geojson(wkb: bytes | None, transform) -> dict[str, Any] | None:
    if wkb is None:
        return None
    geometry = shapely.from_wkb(wkb)
    if transform is not None:
        geometry = transform(geometry)
    return json.loads(shapely.to_geojson(geometry))


def _to_crs(layer: Layer, crs: str | None):
    """A function moving shapely geometries from the layer's CRS into ``crs`` (None: keep them)."""
    if crs is None or layer.crs is None or _same_crs(crs, layer.crs):
        return None
    import numpy as np
    transformer = _transformer(layer.crs, crs)
    return lambda g: shapely.transform(g, lambda xy: np.column_stack(transformer.transform(xy[:, 0], xy[:, 1])))


def data_changes(path: str | Path, number: int, crs: str | None = "EPSG:4326") -> list[dict[str, Any]]:
    """The features version ``number`` changed, in the order it changed them:
    [{"op": "insert"|"update"|"delete", "fid": n,
      "before": {"properties": {...}, "geometry": GeoJSON or null} or null,
      "after":  {"properties": {...}, "geometry": GeoJSON or null} or null}].
    An insert has only "after" (every field), a delete only "before" (every field); an update
    has the fields it changed, before and after, and "geometry" in both only when it moved the
    feature. Geometries are in ``crs`` (longitude/latitude by default; None: the layer's CRS)."""
    with gpkg_access.sqlite(path):
        conn = _reading(path)
        try:
            conn.execute("BEGIN")
            layer = layer_of(conn)
            if not _has_history(conn):
                return []
            rows = conn.execute(f"SELECT fid, op, before, after, geometry, before_wkb, after_wkb FROM {CHANGES}"
                                f" WHERE version = ? ORDER BY id", (number,)).fetchall()
            conn.execute("COMMIT")
        finally:
            conn.close()
    transform = _to_crs(layer, crs)
    out = []
    for fid, op, before, after, geometry, before_wkb, after_wkb in rows:
        item: dict[str, Any] = {"op": op, "fid": fid, "before": None, "after": None}
        for key, props, wkb in (("before", before, before_wkb), ("after", after, after_wkb)):
            if props is None and not (geometry and op == "update"):
                continue
            side: dict[str, Any] = {"properties": {k: _plain(layer.fields.get(k), v)
                                                   for k, v in json.loads(props or "{}").items()}}
            if geometry:
                side["geometry"] = _geojson(wkb, transform)
            item[key] = side
        out.append(item)
    return out


def _undo_rows(conn: sqlite3.Connection, layer: Layer, number: int,
               fids: Iterable[int] | None = None) -> tuple[dict[int, tuple[dict, bytes | None] | None], int]:
    """The features the versions after ``number`` touched, as they were at ``number``
    ({fid: (properties, WKB) or None when absent then}), and the last replacing upload's number
    (the data before it are not kept)."""
    if not _has_history(conn):
        return {}, 0
    replaced = conn.execute(f"SELECT MAX(number) FROM {VERSIONS} WHERE kind = 'replace'").fetchone()[0] or 0
    rows = conn.execute(f"SELECT fid, op, before, after, geometry, before_wkb, after_wkb FROM {CHANGES}"
                        f" WHERE version > ? ORDER BY version DESC, id DESC", (number,)).fetchall()
    wanted = None if fids is None else set(fids)
    state_at: dict[int, tuple[dict, bytes | None] | None] = {}
    for fid, op, before, after, geometry, before_wkb, _after_wkb in rows:
        if wanted is not None and fid not in wanted:
            continue
        if fid not in state_at:  # start from the feature as it is now
            now = _row(conn, layer, fid)
            state_at[fid] = None if now is None else (now[0], None if now[1] is None else _wkb_of(now[1]))
        if op == "insert":
            state_at[fid] = None
        elif op == "delete":
            state_at[fid] = (json.loads(before or "{}"), before_wkb)
        else:
            props, wkb = state_at[fid] or ({}, None)
            props = {**props, **json.loads(before or "{}")}
            state_at[fid] = (props, before_wkb if geometry else wkb)
    return state_at, replaced


def undo(conn: sqlite3.Connection, layer: Layer, number: int) -> list[Change]:
    """The changes that bring the features back to what they were at version ``number``
    (inside an edit's transaction: pass it to ``apply`` as a callable). EditError when the data
    were replaced by an upload since."""
    state_at, replaced = _undo_rows(conn, layer, number)
    if replaced > number:
        raise EditError(f"The data were replaced by a new upload in version {replaced}; "
                        f"the features as at version {number} are not kept.")
    out: list[Change] = []
    for fid in sorted(state_at):
        then = state_at[fid]
        now = _row(conn, layer, fid)
        if then is None:
            if now is not None:
                out.append(Delete(fid))
            continue
        props, wkb = then
        geometry = None if wkb is None else shapely.from_wkb(wkb)
        if now is None:
            out.append(Insert({k: _plain(layer.fields.get(k), v) for k, v in props.items() if k in layer.fields},
                              geometry, None, fid))
            continue
        current, blob = now
        changed = {k: _plain(layer.fields.get(k), v) for k, v in props.items()
                   if k in layer.fields and current.get(k) != v}
        moved = (None if blob is None else _wkb_of(blob)) != wkb
        if changed or moved:
            out.append(Update(fid, changed, geometry, moved, None))
    return out


def features_at(path: str | Path, number: int, crs: str | None = "EPSG:4326") -> dict[str, Any]:
    """The features as they were at version ``number`` (the later data versions undone), as a
    GeoJSON FeatureCollection: {"type": "FeatureCollection", "features": [{"type": "Feature",
    "id": fid, "geometry": ..., "properties": {...}}], "numberReturned": n}, ordered by fid;
    geometries in ``crs`` (longitude/latitude by default; None: the layer's CRS). EditError when
    the data were replaced by an upload after ``number``."""
    with gpkg_access.sqlite(path):
        conn = _reading(path)
        try:
            conn.execute("BEGIN")
            layer = layer_of(conn)
            state_at, replaced = _undo_rows(conn, layer, number)
            if replaced > number:
                raise EditError(f"The data were replaced by a new upload in version {replaced}; "
                                f"the features as at version {number} are not kept.")
            names = list(layer.fields)
            cols = ", ".join(_quote(n) for n in [layer.fid, *names, *([layer.geometry] if layer.geometry else [])])
            rows: dict[int, tuple[dict, bytes | None]] = {}
            for found in conn.execute(f"SELECT {cols} FROM {_quote(layer.table)}"):
                fid = found[0]
                blob = found[len(names) + 1] if layer.geometry else None
                rows[fid] = (dict(zip(names, found[1:len(names) + 1])), None if blob is None else _wkb_of(blob))
            conn.execute("COMMIT")
        finally:
            conn.close()
    for fid, then in state_at.items():
        if then is None:
            rows.pop(fid, None)
        else:
            rows[fid] = ({n: then[0].get(n) for n in names}, then[1])
    transform = _to_crs(layer, crs)
    features = [{"type": "Feature", "id": fid, "geometry": _geojson(wkb, transform),
                 "properties": {k: _plain(layer.fields.get(k), v) for k, v in props.items()}}
                for fid, (props, wkb) in sorted(rows.items())]
    return {"type": "FeatureCollection", "features": features, "numberReturned": len(features)}


def copy_database(source: str | Path, target: str | Path, history: bool = True) -> None:
    """A consistent copy of the GeoPackage at ``source`` as one self-contained file at
    ``target``, synced: while edits go on, the data as at one commit. A file in WAL mode (edited)
    is copied with SQLite's backup API, its write-ahead log included; another is copied byte for
    byte under a read lock that holds edits back meanwhile. Without ``history``, the copy starts
    a history of its own (a copy of the resource): the history tables are left out.
    FileNotFoundError when ``source`` is gone."""
    if not Path(source).is_file():
        raise FileNotFoundError(2, "No such file", str(source))
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    with gpkg_access.sqlite(source):
        src = _reading(source)
        try:
            src.execute("BEGIN")
            wal = src.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
            src.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # the read lock, until the end
            if wal:
                dst = sqlite3.connect(str(target))
                try:
                    src.backup(dst)
                    dst.execute("PRAGMA journal_mode = DELETE")  # one file: no -wal beside the copy
                finally:
                    dst.close()
            else:
                shutil.copyfile(source, target)
            src.execute("COMMIT")
        finally:
            src.close()
    if not history:
        dst = sqlite3.connect(str(target), isolation_level=None)
        try:
            if dst.execute(f"SELECT 1 FROM sqlite_master WHERE name = '{STATE}'").fetchone():
                for table in (VERSIONS, CHANGES, STATE):
                    dst.execute(f"DROP TABLE IF EXISTS {table}")
        finally:
            dst.close()
    with open(target, "rb+") as f:
        os.fsync(f.fileno())


def copy_history(source: str | Path, target: str | Path) -> None:
    """Carry the history tables of the working copy ``source`` into a new working copy ``target``
    (a replacing upload), with its applied mark. Nothing is done when ``source`` has none."""
    with gpkg_access.sqlite(source):
        conn = _reading(source)
        try:
            if not _has_history(conn):
                return
            conn.execute("BEGIN")
            versions_rows = conn.execute(f"SELECT number, uuid, created, user_id, username, via, kind, reverts_to,"
                                         f" summary FROM {VERSIONS} ORDER BY number").fetchall()
            change_rows = conn.execute(f"SELECT version, fid, op, before, after, geometry, before_wkb, after_wkb"
                                       f" FROM {CHANGES} ORDER BY id").fetchall()
            state_row = conn.execute(f"SELECT applied_version, applied_uuid FROM {STATE} WHERE id = 1").fetchone()
            conn.execute("COMMIT")
        finally:
            conn.close()
    with gpkg_access.sqlite(target):
        conn = connect(target)
        try:
            conn.execute("BEGIN IMMEDIATE")
            ensure_history(conn)
            conn.executemany(f"INSERT OR IGNORE INTO {VERSIONS} (number, uuid, created, user_id, username, via, kind,"
                             " reverts_to, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", versions_rows)
            conn.executemany(f"INSERT INTO {CHANGES} (version, fid, op, before, after, geometry, before_wkb,"
                             " after_wkb) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", change_rows)
            if state_row is not None:
                conn.execute(f"INSERT OR REPLACE INTO {STATE} (id, applied_version, applied_uuid) VALUES (1, ?, ?)",
                             tuple(state_row))
            conn.execute("COMMIT")
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.close()


# --- forgetting old history (catalogue vacuum --drop-versions-before) ------------------------
#
# The versions numbered up to a point are deleted with their feature changes, but the file's
# newest version and the applied mark stay (numbers go on from them, never given twice). The
# point is kept in the state row (``cut_upto``, ``cut_on``, columns added to it the first time),
# and the history before it is refused plainly from then on: the features as at a version up to
# it (their later changes are gone), a revert to one, and 0 (the data as uploaded: the first
# changes are gone, so they cannot be undone). A copy without history drops the state row, and
# with it the cut; a replacing upload's new file does not carry it (the history before the
# replace is refused for that reason already).

CUT_COLUMNS = (("cut_upto", "INTEGER"), ("cut_on", "TEXT"))


class HistoryCut(EditError):
    """The history a read or a revert needs was dropped by ``catalogue vacuum``."""

    def __init__(self, number: int, upto: int, on: str):
        super().__init__(cut_message(number, upto, on))
        self.number, self.upto, self.on = number, upto, on


def cut_message(number: int, upto: int, on: str) -> str:
    """What a refusal of version ``number`` says when the history up to ``upto`` was dropped."""
    cause = f"the history before version {upto + 1} was dropped by vacuum on {str(on)[:10]}"
    if number == 0:
        return f"The data as uploaded (version 0) are no longer known: {cause}."
    return f"Version {number} is no longer known: {cause}."


def cut_of(conn: sqlite3.Connection) -> tuple[int, str] | None:
    """(upto, when) of the file's cut, or None when its history was never cut."""
    if not _has_history(conn):
        return None
    if "cut_upto" not in {row[1] for row in conn.execute(f"PRAGMA table_info({STATE})")}:
        return None
    row = conn.execute(f"SELECT cut_upto, cut_on FROM {STATE} WHERE id = 1").fetchone()
    return (int(row[0]), row[1] or "") if row is not None and row[0] else None


def refuse_cut(conn: sqlite3.Connection, number: int) -> None:
    """HistoryCut when version ``number`` lies in the history that was dropped (inside a
    transaction: an edit's, for a revert)."""
    found = cut_of(conn)
    if found is not None and number <= found[0]:
        raise HistoryCut(number, *found)


def history_cut(path: str | Path) -> tuple[int, str] | None:
    """(upto, when): the versions numbered up to ``upto`` were dropped from the file at ``when``
    (an ISO time); None when its history was never cut."""
    with gpkg_access.sqlite(path):
        conn = _reading(path)
        try:
            return cut_of(conn)
        finally:
            conn.close()


@dataclass(frozen=True)
class Forgotten:
    """What ``forget_versions`` did: the versions and feature changes deleted, the file's cut
    after it, its size on disk (with its write-ahead log) before and after, and whether it was
    compacted (VACUUM), else why not."""

    versions: int
    changes: int
    upto: int
    size_before: int
    size_after: int
    compacted: bool
    why_not: str | None = None


def _size_on_disk(path: str | Path) -> int:
    total = 0
    for suffix in ("", "-wal"):
        try:
            total += os.stat(f"{path}{suffix}").st_size
        except FileNotFoundError:
            pass
    return total


def forget_versions(path: str | Path, upto: int, when: str, *, compact: bool = True) -> Forgotten:
    """Delete the file's versions numbered at or below ``upto`` and their feature changes, in
    one transaction that takes the write turn and lock edits take, keeping its newest version
    and the applied mark; record the cut (``upto``, lowered below the newest version if need
    be; never lowered from an earlier cut) and when (``when``, an ISO time). Then, with
    ``compact`` and when something was deleted, give the space back: VACUUM, and a TRUNCATE
    checkpoint of the write-ahead log (edits of the file wait meanwhile; readers in other
    processes may keep the log from being emptied until a later checkpoint). VACUUM keeps the
    fids (INTEGER PRIMARY KEY) and the AUTOINCREMENT counter, so ids are still never reused. It
    needs free disk space of about twice the file's size: with less, the space stays free pages
    of the file, which later edits reuse. A file without history is left as it is."""
    before = _size_on_disk(path)
    with gpkg_access.sqlite(path), _busy_as_refusal():
        conn = connect(path, wal=False)  # its journal mode stays as it is
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                old = cut_of(conn)
                if not _has_history(conn):
                    conn.execute("ROLLBACK")
                    return Forgotten(0, 0, 0, before, before, False, "no history")
                newest = conn.execute(f"SELECT MAX(number) FROM {VERSIONS}").fetchone()[0] or 0
                applied, _ = _state(conn)
                limit = min(int(upto), max(newest, applied) - 1)
                gone = conn.execute(f"DELETE FROM {VERSIONS} WHERE number <= ? AND number != ?",
                                    (limit, applied)).rowcount if limit > 0 else 0
                changes = conn.execute(f"DELETE FROM {CHANGES} WHERE version <= ? AND version != ?",
                                       (limit, applied)).rowcount if limit > 0 else 0
                cut = max(limit, old[0] if old else 0)
                if cut > 0 and (old is None or cut > old[0]):
                    present = {row[1] for row in conn.execute(f"PRAGMA table_info({STATE})")}
                    for name, kind in CUT_COLUMNS:
                        if name not in present:
                            conn.execute(f"ALTER TABLE {STATE} ADD COLUMN {name} {kind}")
                    conn.execute(f"UPDATE {STATE} SET cut_upto = ?, cut_on = ? WHERE id = 1", (cut, when))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            compacted, why_not = False, None
            if not (gone or changes):
                why_not = "nothing to delete"
            elif not compact:
                why_not = "not asked"
            elif shutil.disk_usage(Path(path).parent).free < 2 * _size_on_disk(path):
                why_not = "too little free disk space for VACUUM (about twice the file's size)"
            else:
                conn.execute("VACUUM")
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
                    busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                    if busy:
                        why_not = "readers kept the write-ahead log from being emptied: the file shrinks later"
                compacted = True
        finally:
            conn.close()
    return Forgotten(gone, changes, cut, before, _size_on_disk(path), compacted, why_not)
