"""The layer cache after edits: a layer held at one data version is patched from the file's
history (inserts, geometry updates, attribute updates, deletes; edits made by this process or by
another), not read again, and every map drawn from it is the map drawn from the layer read
afresh, pixel for pixel: in the layer's CRS and another, thinned or not, polygons, lines and
points (whose marks overlap: their order shows), and after the arrays are made whole again."""

from __future__ import annotations

import io
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pyogrio.raw
import pytest
import shapely
from PIL import Image

from catalogue_app.geo import gpkg_edit, layer_cache
from catalogue_app.geo.gpkg_edit import Delete, Insert, Update
from catalogue_app.geo.render import MapLayer, render_map

REPO = Path(__file__).resolve().parents[2]
WORLD = (-180.0, -90.0, 180.0, 90.0)
MERCATOR = (-2e7, -1.2e7, 2e7, 1.2e7)
# views: (box, crs, width, height); the coarse ones are thinned, the close ones not
VIEWS = [(WORLD, "EPSG:4326", 360, 180), ((-20.0, -10.0, 20.0, 10.0), "EPSG:4326", 400, 200),
         ((-2.0, -1.0, 2.0, 1.0), "EPSG:4326", 256, 128), (MERCATOR, "EPSG:3857", 300, 180),
         ((-2e6, -1e6, 2e6, 1e6), "EPSG:3857", 256, 128)]
STYLE = (b'<StyledLayerDescriptor version="1.0.0" xmlns="http://www.opengis.net/sld"><NamedLayer><UserStyle>'
         b'<FeatureTypeStyle><Rule><PointSymbolizer><Graphic><Mark><WellKnownName>circle</WellKnownName>'
         b'<Fill><CssParameter name="fill">#3060c0</CssParameter></Fill><Stroke><CssParameter name="stroke">'
         b'#ffcc00</CssParameter><CssParameter name="stroke-width">2</CssParameter></Stroke></Mark><Size>12</Size>'
         b'</Graphic></PointSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>')


def write(path: Path, geoms: list, kind: str) -> Path:
    pyogrio.raw.write(path, shapely.to_wkb(np.asarray(geoms, dtype=object)), field_data=[np.arange(len(geoms))],
                      fields=["n"], geometry_type=kind, crs="EPSG:4326", driver="GPKG", layer=path.stem)
    return path


def polygons(path: Path, n: int = 3000) -> Path:
    """Overlapping discs and rings with holes, detailed enough for thinning to matter."""
    rng = np.random.default_rng(7)
    geoms = []
    for i in range(n):
        x, y, r = rng.uniform(-170, 170), rng.uniform(-80, 80), rng.uniform(0.2, 6)
        disc = shapely.Point(x, y).buffer(r, quad_segs=32)
        geoms.append(shapely.MultiPolygon([disc.difference(shapely.Point(x, y).buffer(r / 3))]) if i % 5 == 0
                     else shapely.MultiPolygon([disc]))
    return write(path, geoms, "MultiPolygon")


def lines(path: Path, n: int = 1500) -> Path:
    rng = np.random.default_rng(8)
    geoms = [shapely.LineString(np.cumsum(rng.normal(0, 0.8, (60, 2)), axis=0) + rng.uniform(-150, 150, 2))
             for _ in range(n)]
    return write(path, geoms, "LineString")


def points(path: Path, n: int = 4000) -> Path:
    """Points close enough that their marks overlap (their order shows), and a cluster."""
    rng = np.random.default_rng(9)
    xy = np.concatenate([rng.uniform([-170, -80], [170, 80], (n - 200, 2)), rng.normal(0, 0.3, (200, 2))])
    return write(path, list(shapely.points(xy)), "Point")


class Editor:
    """Edits through the GeoPackage side of the edit service, numbered as the catalogue would."""

    def __init__(self, path: Path, first: int = 1):
        self.path, self.number = path, first - 1

    def __call__(self, *changes) -> int:
        self.number += 1
        number = self.number

        def reserve():
            return gpkg_edit.Reserved(number, str(uuid.uuid4()), "2026-01-01T00:00:00Z")

        gpkg_edit.apply(self.path, list(changes), reserve=reserve, via="api")
        return number


