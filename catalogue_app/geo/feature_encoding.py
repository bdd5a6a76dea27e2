"""Pages of features written out for WFS: GeoJSON, GML 3.2 (WFS 2.0), GML 3.1.1 (WFS 1.1) and
GML 2 (WFS 1.0), and the XML Schema (or JSON) that describes a feature type.

GeoJSON geometries come from shapely.to_geojson and are put into the document as raw JSON by
msgspec (stack-facts §5: four times faster than GDAL's GeoJSON driver). GML geometries are cut
out of shapely's WKT, which holds the coordinates already as text in the order GML wants them.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

import msgspec
import numpy as np
import shapely

from .features import FeaturePage

GML32 = "http://www.opengis.net/gml/3.2"
GML = "http://www.opengis.net/gml"
XSD = "http://www.w3.org/2001/XMLSchema"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
WFS20 = "http://www.opengis.net/wfs/2.0"
WFS = "http://www.opengis.net/wfs"


@dataclass(frozen=True)
class TypeName:
    """A feature type as documents name it: ``prefix:local`` in namespace ``uri``."""

    prefix: str
    local: str
    uri: str


_NOT_NAME = re.compile(r"[^\w.\-]", re.UNICODE)


def xml_name(name: str) -> str:
    """A field name as an XML element name: characters XML names cannot hold become "_", and a
    name that does not start with a letter or "_" gets one ("pop 2020" -> "pop_2020",
    "2020" -> "_2020"). GML elements and the XML Schema use the same form."""
    safe = _NOT_NAME.sub("_", name) or "_"
    return safe if safe[0].isalpha() or safe[0] == "_" else f"_{safe}"


# --- GeoJSON ---------------------------------------------------------------------------------


def _cells(column: np.ndarray) -> list:
    """Python values of a column for JSON and XML: NaN becomes None, bytes stay bytes."""
    values = column.tolist()
    if column.dtype.kind == "f" and np.isnan(column).any():
        values = [None if v != v else v for v in values]
    return values


def geojson(pages: Sequence[tuple[str, FeaturePage]], *, matched: int, crs_name: str | None,
            timestamp: str) -> bytes:
    """A GeoJSON FeatureCollection of ``pages`` ((type name, page) pairs), in the members
    GeoServer writes: features with "id" = "<type>.<fid>", "totalFeatures", "numberMatched",
    "numberReturned", "timeStamp", and "crs" when ``crs_name`` is given. Coordinates are always
    east (longitude) first."""
    features: list[dict] = []
    for type_name, page in pages:
        n = len(page)
        if not n:
            continue
        shapes = [None] * n
        if page.geometries is not None:
            present = ~shapely.is_empty(page.geometries) & ~shapely.is_missing(page.geometries)
            shapes = np.where(present, shapely.to_geojson(page.geometries), None).tolist()
        rows = zip(*[_cells(c) for c in page.columns]) if page.columns else ([()] * n)
        names = page.names
        prefix = f"{type_name}."
        geometry_name = page.geometry_name
        for fid, shape, row in zip(page.fids.tolist(), shapes, rows):
            features.append({"type": "Feature", "id": f"{prefix}{fid}",
                             "geometry": msgspec.Raw(shape) if shape is not None else None,
                             "geometry_name": geometry_name, "properties": dict(zip(names, row))})
    doc: dict = {"type": "FeatureCollection", "features": features, "totalFeatures": matched,
                 "numberMatched": matched, "numberReturned": len(features), "timeStamp": timestamp}
    if crs_name:
        doc["crs"] = {"type": "name", "properties": {"name": crs_name}}
    return msgspec.json.encode(doc)


# --- GML geometries --------------------------------------------------------------------------


def _coords(text: str, gml2: bool) -> str:
    """WKT coordinates "x y, x y" as a GML 3 posList "x y x y" or GML 2 coordinates "x,y x,y"."""
    if gml2:
        return text.replace(", ", "|").replace(" ", ",").replace("|", " ")
    return text.replace(", ", " ")


def _inner(wkt: str) -> str:
    """What lies inside the outermost parentheses of a WKT text."""
    return wkt[wkt.index("(") + 1:-1]


def _split(content: str, depth: int) -> list[str]:
    """The members of a WKT list: "(a), (b)" for depth 1, "((a)), ((b))" for depth 2."""
    open_, close = "(" * depth, ")" * depth
    body = content.strip()[depth:-depth]
    return body.split(f"{close}, {open_}")


class _GmlGeometry:
    """Writes one geometry in GML 3.2, 3.1.1 or 2."""

    def __init__(self, version: str, srs_name: str):
        self.version = version
        self.gml2 = version == "2"
        self.ids = version == "3.2"  # GML 3.2 requires gml:id on every geometry
        self.srs = f" srsName={quoteattr(srs_name)}"

    def _open(self, tag: str, gid: str | None, top: bool) -> str:
        ident = f' gml:id="{gid}"' if self.ids and gid else ""
        return f"<gml:{tag}{self.srs if top else ''}{ident}>"

    def _point(self, text: str, gid: str, top: bool) -> str:
        if self.gml2:
            return f"{self._open('Point', gid, top)}<gml:coordinates>{_coords(text, True)}</gml:coordinates></gml:Point>"
        return f"{self._open('Point', gid, top)}<gml:pos>{text}</gml:pos></gml:Point>"

    def _line(self, text: str, gid: str, top: bool) -> str:
        if self.gml2:
            return f"{self._open('LineString', gid, top)}<gml:coordinates>{_coords(text, True)}</gml:coordinates></gml:LineString>"
        return f"{self._open('LineString', gid, top)}<gml:posList>{_coords(text, False)}</gml:posList></gml:LineString>"

    def _ring(self, text: str) -> str:
        if self.gml2:
            return f"<gml:LinearRing><gml:coordinates>{_coords(text, True)}</gml:coordinates></gml:LinearRing>"
        return f"<gml:LinearRing><gml:posList>{_coords(text, False)}</gml:posList></gml:LinearRing>"

    def _polygon(self, rings: list[str], gid: str, top: bool) -> str:
        outer, inner = ("outerBoundaryIs", "innerBoundaryIs") if self.gml2 else ("exterior", "interior")
        parts = [self._open("Polygon", gid, top), f"<gml:{outer}>{self._ring(rings[0])}</gml:{outer}>"]
        parts.extend(f"<gml:{inner}>{self._ring(r)}</gml:{inner}>" for r in rings[1:])
        parts.append("</gml:Polygon>")
        return "".join(parts)

    def _multi(self, tag: str, member: str, items: list[str], gid: str) -> str:
        return (f"{self._open(tag, gid, True)}"
                + "".join(f"<gml:{member}>{item}</gml:{member}>" for item in items) + f"</gml:{tag}>")

    def write(self, geometry, wkt: str, gid: str, top: bool = True) -> str:
        """GML for one geometry, given its WKT (two dimensions); "" for an empty one."""
        if wkt.endswith("EMPTY"):
            return ""
        kind = wkt[:wkt.index("(")].strip()
        if "EMPTY" in wkt or kind == "GEOMETRYCOLLECTION":
            return self._collection(geometry, gid, kind)
        content = _inner(wkt)
        if kind == "POINT":
            return self._point(content, gid, top)
        if kind == "LINESTRING":
            return self._line(content, gid, top)
        if kind == "POLYGON":
            return self._polygon(_split(content, 1), gid, top)
        if kind == "MULTIPOINT":
            points = _split(content, 1) if content.lstrip().startswith("(") else content.split(", ")
            return self._multi("MultiPoint", "pointMember",
                               [self._point(p, f"{gid}.{i}", False) for i, p in enumerate(points)], gid)
        if kind == "MULTILINESTRING":
            lines = [self._line(p, f"{gid}.{i}", False) for i, p in enumerate(_split(content, 1))]
            if self.gml2:
                return self._multi("MultiLineString", "lineStringMember", lines, gid)
            return self._multi("MultiCurve", "curveMember", lines, gid)
        if kind == "MULTIPOLYGON":
            polygons = [self._polygon(p.split("), ("), f"{gid}.{i}", False) for i, p in enumerate(_split(content, 2))]
            if self.gml2:
                return self._multi("MultiPolygon", "polygonMember", polygons, gid)
            return self._multi("MultiSurface", "surfaceMember", polygons, gid)
        return self._collection(geometry, gid, kind)

    def _collection(self, geometry, gid: str, kind: str) -> str:
        """Collections, and multi geometries with empty parts: written part by part."""
        parts = [p for p in shapely.get_parts(geometry) if not shapely.is_empty(p)]
        if not parts:
            return ""
        texts = shapely.to_wkt(np.array(parts, dtype=object), rounding_precision=-1, trim=True, output_dimension=2)
        items = [self.write(p, t, f"{gid}.{i}", top=False) for i, (p, t) in enumerate(zip(parts, texts))]
        if kind == "GEOMETRYCOLLECTION" or self.gml2:
            return self._multi("MultiGeometry", "geometryMember", items, gid)
        tag, member = {"MULTIPOINT": ("MultiPoint", "pointMember"), "MULTILINESTRING": ("MultiCurve", "curveMember"),
                       "MULTIPOLYGON": ("MultiSurface", "surfaceMember")}.get(kind, ("MultiGeometry", "geometryMember"))
        return self._multi(tag, member, items, gid)


def _swap(geometries: np.ndarray) -> np.ndarray:
    return shapely.transform(geometries, lambda xy: xy[:, ::-1])


# --- GML feature collections -----------------------------------------------------------------


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # characters XML 1.0 cannot hold


def _text(value) -> str:
    """A property value as XML text: booleans as true/false, bytes in base64, and text without
    the control characters XML forbids."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float):
        return repr(value)
    return escape(_NOT_XML.sub("", str(value)))


