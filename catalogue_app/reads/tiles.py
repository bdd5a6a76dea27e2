"""The sources of OGC API - Tiles as a viewer may see them: a dataset (its working copy, data
version and default style) or a map (its visible layers, bottom first, each with its style and
opacity), with the signature that tells one look of the source from another (the tile cache's
key). Unknown, hidden, remote and metadata-only datasets, and unknown or hidden maps, are None:
the same 404 for all, so that tiles never tell a private resource exists."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from catalogue_app import files
from catalogue_app.store import Connection, ogc, tiles
from catalogue_app.store.resources import Viewer

NAME = re.compile(r"^[A-Za-z0-9_]{1,200}$")   # a collection id that is a dataset's layer name
MAP = re.compile(r"^map-(\d{1,18})$")          # a collection id that is a map


@dataclass(frozen=True)
class TileLayer:
    """One layer to draw: as render.MapLayer takes it."""

    path: str
    kind: str                 # "vector" or "raster"
    crs: str
    sld: bytes | None
    opacity: float = 1.0
    version: int | None = None


@dataclass
class TileSource:
    """What a tile of a collection is made of, and who may have which tiles."""

    key: tuple                  # ("dataset", id), or ("map", id, the ids of the datasets drawn)
    title: str
    name: str                   # the collection id (the MVT layer's name)
    kind: str                   # "vector", "raster" or "map"
    lonlat: tuple[float, float, float, float] | None
    layers: list[TileLayer] = field(default_factory=list)
    may_download: bool = False  # vector tiles need it, as WFS does
    signature: tuple = ()       # the data version and style of each layer
    background: tuple[int, int, int] | None = None  # None: clear where nothing is drawn


def _style_tag(sld: bytes | None) -> bytes:
    return hashlib.blake2b(sld or b"", digest_size=8).digest()


def _box(row: dict) -> tuple[float, float, float, float] | None:
    box = tuple(row.get(k) for k in ("ll_x0", "ll_y0", "ll_x1", "ll_y1"))
    return box if all(isinstance(v, (int, float)) for v in box) else None


def _drawable(conn: Connection, layer: dict, files_dir: Path, style: str | None, opacity: float = 1.0,
              ) -> tuple[TileLayer, tuple] | None:
    """A dataset as a layer to draw with the style named (its default when None or gone), and
    its part of the signature; None when it has no data here."""
    if layer.get("remote_url") or tiles.metadata_only(conn, layer["id"]):
        return None
    path = files.working_copy(files_dir / layer["folder"]) if layer.get("folder") else None
    if path is None:
        return None
    sld = ogc.style_body(conn, layer["id"], style) if style else None
    if sld is None:
        sld = ogc.style_body(conn, layer["id"], None)
    kind = "raster" if layer["subtype"] == "raster" else "vector"
    version = layer.get("data_version")
    stamp: tuple = (version,)
    if kind == "raster" or version is None:  # no data version: the file's own stamp
        st = os.stat(path)
        stamp = (st.st_mtime_ns, st.st_size)
    drawn = TileLayer(str(path), kind, layer.get("crs_wkt") or layer["srid"], sld, opacity, version)
    return drawn, (layer["id"], str(path), *stamp, _style_tag(sld), opacity)


def dataset_source(conn: Connection, viewer: Viewer, name: str, files_dir: Path,
                   style: str | None = None) -> TileSource | None:
    """A dataset the viewer may see, by its layer name, drawn with its default style or with
    its style named ``style`` (None when it has no such style)."""
    if not NAME.match(name):
        return None
    layer = ogc.layer_named(conn, viewer, name, attributes=False)
    if layer is None:
        return None
    if style is not None:
        style = style.rpartition(":")[2]
        if style not in {s["name"] for s in layer["styles"]}:
            return None
    drawn = _drawable(conn, layer, files_dir, style)
    if drawn is None:
        return None
    kind = "raster" if layer["subtype"] == "raster" else "vector"
    return TileSource(("dataset", layer["id"]), layer["title"], name, kind, _box(layer), [drawn[0]],
                      bool(layer["may_download"]), (drawn[1],))


def map_source(conn: Connection, viewer: Viewer, cid: str, files_dir: Path) -> TileSource | None:
    """A map the viewer may see (``map-<pk>``): its visible layers whose datasets the viewer may
    see, bottom first, with their current styles and opacity."""
    found = MAP.match(cid)
    if not found:
        return None
    summary = tiles.map_summary(conn, viewer, int(found.group(1)))
    if summary is None:
        return None
    source = TileSource(("map", summary["id"]), summary["title"], cid, "map", _box(summary))
    signature = []
    for part in ogc.map_layer_names(conn, viewer, summary["id"]) or []:
        if not part["visibility"] or not part["alternate"] or part["opacity"] <= 0:
            continue
        layer = ogc.layer_named(conn, viewer, part["alternate"], attributes=False)
        if layer is None:
            continue  # a dataset the viewer may not see: the map is drawn without it
        drawn = _drawable(conn, layer, files_dir, part["current_style"], min(float(part["opacity"]), 1.0))
        if drawn is not None:
            source.layers.append(drawn[0])
            signature.append(drawn[1])
    source.signature = tuple(signature)
    # viewers who see different layers of the map see different maps: each its own source, so
    # that their tiles do not push one another's out of the cache
    source.key = ("map", summary["id"], tuple(part[0] for part in signature))
    return source


def source(conn: Connection, viewer: Viewer, cid: str, files_dir: Path, style: str | None = None) -> TileSource | None:
    """The dataset or map a collection id names, as the viewer may see it (a dataset with its
    style named ``style``, when given; a map has none); None when none."""
    if MAP.match(cid):
        return None if style is not None else map_source(conn, viewer, cid, files_dir)
    return dataset_source(conn, viewer, cid, files_dir, style)


