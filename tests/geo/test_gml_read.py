"""GML geometries as QGIS and GDAL send them in WFS-T (the bodies of the WFS-T research, verbatim
where they hold a geometry), read east first with the axis rule of their version and srsName."""

from __future__ import annotations

import pytest
import shapely
from lxml import etree

from catalogue_app.geo.gml_read import GmlError, read_geometry

GML = 'xmlns:gml="http://www.opengis.net/gml"'
GML32 = 'xmlns:gml="http://www.opengis.net/gml/3.2"'


def read(xml: str, **kw):
    return read_geometry(etree.fromstring(xml), **kw)


def test_gdal_11_point_urn_is_latitude_first():
    got = read(f'<gml:Point {GML} srsName="urn:ogc:def:crs:EPSG::4326"><gml:pos>45.25 5.5</gml:pos></gml:Point>')
    assert got.geometry.equals(shapely.Point(5.5, 45.25))
    assert got.crs.code == 4326


def test_gdal_10_gml2_coordinates_east_first():
    got = read(f'<gml:Point {GML} srsName="EPSG:4326"><gml:coordinates>5.5,45.25</gml:coordinates></gml:Point>',
               gml2_east_first=True)
    assert got.geometry.equals(shapely.Point(5.5, 45.25))
    # the short name is east first anyway
    got = read(f'<gml:Point {GML} srsName="EPSG:4326"><gml:coordinates>5.5,45.25</gml:coordinates></gml:Point>')
    assert got.geometry.equals(shapely.Point(5.5, 45.25))


def test_qgis_10_gml2_with_cs_ts():
    got = read(f'<gml:Point {GML} srsName="EPSG:4326"><gml:coordinates cs="," ts=" ">7,47</gml:coordinates></gml:Point>',
               gml2_east_first=True)
    assert got.geometry.equals(shapely.Point(7, 47))


def test_qgis_322_urn_name_with_gml2_lon_lat_at_10():
    """QGIS 3.22 on a 2.0.0 connection: version="1.0.0", URN srsName, coordinates lon,lat."""
    body = (f'<gml:Point {GML} srsName="urn:ogc:def:crs:EPSG::4326">'
            '<gml:coordinates cs="," ts=" ">7,47</gml:coordinates></gml:Point>')
    assert read(body, gml2_east_first=True).geometry.equals(shapely.Point(7, 47))
    # outside a 1.0.0 Transaction the URN rule holds
    assert read(body).geometry.equals(shapely.Point(47, 7))


def test_qgis_11_pos_with_srs_dimension():
    got = read(f'<gml:Point {GML} srsName="urn:ogc:def:crs:EPSG::4326"><gml:pos srsDimension="2">47 7</gml:pos></gml:Point>')
    assert got.geometry.equals(shapely.Point(7, 47))


def test_projected_urn_stays_east_first():
    got = read(f'<gml:Point {GML} srsName="urn:ogc:def:crs:EPSG::3857"><gml:pos>1000 2000</gml:pos></gml:Point>')
    assert got.geometry.equals(shapely.Point(1000, 2000)) and got.crs.code == 3857


def test_no_srs_name_follows_the_default():
    body = f'<gml:Point {GML}><gml:pos>47 7</gml:pos></gml:Point>'
    assert read(body).crs is None
    assert read(body).geometry.equals(shapely.Point(47, 7))
    assert read(body, default_north_first=True).geometry.equals(shapely.Point(7, 47))


def test_pos_list_3d():
    got = read(f'<gml:LineString {GML} srsName="EPSG:3857"><gml:posList srsDimension="3">0 0 1 10 10 2 20 0 3'
               '</gml:posList></gml:LineString>')
    assert got.geometry.has_z and list(got.geometry.coords) == [(0, 0, 1), (10, 10, 2), (20, 0, 3)]