def _members(type_name: TypeName, page: FeaturePage, writer: _GmlGeometry, north_first: bool,
             open_member: str, close_member: str) -> list[str]:
    n = len(page)
    if not n:
        return []
    prefix, local = type_name.prefix, type_name.local
    geometry_tag = f"{prefix}:{xml_name(page.geometry_name)}"
    if page.geometries is not None:
        geometries = _swap(page.geometries) if north_first else page.geometries
        wkts = shapely.to_wkt(geometries, rounding_precision=-1, trim=True, output_dimension=2).tolist()
    else:
        geometries, wkts = None, [None] * n
    columns = [_cells(c) for c in page.columns]
    tags = [(f"<{prefix}:{xml_name(name)}>", f"</{prefix}:{xml_name(name)}>") for name in page.names]
    id_attr = "gml:id" if writer.version != "2" else "fid"
    out = []
    for i, fid in enumerate(page.fids.tolist()):
        gid = f"{local}.{fid}"
        parts = [open_member, f'<{prefix}:{local} {id_attr}="{gid}">']
        wkt = wkts[i]
        if wkt is not None:
            body = writer.write(geometries[i], wkt, f"{gid}.geom")
            if body:
                parts.append(f"<{geometry_tag}>{body}</{geometry_tag}>")
        for (open_tag, close_tag), column in zip(tags, columns):
            value = column[i]
            if value is not None:
                parts.append(f"{open_tag}{_text(value)}{close_tag}")
        parts.append(f"</{prefix}:{local}>{close_member}")
        out.append("".join(parts))
    return out


