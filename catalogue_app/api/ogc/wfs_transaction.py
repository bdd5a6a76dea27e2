"""WFS Transaction (WFS-T): Insert, Update, Delete (and WFS 2.0's Replace) of a vector dataset's
features, as QGIS and GDAL send them.

Which answer a Transaction gets follows its root element, never the connection:
``{http://www.opengis.net/wfs}Transaction`` with version 1.0.0 is WFS 1.0 (GML 2 coordinates
read east first, whatever the srsName: QGIS sends URN names with longitude first at 1.0.0); in
that namespace with any other version it is WFS 1.1 (GDAL labels its 1.x bodies "2.0.0" when the
connection is at 2.0.0: the answer then carries both id forms); ``{http://www.opengis.net/wfs/2.0}
Transaction`` is WFS 2.0, with Replace.

Elements are matched by local name (filters in the ogc, fes or no namespace); type names are
resolved through the namespaces in scope; property names are read with or without a prefix and
in the XML spelling of DescribeFeatureType; values become the layer's field types. Filters by id
(FeatureId@fid, GmlObjectId@gml:id or @id, ResourceId@rid) and simple comparisons (resolved to
feature ids by reading the layer before the Transaction) select what Update, Delete and Replace
change.

A Transaction is all or nothing: its changes go to the edit service in one call. That call
changes one dataset, so a Transaction touching several layers is refused. Refusals are OWS
exception reports sent with status 200 (GDAL reads no body of a 4xx answer, QGIS shows the
message only then), except 401 for an anonymous caller, so that clients ask for a password.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any
from xml.sax.saxutils import quoteattr

import anyio.from_thread
from litestar import Response
from lxml import etree

from catalogue_app.api.ogc.common import XML, OgcError, OgcRequest
from catalogue_app.api.ogc.wfs_types import NAMESPACE, feature_type
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.feature_encoding import xml_name
from catalogue_app.geo.features import (
    CUSTOM_CODE,
    CrsName,
    FeatureQuery,
    QueryError,
    default_crs_name,
    parse_crs_name,
    read_features,
)
from catalogue_app.geo.gml_read import GmlError, is_gml, make_points, point_position, read_geometry, split_tag
from catalogue_app.geo.xml import read_xml
from catalogue_app.services import edits as edits_service
from catalogue_app.services.errors import Forbidden, Invalid, NotFound, NotSignedIn, Refused

WFS = "http://www.opengis.net/wfs"
WFS20 = "http://www.opengis.net/wfs/2.0"
OGC = "http://www.opengis.net/ogc"
FES = "http://www.opengis.net/fes/2.0"
GML_NAMESPACES = ("http://www.opengis.net/gml", "http://www.opengis.net/gml/3.2")
XSI_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
MAX_ACTIONS = 100_000       # Insert, Update, Delete elements, and features inserted, in one Transaction
INTEGER_TYPES = ("xsd:int", "xsd:integer", "xsd:long", "xsd:short", "xsd:byte")
REAL_TYPES = ("xsd:double", "xsd:float", "xsd:decimal")
COMPARISONS = {"PropertyIsEqualTo": "eq", "PropertyIsNotEqualTo": "ne", "PropertyIsLessThan": "lt",
               "PropertyIsGreaterThan": "gt", "PropertyIsLessThanOrEqualTo": "le",
               "PropertyIsGreaterThanOrEqualTo": "ge"}
SPATIAL = ("BBOX", "Intersects", "Within", "Contains", "Disjoint", "Equals", "Touches", "Crosses", "Overlaps",
           "DWithin", "Beyond")
_INTEGER = re.compile(r"^[+-]?\d{1,19}$")


def _error(code: str, message: str, locator: str | None = "Transaction") -> OgcError:
    """A refusal of the Transaction: status 200, as clients read only those (see the module)."""
    return OgcError(code, message, locator, 200)


def _local(element: etree._Element) -> str:
    tag = element.tag
    return split_tag(tag)[1] if isinstance(tag, str) else ""


def _namespace(element: etree._Element) -> str | None:
    tag = element.tag
    return split_tag(tag)[0] if isinstance(tag, str) else None


def _elements(element: etree._Element) -> list[etree._Element]:
    return [c for c in element if isinstance(c.tag, str)]


def _text(element: etree._Element) -> str:
    if not len(element):  # no child, not even a comment: its text alone
        return element.text or ""
    return "".join(element.itertext())


# --- the dialect ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dialect:
    """How to read a Transaction and write its answer: ``answer`` is "1.0", "1.1" or "2.0";
    ``label`` the version the body gives."""

    answer: str
    label: str

    @property
    def both_ids(self) -> bool:
        """A 1.x body labelled 2.x (GDAL at 2.0.0): the answer's ids as FeatureId and ResourceId."""
        return self.answer == "1.1" and self.label.startswith("2")