def draw(path: Path, version: int | None, view, sld: bytes | None = None) -> np.ndarray:
    box, crs, w, h = view
    png = render_map([MapLayer(str(path), "vector", "EPSG:4326", sld, version=version)], box, crs, w, h)
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def fresh(path: Path, version: int, view, sld: bytes | None = None) -> np.ndarray:
    """The map from the layer read afresh (the cache emptied, then emptied again)."""
    layer_cache.CACHE.clear()
    try:
        return draw(path, version, view, sld)
    finally:
        layer_cache.CACHE.clear()


@pytest.fixture
def reads(monkeypatch):
    """How many times the layer is read from its file."""
    calls = []
    plain = layer_cache._read

    def counted(path, box=None, fids=False):
        calls.append(path)
        return plain(path, box, fids)

    monkeypatch.setattr(layer_cache, "_read", counted)
    layer_cache.CACHE.clear()
    yield calls
    layer_cache.CACHE.clear()


def same_as_fresh(path: Path, version: int, sld: bytes | None = None, views=VIEWS) -> None:
    patched = [draw(path, version, view, sld) for view in views]
    for view, image in zip(views, patched):
        expected = fresh(path, version, view, sld)
        differ = int((image != expected).any(axis=2).sum())
        assert differ == 0, f"{differ} pixels differ at {view}"


def warm(path: Path, version: int, sld: bytes | None = None) -> list[np.ndarray]:
    return [draw(path, version, view, sld) for view in VIEWS]


def test_polygons_inserted_moved_and_deleted(tmp_path, reads):
    path = polygons(tmp_path / "discs.gpkg")
    before = warm(path, 0)
    assert len(reads) == 1
    edit = Editor(path)
    big = shapely.MultiPolygon([shapely.Point(0, 0).buffer(8, quad_segs=64).difference(shapely.Point(1, 1).buffer(2))])
    v1 = edit(Insert({"n": -1}, big), Update(5, {}, shapely.MultiPolygon([shapely.box(-1, -1, 1.5, 0.5)]), True),
              Delete(7), Update(9, {"n": 1000}))
    changed = warm(path, v1)
    assert len(reads) == 1, "the layer was read again instead of patched"
    assert any((a != b).any() for a, b in zip(before, changed))
    same_as_fresh(path, v1)
    # more versions, patched one after the other and several at once
    v2 = edit(Delete(5), Update(11, {}, shapely.MultiPolygon([shapely.box(-3, -2, 3, 2)]), True))
    v3 = edit(Delete(13), Insert({"n": -2}, None))
    reads.clear()
    same_as_fresh(path, v3)
    warm(path, v2)  # an older version asked for: the later one held serves
    assert layer_cache.CACHE._layers[(str(path), "version")].version == v3


def test_lines_and_the_geometry_set_to_nothing(tmp_path, reads):
    path = lines(tmp_path / "tracks.gpkg")
    warm(path, 0)
    edit = Editor(path)
    v1 = edit(Update(3, {}, None, True), Insert({"n": 1}, shapely.LineString([(-30, -20), (40, 25), (45, -10)])),
              Delete(4))
    warm(path, v1)
    assert len(reads) == 1
    same_as_fresh(path, v1)


def test_points_keep_the_order_of_their_features(tmp_path, reads):
    path = points(tmp_path / "spots.gpkg")
    warm(path, 0, STYLE)
    edit = Editor(path)
    # a point of the cluster moved onto its neighbours, one of the first features moved into the
    # cluster (drawn under the later ones, as afresh), new ones on top
    v1 = edit(Update(3801, {}, shapely.Point(0.05, 0.05), True), Update(2, {}, shapely.Point(0.0, 0.02), True),
              Insert({"n": 1}, shapely.Point(0.01, 0.0)), Delete(3900))
    warm(path, v1, STYLE)
    assert len(reads) == 1
    same_as_fresh(path, v1, STYLE)