def _namespaces(types: Sequence[TypeName]) -> str:
    seen = {}
    for t in types:
        seen.setdefault(t.prefix, t.uri)
    return "".join(f" xmlns:{p}={quoteattr(u)}" for p, u in seen.items())


def gml(pages: Sequence[tuple[TypeName, FeaturePage]], *, version: str, matched: int, srs_name: str,
        north_first: bool, timestamp: str, schema_location: str = "", hits: bool = False) -> bytes:
    """A wfs:FeatureCollection of ``pages``: ``version`` "3.2" (WFS 2.0: numberMatched,
    numberReturned, wfs:member), "3.1.1" (WFS 1.1: numberOfFeatures, gml:featureMember) or "2"
    (WFS 1.0). Geometries carry ``srs_name``; ``north_first`` writes latitude first. ``hits``
    leaves the features out and only counts them."""
    writer = _GmlGeometry(version, srs_name)
    returned = 0 if hits else sum(len(p) for _, p in pages)
    location = f" xsi:schemaLocation={quoteattr(schema_location)}" if schema_location else ""
    xmlns = _namespaces([t for t, _ in pages])
    if version == "3.2":
        head = (f'<wfs:FeatureCollection xmlns:wfs="{WFS20}" xmlns:gml="{GML32}" xmlns:xsi="{XSI}"{xmlns}'
                f' numberMatched="{matched}" numberReturned="{returned}" timeStamp="{timestamp}"{location}>')
        open_member, close_member = "<wfs:member>", "</wfs:member>"
    elif version == "3.1.1":
        head = (f'<wfs:FeatureCollection xmlns:wfs="{WFS}" xmlns:gml="{GML}" xmlns:xsi="{XSI}"{xmlns}'
                f' numberOfFeatures="{matched if hits else returned}" timeStamp="{timestamp}"{location}>')
        open_member, close_member = "<gml:featureMember>", "</gml:featureMember>"
    else:
        head = (f'<wfs:FeatureCollection xmlns:wfs="{WFS}" xmlns:gml="{GML}" xmlns:xsi="{XSI}"{xmlns}'
                f' numberOfFeatures="{matched if hits else returned}"{location}>'
                '<gml:boundedBy><gml:null>unknown</gml:null></gml:boundedBy>')
        open_member, close_member = "<gml:featureMember>", "</gml:featureMember>"
    body = ['<?xml version="1.0" encoding="UTF-8"?>\n', head]
    if not hits:
        for type_name, page in pages:
            body.extend(_members(type_name, page, writer, north_first, open_member, close_member))
    body.append("</wfs:FeatureCollection>")
    return "".join(body).encode("utf-8")


# --- feature type descriptions ---------------------------------------------------------------

_GML3_TYPES = {"Point": "PointPropertyType", "LineString": "CurvePropertyType", "Polygon": "SurfacePropertyType",
               "MultiPoint": "MultiPointPropertyType", "MultiLineString": "MultiCurvePropertyType",
               "MultiPolygon": "MultiSurfacePropertyType"}