def _dialect(root: etree._Element) -> Dialect:
    namespace, name = _namespace(root), _local(root)
    if name != "Transaction" or namespace not in (WFS, WFS20):
        where = f"{{{namespace}}}" if namespace else "no namespace"
        raise _error("OperationParsingFailed", f"The body is not a WFS Transaction: its root element is <{name}> in "
                     f"{where}. Send a wfs:Transaction in {WFS} (WFS 1.0.0, 1.1.0) or {WFS20} (WFS 2.0.0).")
    label = (root.get("version") or "").strip()
    if namespace == WFS20:
        return Dialect("2.0", label or "2.0.0")
    return Dialect("1.0" if label == "1.0.0" else "1.1", label or "1.1.0")


# --- the layers ----------------------------------------------------------------------------------


@dataclass
class Target:
    """A layer a Transaction changes: its dataset row, its fields and how XML names them."""

    layer: dict[str, Any]
    fields: dict[str, str]                       # field name -> xsd type
    geometry: str | None                         # the geometry column
    spelled: dict[str, str] = field(default_factory=dict)   # XML name -> field name
    default_crs: CrsName | None = None           # the CRS of geometries without srsName
    known: dict[str, str] = field(default_factory=dict)     # property names read so far -> field
    tags: dict[str, str] = field(default_factory=dict)      # property elements' tags -> field ("": not one)
    quick: dict[str, Any] = field(default_factory=dict)     # field -> its commonest values read quickly (_QUICK)

    def __post_init__(self) -> None:
        self.quick = {name: _QUICK[kind] for name, kind in self.fields.items() if kind in _QUICK}

    @property
    def name(self) -> str:
        return self.layer["name"]

    def property(self, raw: str, where: str) -> str:
        """The field (or the geometry column) a property name means: with or without a prefix,
        the last step of a path, as the layer or DescribeFeatureType spells it, in any case."""
        found = self.known.get(raw)
        if found is not None:
            return found
        name = raw.strip().rsplit("/", 1)[-1].rpartition(":")[2].strip()
        if name in self.fields or name == self.geometry:
            found = name
        elif name in self.spelled:
            found = self.spelled[name]
        else:
            every = [*self.fields, *([self.geometry] if self.geometry else [])]
            by_case = [f for f in every if f.lower() == name.lower() or xml_name(f).lower() == name.lower()]
            found = by_case[0] if len(by_case) == 1 else None
        if found is not None:
            if len(self.known) < 1024:
                self.known[raw] = found
            return found
        raise _error("InvalidParameterValue", f'{where}: "{raw.strip()[:80]}" is not a property of {self.name}: use '
                     f'{", ".join(xml_name(f) for f in every)}.', "propertyName")


class Layers:
    """The layers named in one Transaction, found once each, as the caller sees them."""

    def __init__(self, req: OgcRequest, dialect: Dialect):
        self.req, self.dialect = req, dialect
        self.found: dict[str, Target] = {}

    def named(self, name: str) -> Target:
        if name in self.found:
            return self.found[name]
        try:
            layer = feature_type(self.req, name, download=False)
        except OgcError as exc:
            raise _error(exc.code, exc.message, "typeName") from None
        target = next((t for t in self.found.values() if t.layer["id"] == layer["id"]), None)
        if target is None:
            if not layer.get("may_edit"):
                raise _error("NoApplicableCode", f'You may not change the features of "{layer["alternate"]}".',
                             "typeName")
            if self.found:
                first = next(iter(self.found.values())).layer["alternate"]
                raise _error("OperationProcessingFailed" if self.dialect.answer == "2.0" else "InvalidParameterValue",
                             f'A Transaction changes one layer: this one changes "{first}" and "{layer["alternate"]}". '
                             "Nothing was changed: send one Transaction per layer.", "typeName")
            target = self._target(layer)
        self.found[name] = target
        return target

    def _target(self, layer: dict[str, Any]) -> Target:
        fields, geometry = {}, None
        for a in layer["attributes"]:
            kind = a["attribute_type"] or "xsd:string"
            if kind.startswith("gml:"):
                geometry = geometry or a["attribute"]
            else:
                fields[a["attribute"]] = kind
        every = [*fields, *([geometry] if geometry else [])]
        spelled = {xml_name(f): f for f in every if xml_name(f) != f}
        form = "xml" if self.dialect.answer == "1.0" else "urn"
        return Target(layer, fields, geometry, spelled, default_crs_name(layer.get("srid") or "EPSG:4326", form))


