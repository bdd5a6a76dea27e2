"""The MVT writer (geo/mvt_encode.py) read back by mapbox-vector-tile's decoder: every kind of
geometry, holes turned the right way, attributes of every type, tiny shapes left out."""

from __future__ import annotations

import mapbox_vector_tile
import pytest
import numpy as np
import shapely

from catalogue_app.geo import mvt_encode


def decoded(geoms, props):
    body = mvt_encode.encode("layer", np.array(geoms, dtype=object), np.arange(1, len(geoms) + 1), props)
    return mapbox_vector_tile.decode(body, default_options={"y_coord_down": True})["layer"]


def test_every_kind_of_geometry_and_attribute():
    geoms = [
        shapely.Point(10, 20),
        shapely.MultiPoint([(1, 2), (3, 4)]),
        shapely.LineString([(0, 0), (100, 0), (100, 50)]),
        shapely.MultiLineString([[(0, 0), (10, 10)], [(20, 20), (30, 20)]]),
        shapely.Polygon([(0, 0), (100, 0), (100, 100), (0, 100)], [[(10, 10), (10, 20), (20, 20), (20, 10)]]),
        shapely.MultiPolygon([shapely.box(200, 200, 300, 300), shapely.box(400, 400, 500, 500)]),
    ]
    props = [{"n": 1}, {"n": -7}, {"f": 1.5}, {"b": True}, {"s": "été"}, {}]
    layer = decoded(geoms, props)
    assert layer["extent"] == 4096
    by_id = {f["id"]: f for f in layer["features"]}
    assert [by_id[i]["geometry"]["type"] for i in range(1, 7)] == [
        "Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon"]
    assert by_id[1]["geometry"]["coordinates"] == [10, 20]
    assert by_id[3]["geometry"]["coordinates"] == [[0, 0], [100, 0], [100, 50]]
    assert [p["properties"] for p in (by_id[i] for i in range(1, 7))] == props
    polygon = shapely.geometry.shape(by_id[5]["geometry"])
    assert polygon.area == 100 * 100 - 10 * 10  # the hole is a hole
    rings = by_id[5]["geometry"]["coordinates"]
    area = lambda ring: sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(ring, ring[1:]))  # noqa: E731
    assert area(rings[0]) > 0 and area(rings[1]) < 0  # y down: exterior positive, holes negative
    assert shapely.geometry.shape(by_id[6]["geometry"]).area == 2 * 100 * 100


def test_tiny_and_empty_shapes_are_left_out():
    geoms = [shapely.Polygon([(0, 0), (0.2, 0), (0.2, 0.2)]), shapely.LineString([(5, 5), (5.2, 5.1)]),
             shapely.Polygon(), None, shapely.box(0, 0, 3, 3)]
    layer = decoded(geoms, [{}, {}, {}, {}, {"kept": 1}])
    assert [(f["id"], f["properties"]) for f in layer["features"]] == [(5, {"kept": 1})]


def test_tile_boxes_are_morecantiles():
    import morecantile

    from catalogue_app.geo import tiles

    tms = morecantile.tms.get("WebMercatorQuad")
    for z, y, x in ((0, 0, 0), (1, 0, 1), (3, 5, 2), (6, 63, 0), (12, 1000, 3000), (24, 5, (1 << 24) - 1)):
        box = tms.xy_bounds(x, y, z)
        assert tiles.bounds(z, y, x) == pytest.approx((box.left, box.bottom, box.right, box.top), abs=1e-6)