_GML2_TYPES = {"Point": "PointPropertyType", "LineString": "LineStringPropertyType", "Polygon": "PolygonPropertyType",
               "MultiPoint": "MultiPointPropertyType", "MultiLineString": "MultiLineStringPropertyType",
               "MultiPolygon": "MultiPolygonPropertyType"}
_XSD_TYPES = {"string", "int", "integer", "long", "short", "byte", "double", "float", "decimal", "boolean", "date",
              "dateTime", "time", "base64Binary"}


def geometry_property_type(geometry_type: str | None, version: str) -> str:
    """The GML property type of a geometry type ("MultiPolygon" -> gml:MultiSurfacePropertyType
    in GML 3, gml:MultiPolygonPropertyType in GML 2)."""
    base = (geometry_type or "").split(" ")[0]
    if base.startswith("gml:") and base.endswith("PropertyType"):
        base = base[4:-len("PropertyType")]
    table = _GML2_TYPES if version == "2" else _GML3_TYPES
    return f"gml:{table.get(base, 'GeometryPropertyType')}"


def _xsd_type(attribute_type: str | None) -> str:
    local = (attribute_type or "").partition(":")[2] or (attribute_type or "")
    return f"xsd:{local}" if local in _XSD_TYPES else "xsd:string"


@dataclass(frozen=True)
class Property:
    """One property of a feature type: its name, its type as the catalogue stores it
    ("xsd:int", "gml:MultiPolygonPropertyType") and whether it is the geometry."""

    name: str
    type: str
    geometry: bool = False


def feature_schema(types: Sequence[tuple[TypeName, Sequence[Property]]], *, version: str) -> bytes:
    """An XML Schema for feature types of one namespace (DescribeFeatureType): a complexType
    per type, extending gml:AbstractFeatureType, with an element per property, and the element
    that names the features. ``version`` is the GML version: "3.2", "3.1.1" or "2"."""
    uri = types[0][0].uri if types else ""
    prefix = types[0][0].prefix if types else "ns"
    if version == "3.2":
        gml_ns, location, group = GML32, "http://schemas.opengis.net/gml/3.2.1/gml.xsd", "gml:AbstractFeature"
    elif version == "3.1.1":
        gml_ns, location, group = GML, "http://schemas.opengis.net/gml/3.1.1/base/gml.xsd", "gml:_Feature"
    else:
        gml_ns, location, group = GML, "http://schemas.opengis.net/gml/2.1.2/feature.xsd", "gml:_Feature"
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n',
           f'<xsd:schema xmlns:xsd="{XSD}" xmlns:gml="{gml_ns}" xmlns:{prefix}={quoteattr(uri)}'
           f' elementFormDefault="qualified" targetNamespace={quoteattr(uri)}>',
           f'<xsd:import namespace="{gml_ns}" schemaLocation="{location}"/>']
    for type_name, properties in types:
        local = escape(type_name.local)
        out.append(f'<xsd:complexType name="{local}Type"><xsd:complexContent>'
                   '<xsd:extension base="gml:AbstractFeatureType"><xsd:sequence>')
        for prop in sorted(properties, key=lambda p: not p.geometry):
            kind = geometry_property_type(prop.type, version) if prop.geometry else _xsd_type(prop.type)
            out.append(f'<xsd:element maxOccurs="1" minOccurs="0" name="{xml_name(prop.name)}" nillable="true"'
                       f' type="{kind}"/>')
        out.append("</xsd:sequence></xsd:extension></xsd:complexContent></xsd:complexType>")
        out.append(f'<xsd:element name="{local}" substitutionGroup="{group}" type="{prefix}:{local}Type"/>')
    out.append("</xsd:schema>")
    return "".join(out).encode("utf-8")


def feature_schema_json(types: Sequence[tuple[TypeName, Sequence[Property]]]) -> bytes:
    """The same description as JSON, in the members GeoServer writes for outputFormat=application/json."""
    uri = types[0][0].uri if types else ""
    prefix = types[0][0].prefix if types else ""
    doc = {"elementFormDefault": "qualified", "targetNamespace": uri, "targetPrefix": prefix, "featureTypes": [
        {"typeName": t.local, "properties": [
            {"name": p.name, "maxOccurs": 1, "minOccurs": 0, "nillable": True,
             "type": (geometry_property_type(p.type, "3.2").replace("PropertyType", "") if p.geometry
                      else _xsd_type(p.type)),
             "localType": (geometry_property_type(p.type, "3.2")[4:].replace("PropertyType", "") if p.geometry
                           else _xsd_type(p.type)[4:])}
            for p in sorted(props, key=lambda p: not p.geometry)]}
        for t, props in types]}
    return msgspec.json.encode(doc)