def test_edits_made_by_another_process(tmp_path, reads):
    path = polygons(tmp_path / "shared.gpkg", 1500)
    warm(path, 0)
    script = (
        "import sys, uuid, shapely\n"
        "from catalogue_app.geo import gpkg_edit\n"
        "from catalogue_app.geo.gpkg_edit import Insert, Update, Delete\n"
        "def reserve(n): return lambda: gpkg_edit.Reserved(n, str(uuid.uuid4()), '2026-01-01T00:00:00Z')\n"
        "gpkg_edit.apply(sys.argv[1], [Insert({'n': 7}, shapely.MultiPolygon([shapely.box(-10, -10, 10, 10)]))],"
        " reserve=reserve(4), via='api')\n"
        "gpkg_edit.apply(sys.argv[1], [Delete(1), Update(2, {}, shapely.MultiPolygon([shapely.box(5, 5, 25, 15)]),"
        " True)], reserve=reserve(6), via='api')\n")
    done = subprocess.run([sys.executable, "-c", script, str(path)], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    warm(path, 6)
    assert len(reads) == 1
    same_as_fresh(path, 6)


def test_an_edit_is_read_again_when_the_history_cannot_tell(tmp_path, reads):
    path = polygons(tmp_path / "cut.gpkg", 500)
    edit = Editor(path)
    v1 = edit(Delete(1))
    warm(path, v1)
    v2 = edit(Delete(2))
    conn = gpkg_edit.connect(path)  # the history cut (as a vacuum might): version 1 is no longer known
    conn.execute(f"DELETE FROM {gpkg_edit.VERSIONS} WHERE number = ?", (v1,))
    conn.execute(f"DELETE FROM {gpkg_edit.CHANGES} WHERE version = ?", (v1,))
    conn.close()
    reads.clear()
    warm(path, v2)
    assert len(reads) == 1
    same_as_fresh(path, v2)


def test_a_layer_held_as_uploaded_is_read_again_after_a_vacuum_cut(tmp_path, reads):
    """A copy held at version 0 cannot be patched from what a cut left: a moved polygon's first
    change is gone with the dropped versions."""
    path = polygons(tmp_path / "vacuumed.gpkg", 500)
    warm(path, 0)
    edit = Editor(path)
    edit(Update(3, {}, shapely.MultiPolygon([shapely.box(-20, -20, 20, 20)]), True))
    v2 = edit(Delete(4))
    gpkg_edit.forget_versions(path, 1, "2026-11-28T00:00:00Z")
    reads.clear()
    warm(path, v2)
    assert len(reads) == 1, "patched from a cut history"
    same_as_fresh(path, v2)


def test_the_arrays_are_made_whole_again_in_the_background(tmp_path, reads, monkeypatch):
    monkeypatch.setattr(layer_cache, "COMPACT_PARTS", 20)
    path = polygons(tmp_path / "grow.gpkg", 400)
    warm(path, 0)
    edit = Editor(path)
    rng = np.random.default_rng(3)
    version = 0
    for i in range(5):  # each version adds more extra parts than the threshold
        version = edit(*[Insert({"n": i}, shapely.MultiPolygon([shapely.Point(*rng.uniform(-60, 60, 2)).buffer(3)]))
                         for _ in range(25)], Update(20 + i, {}, shapely.MultiPolygon([shapely.box(i, i, i + 5, i + 3)]),
                                                     True), Delete(40 + i))
        warm(path, version)
    deadline = time.monotonic() + 10
    while layer_cache.CACHE._layers[(str(path), "version")].extra is not None:
        assert time.monotonic() < deadline, "not compacted"
        time.sleep(0.05)
    held = layer_cache.CACHE._layers[(str(path), "version")]
    assert not held.edited and held.version == version
    assert len(reads) == 1
    same_as_fresh(path, version)
    later = edit(Delete(60), Insert({"n": 99}, shapely.MultiPolygon([shapely.box(-5, -5, 5, 5)])))
    same_as_fresh(path, later)
