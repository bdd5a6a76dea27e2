"""geo/cql2_features on a real GeoPackage (Natural Earth countries with a few added fields): the
features each filter selects through GDAL (where, mask) and the Python predicate are the ones the
same test done in Python on every feature selects."""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pyogrio
import pyogrio.raw
import pytest
import shapely

from catalogue_app.cql2 import Cql2Error, parse
from catalogue_app.geo import gpkg_access
from catalogue_app.geo.cql2_features import compile_for_layer, layer_queryables, matching_fids

DATA = Path(__file__).parents[1] / "data" / "naturalearth_lowres" / "naturalearth_lowres.shp"
ODD_NAMES = {0: "O'Brien \\ Land", 1: "Zürich", 2: "ZÜRICH", 3: "Chiș", 4: "a%b_c", 5: "star*[x]?"}


@pytest.fixture(scope="module")
def layer(tmp_path_factory):
    """The countries as a GeoPackage, with odd names, a datetime, a date, a boolean and an
    integer with nulls; and the same rows in Python."""
    meta, _, wkb, cols = pyogrio.raw.read(DATA)
    n = len(wkb)
    names = [ODD_NAMES.get(i, v) for i, v in enumerate(cols[2])]
    when = np.array([np.datetime64("2020-01-01T10:00:00") + np.timedelta64(i, "D") for i in range(n)])
    day = np.array([np.datetime64("2020-01-01") + np.timedelta64(i, "D") for i in range(n)], dtype="datetime64[D]")
    flag = np.arange(n) % 2 == 0
    count = np.array([float("nan") if i % 7 == 0 else float(i) for i in range(n)])
    fields = [cols[0], cols[1], np.array(names, dtype=object), cols[3], cols[4], when, day, flag, count]
    field_names = ["pop_est", "continent", "name", "iso_a3", "gdp_md_est", "when", "day", "flag", "rank"]
    path = tmp_path_factory.mktemp("cql2") / "countries.gpkg"
    pyogrio.raw.write(str(path), wkb, fields, field_names, geometry_type="MultiPolygon", crs="EPSG:4326",
                      driver="GPKG", promote_to_multi=True, layer="countries")
    geoms = shapely.from_wkb(wkb)
    rows = []
    for i in range(n):
        rows.append({"fid": i + 1, "pop_est": float(cols[0][i]), "continent": cols[1][i], "name": names[i],
                     "iso_a3": cols[3][i], "gdp_md_est": int(cols[4][i]),
                     "when": datetime(2020, 1, 1, 10, tzinfo=timezone.utc) + timedelta(days=i),
                     "day": datetime(2020, 1, 1, tzinfo=timezone.utc) + timedelta(days=i),
                     "flag": bool(flag[i]), "rank": None if math.isnan(count[i]) else int(count[i]), "geometry": geoms[i]})
    return str(path), rows


def selected(path: str, text: str, **extra) -> list[int]:
    queryables = layer_queryables(path)
    found = compile_for_layer(parse(text, None, queryables), "EPSG:4326")
    with gpkg_access.gdal(path):
        return matching_fids(path, "countries", found, **extra).tolist()


def expected(rows, test) -> list[int]:
    out = []
    for row in rows:
        try:
            if test(row) is True:
                out.append(row["fid"])
        except TypeError:  # a comparison with a null: unknown
            pass
    return out


def fold(text, casei=False, accenti=False):
    if accenti:
        text = unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFD", text)
                                                    if not unicodedata.combining(c)))
    return text.casefold() if casei else text