def _type_name(element: etree._Element, value: str | None) -> str:
    """A typeName attribute as a layer name: its prefix resolved through the namespaces in scope."""
    if not value or not value.strip():
        raise _error("MissingParameterValue", f"wfs:{_local(element)} needs a typeName.", "typeName")
    value = value.strip()
    prefix, colon, local = value.rpartition(":")
    if not colon:
        return value
    uri = element.nsmap.get(prefix)
    if uri and uri.startswith(NAMESPACE):
        return f"{uri[len(NAMESPACE):]}:{local}"
    return value


def _feature_type_name(element: etree._Element) -> str:
    """The layer an inserted feature element names by its own name and namespace."""
    namespace, local = _namespace(element), _local(element)
    if namespace and namespace.startswith(NAMESPACE):
        return f"{namespace[len(NAMESPACE):]}:{local}"
    return f"{element.prefix}:{local}" if element.prefix else local


# --- values --------------------------------------------------------------------------------------


def _value(target: Target, name: str, raw: str | None, where: str) -> Any:
    """A value sent as text, as the field's type wants it (None: NULL)."""
    kind = target.fields[name]
    if raw is None:
        return None
    if kind == "xsd:string":
        return raw
    text = raw.strip()
    if not text:
        return None
    try:
        if kind in INTEGER_TYPES:
            if _INTEGER.match(text):
                return int(text)
            number = float(text)
            if number.is_integer() and abs(number) < 2**63:
                return int(number)
            raise ValueError
        if kind in REAL_TYPES:
            number = float(text)
            if not math.isfinite(number):
                raise ValueError
            return number
        if kind == "xsd:boolean":
            return {"true": True, "1": True, "false": False, "0": False}[text.lower()]
        if kind == "xsd:date":
            return date.fromisoformat(text.replace("/", "-")[:10]).isoformat()
        if kind == "xsd:dateTime":
            day, _, clock = text.replace("/", "-").replace(" ", "T", 1).partition("T")
            return datetime.fromisoformat(f"{day}T{clock or '00:00:00'}").isoformat()
        if kind == "xsd:time":
            return time.fromisoformat(text).isoformat()
    except (ValueError, KeyError, OverflowError):
        raise _error("InvalidParameterValue", f'{where}: "{text[:80]}" is not a value of {xml_name(name)}, '
                     f"whose type is {kind}.", xml_name(name)) from None
    return raw


def _int_value(raw: str) -> int:
    text = raw.strip()
    if _INTEGER.match(text):
        return int(text)
    raise ValueError(text)


def _real_value(raw: str) -> float:
    number = float(raw)
    if math.isfinite(number):
        return number
    raise ValueError(raw)


def _date_value(raw: str) -> str:
    return date.fromisoformat(raw.strip().replace("/", "-")[:10]).isoformat()


_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


def _boolean_value(raw: str) -> bool:
    found = _BOOLEANS.get(raw.strip().lower())
    if found is None:
        raise ValueError(raw)
    return found


# What ``_value`` gives for the commonest values of a type, quicker; anything else (empty, another
# form, wrong) raises ValueError, and ``_value`` reads it (or says why not).
_QUICK: dict[str, Any] = {"xsd:string": str, "xsd:date": _date_value, "xsd:boolean": _boolean_value,
                          **{kind: _int_value for kind in INTEGER_TYPES}, **{kind: _real_value for kind in REAL_TYPES}}


def _geometry(target: Target, element: etree._Element, where: str, dialect: Dialect,
              default: CrsName | None, position: bool = False) -> tuple[Any, str | None]:
    """A GML geometry as (shapely geometry, CRS for the edit service: None for the layer's).
    With ``position``, a point in the commonest form comes as its position (a tuple), for the
    caller to make many points at once (``make_points``)."""
    found = point_position(element, default_crs=default or target.default_crs) if position else None
    if found is not None:
        geometry, crs = found
    else:
        try:
            read = read_geometry(element, gml2_east_first=dialect.answer == "1.0",
                                 default_crs=default or target.default_crs)
        except GmlError as exc:
            raise _error("InvalidParameterValue", f"{where}: {exc.message}", target.geometry) from None
        geometry, crs = read.geometry, read.crs
    if crs is None or crs.code in (None, CUSTOM_CODE):
        return geometry, None
    return geometry, f"EPSG:{crs.code}"