def test_gml2_polygon_outer_inner():
    got = read(f'<gml:Polygon {GML} srsName="EPSG:4326"><gml:outerBoundaryIs><gml:LinearRing><gml:coordinates>'
               '0,0 10,0 10,10 0,10 0,0</gml:coordinates></gml:LinearRing></gml:outerBoundaryIs><gml:innerBoundaryIs>'
               '<gml:LinearRing><gml:coordinates>2,2 3,2 3,3 2,2</gml:coordinates></gml:LinearRing></gml:innerBoundaryIs>'
               '</gml:Polygon>', gml2_east_first=True)
    assert got.geometry.equals(shapely.Polygon([(0, 0), (10, 0), (10, 10), (0, 10)], [[(2, 2), (3, 2), (3, 3)]]))


def test_gdal_31_multisurface_lat_first():
    got = read(f'<gml:MultiSurface {GML} srsName="urn:ogc:def:crs:EPSG::4326"><gml:surfaceMember><gml:Polygon>'
               '<gml:exterior><gml:LinearRing><gml:posList>0 0 0 10 10 10 0 0</gml:posList></gml:LinearRing>'
               '</gml:exterior></gml:Polygon></gml:surfaceMember></gml:MultiSurface>')
    assert got.geometry.equals(shapely.MultiPolygon([shapely.Polygon([(0, 0), (10, 0), (10, 10), (0, 0)])]))


def test_gdal_31_multicurve():
    got = read(f'<gml:MultiCurve {GML} srsName="EPSG:4326"><gml:curveMember><gml:LineString><gml:posList>0 0 1 1'
               '</gml:posList></gml:LineString></gml:curveMember><gml:curveMember><gml:LineString><gml:posList>'
               '2 2 3 3</gml:posList></gml:LineString></gml:curveMember></gml:MultiCurve>')
    assert got.geometry.equals(shapely.MultiLineString([[(0, 0), (1, 1)], [(2, 2), (3, 3)]]))


def test_qgis_multis_polygon_line_point_members():
    polygon = read(f'<gml:MultiPolygon {GML} srsName="urn:ogc:def:crs:EPSG::4326"><gml:polygonMember><gml:Polygon>'
                   '<gml:exterior><gml:LinearRing><gml:posList srsDimension="2">47 7 47 8 48 8 47 7</gml:posList>'
                   '</gml:LinearRing></gml:exterior></gml:Polygon></gml:polygonMember></gml:MultiPolygon>')
    assert polygon.geometry.equals(shapely.MultiPolygon([shapely.Polygon([(7, 47), (8, 47), (8, 48), (7, 47)])]))
    line = read(f'<gml:MultiLineString {GML} srsName="EPSG:4326"><gml:lineStringMember><gml:LineString>'
                '<gml:coordinates cs="," ts=" ">7,47 8,48</gml:coordinates></gml:LineString></gml:lineStringMember>'
                '</gml:MultiLineString>', gml2_east_first=True)
    assert line.geometry.equals(shapely.MultiLineString([[(7, 47), (8, 48)]]))
    points = read(f'<gml:MultiPoint {GML} srsName="EPSG:4326"><gml:pointMember><gml:Point><gml:pos>7 47</gml:pos>'
                  '</gml:Point></gml:pointMember><gml:pointMembers><gml:Point><gml:pos>8 48</gml:pos></gml:Point>'
                  '<gml:Point><gml:pos>9 49</gml:pos></gml:Point></gml:pointMembers></gml:MultiPoint>')
    assert points.geometry.equals(shapely.MultiPoint([(7, 47), (8, 48), (9, 49)]))