FRANCE_BOX = shapely.box(-5, 42, 8, 51)
CASES = [
    ("continent = 'Europe'", lambda r: r["continent"] == "Europe"),
    ("continent <> 'Europe'", lambda r: r["continent"] != "Europe"),
    ("pop_est > 100000000", lambda r: r["pop_est"] > 1e8),
    ("pop_est <= 1000000.5", lambda r: r["pop_est"] <= 1000000.5),
    ("gdp_md_est >= 2000000", lambda r: r["gdp_md_est"] >= 2000000),
    ("gdp_md_est < 100", lambda r: r["gdp_md_est"] < 100),
    ("name LIKE 'F%'", lambda r: r["name"].startswith("F")),
    ("name LIKE 'f%'", lambda r: r["name"].startswith("f")),  # LIKE is case-sensitive
    ("CASEI(name) LIKE CASEI('f%')", lambda r: r["name"].lower().startswith("f")),
    ("name LIKE '_ran%'", lambda r: re.fullmatch(".ran.*", r["name"], re.S) is not None),
    ("name LIKE 'a\\%b\\_c'", lambda r: r["name"] == "a%b_c"),
    ("name LIKE 'star*[x]?'", lambda r: r["name"] == "star*[x]?"),
    ("name LIKE 'star%'", lambda r: r["name"].startswith("star")),
    ("name = 'O''Brien \\ Land'", lambda r: r["name"] == "O'Brien \\ Land"),
    ("name = 'Zürich'", lambda r: r["name"] == "Zürich"),
    ("CASEI(name) = CASEI('zürich')", lambda r: fold(r["name"], True) == "zürich"),
    ("ACCENTI(name) = ACCENTI('Chis')", lambda r: fold(r["name"], False, True) == "Chis"),
    ("CASEI(ACCENTI(name)) = 'zurich'", lambda r: fold(r["name"], True, True) == "zurich"),
    ("iso_a3 IN ('FRA', 'DEU', 'ITA')", lambda r: r["iso_a3"] in ("FRA", "DEU", "ITA")),
    ("CASEI(iso_a3) IN ('fra', 'deu')", lambda r: r["iso_a3"].lower() in ("fra", "deu")),
    ("iso_a3 NOT IN ('FRA')", lambda r: r["iso_a3"] != "FRA"),
    ("pop_est BETWEEN 1000000 AND 2000000", lambda r: 1e6 <= r["pop_est"] <= 2e6),
    ("rank IS NULL", lambda r: r["rank"] is None),
    ("rank IS NOT NULL", lambda r: r["rank"] is not None),
    ("rank > 100", lambda r: r["rank"] > 100),
    ("NOT rank > 100", lambda r: not (r["rank"] > 100)),  # unknown stays unknown
    ("flag = TRUE", lambda r: r["flag"]),
    ("flag <> true AND rank < 20", lambda r: not r["flag"] and r["rank"] < 20),
    ("when > TIMESTAMP('2020-03-01T10:00:00Z')", lambda r: r["when"] > datetime(2020, 3, 1, 10, tzinfo=timezone.utc)),
    ("when = TIMESTAMP('2020-03-01T10:00:00Z')", lambda r: r["when"] == datetime(2020, 3, 1, 10, tzinfo=timezone.utc)),
    ("when = DATE('2020-03-01')", lambda r: r["when"].date().isoformat() == "2020-03-01"),
    ("day < DATE('2020-01-05')", lambda r: r["day"] < datetime(2020, 1, 5, tzinfo=timezone.utc)),
    ("T_INTERSECTS(day, INTERVAL('2020-02-01', '2020-02-03'))",
     lambda r: "2020-02-01" <= r["day"].date().isoformat() <= "2020-02-03"),
    ("T_BEFORE(when, TIMESTAMP('2020-01-03T10:00:00Z'))", lambda r: r["when"] < datetime(2020, 1, 3, 10, tzinfo=timezone.utc)),
    ("T_AFTER(when, DATE('2020-06-01'))", lambda r: r["when"] >= datetime(2020, 6, 2, tzinfo=timezone.utc)),
    ("S_INTERSECTS(geometry, BBOX(-5, 42, 8, 51))", lambda r: r["geometry"].intersects(FRANCE_BOX)),
    ("S_INTERSECTS(geometry, POINT(2.35 48.85))", lambda r: r["geometry"].intersects(shapely.Point(2.35, 48.85))),
    ("S_INTERSECTS(geometry, BBOX(-5, 42, 8, 51)) AND continent = 'Europe' AND pop_est > 10000000",
     lambda r: r["geometry"].intersects(FRANCE_BOX) and r["continent"] == "Europe" and r["pop_est"] > 1e7),
    ("S_INTERSECTS(geometry, BBOX(-5, 42, 8, 51)) OR iso_a3 = 'JPN'",
     lambda r: r["geometry"].intersects(FRANCE_BOX) or r["iso_a3"] == "JPN"),
    ("NOT S_INTERSECTS(geometry, BBOX(-180, -90, 0, 90)) AND continent = 'Africa'",
     lambda r: not r["geometry"].intersects(shapely.box(-180, -90, 0, 90)) and r["continent"] == "Africa"),
    ("S_DISJOINT(geometry, BBOX(-180, -90, 170, 90))", lambda r: not r["geometry"].intersects(shapely.box(-180, -90, 170, 90))),
    ("S_INTERSECTS(geometry, BBOX(170, -20, -170, 0))",  # across the antimeridian
     lambda r: r["geometry"].intersects(shapely.box(170, -20, 180, 0)) or r["geometry"].intersects(shapely.box(-180, -20, -170, 0))),
    ("S_INTERSECTS(geometry, BBOX(-5, 42, 8, 51)) AND S_INTERSECTS(geometry, POINT(10 51))",
     lambda r: r["geometry"].intersects(FRANCE_BOX) and r["geometry"].intersects(shapely.Point(10, 51))),
    ("S_INTERSECTS(geometry, LINESTRING(0 0, 40 40))", lambda r: r["geometry"].intersects(shapely.LineString([(0, 0), (40, 40)]))),
    ("(continent = 'Asia' OR ACCENTI(name) LIKE 'Chi%') AND NOT (pop_est < 1000000)",
     lambda r: (r["continent"] == "Asia" or fold(r["name"], False, True).startswith("Chi")) and not r["pop_est"] < 1e6),
    ("TRUE", lambda r: True),
    ("FALSE OR continent = 'Oceania'", lambda r: r["continent"] == "Oceania"),
]


