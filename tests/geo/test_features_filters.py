"""geo/features.py's filters beyond WFS's (where, mask, when, predicate) and the box read from
the spatial index, each against the same selection made by GDAL or in Python."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pyogrio
import pyogrio.raw
import pytest
import shapely

from catalogue_app.geo.features import FeatureQuery, QueryError, parse_crs_uri, read_features

COUNTRIES = "tests/data/naturalearth_lowres/naturalearth_lowres.shp"


@pytest.fixture(scope="module")
def gpkg(tmp_path_factory):
    path = tmp_path_factory.mktemp("filters") / "countries.gpkg"
    meta, _, wkb, fields = pyogrio.raw.read(COUNTRIES)
    n = len(wkb)
    days = np.array(["2020-01-01T00:00:00"] * n, dtype="datetime64[ms]") + \
        np.arange(n).astype("timedelta64[h]") * 12
    pyogrio.raw.write(str(path), wkb, [*fields, days], [*[str(f) for f in meta["fields"]], "seen"], driver="GPKG",
                      crs="EPSG:4326", geometry_type="MultiPolygon", layer="countries", promote_to_multi=True)
    return str(path)


def ogr_ids(path, **kwargs) -> list[int]:
    _, fids, _, _ = pyogrio.raw.read(path, columns=[], read_geometry=False, return_fids=True, **kwargs)
    return sorted(int(f) for f in fids)


@pytest.mark.parametrize("box", [(5, 45, 15, 55), (-180, -90, 180, 90), (10, 10, 10, 10), (0, 40, 30, 40),
                                 (100, -5, 170, 5), (-5.2, 42.3, 8.3, 51.1)])
def test_a_box_selects_what_gdal_selects(gpkg, box):
    page = read_features(gpkg, FeatureQuery(bbox=box))
    assert page.fids.tolist() == ogr_ids(gpkg, bbox=box)
    assert page.matched == len(page)


def test_a_box_in_another_crs(gpkg):
    from pyproj import Transformer

    t = Transformer.from_crs("EPSG:4326", "EPSG:3857", always_xy=True)
    x0, y0 = t.transform(5, 45)
    x1, y1 = t.transform(15, 55)
    page = read_features(gpkg, FeatureQuery(bbox=(x0, y0, x1, y1), bbox_crs=parse_crs_uri("[EPSG:3857]")))
    assert set(ogr_ids(gpkg, bbox=(5, 45, 15, 55))) <= set(page.fids.tolist())


def test_where_mask_when_and_predicate(gpkg):
    where = read_features(gpkg, FeatureQuery(where="\"continent\" = 'Africa'", properties=["continent"]))
    assert where.fids.tolist() == ogr_ids(gpkg, where="continent = 'Africa'")
    assert set(where.columns[0].tolist()) == {"Africa"}
    france = shapely.box(-5, 42, 8, 51)
    mask = read_features(gpkg, FeatureQuery(mask=france))
    assert mask.fids.tolist() == ogr_ids(gpkg, mask=france)
    both = read_features(gpkg, FeatureQuery(mask=france, bbox=(0, 40, 30, 60)))
    assert both.fids.tolist() == sorted(set(ogr_ids(gpkg, mask=france)) & set(ogr_ids(gpkg, bbox=(0, 40, 30, 60))))
    start, end = datetime(2020, 1, 3, tzinfo=timezone.utc), datetime(2020, 1, 4, 12, tzinfo=timezone.utc)
    when = read_features(gpkg, FeatureQuery(when=("seen", start, end), properties=["seen"]))
    assert when.fids.tolist() == [5, 6, 7, 8]
    assert read_features(gpkg, FeatureQuery(when=("seen", None, start))).fids.tolist() == [1, 2, 3, 4, 5]

    def big(columns, geometries):
        return (columns["pop_est"] > 1e8) & (shapely.area(geometries) > 100)

    test = read_features(gpkg, FeatureQuery(predicate=big, predicate_fields=["pop_est"], predicate_geometry=True,
                                            start=1, count=2))
    meta, _, wkb, fields = pyogrio.raw.read(gpkg)
    pop = dict(zip(meta["fields"], fields))["pop_est"]
    expected = [i + 1 for i, (p, g) in enumerate(zip(pop, shapely.from_wkb(wkb))) if p > 1e8 and g.area > 100]
    assert test.matched == len(expected) and test.fids.tolist() == expected[1:3]


def test_a_condition_sqlite_cannot_read(gpkg):
    with pytest.raises(QueryError) as caught:
        read_features(gpkg, FeatureQuery(where="no_such_column = 1"))
    assert caught.value.param == "filter"


def test_pages_of_a_condition(gpkg):
    every = ogr_ids(gpkg, where="pop_est > 10000000")
    for start, count in ((0, 10), (10, 10), (len(every) - 3, 10), (len(every), 5), (0, 0), (0, None)):
        page = read_features(gpkg, FeatureQuery(where='"pop_est" > 10000000', start=start, count=count))
        assert page.matched == len(every)
        assert page.fids.tolist() == every[start:None if count is None else start + count]
