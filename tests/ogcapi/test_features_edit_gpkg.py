"""The entity tags of features and the expectations an edit checks under its write lock, on real
GeoPackage files (geo/feature_etags.py, geo/gpkg_edit.py ``apply``'s ``expected`` and ``tags``,
``Update.replace``)."""

from __future__ import annotations

import itertools
import sqlite3
import time
import uuid

import numpy as np
import pyogrio.raw
import pytest
import shapely

from catalogue_app.geo import gpkg_edit
from catalogue_app.geo.feature_etags import etag_of
from catalogue_app.geo.gpkg_edit import Delete, Insert, Update

_numbers = itertools.count(1)


def reserve():
    return gpkg_edit.Reserved(next(_numbers), str(uuid.uuid4()), "2026-01-01T00:00:00Z")


def layer_file(folder, name: str = "points", nullable: bool = True, count: int = 3):
    path = folder / f"{name}.gpkg"
    shapes = shapely.to_wkb(np.array([shapely.Point(i, 40 + i) for i in range(count)], dtype=object))
    pyogrio.raw.write(path, shapes, [np.array([f"p{i}" for i in range(count)], dtype=object),
                                     np.arange(1, count + 1, dtype=np.int32)], ["name", "n"], driver="GPKG",
                      crs="EPSG:4326", geometry_type="Point", layer=name,
                      layer_options=None if nullable else {"GEOMETRY_NULLABLE": "NO"})
    return path


def rows(path):
    with sqlite3.connect(path) as db:
        return db.execute("SELECT fid, name, n, geom FROM points ORDER BY fid").fetchall()


def versions(path):
    return gpkg_edit.versions(path)


def test_a_tag_follows_its_feature_only(tmp_path):
    path = layer_file(tmp_path)
    first, second = etag_of(path, 1), etag_of(path, 2)
    assert first and second and first != second and first.startswith('"') and first.endswith('"')
    assert etag_of(path, 1) == first  # as long as nothing changes
    applied = gpkg_edit.apply(path, [Update(1, {"name": "changed"})], reserve=reserve, via="ogcapi", tags=True)
    assert applied.tags == {1: etag_of(path, 1)} and etag_of(path, 1) != first
    assert etag_of(path, 2) == second
    applied = gpkg_edit.apply(path, [Update(1, {}, shapely.Point(5, 5), True, "EPSG:4326")], reserve=reserve,
                              via="ogcapi", tags=True)
    assert applied.tags[1] not in (first, None) and etag_of(path, 2) == second
    applied = gpkg_edit.apply(path, [Insert({"name": "new"}, shapely.Point(1, 1), "EPSG:4326")], reserve=reserve,
                              via="ogcapi", tags=True)
    assert applied.tags == {applied.inserted[0]: etag_of(path, applied.inserted[0])}
    gpkg_edit.apply(path, [Delete(2)], reserve=reserve, via="ogcapi")
    assert etag_of(path, 2) is None and etag_of(path, 999) is None
    assert etag_of(tmp_path / "gone.gpkg", 1) is None


def test_a_stale_expectation_changes_nothing(tmp_path):
    path = layer_file(tmp_path)
    tag = etag_of(path, 1)
    gpkg_edit.apply(path, [Update(1, {"name": "by someone else"})], reserve=reserve, via="wfs-t")
    before, history = rows(path), versions(path)
    for change in (Update(1, {"name": "stale"}), Delete(1), Update(1, {}, None, True, replace=True)):
        with pytest.raises(gpkg_edit.TagMismatch) as caught:
            gpkg_edit.apply(path, [change], reserve=reserve, via="ogcapi", expected={1: tag})
        assert caught.value.fid == 1 and caught.value.current == etag_of(path, 1)
    with pytest.raises(gpkg_edit.TagMismatch):  # none of several tags
        gpkg_edit.apply(path, [Delete(1)], reserve=reserve, via="ogcapi", expected={1: (tag, '"x"')})
    with pytest.raises(gpkg_edit.MissingFeature):
        gpkg_edit.apply(path, [Delete(99)], reserve=reserve, via="ogcapi", expected={99: "*"})
    assert rows(path) == before and versions(path) == history
    now = etag_of(path, 1)
    gpkg_edit.apply(path, [Update(1, {"name": "fresh"})], reserve=reserve, via="ogcapi", expected={1: ('"x"', now)})
    gpkg_edit.apply(path, [Update(1, {"name": "any"})], reserve=reserve, via="ogcapi", expected={1: "*"})
    assert rows(path)[0][1] == "any"


def test_replace_empties_what_it_does_not_name(tmp_path):
    path = layer_file(tmp_path)
    gpkg_edit.apply(path, [Update(2, {"n": 7}, shapely.Point(9, 9), True, "EPSG:4326", replace=True)],
                    reserve=reserve, via="ogcapi")
    fid, name, n, geom = rows(path)[1]
    assert (fid, name, n) == (2, None, 7) and geom is not None
    change = gpkg_edit.data_changes(path, versions(path)[-1]["number"])[0]
    assert change["before"]["properties"] == {"name": "p1", "n": 2} and change["after"]["properties"] == {"name": None, "n": 7}


def test_a_required_geometry_cannot_be_removed(tmp_path):
    path = layer_file(tmp_path, nullable=False)
    before = rows(path)
    for change in (Update(1, {}, None, True), Update(1, {"name": "x"}, None, True, replace=True),
                   Insert({"name": "x"}, None)):
        with pytest.raises(gpkg_edit.EditError, match="a geometry is required"):
            gpkg_edit.apply(path, [change], reserve=reserve, via="ogcapi")
    assert rows(path) == before and versions(path) == []


def test_a_tag_is_cheap(tmp_path):
    path = layer_file(tmp_path, count=20_000)
    etag_of(path, 1)
    start = time.perf_counter()
    for fid in range(1, 20_001, 100):
        assert etag_of(path, fid)
    each = (time.perf_counter() - start) / 200
    assert each < 0.01, f"{each * 1000:.2f} ms a tag"