def test_gml32_curve_and_surface_patches():
    curve = read(f'<gml:Curve {GML32} srsName="EPSG:3857"><gml:segments><gml:LineStringSegment><gml:posList>0 0 1 1'
                 '</gml:posList></gml:LineStringSegment><gml:LineStringSegment><gml:posList>1 1 2 0</gml:posList>'
                 '</gml:LineStringSegment></gml:segments></gml:Curve>')
    assert list(curve.geometry.coords) == [(0, 0), (1, 1), (2, 0)]
    surface = read(f'<gml:Surface {GML32} srsName="EPSG:3857"><gml:patches><gml:PolygonPatch><gml:exterior>'
                   '<gml:LinearRing><gml:posList>0 0 1 0 1 1 0 0</gml:posList></gml:LinearRing></gml:exterior>'
                   '</gml:PolygonPatch></gml:patches></gml:Surface>')
    assert surface.geometry.equals(shapely.Polygon([(0, 0), (1, 0), (1, 1)]))


def test_multi_geometry_and_coord():
    got = read(f'<gml:MultiGeometry {GML} srsName="EPSG:4326"><gml:geometryMember><gml:Point><gml:coord><gml:X>1</gml:X>'
               '<gml:Y>2</gml:Y></gml:coord></gml:Point></gml:geometryMember><gml:geometryMember><gml:LineString>'
               '<gml:coordinates decimal="," cs=";" ts=" ">0,5;0 1;1,5</gml:coordinates></gml:LineString>'
               '</gml:geometryMember></gml:MultiGeometry>')
    assert got.geometry.equals(shapely.GeometryCollection([shapely.Point(1, 2), shapely.LineString([(0.5, 0), (1, 1.5)])]))


def test_empty_point_is_empty():
    assert read(f'<gml:Point {GML} srsName="EPSG:4326"/>').geometry.is_empty


@pytest.mark.parametrize("body, words", [
    (f'<gml:Point {GML}><gml:pos>1 abc</gml:pos></gml:Point>', "not a number"),
    (f'<gml:Point {GML}><gml:pos>1 nan</gml:pos></gml:Point>', "not a number"),
    (f'<gml:Point {GML}><gml:pos>1 2 3 4</gml:pos></gml:Point>', "4 numbers"),
    (f'<gml:LineString {GML}><gml:posList>1 2 3</gml:posList></gml:LineString>', "not a multiple"),
    (f'<gml:LineString {GML}><gml:posList>1 2</gml:posList></gml:LineString>', "two positions"),
    (f'<gml:Polygon {GML}><gml:exterior><gml:LinearRing><gml:posList>0 0 1 1 0 0</gml:posList></gml:LinearRing>'
     '</gml:exterior></gml:Polygon>', "four positions"),
    (f'<gml:Polygon {GML}><gml:exterior><gml:LinearRing><gml:posList>0 0 1 0 1 1 0 1</gml:posList></gml:LinearRing>'
     '</gml:exterior></gml:Polygon>', "end where it starts"),
    (f'<gml:Point {GML} srsName="EPSG:99999999"><gml:pos>1 2</gml:pos></gml:Point>', "EPSG"),
    (f'<gml:Point {GML} srsName="somewhere"><gml:pos>1 2</gml:pos></gml:Point>', "coordinate reference system"),
    (f'<gml:MultiPoint {GML}><gml:pointMember><gml:LineString><gml:posList>0 0 1 1</gml:posList></gml:LineString>'
     '</gml:pointMember></gml:MultiPoint>', "cannot hold"),
    (f'<gml:MultiPoint {GML}><gml:pointMember><gml:Point srsName="EPSG:4326"><gml:pos>0 0</gml:pos></gml:Point>'
     f'</gml:pointMember><gml:pointMember><gml:Point srsName="EPSG:3857"><gml:pos>0 0</gml:pos></gml:Point>'
     '</gml:pointMember></gml:MultiPoint>', "different CRSs"),
    (f'<gml:Curve {GML}><gml:segments><gml:Arc><gml:posList>0 0 1 1 2 0</gml:posList></gml:Arc></gml:segments>'
     '</gml:Curve>', "Curved"),
    (f'<gml:Point {GML}><gml:coordinates>1;2</gml:coordinates></gml:Point>', "tuple"),
])
def test_bad_geometries_say_what_is_wrong(body, words):
    with pytest.raises(GmlError) as caught:
        read(body)
    assert words in caught.value.message
