"""OGC API - Features (Parts 1 to 3), read for a viewer: the collections (every dataset and map
the viewer may see; the vector datasets with features), one collection, a page of a
collection's features, one feature, and a collection's queryables.

Features are read as WFS GetFeature reads them (geo/features.py) and need the same right,
download_resourcebase; a dataset that is a raster, remote or marked metadata_only has none here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from catalogue_app import cql2, files
from catalogue_app.geo import feature_etags
from catalogue_app.geo.features import (
    CRS84_URI,
    CrsName,
    FeaturePage,
    FeatureQuery,
    LayerInfo,
    QueryError,
    epsg_uri,
    layer_info,
    parse_crs_uri,
    read_features,
)
from catalogue_app.services.errors import Forbidden, Invalid, NotFound, NotSignedIn
from catalogue_app.store import Connection, features_api
from catalogue_app.store.resources import Viewer

MAP_PREFIX = "map-"
# CRSs every collection offers (Features Part 2), with the layer's own beside them
COMMON_CRS = (CRS84_URI, epsg_uri(4326), epsg_uri(3857))

# --- collections -----------------------------------------------------------------------------


def collection_id(row: dict[str, Any]) -> str:
    """The collection id of a dataset (its layer name; ``workspace__name`` outside the
    catalogue's workspace) or of a map (``map-{pk}``)."""
    if row["resource_type"] == "map":
        return f"{MAP_PREFIX}{row['id']}"
    if row["workspace"] == features_api.DEFAULT_WORKSPACE:
        return row["name"]
    return f"{row['workspace']}__{row['name']}"


def _time_field(row: dict[str, Any]) -> str | None:
    """The field ``datetime=`` filters on: the dataset's time attribute when it is a date, else
    its first date or date-time field; None when it has none."""
    dates = [a["attribute"] for a in row["attributes"] if a["attribute_type"] in ("xsd:date", "xsd:dateTime")]
    if row.get("time_attribute") in dates:
        return row["time_attribute"]
    return dates[0] if dates else None


def _own_crs(row: dict[str, Any]) -> str | None:
    srid = (row.get("srid") or "").strip().upper()
    if srid.startswith("EPSG:") and srid[5:].isdecimal():
        return epsg_uri(int(srid[5:]))
    return None


def _described(row: dict[str, Any]) -> dict[str, Any]:
    """A dataset or map row with what a collection document says of it."""
    kind = "map" if row["resource_type"] == "map" else "raster" if row.get("subtype") == "raster" else "vector"
    out = dict(row)
    out["cid"] = collection_id(row)
    out["kind"] = kind
    out["has_data"] = kind == "map" or not (row.get("remote_url") or row.get("metadata_only"))
    out["has_features"] = kind == "vector" and out["has_data"]
    out.setdefault("may_download", False)
    out.setdefault("attributes", [])
    out["time_field"] = _time_field(out) if kind == "vector" else None
    own = _own_crs(row)
    out["storage_crs"] = own
    out["crs"] = list(dict.fromkeys([*COMMON_CRS, *([own] if own else [])]))
    return out


def collections(conn: Connection, viewer: Viewer) -> list[dict[str, Any]]:
    """Every dataset (with data) and map the viewer may see, datasets first, each by title."""
    rows = features_api.visible_datasets(conn, viewer) + features_api.visible_maps(conn, viewer)
    return [_described(row) for row in rows]


def collection(conn: Connection, viewer: Viewer, cid: str) -> dict[str, Any] | None:
    """One collection the viewer may see; None when unknown or hidden."""
    if cid.startswith(MAP_PREFIX):
        number = cid[len(MAP_PREFIX):]
        if not (number.isdecimal() and len(number) < 19):
            return None
        maps = features_api.visible_maps(conn, viewer, int(number))
        return _described(maps[0]) if maps else None
    workspace, name = features_api.DEFAULT_WORKSPACE, cid
    if "__" in cid:
        workspace, _, name = cid.partition("__")
    row = features_api.dataset_named(conn, viewer, workspace, name)
    return _described(row) if row is not None else None


def _feature_collection(conn: Connection, viewer: Viewer, cid: str, download: bool) -> dict[str, Any]:
    """The vector collection ``cid``; NotFound when there is no such collection with features,
    and, with ``download``, NotSignedIn or Forbidden when the viewer may not read its features."""
    found = collection(conn, viewer, cid)
    if found is None:
        raise NotFound(message=f'There is no collection "{cid}".')
    if not found["has_features"]:
        raise NotFound(message=f'The collection "{cid}" has no features here.')
    if download and not found["may_download"]:
        if viewer.id is None:
            raise NotSignedIn(f'Sign in to read the features of "{cid}": they need the right to download the data.')
        raise Forbidden(f'You may not download the features of "{cid}".')
    return found


# --- queryables ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Queryables:
    """What a collection's filters may name (name -> cql2.Queryable, the geometry as "geometry"),
    with the layer's geometry type, its date fields (name -> "date" or "date-time") and the
    time field (the ``primary-instant``)."""

    fields: dict[str, cql2.Queryable]
    geometry_type: str | None
    dates: dict[str, str]
    time_field: str | None


def _layer_queryables(found: dict[str, Any], info: LayerInfo) -> Queryables:
    from catalogue_app.geo.cql2_features import queryables_of

    fields = queryables_of(info, info.types, info.subtypes)
    dates = {name: "date" if kind == "OFTDate" else "date-time"
             for name, kind in zip(info.fields, info.types) if kind in ("OFTDate", "OFTDateTime")}
    return Queryables(fields, info.geometry_type, dates, found["time_field"])


def _data_path(found: dict[str, Any], files_dir: Path) -> Path:
    path = files.working_copy(files_dir / found["folder"]) if found.get("folder") else None
    if path is None:
        raise NotFound(message=f'The data of "{found["cid"]}" are missing.')
    return path


def queryables(conn: Connection, viewer: Viewer, files_dir: Path, cid: str) -> tuple[dict[str, Any], Queryables]:
    """A vector collection and its queryables (the fields of its features, read from its
    data); NotFound when there is no such collection with features."""
    found = _feature_collection(conn, viewer, cid, download=False)
    path = _data_path(found, files_dir)
    return found, _layer_queryables(found, layer_info(path, found.get("data_version")))


# --- features --------------------------------------------------------------------------------


@dataclass
class ItemsAsk:
    """A request for features: the box (east first, in ``bbox_crs``: None is CRS84), the CRS to
    answer in (None: CRS84), a time interval, properties, a CQL2 filter (with its language and
    the CRS of its geometries), and the page; or one feature by ``fid``."""

    bbox: tuple[float, float, float, float] | None = None
    bbox_crs: CrsName | None = None
    crs: CrsName | None = None
    when: tuple[datetime | None, datetime | None] | None = None
    properties: list[str] | None = None
    filter: str | None = None
    filter_lang: str | None = None
    filter_crs: CrsName | None = None
    offset: int = 0
    limit: int = 10
    fid: int | None = None


@dataclass
class ItemsAnswer:
    """The collection, its page of features (or its one feature), the CRS they are in, and the
    feature's entity tag (one feature only; None when unknown)."""

    collection: dict[str, Any]
    page: FeaturePage
    crs: CrsName
    etag: str | None = None
    notes: list[str] = field(default_factory=list)


def _offered(found: dict[str, Any], name: CrsName | None, param: str) -> None:
    if name is not None and name.name not in found["crs"]:
        raise Invalid(f'{param}: "{name.name}" is not a CRS of this collection: use one of {", ".join(found["crs"])}.')


def _apply_filter(query: FeatureQuery, ask: ItemsAsk, table: Queryables, info: LayerInfo) -> None:
    """Narrow ``query`` by the CQL2 filter of ``ask``: parsed against the queryables and
    compiled for the layer (geo/cql2_features.py) into a condition, a mask and a test made in
    Python."""
    from catalogue_app.geo.cql2_features import compile_for_layer

    if ask.filter_lang not in (None, "cql2-text", "cql2-json"):
        raise Invalid(f'filter-lang: "{ask.filter_lang}" is not a filter language here: use cql2-text or cql2-json.')
    try:
        expression = cql2.parse(ask.filter or "", ask.filter_lang, table.fields)
        if ask.filter_crs is not None and ask.filter_crs.name != CRS84_URI:
            expression = _to_crs84(expression, ask.filter_crs)
        found = compile_for_layer(expression, info.crs)
    except cql2.Cql2Error as exc:
        raise Invalid(f"filter: {exc.message}") from None
    if found.nothing:
        query.where = "0"
        return
    query.where, query.mask = found.where, found.mask
    if found.predicate is not None:
        query.predicate = found.predicate
        query.predicate_fields = found.columns
        query.predicate_geometry = found.needs_geometry


def _to_crs84(expression: Any, source: CrsName) -> Any:
    """The expression with the geometries of its spatial tests moved from ``source`` (the
    filter-crs, in its own axis order) into CRS84."""
    import dataclasses

    import numpy as np
    import shapely
    from pyproj import Transformer

    transformer = Transformer.from_crs(source.crs, "OGC:CRS84")  # the source's own axis order

    def move(node: Any) -> Any:
        if isinstance(node, cql2.Intersects):
            shape = shapely.transform(node.geometry, lambda xy: np.column_stack(
                transformer.transform(xy[:, 0], xy[:, 1])))
            if not np.isfinite(shapely.get_coordinates(shape)).all():
                raise cql2.Cql2Error("the filter's geometry lies outside the area of its filter-crs.")
            return dataclasses.replace(node, geometry=shape)
        if isinstance(node, (cql2.And, cql2.Or)):
            return dataclasses.replace(node, parts=tuple(move(p) for p in node.parts))
        if isinstance(node, cql2.Not):
            return dataclasses.replace(node, part=move(node.part))
        return node

    return move(expression)


def items(conn: Connection, viewer: Viewer, files_dir: Path, cid: str, ask: ItemsAsk) -> ItemsAnswer:
    """The page of features ``ask`` selects from collection ``cid`` (or the one feature
    ``ask.fid``): NotFound for an unknown collection or feature, NotSignedIn or Forbidden when
    the viewer may not download them, Invalid naming the parameter at fault."""
    found = _feature_collection(conn, viewer, cid, download=True)
    _offered(found, ask.crs, "crs")
    _offered(found, ask.bbox_crs, "bbox-crs")
    _offered(found, ask.filter_crs, "filter-crs")
    path = _data_path(found, files_dir)
    version = found.get("data_version")
    info = layer_info(path, version)
    out_crs = ask.crs or _crs84()
    query = FeatureQuery(bbox=ask.bbox, bbox_crs=ask.bbox_crs or _crs84(), crs=out_crs,
                         start=ask.offset, count=ask.limit)
    if ask.properties is not None:
        query.properties = [*ask.properties, info.geometry_name]
    notes = []
    if ask.when is not None:
        if found["time_field"]:
            query.when = (found["time_field"], *ask.when)
        else:
            notes.append("datetime: the features have no date; it selects them all.")
    if ask.filter is not None:
        _apply_filter(query, ask, _layer_queryables(found, info), info)
    etag = None
    if ask.fid is not None:
        query.fids, query.start, query.count = [ask.fid], 0, 1
        # the tag before the feature: an edit landing between the two makes the tag older than
        # the body, so that an If-Match with it is refused (412) rather than overwriting that edit
        etag = feature_etags.etag_of(path, ask.fid)
    try:
        page = read_features(path, query, version)
    except QueryError as exc:
        param = {"property": "properties", "crs": "crs"}.get(exc.param, exc.param)
        raise Invalid(f"{param}: {exc.message}") from None
    if ask.fid is not None and not len(page):
        raise NotFound(message=f'There is no feature "{ask.fid}" in "{cid}".')
    return ItemsAnswer(found, page, out_crs, etag, notes)


def _crs84() -> CrsName:
    return parse_crs_uri(CRS84_URI)