def _srs(element: etree._Element) -> CrsName | None:
    """The srsName of an Insert or Update, for its geometries that name none."""
    name = element.get("srsName")
    if not name:
        return None
    try:
        return parse_crs_name(name)
    except QueryError as exc:
        raise _error("InvalidParameterValue", exc.message, "srsName") from None


# --- filters -------------------------------------------------------------------------------------


@dataclass
class Selection:
    """The features a filter selects: by id, or by a condition on properties read from the layer."""

    ids: list[int]
    condition: Any = None        # a predicate on a row (dict of field -> value), or None


def _fid(target: Target, value: str | None, where: str) -> int:
    text = (value or "").strip()
    name, dot, number = text.rpartition(".")
    if not dot or not number.isdecimal() or len(number) > 18:
        raise _error("InvalidParameterValue", f'{where}: "{text[:80]}" is not a feature id: ids are '
                     f'"{target.name}.<number>", as GetFeature gives them.', "fid")
    if name.rpartition(":")[2] != target.name:
        raise _error("InvalidParameterValue", f'{where}: "{text[:80]}" is not a feature of {target.name}.', "fid")
    return int(number)


def _id_of(element: etree._Element) -> str | None:
    name = _local(element)
    if name == "FeatureId":
        return element.get("fid")
    if name == "ResourceId":
        return element.get("rid")
    for key, value in element.attrib.items():   # GmlObjectId: gml:id (any GML namespace) or id
        if etree.QName(key).localname == "id":
            return value
    return None


IDS = ("FeatureId", "GmlObjectId", "ResourceId")


class FilterReader:
    """An ogc:Filter or fes:Filter, as ids or a predicate on rows."""

    def __init__(self, target: Target, where: str):
        self.target, self.where = target, where
        self.properties: set[str] = set()

    def read(self, element: etree._Element) -> Selection:
        parts = _elements(element)
        if not parts:
            raise _error("InvalidParameterValue", f"{self.where}: the Filter is empty.", "Filter")
        if all(_local(p) in IDS for p in parts):
            return Selection([_fid(self.target, _id_of(p), self.where) for p in parts])
        if len(parts) != 1:
            raise _error("InvalidParameterValue", f"{self.where}: a Filter holds one operator (join them with And or "
                         "Or) or feature ids.", "Filter")
        return Selection([], self.node(parts[0], 0))

    def node(self, element: etree._Element, depth: int):
        name = _local(element)
        if depth > 50:
            raise _error("InvalidParameterValue", f"{self.where}: the Filter is nested too deeply.", "Filter")
        if name in ("And", "Or"):
            parts = [self.node(c, depth + 1) for c in _elements(element)]
            if not parts:
                raise _error("InvalidParameterValue", f"{self.where}: {name} holds no operator.", "Filter")
            return (lambda row: all(p(row) for p in parts)) if name == "And" else (lambda row: any(p(row) for p in parts))
        if name == "Not":
            parts = [self.node(c, depth + 1) for c in _elements(element)]
            if len(parts) != 1:
                raise _error("InvalidParameterValue", f"{self.where}: Not holds one operator.", "Filter")
            return lambda row: not parts[0](row)
        if name in IDS:
            fid = _fid(self.target, _id_of(element), self.where)
            return lambda row: row["fid"] == fid
        if name in COMPARISONS:
            return self.comparison(element, COMPARISONS[name])
        if name == "PropertyIsNull":
            prop = self.prop(element)
            return lambda row: _missing(row[prop])
        if name == "PropertyIsLike":
            return self.like(element)
        if name == "PropertyIsBetween":
            prop = self.prop(element)
            low, high = (self.literal(_child_of(_child_of(element, side, self.where), "Literal", self.where), prop)
                         for side in ("LowerBoundary", "UpperBoundary"))
            return lambda row: not _missing(row[prop]) and _compare(row[prop], low, "ge") and _compare(row[prop], high, "le")
        if name in SPATIAL:
            raise _error("InvalidParameterValue", f"{self.where}: spatial filters ({name}) are not read in a "
                         "Transaction: select the features by id or by their properties.", "Filter")
        raise _error("InvalidParameterValue", f'{self.where}: the filter operator "{name}" is not read here.', "Filter")

    def prop(self, element: etree._Element) -> str:
        node = _child_of(element, ("PropertyName", "ValueReference"), self.where)
        name = self.target.property(_text(node), self.where)
        if name == self.target.geometry:
            raise _error("InvalidParameterValue", f"{self.where}: features are not compared by their geometry.", "Filter")
        self.properties.add(name)
        return name

    def literal(self, element: etree._Element, prop: str) -> Any:
        value = _value(self.target, prop, _text(element), self.where)
        if value is None:
            raise _error("InvalidParameterValue", f"{self.where}: a Literal is empty.", "Filter")
        return value

    def comparison(self, element: etree._Element, op: str):
        prop = self.prop(element)
        value = self.literal(_child_of(element, "Literal", self.where), prop)
        fold = element.get("matchCase", "true").strip().lower() == "false" and isinstance(value, str)
        if fold:
            value = value.lower()
        return lambda row: not _missing(row[prop]) and _compare(row[prop].lower() if fold else row[prop], value, op)

    def like(self, element: etree._Element):
        prop = self.prop(element)
        pattern = _text(_child_of(element, "Literal", self.where))
        wild, single = element.get("wildCard", "*"), element.get("singleChar", ".")
        escape = element.get("escapeChar", element.get("escape", "\\"))
        if any(len(m) != 1 for m in (wild, single, escape)) or len({wild, single, escape}) != 3:
            raise _error("InvalidParameterValue", f"{self.where}: the wildCard, singleChar and escapeChar of "
                         "PropertyIsLike are three different characters.", "Filter")
        out, i = [], 0
        while i < len(pattern):
            c = pattern[i]
            if c == escape and i + 1 < len(pattern):
                out.append(re.escape(pattern[i + 1]))
                i += 2
                continue
            out.append(".*" if c == wild else "." if c == single else re.escape(c))
            i += 1
        flags = re.IGNORECASE | re.DOTALL if element.get("matchCase", "true").lower() == "false" else re.DOTALL
        regex = re.compile("".join(out), flags)
        return lambda row: not _missing(row[prop]) and regex.fullmatch(str(row[prop])) is not None