@pytest.mark.parametrize("text,test", CASES, ids=[c[0] for c in CASES])
def test_selection_matches_python(layer, text, test):
    path, rows = layer
    want = expected(rows, test)
    assert selected(path, text) == want
    assert want or text.startswith(("name LIKE 'f%'", "S_DISJOINT")), "a case that selects nothing proves little"


def test_json_filter_and_callers_box(layer):
    path, rows = layer
    doc = '{"op": "and", "args": [{"op": "s_intersects", "args": [{"property": "geometry"}, {"bbox": [-5, 42, 8, 51]}]},' \
          ' {"op": "=", "args": [{"property": "continent"}, "Europe"]}]}'
    want = expected(rows, lambda r: r["geometry"].intersects(FRANCE_BOX) and r["continent"] == "Europe")
    assert selected(path, doc) == want
    # the caller's own bbox and where go with the filter's mask
    box = (0, 45, 20, 60)
    both = expected(rows, lambda r: r["geometry"].intersects(FRANCE_BOX) and r["continent"] == "Europe"
                    and r["geometry"].intersects(shapely.box(*box)) and r["fid"] != 44)
    assert selected(path, doc, bbox=box, where='"fid" <> 44') == both


def test_where_is_text_with_literals_escaped(layer):
    path, _ = layer
    queryables = layer_queryables(path)
    found = compile_for_layer(parse("name = 'O''Brien \\ Land' AND pop_est > 1.5", None, queryables))
    assert found.where == "((\"name\" = 'O''Brien \\ Land') AND (\"pop_est\" > 1.5))"
    assert found.predicate is None and found.mask is None
    nul = compile_for_layer(parse("name = 'a\x00b'", None, queryables))  # not writable in SQL text
    assert nul.where is None and nul.predicate is not None


def test_queryables_of_the_layer(layer):
    path, _ = layer
    kinds = {name: q.kind for name, q in layer_queryables(path).items()}
    assert kinds == {"geometry": "geometry", "pop_est": "number", "continent": "string", "name": "string",
                     "iso_a3": "string", "gdp_md_est": "integer", "when": "datetime", "day": "datetime",
                     "flag": "boolean", "rank": "number"}


def test_projected_layer_gets_mask_in_its_crs(layer):
    path, _ = layer
    found = compile_for_layer(parse("S_INTERSECTS(geometry, POINT(2.35 48.85))", None, layer_queryables(path)),
                              "EPSG:3857")
    assert found.mask.x == pytest.approx(261600.8, abs=1) and found.mask.y == pytest.approx(6249447.8, abs=1)


def test_filter_crs(layer):
    path, rows = layer
    queryables = layer_queryables(path)
    # Paris in web mercator metres
    found = compile_for_layer(parse("S_INTERSECTS(geometry, POINT(261600.8 6249447.8))", None, queryables),
                              "EPSG:4326", filter_crs="EPSG:3857")
    assert (found.mask.x, found.mask.y) == (pytest.approx(2.35), pytest.approx(48.85))
    with gpkg_access.gdal(path):
        fids = matching_fids(path, "countries", found).tolist()
    assert fids == expected(rows, lambda r: r["geometry"].intersects(shapely.Point(2.35, 48.85)))
    with pytest.raises(Cql2Error, match="unknown CRS"):
        compile_for_layer(parse("S_INTERSECTS(geometry, POINT(1 2))", None, queryables), "EPSG:4326", "EPSG:0")


def test_errors_are_cql2_errors(layer):
    path, _ = layer
    with pytest.raises(Cql2Error, match="unknown queryable 'nam'.*continent"):
        parse("nam = 'x'", None, layer_queryables(path))
    with pytest.raises(Cql2Error, match="'gdp_md_est' is a integer|'gdp_md_est' is a"):
        parse("gdp_md_est = 'x'", None, layer_queryables(path))


def test_long_flat_filters_stay_shallow_for_sqlite(layer):
    path, rows = layer
    text = "OR ".join(f"gdp_md_est={i}" for i in range(1, 1150))
    assert len(text) < 20_000
    assert selected(path, text) == expected(rows, lambda r: 1 <= r["gdp_md_est"] < 1150)
