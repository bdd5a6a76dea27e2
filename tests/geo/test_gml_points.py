"""The quick reading of a gml:Point (``point_position``, for Inserts of many points) gives what the
full reader gives, or leaves the point to it: never another position, CRS or acceptance."""

from __future__ import annotations

import pytest
import shapely
from lxml import etree

from catalogue_app.geo.features import default_crs_name
from catalogue_app.geo.gml_read import GmlError, make_points, point_position, read_geometry

GML = 'xmlns:gml="http://www.opengis.net/gml"'
GML32 = 'xmlns:gml="http://www.opengis.net/gml/3.2"'
URN = default_crs_name("EPSG:4326", "urn")      # latitude first
XML = default_crs_name("EPSG:4326", "xml")      # longitude first

POINTS = [
    (f'<gml:Point {GML} srsName="urn:ogc:def:crs:EPSG::4326"><gml:pos>45.25 5.5</gml:pos></gml:Point>', True),
    (f'<gml:Point {GML32} srsName="EPSG:4326"><gml:pos>5.5 45.25</gml:pos></gml:Point>', True),
    (f'<gml:Point {GML} srsName="EPSG:3857"><gml:pos> 612345.5\n  5623456.25 </gml:pos></gml:Point>', True),
    (f'<gml:Point {GML} srsName="http://www.opengis.net/def/crs/EPSG/0/4326"><gml:pos>+.5 -3.</gml:pos></gml:Point>', True),
    (f'<gml:Point {GML}><gml:pos>45.25 5.5</gml:pos></gml:Point>', True),                 # the default CRS
    (f'<gml:Point {GML} srsName=""><gml:pos>45.25 5.5</gml:pos></gml:Point>', True),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos>1.5 2.5 3.5</gml:pos></gml:Point>', True),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos>1e2 -2E-1</gml:pos></gml:Point>', True),
    # left to the full reader: other forms, and what it refuses
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos srsDimension="3">1 2 3</gml:pos></gml:Point>', False),
    (f'<gml:Point {GML}><gml:pos srsName="EPSG:4326">5.5 45.25</gml:pos></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:coordinates>5.5,45.25</gml:coordinates></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:4326"><!-- a note --><gml:pos>5.5 45.25</gml:pos></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos>5.5 45.25</gml:pos><gml:pos>1 2</gml:pos></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos>5.5</gml:pos></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos>1 2 3 4</gml:pos></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos>1e999 2</gml:pos></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos>nan 2</gml:pos></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos>1_0 2</gml:pos></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos>1,5 2</gml:pos></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos></gml:pos></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:999999"><gml:pos>1 2</gml:pos></gml:Point>', False),
    (f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos>1 <gml:x/>2</gml:pos></gml:Point>', False),
    (f'<gml:LineString {GML} srsName="EPSG:4326"><gml:pos>1 2</gml:pos></gml:LineString>', False),
    ('<Point srsName="EPSG:4326"><pos>1 2</pos></Point>', False),
]


@pytest.mark.parametrize("default", [URN, XML], ids=["urn", "xml"])
@pytest.mark.parametrize("xml,quick", POINTS, ids=[str(i) for i in range(len(POINTS))])
def test_the_quick_reading_agrees_with_the_full_one(xml, quick, default):
    element = etree.fromstring(xml)
    found = point_position(element, default_crs=default)
    assert (found is not None) == quick
    if found is None:
        return
    position, crs = found
    full = read_geometry(element, default_crs=default)
    [point] = make_points([position])
    assert point.equals(full.geometry) and shapely.has_z(point) == shapely.has_z(full.geometry)
    assert crs == full.crs


def test_refused_points_are_left_to_the_full_reader_which_says_why():
    element = etree.fromstring(f'<gml:Point {GML} srsName="EPSG:4326"><gml:pos>1e999 2</gml:pos></gml:Point>')
    assert point_position(element, default_crs=URN) is None
    with pytest.raises(GmlError, match="not a finite number"):
        read_geometry(element, default_crs=URN)


def test_points_of_two_and_three_numbers_are_made_at_once_in_order():
    points = make_points([(1.0, 2.0), (3.0, 4.0, 5.0), (6.0, 7.0)])
    assert [p.wkt for p in points] == ["POINT (1 2)", "POINT Z (3 4 5)", "POINT (6 7)"]