def _child_of(element: etree._Element, names: str | tuple[str, ...], where: str) -> etree._Element:
    names = (names,) if isinstance(names, str) else names
    for c in _elements(element):
        if _local(c) in names:
            return c
    raise _error("InvalidParameterValue", f"{where}: {_local(element)} needs {' or '.join(names)}.", "Filter")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _compare(cell: Any, value: Any, op: str) -> bool:
    if isinstance(value, bool):
        cell = bool(cell)
    elif isinstance(value, (int, float)) and not isinstance(cell, (int, float)):
        return False
    elif isinstance(value, str) and not isinstance(cell, str):
        cell = str(cell)
    try:
        return {"eq": cell == value, "ne": cell != value, "lt": cell < value, "gt": cell > value,
                "le": cell <= value, "ge": cell >= value}[op]
    except TypeError:
        return False


def _resolve(req: OgcRequest, target: Target, selection: Selection, properties: set[str]) -> list[int]:
    """The ids a selection names: its ids, or those of the rows its condition holds for."""
    if selection.condition is None:
        return list(dict.fromkeys(selection.ids))
    try:
        page = read_features(req.data_path(target.layer), FeatureQuery(properties=sorted(properties)),
                             target.layer.get("data_version"))
    except QueryError as exc:
        raise _error("InvalidParameterValue", exc.message, "Filter") from None
    columns = [column.tolist() for column in page.columns]
    out = []
    for i, fid in enumerate(page.fids.tolist()):
        row = {name: values[i] for name, values in zip(page.names, columns)}
        row["fid"] = fid
        if selection.condition(row):
            out.append(fid)
    return out


# --- the Transaction -----------------------------------------------------------------------------


@dataclass
class Plan:
    """What one Transaction does: the changes for the edit service, in order, and what to count."""

    target: Target | None = None
    changes: list[Any] = field(default_factory=list)
    inserts: list[tuple[str | None, int]] = field(default_factory=list)   # (handle, how many) per Insert
    updated: int = 0
    replaced: list[int] = field(default_factory=list)
    deleted: int = 0


