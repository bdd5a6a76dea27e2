"""cql2.parse: every operator in CQL2 text and JSON gives the same checked tree, and every filter
that cannot be used is a Cql2Error whose message says why."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from catalogue_app.cql2 import (
    And, Between, Compare, Const, Cql2Error, In, Intersects, IsNull, Like, Not, Or, Queryable, parse,
)

Q = {q.name: q for q in (
    Queryable("name", "string", "name"), Queryable("pop", "number", "pop"), Queryable("n", "integer", "n"),
    Queryable("flag", "boolean", "flag"), Queryable("updated", "datetime", "updated"),
    Queryable("geometry", "geometry", "geom"),
    Queryable("event", "datetime", "start", end="finish"),
)}
UTC = timezone.utc


def both(text: str, doc: dict):
    """The trees of the text and JSON forms, which must be equal."""
    a, b = parse(text, "cql2-text", Q), parse(json.dumps(doc), "cql2-json", Q)
    assert a == b, (a, b)
    assert parse(text, None, Q) == a and parse(json.dumps(doc), None, Q) == b  # the language guessed
    return a


def prop(name):
    return {"property": name}


@pytest.mark.parametrize("op", ["=", "<>", "<", "<=", ">", ">="])
def test_comparisons(op):
    tree = both(f"pop {op} 1000", {"op": op, "args": [prop("pop"), 1000]})
    assert tree == Compare(Q["pop"], op, 1000)


def test_literal_first_is_flipped():
    assert parse("1000 < pop", None, Q) == Compare(Q["pop"], ">", 1000)


def test_strings_booleans_negative_numbers():
    assert both("name = 'O''Brien'", {"op": "=", "args": [prop("name"), "O'Brien"]}).value == "O'Brien"
    assert both("flag = TRUE", {"op": "=", "args": [prop("flag"), True]}) == Compare(Q["flag"], "=", True)
    assert both("pop >= -1.5e3", {"op": ">=", "args": [prop("pop"), -1500.0]}).value == -1500.0
    assert parse("\"name\" = 'x'", None, Q) == Compare(Q["name"], "=", "x")
    assert parse("NAME = 'x'", None, Q) == Compare(Q["name"], "=", "x")  # names in any case


def test_like_in_between_isnull():
    assert both("name LIKE 'Fr%_\\%'", {"op": "like", "args": [prop("name"), "Fr%_\\%"]}) \
        == Like(Q["name"], "Fr%_\\%")
    assert both("name NOT LIKE 'a%'", {"op": "not", "args": [{"op": "like", "args": [prop("name"), "a%"]}]}) \
        == Not(Like(Q["name"], "a%"))
    assert both("n IN (1, 2, 3)", {"op": "in", "args": [prop("n"), [1, 2, 3]]}) == In(Q["n"], (1, 2, 3))
    assert both("n NOT IN (1)", {"op": "not", "args": [{"op": "in", "args": [prop("n"), [1]]}]}) \
        == Not(In(Q["n"], (1,)))
    assert both("pop BETWEEN 1 AND 2", {"op": "between", "args": [prop("pop"), 1, 2]}) == Between(Q["pop"], 1, 2)
    assert both("pop NOT BETWEEN 1 AND 2", {"op": "not", "args": [{"op": "between", "args": [prop("pop"), 1, 2]}]}) \
        == Not(Between(Q["pop"], 1, 2))
    assert both("name IS NULL", {"op": "isNull", "args": [prop("name")]}) == IsNull(Q["name"])
    assert both("name IS NOT NULL", {"op": "not", "args": [{"op": "isNull", "args": [prop("name")]}]}) \
        == Not(IsNull(Q["name"]))


def test_and_or_not_and_precedence():
    tree = both("name = 'a' OR pop > 1 AND NOT n = 2",
                {"op": "or", "args": [{"op": "=", "args": [prop("name"), "a"]},
                                      {"op": "and", "args": [{"op": ">", "args": [prop("pop"), 1]},
                                                             {"op": "not", "args": [{"op": "=", "args": [prop("n"), 2]}]}]}]})
    assert tree == Or((Compare(Q["name"], "=", "a"), And((Compare(Q["pop"], ">", 1), Not(Compare(Q["n"], "=", 2))))))
    assert parse("(name = 'a' OR pop > 1) AND n = 2", None, Q) == \
        And((Or((Compare(Q["name"], "=", "a"), Compare(Q["pop"], ">", 1))), Compare(Q["n"], "=", 2)))
    assert parse("TRUE", None, Q) == Const(True)


def test_casei_and_accenti():
    assert both("CASEI(name) = casei('Zürich')",
                {"op": "=", "args": [{"op": "casei", "args": [prop("name")]}, {"op": "casei", "args": ["Zürich"]}]}) \
        == Compare(Q["name"], "=", "Zürich", casei=True)
    assert both("ACCENTI(name) LIKE accenti('é%')",
                {"op": "like", "args": [{"op": "accenti", "args": [prop("name")]}, {"op": "accenti", "args": ["é%"]}]}) \
        == Like(Q["name"], "é%", accenti=True)


def test_spatial_literals():
    point = both("S_INTERSECTS(geometry, POINT(1 2))",
                 {"op": "s_intersects", "args": [prop("geometry"), {"type": "Point", "coordinates": [1, 2]}]})
    assert isinstance(point, Intersects) and point.geometry.wkt == "POINT (1 2)"
    box = both("S_INTERSECTS(geometry, BBOX(-10, -5, 10, 5))",
               {"op": "s_intersects", "args": [prop("geometry"), {"bbox": [-10, -5, 10, 5]}]})
    assert box.geometry.bounds == (-10, -5, 10, 5)
    polygon = parse("S_INTERSECTS(geometry, POLYGON((0 0, 10 0, 10 10, 0 10, 0 0)))", None, Q)
    assert polygon.geometry.area == 100
    assert parse("S_INTERSECTS(geometry, SRID=4326;POINT(1 2))", None, Q).wkt == "POINT (1 2)"
    assert parse("S_DISJOINT(geometry, POINT(1 2))", None, Q) == Not(Intersects(Q["geometry"], None, "POINT (1 2)"))
    across = parse("S_INTERSECTS(geometry, BBOX(170, -5, -170, 5))", None, Q)  # over the antimeridian
    assert across.geometry.geom_type == "MultiPolygon" and across.geometry.area == 200


def test_timestamps_dates_and_temporal_functions():
    t = datetime(2020, 1, 1, tzinfo=UTC)
    assert both("updated > TIMESTAMP('2020-01-01T00:00:00Z')",
                {"op": ">", "args": [prop("updated"), {"timestamp": "2020-01-01T00:00:00Z"}]}) \
        == Compare(Q["updated"], ">", t)
    day = both("updated = DATE('2020-01-01')", {"op": "=", "args": [prop("updated"), {"date": "2020-01-01"}]})
    assert day == And((Compare(Q["updated"], ">=", t), Compare(Q["updated"], "<", datetime(2020, 1, 2, tzinfo=UTC))))
    assert parse("updated = '2020-01-01'", None, Q) == day  # an ISO string where a datetime is compared
    during = both("T_INTERSECTS(updated, INTERVAL('2020-01-01T00:00:00Z', '..'))",
                  {"op": "t_intersects", "args": [prop("updated"), {"interval": ["2020-01-01T00:00:00Z", ".."]}]})
    assert during == Compare(Q["updated"], ">=", t)
    assert parse("T_BEFORE(updated, TIMESTAMP('2020-01-01T00:00:00Z'))", None, Q) == Compare(Q["updated"], "<", t)
    assert parse("T_AFTER(updated, DATE('2019-12-31'))", None, Q) == Compare(Q["updated"], ">=", t)
    # an interval queryable: it meets the literal when it starts before its end and ends after its start
    meets = parse("T_INTERSECTS(event, INTERVAL('2020-01-01', '2020-01-31'))", None, Q)
    assert meets == And((Compare(Q["event"], "<", datetime(2020, 2, 1, tzinfo=UTC)),
                         Compare(Queryable("event", "datetime", "finish", end=None), ">=", t)))
    assert parse("T_DURING(updated, INTERVAL('2020-01-01T00:00:00Z', '2021-01-01T00:00:00Z'))", None, Q) == \
        And((Compare(Q["updated"], ">", t), Compare(Q["updated"], "<", datetime(2021, 1, 1, tzinfo=UTC))))


# The examples of the CQL2 standard's conformance classes (OGC 21-065r2), on queryables of their names
STANDARD = {q.name: q for q in (
    Queryable("city", "string", "city"), Queryable("avg(windSpeed)", "number", "w"),
    Queryable("balance", "number", "balance"), Queryable("name", "string", "name"),
    Queryable("value", "number", "value"), Queryable("owner", "string", "owner"),
    Queryable("material", "string", "material"), Queryable("depth", "number", "depth"),
    Queryable("geometry", "geometry", "geom"), Queryable("built", "datetime", "built"),
    Queryable("updated", "datetime", "updated"), Queryable("floors", "integer", "floors"),
    Queryable("swimming_pool", "boolean", "pool"), Queryable("location", "geometry", "loc"),
    Queryable("road_class", "string", "road_class"), Queryable("event_time", "datetime", "event_time"),
)}
EXAMPLES = [
    "city='Toronto'", "\"avg(windSpeed)\" < 4", "balance > 150.0",
    "updated >= DATE('1970-01-01')", "name LIKE 'Smith%'", "owner NOT LIKE '%Mike%'",
    "depth BETWEEN 100.0 and 150.0", "value NOT IN (1.0, 2.0, 3.0)", "material IS NULL",
    "city IN ('Toronto','Frankfurt','Tokyo','New York')",
    "built > TIMESTAMP('2012-06-05T00:00:00Z')",
    "floors>5 AND swimming_pool=true",
    "floors>5 OR material LIKE 'brick%'",
    "S_INTERSECTS(geometry,POINT(36.319836 32.288087))",
    "S_INTERSECTS(location,BBOX(-128.098193,19.873907,-63.24187,52.642309))",
    "S_INTERSECTS(geometry,POLYGON((-10.0 50.0,10.0 50.0,10.0 60.0,-10.0 60.0,-10.0 50.0)))",
    "S_INTERSECTS(geometry,LINESTRING(-10 50,10 60))",
    "S_INTERSECTS(geometry,MULTIPOINT((7.02 49.92),(90 80)))",
    "road_class IN ('Oneway', 'Freeway')",
    "T_INTERSECTS(event_time, INTERVAL('1969-07-16T05:32:00Z', '1969-07-24T16:50:35Z'))",
    "T_BEFORE(built, DATE('2015-01-01'))", "T_AFTER(built,DATE('2012-06-05'))",
    "T_DURING(updated, INTERVAL('2017-06-10T07:30:00Z','2017-06-11T10:30:00Z'))",
    "CASEI(road_class) IN (CASEI('Οδος'),CASEI('Straße'))",
    "ACCENTI(city) = ACCENTI('Chiș')",
    "NOT (floors > 5)",
]


@pytest.mark.parametrize("text", EXAMPLES)
def test_standard_examples(text):
    assert parse(text, "cql2-text", STANDARD) is not None


JSON_EXAMPLES = [  # the JSON forms of some of the above, which must read as the text does
    ("city='Toronto'", {"op": "=", "args": [{"property": "city"}, "Toronto"]}),
    ("owner NOT LIKE '%Mike%'", {"op": "not", "args": [{"op": "like", "args": [{"property": "owner"}, "%Mike%"]}]}),
    ("depth BETWEEN 100.0 and 150.0", {"op": "between", "args": [{"property": "depth"}, 100.0, 150.0]}),
    ("value NOT IN (1.0, 2.0, 3.0)",
     {"op": "not", "args": [{"op": "in", "args": [{"property": "value"}, [1.0, 2.0, 3.0]]}]}),
    ("material IS NULL", {"op": "isNull", "args": [{"property": "material"}]}),
    ("floors>5 AND swimming_pool=true", {"op": "and", "args": [{"op": ">", "args": [{"property": "floors"}, 5]},
                                                              {"op": "=", "args": [{"property": "swimming_pool"}, True]}]}),
    ("S_INTERSECTS(geometry,POINT(36.319836 32.288087))",
     {"op": "s_intersects", "args": [{"property": "geometry"}, {"type": "Point", "coordinates": [36.319836, 32.288087]}]}),
    ("S_INTERSECTS(location,BBOX(-128.098193,19.873907,-63.24187,52.642309))",
     {"op": "s_intersects", "args": [{"property": "location"}, {"bbox": [-128.098193, 19.873907, -63.24187, 52.642309]}]}),
    ("T_INTERSECTS(event_time, INTERVAL('1969-07-16T05:32:00Z', '1969-07-24T16:50:35Z'))",
     {"op": "t_intersects", "args": [{"property": "event_time"},
                                     {"interval": ["1969-07-16T05:32:00Z", "1969-07-24T16:50:35Z"]}]}),
    ("T_AFTER(built,DATE('2012-06-05'))", {"op": "t_after", "args": [{"property": "built"}, {"date": "2012-06-05"}]}),
    ("CASEI(road_class) IN (CASEI('Οδος'),CASEI('Straße'))",
     {"op": "in", "args": [{"op": "casei", "args": [{"property": "road_class"}]},
                           [{"op": "casei", "args": ["Οδος"]}, {"op": "casei", "args": ["Straße"]}]]}),
]


@pytest.mark.parametrize("text,doc", JSON_EXAMPLES, ids=[e[0] for e in JSON_EXAMPLES])
def test_standard_examples_in_json(text, doc):
    assert parse(json.dumps(doc), "cql2-json", STANDARD) == parse(text, "cql2-text", STANDARD)


def error(text, lang=None, queryables=Q) -> str:
    with pytest.raises(Cql2Error) as caught:
        parse(text, lang, queryables)
    return caught.value.message


def test_unparsable_text_says_where():
    assert "character 8" in error("name = ")
    assert "character 12" in error("name = 'a' pop > 2")
    assert "not closed" in error("name = 'abc")
    assert "not JSON" in error("{\"op\": ", "cql2-json")
    assert "unknown operator" in error(json.dumps({"op": "frobnicate", "args": [1]}))


def test_unknown_queryable_names_it_and_lists_the_known():
    message = error("nmae = 'x'")
    assert "'nmae'" in message and "flag, geometry, n, name, pop, updated" in message


def test_wrong_types():
    assert "'pop' is a number" in error("pop = 'many'")
    assert "'name' is a text" in error("name > 3")
    assert "boolean" in error("flag > TRUE")
    assert "LIKE needs a text" in error("pop LIKE '1%'")
    assert "geometry" in error("S_INTERSECTS(name, POINT(1 2))")
    assert "datetime" in error("T_AFTER(pop, DATE('2020-01-01'))")
    assert "not a timestamp" in error("updated > TIMESTAMP('yesterday')")
    assert "CASEI" in error("CASEI(pop) = 1")


def test_unsupported_operators():
    assert "arithmetic" in error("pop + 1 > 2")
    assert "S_CROSSES" in error("S_CROSSES(geometry, POINT(1 2))")
    assert "T_MEETS" in error("T_MEETS(updated, DATE('2020-01-01'))")
    assert "array" in error("A_CONTAINS(name, ('a'))".replace("('a')", "'a'"))
    assert "unknown function" in error("upper(name) = 'A'")
    assert "two properties" in error("name = \"name\"")


def test_absurd_sizes_and_depths_are_refused():
    assert "too long" in error("name = '" + "x" * 20_001 + "'")
    assert "nested too deeply" in error("(" * 150 + "n = 1" + ")" * 150)
    assert "nested too deeply" in error("NOT " * 150 + "n = 1")
    deep: dict = {"op": "=", "args": [prop("n"), 1]}
    for _ in range(150):
        deep = {"op": "not", "args": [deep]}
    assert "nested too deeply" in error(json.dumps(deep))
    assert "nested too deeply" in error("[" * 5000 + "]" * 5000, "cql2-json")
    assert "nested" in error("S_INTERSECTS(geometry, POLYGON" + "(" * 200 + "0 0" + ")" * 200 + ")")


def test_numbers_sqlite_cannot_hold():
    assert parse("n = 99999999999999999999999", None, Q).value == 1e23  # past 64 bits: a float
    assert parse("n = " + "9" * 5000 + ".5e-4990", None, Q).value == pytest.approx(1e10)
    assert "too large" in error("n = 1e400")
    assert "too large" in error("n = " + "9" * 5000)
    assert "too large" in error('{"op": "=", "args": [{"property": "n"}, 1e400]}')


def test_bad_geometries():
    assert "BBOX takes 4 numbers" in error("S_INTERSECTS(geometry, BBOX(1, 2, 3))")
    assert "south" in error(json.dumps({"op": "s_intersects", "args": [prop("geometry"), {"bbox": [0, 10, 1, 0]}]}))
    assert "WKT" in error("S_INTERSECTS(geometry, POLYGON((0 0, 1)))")
    assert "GeoJSON" in error(json.dumps({"op": "s_intersects", "args": [prop("geometry"),
                                                                          {"type": "Polygon", "coordinates": [[1]]}]}))
    assert "CRS84" in error("S_INTERSECTS(geometry, SRID=3857;POINT(1 2))")
    assert "empty" in error("S_INTERSECTS(geometry, POINT EMPTY)")


def test_unknown_language_and_empty_filter():
    assert "filter-lang" in error("n = 1", "cql-text")
    assert "empty" in error("   ")