class TransactionReader:
    def __init__(self, req: OgcRequest, dialect: Dialect):
        self.req, self.dialect = req, dialect
        self.layers = Layers(req, dialect)
        self.plan = Plan()
        self.count = 0

    def _use(self, target: Target) -> Target:
        self.plan.target = target
        return target

    def _counted(self, n: int = 1) -> None:
        self.count += n
        if self.count > MAX_ACTIONS:
            raise _error("InvalidParameterValue", f"A Transaction holds {MAX_ACTIONS} actions and features at most: "
                         "send several.")

    def read(self, root: etree._Element) -> Plan:
        actions = _elements(root)
        for number, action in enumerate(actions, 1):
            self._counted()
            name = _local(action)
            where = f"{name} {number}" + (f' ("{action.get("handle")}")' if action.get("handle") else "")
            if name == "Insert":
                self.insert(action, where)
            elif name == "Update":
                self.update(action, where)
            elif name == "Delete":
                self.delete(action, where)
            elif name == "Replace" and self.dialect.answer == "2.0":
                self.replace(action, where)
            elif name == "Native":
                if action.get("safeToIgnore", "").strip().lower() != "true":
                    raise _error("OperationNotSupported", f"{where}: vendor actions (Native) are not run here.")
            elif name == "LockId":
                continue
            else:
                raise _error("OperationParsingFailed" if self.dialect.answer == "2.0" else "InvalidParameterValue",
                             f'{where}: "{name}" is not a Transaction action: use Insert, Update or Delete'
                             + (" (or Replace)." if self.dialect.answer == "2.0" else "."))
        return self.plan

    # -- Insert -----------------------------------------------------------------------------------
    def insert(self, action: etree._Element, where: str) -> None:
        default = _srs(action)
        features = _elements(action)
        if not features:
            raise _error("InvalidParameterValue", f"{where} holds no feature.")
        read = []
        for i, feature in enumerate(features, 1):
            self._counted()
            target = self._use(self.layers.named(_feature_type_name(feature)))
            read.append(self.feature(target, feature, f"{where}, feature {i}", default, positions=True))
        positions = [geometry for _, geometry, _ in read if isinstance(geometry, tuple)]
        points = iter(make_points(positions)) if positions else None
        for properties, geometry, crs in read:
            if isinstance(geometry, tuple):
                geometry = next(points)
            self.plan.changes.append(edits_service.Insert(properties=properties, geometry=geometry, crs=crs))
        self.plan.inserts.append((action.get("handle"), len(features)))

    def feature(self, target: Target, feature: etree._Element, where: str, default: CrsName | None,
                positions: bool = False) -> tuple[dict[str, Any], Any, str | None]:
        """The properties, geometry and CRS of a feature element (with ``positions``, a point's
        position as a tuple, see ``_geometry``)."""
        properties: dict[str, Any] = {}
        geometry, crs = None, None
        tags, quick_of, column = target.tags, target.quick, target.geometry
        for prop in feature:
            tag = prop.tag
            name = tags.get(tag) if isinstance(tag, str) else ""  # "": a comment or a processing instruction
            if name is None:
                namespace, local = split_tag(tag)
                if namespace in GML_NAMESPACES and local in ("boundedBy", "name", "description", "identifier",
                                                             "location", "metaDataProperty"):
                    name = ""
                else:
                    name = target.property(local, where)
                if len(tags) < 1024:
                    tags[tag] = name
            if not name:
                continue
            if not len(prop):  # text alone (the commonest)
                if name == column:
                    continue
                if prop.keys() and (prop.get(XSI_NIL) or "").strip().lower() == "true":
                    properties[name] = None
                    continue
                text = prop.text or ""
                quick = quick_of.get(name)
                if quick is not None:
                    try:
                        properties[name] = quick(text)
                        continue
                    except (ValueError, OverflowError):
                        pass
                properties[name] = _value(target, name, text, where)
                continue
            shapes = ([prop[0]] if is_gml(prop[0]) else []) if len(prop) == 1 else [c for c in _elements(prop) if is_gml(c)]
            if name == target.geometry:
                if len(shapes) > 1:
                    raise _error("InvalidParameterValue", f"{where}: {_local(prop)} holds more than one geometry.",
                                 _local(prop))
                if shapes:
                    geometry, crs = _geometry(target, shapes[0], where, self.dialect, default, positions)
                continue
            if _elements(prop):
                raise _error("InvalidParameterValue", f"{where}: {_local(prop)} holds elements; its type is "
                             f"{target.fields[name]}.", _local(prop))
            nil = (prop.get(XSI_NIL) or "").strip().lower() == "true"
            properties[name] = None if nil else _value(target, name, _text(prop), where)
        return properties, geometry, crs

    # -- Update -----------------------------------------------------------------------------------
    def update(self, action: etree._Element, where: str) -> None:
        target = self._use(self.layers.named(_type_name(action, action.get("typeName"))))
        default = _srs(action)
        properties: dict[str, Any] = {}
        geometry, crs, set_geometry = None, None, False
        for prop in (p for p in _elements(action) if _local(p) == "Property"):
            name_el = next((c for c in _elements(prop) if _local(c) in ("Name", "ValueReference")), None)
            if name_el is None or not _text(name_el).strip():
                raise _error("InvalidParameterValue", f"{where}: a Property needs a Name.", "Property")
            name = target.property(_text(name_el), where)
            value_el = next((c for c in _elements(prop) if _local(c) == "Value"), None)
            if (name_el.get("action") or "replace").strip() == "remove":
                value_el = None
            elif (name_el.get("action") or "replace").strip() != "replace":
                raise _error("InvalidParameterValue", f'{where}: the action "{name_el.get("action")}" of '
                             "ValueReference is not done here: use replace or remove.", "action")
            if name == target.geometry:
                set_geometry = True
                shapes = [c for c in _elements(value_el) if is_gml(c)] if value_el is not None else []
                if value_el is not None and (len(shapes) != 1 or len(_elements(value_el)) != 1):
                    raise _error("InvalidParameterValue", f"{where}: the Value of {xml_name(name)} is one GML "
                                 "geometry.", xml_name(name))
                geometry, crs = _geometry(target, shapes[0], where, self.dialect, default) if shapes else (None, None)
                continue
            if value_el is not None and _elements(value_el):
                raise _error("InvalidParameterValue", f"{where}: the Value of {xml_name(name)} holds elements; its "
                             f"type is {target.fields[name]}.", xml_name(name))
            nil = value_el is None or (value_el.get(XSI_NIL) or "").strip().lower() == "true"
            properties[name] = None if nil else _value(target, name, _text(value_el), where)
        if not properties and not set_geometry:
            raise _error("InvalidParameterValue", f"{where} sets no Property.", "Property")
        fids = self.selected(action, target, where)
        for fid in fids:
            self.plan.changes.append(edits_service.Update(fid=fid, properties=properties, geometry=geometry,
                                                          set_geometry=set_geometry, crs=crs))
        self.plan.updated += len(fids)

    def selected(self, action: etree._Element, target: Target, where: str) -> list[int]:
        filters = [c for c in _elements(action) if _local(c) == "Filter"]
        if len(filters) != 1:
            raise _error("MissingParameterValue" if not filters else "InvalidParameterValue",
                         f"{where} needs one Filter naming the features it changes.", "Filter")
        reader = FilterReader(target, where)
        selection = reader.read(filters[0])
        return _resolve(self.req, target, selection, reader.properties)

    # -- Delete, Replace --------------------------------------------------------------------------
    def delete(self, action: etree._Element, where: str) -> None:
        target = self._use(self.layers.named(_type_name(action, action.get("typeName"))))
        fids = self.selected(action, target, where)
        self.plan.changes.extend(edits_service.Delete(fid=fid) for fid in fids)
        self.plan.deleted += len(fids)

    def replace(self, action: etree._Element, where: str) -> None:
        features = [c for c in _elements(action) if _local(c) != "Filter"]
        if len(features) != 1:
            raise _error("InvalidParameterValue", f"{where} holds one feature and a Filter.")
        target = self._use(self.layers.named(_feature_type_name(features[0])))
        properties, geometry, crs = self.feature(target, features[0], where, _srs(action))
        whole = {name: properties.get(name) for name in target.fields}
        for fid in self.selected(action, target, where):
            self.plan.changes.append(edits_service.Update(fid=fid, properties=whole, geometry=geometry,
                                                          set_geometry=True, crs=crs))
            self.plan.replaced.append(fid)


# --- running and answering -----------------------------------------------------------------------


def transaction(req: OgcRequest) -> Response:
    """Run the Transaction POSTed to ``req`` and answer it (in a worker thread)."""
    if req.ctx.caller.is_anonymous:
        raise OgcError("NoApplicableCode", "Sign in to change features.", "Transaction", 401)
    try:
        root = read_xml(req.body or b"", "The Transaction", "Send a wfs:Transaction document")
    except GeoError as exc:
        raise _error("OperationParsingFailed", str(exc)) from None
    dialect = _dialect(root)
    plan = TransactionReader(req, dialect).read(root)
    inserted: list[int] = []
    if plan.target is not None and plan.changes:
        try:
            result = anyio.from_thread.run(edits_service.apply, req.ctx.db, req.ctx.viewer, plan.target.layer["id"],
                                           plan.changes, "wfs-t")
        except NotSignedIn as exc:
            raise OgcError("NoApplicableCode", exc.message, "Transaction", 401) from None
        except Forbidden as exc:
            raise _error("NoApplicableCode", exc.message) from None
        except NotFound as exc:
            raise _error("InvalidParameterValue", exc.message, "typeName") from None
        except Invalid as exc:
            raise _error("InvalidParameterValue", exc.message) from None
        except Refused as exc:
            raise _error("OperationProcessingFailed" if dialect.answer == "2.0" else "NoApplicableCode",
                         f"{exc.message} Nothing was changed.") from None
        inserted = list(result.inserted)
    name = plan.target.name if plan.target is not None else ""
    body = {"1.0": _answer_10, "1.1": _answer_11, "2.0": _answer_20}[dialect.answer](plan, name, inserted, dialect)
    return Response(body.encode("utf-8"), media_type=XML, status_code=200)


def _ids(plan: Plan, inserted: list[int]) -> list[tuple[str | None, list[int]]]:
    """The new ids, by Insert."""
    out, at = [], 0
    for handle, count in plan.inserts:
        out.append((handle, inserted[at:at + count]))
        at += count
    return out


def _handle(handle: str | None) -> str:
    return f" handle={quoteattr(handle)}" if handle else ""


def _answer_10(plan: Plan, name: str, inserted: list[int], dialect: Dialect) -> str:
    results = "".join(f"<wfs:InsertResult{_handle(handle)}>" + "".join(f'<ogc:FeatureId fid="{name}.{fid}"/>' for fid in fids)
                      + "</wfs:InsertResult>" for handle, fids in _ids(plan, inserted) if fids)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<wfs:WFS_TransactionResponse version="1.0.0" xmlns:wfs="{WFS}" xmlns:ogc="{OGC}">{results}'
            "<wfs:TransactionResult><wfs:Status><wfs:SUCCESS/></wfs:Status></wfs:TransactionResult>"
            "</wfs:WFS_TransactionResponse>")


def _answer_11(plan: Plan, name: str, inserted: list[int], dialect: Dialect) -> str:
    fes = f' xmlns:fes="{FES}"' if dialect.both_ids else ""
    features = "".join(
        f"<wfs:Feature{_handle(handle)}><ogc:FeatureId fid=\"{name}.{fid}\"/>"
        + (f'<fes:ResourceId rid="{name}.{fid}"/>' if dialect.both_ids else "") + "</wfs:Feature>"
        for handle, fids in _ids(plan, inserted) for fid in fids)
    results = f"<wfs:InsertResults>{features}</wfs:InsertResults>" if features else ""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<wfs:TransactionResponse version="1.1.0" xmlns:wfs="{WFS}" xmlns:ogc="{OGC}"{fes}>'
            f"<wfs:TransactionSummary><wfs:totalInserted>{len(inserted)}</wfs:totalInserted>"
            f"<wfs:totalUpdated>{plan.updated + len(plan.replaced)}</wfs:totalUpdated>"
            f"<wfs:totalDeleted>{plan.deleted}</wfs:totalDeleted></wfs:TransactionSummary>{results}"
            "</wfs:TransactionResponse>")


def _answer_20(plan: Plan, name: str, inserted: list[int], dialect: Dialect) -> str:
    features = "".join(f'<wfs:Feature{_handle(handle)}><fes:ResourceId rid="{name}.{fid}"/></wfs:Feature>'
                       for handle, fids in _ids(plan, inserted) for fid in fids)
    replaced = "".join(f'<wfs:Feature><fes:ResourceId rid="{name}.{fid}"/></wfs:Feature>' for fid in plan.replaced)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<wfs:TransactionResponse version="2.0.0" xmlns:wfs="{WFS20}" xmlns:fes="{FES}">'
            f"<wfs:TransactionSummary><wfs:totalInserted>{len(inserted)}</wfs:totalInserted>"
            f"<wfs:totalUpdated>{plan.updated}</wfs:totalUpdated><wfs:totalReplaced>{len(plan.replaced)}"
            f"</wfs:totalReplaced><wfs:totalDeleted>{plan.deleted}</wfs:totalDeleted></wfs:TransactionSummary>"
            + (f"<wfs:InsertResults>{features}</wfs:InsertResults>" if features else "")
            + (f"<wfs:ReplaceResults>{replaced}</wfs:ReplaceResults>" if replaced else "")
            + "</wfs:TransactionResponse>")
