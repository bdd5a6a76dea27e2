"""CSW constraints read into the store's condition tree (store/csw_search.py): CQL text (the
OGC Catalogue CQL: comparisons, LIKE/ILIKE, BETWEEN, BBOX, AND, OR, NOT, parentheses) and OGC
Filter 1.1 XML (PropertyIsEqualTo... PropertyIsLike, PropertyIsBetween, BBOX, And, Or, Not).

Queryables are named with or without a prefix, in any case (``AnyText``, ``csw:AnyText``,
``dc:title``, ``apiso:Title``, ``ows:BoundingBox``). A box is in WGS84: lower corner
"latitude longitude" for the EPSG URNs and URIs of 4326 (their axis order), "longitude latitude"
for ``EPSG:4326``, CRS84 and when no CRS is named. Anything unreadable or not offered raises a
CswError (status 400).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from lxml import etree

from catalogue_app.api.ogc.csw.errors import bad_constraint
from catalogue_app.services.values import Invalid, parse_datetime
from catalogue_app.store.csw_search import AllOf, AnyOf, Box, Compare, Negated, Node

QUERYABLES = {"anytext": "anytext", "title": "title", "subject": "subject", "type": "type",
              "boundingbox": "box", "modified": "modified", "identifier": "identifier", "abstract": "abstract",
              "format": "format"}
MAX_DEPTH = 32
MAX_NODES = 500
MAX_TEXT = 1000
LON_LAT = {"epsg:4326", "crs:84", "crs84", "urn:ogc:def:crs:ogc:1.3:crs84", "urn:ogc:def:crs:ogc::crs84",
           "http://www.opengis.net/def/crs/ogc/1.3/crs84", "http://www.opengis.net/gml/srs/epsg.xml#4326",
           "urn:x-ogc:def:crs:ogc:1.3:crs84"}
LAT_LON = re.compile(r"^(urn:(x-)?ogc:def:crs:epsg:[\d.]*:4326|http://www\.opengis\.net/def/crs/epsg/\d+/4326)$")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def queryable(name: str) -> str:
    """The store's name of a queryable; unknown names are refused."""
    local = name.strip().split(":")[-1].lower()
    if local not in QUERYABLES:
        raise bad_constraint(f'"{name}" is not a queryable of this catalogue; use one of: AnyText, Title, Subject, '
                             "Type, Abstract, Identifier, Modified, Format, BoundingBox.")
    return QUERYABLES[local]


def like_pattern(text: str, wild: str = "%", single: str = "_", escape: str = "\\") -> str:
    """A client's pattern as a SQL LIKE pattern with a backslash for escape character."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == escape and i + 1 < len(text):
            c = text[i + 1]
            out.append("\\" + c if c in "%_\\" else c)
            i += 2
            continue
        out.append("%" if c == wild else "_" if c == single else "\\" + c if c in "%_\\" else c)
        i += 1
    return "".join(out)


def _day(value: str) -> datetime | None:
    """A date without time of day, as a datetime at its start; None for other values."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        try:
            return datetime.strptime(value.strip(), "%Y-%m-%d")
        except ValueError:
            raise bad_constraint(f'"{value}" is not a date.') from None
    return None


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def comparison(name: str, op: str, value: str, ignore_case: bool = False) -> Node:
    """``name op value`` as a condition: dates of Modified compared as the store keeps them (a
    day without time stands for the whole day); text as it is."""
    field = queryable(name)
    if field == "box":
        raise bad_constraint("BoundingBox is compared with BBOX only.")
    if len(value) > MAX_TEXT or CONTROL.search(value):
        raise bad_constraint("A value of the constraint is too long or holds control characters.")
    if field == "modified" and op != "like":
        day = _day(value)
        if day is not None:
            start, end = _stamp(day), _stamp(day + timedelta(days=1))
            whole = AllOf((Compare(field, "ge", start), Compare(field, "lt", end)))
            return {"eq": whole, "ne": Negated(whole), "lt": Compare(field, "lt", start),
                    "ge": Compare(field, "ge", start), "gt": Compare(field, "ge", end),
                    "le": Compare(field, "lt", end)}[op]
        try:
            value = parse_datetime(value)
        except Invalid:
            raise bad_constraint(f'"{value}" is not a date or a date and time (YYYY-MM-DD[Thh:mm:ss[Z]]).') from None
    return Compare(field, op, value, ignore_case)


def axis_lat_lon(srs: str | None) -> bool:
    """Whether a box in this CRS gives latitude first; other CRSs than WGS84 are refused."""
    name = (srs or "").strip().lower()
    if not name or name in LON_LAT:
        return False
    if LAT_LON.match(name):
        return True
    raise bad_constraint(f'The CRS "{srs}" is not offered: send boxes in EPSG:4326 or CRS84.')


def _number(text: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise bad_constraint(f'"{text}" is not a number.') from None
    if not math.isfinite(value):
        raise bad_constraint(f'"{text}" is not a finite number.')
    return value


def box(corners: list[str], srs: str | None) -> Node:
    """A box from its two corners' four numbers in the CRS's axis order: lower corner first."""
    if len(corners) != 4:
        raise bad_constraint("A box needs four numbers: two per corner.")
    a, b, c, d = (_number(v) for v in corners)
    west, south, east, north = (b, a, d, c) if axis_lat_lon(srs) else (a, b, c, d)
    if not (-90 <= south <= 90 and -90 <= north <= 90):
        raise bad_constraint("A latitude of the box is beyond 90 degrees (are the axes in the CRS's order?).")
    if not (-180 <= west <= 180 and -180 <= east <= 180):
        raise bad_constraint("A longitude of the box is beyond 180 degrees.")
    if south > north:
        raise bad_constraint("The box's lower corner is north of its upper corner.")
    if west > east:  # across the antimeridian
        return AnyOf((Box(west, south, 180.0, north), Box(-180.0, south, east, north)))
    return Box(west, south, east, north)


# -- CQL text -------------------------------------------------------------------------------------
TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>'(?:[^']|'')*')
  | (?P<quoted>"(?:[^"]|"")+")
  | (?P<date>\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?)
  | (?P<number>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)
  | (?P<op><>|!=|<=|>=|=|<|>)
  | (?P<punct>[(),])
""", re.VERBOSE)
CQL_OPS = {"=": "eq", "<>": "ne", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


@dataclass
class Token:
    kind: str
    text: str

    def word(self) -> str:
        return self.text.upper() if self.kind == "name" else ""


def tokens(text: str) -> list[Token]:
    out, at = [], 0
    while at < len(text):
        found = TOKEN.match(text, at)
        if not found:
            raise bad_constraint(f'The CQL text cannot be read at "{text[at:at + 20]}".')
        at = found.end()
        if found.lastgroup != "space":
            out.append(Token(found.lastgroup or "", found.group()))
    return out


class CqlReader:
    """A recursive descent reader of CQL: OR of ANDs of (NOT) predicates."""

    def __init__(self, text: str):
        if len(text) > 8 * MAX_TEXT or CONTROL.search(text):
            raise bad_constraint("The CQL text is too long or holds control characters.")
        self.items = tokens(text)
        self.at = 0
        self.depth = 0

    def peek(self) -> Token | None:
        return self.items[self.at] if self.at < len(self.items) else None

    def take(self, kind: str | None = None, text: str | None = None) -> Token:
        item = self.peek()
        if item is None or (kind and item.kind != kind) or (text and item.text.upper() != text):
            near = f'at "{item.text}"' if item else "at its end"
            raise bad_constraint(f"The CQL text cannot be read {near}: expected {text or kind or 'more'}.")
        self.at += 1
        return item

    def read(self) -> Node:
        if not self.items:
            raise bad_constraint("The CQL text is empty.")
        node = self.disjunction()
        if self.peek() is not None:
            raise bad_constraint(f'The CQL text cannot be read at "{self.peek().text}".')
        return node

    def disjunction(self) -> Node:
        parts = [self.conjunction()]
        while self.peek() and self.peek().word() == "OR":
            self.at += 1
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))

    def conjunction(self) -> Node:
        parts = [self.negation()]
        while self.peek() and self.peek().word() == "AND":
            self.at += 1
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def negation(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise bad_constraint("The CQL text nests too deep.")
        try:
            if self.peek() and self.peek().word() == "NOT":
                self.at += 1
                return Negated(self.negation())
            return self.predicate()
        finally:
            self.depth -= 1

    def literal(self) -> str:
        item = self.take()
        if item.kind == "string":
            return item.text[1:-1].replace("''", "'")
        if item.kind in ("number", "date"):
            return item.text
        raise bad_constraint(f'The CQL text cannot be read at "{item.text}": expected a value.')

    def predicate(self) -> Node:
        item = self.peek()
        if item is not None and item.text == "(":
            self.at += 1
            node = self.disjunction()
            self.take("punct", ")")
            return node
        if item is not None and item.word() == "BBOX":
            return self.bbox()
        name_token = self.take()
        if name_token.kind not in ("name", "quoted"):
            raise bad_constraint(f'The CQL text cannot be read at "{name_token.text}": expected a queryable.')
        name = name_token.text[1:-1].replace('""', '"') if name_token.kind == "quoted" else name_token.text
        negate = False
        following = self.peek()
        if following is not None and following.word() == "NOT":
            self.at += 1
            negate = True
            following = self.peek()
        if following is None:
            raise bad_constraint("The CQL text ends before its comparison.")
        word = following.word()
        if word in ("LIKE", "ILIKE"):
            self.at += 1
            node = comparison(name, "like", like_pattern(self.literal()), True)
        elif word == "BETWEEN":
            self.at += 1
            low = self.literal()
            self.take("name", "AND")
            high = self.literal()
            node = AllOf((comparison(name, "ge", low), comparison(name, "le", high)))
        elif following.kind == "op" and not negate:
            self.at += 1
            node = comparison(name, CQL_OPS[following.text], self.literal())
        else:
            raise bad_constraint(f'The CQL text cannot be read at "{following.text}": expected an operator.')
        return Negated(node) if negate else node

    def bbox(self) -> Node:
        self.take("name", "BBOX")
        self.take("punct", "(")
        name = self.take()
        if queryable(name.text.strip('"')) != "box":
            raise bad_constraint("BBOX applies to BoundingBox only.")
        numbers = []
        for _ in range(4):
            self.take("punct", ",")
            numbers.append(self.take().text)
        srs = None
        if self.peek() and self.peek().text == ",":
            self.at += 1
            srs = self.literal()
        self.take("punct", ")")
        return box(numbers, srs)


def from_cql(text: str) -> Node:
    return CqlReader(text).read()


# -- OGC Filter XML --------------------------------------------------------------------------------
FES_OPS = {"PropertyIsEqualTo": "eq", "PropertyIsNotEqualTo": "ne", "PropertyIsLessThan": "lt",
           "PropertyIsLessThanOrEqualTo": "le", "PropertyIsGreaterThan": "gt", "PropertyIsGreaterThanOrEqualTo": "ge"}


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def _children(element: etree._Element) -> list[etree._Element]:
    return [child for child in element if isinstance(child.tag, str)]


def _child(element: etree._Element, *names: str) -> etree._Element | None:
    return next((c for c in _children(element) if _local(c) in names), None)


def _boundary(element: etree._Element, name: str) -> etree._Element:
    found = _child(element, name)
    if found is None:
        raise bad_constraint(f"ogc:PropertyIsBetween lacks its {name}.")
    return found


def _text(element: etree._Element | None, what: str) -> str:
    if element is None:
        raise bad_constraint(f"The filter lacks its {what}.")
    return "".join(element.itertext()).strip()


class FilterReader:
    def __init__(self) -> None:
        self.count = 0

    def read(self, root: etree._Element) -> Node:
        if _local(root) != "Filter":
            raise bad_constraint(f'The constraint is a "{_local(root)}", not an ogc:Filter.')
        operators = _children(root)
        if len(operators) != 1:
            raise bad_constraint("An ogc:Filter holds one operator (join several with ogc:And or ogc:Or).")
        return self.node(operators[0], 1)

    def node(self, element: etree._Element, depth: int) -> Node:
        self.count += 1
        if depth > MAX_DEPTH or self.count > MAX_NODES:
            raise bad_constraint("The filter is too large or nests too deep.")
        name = _local(element)
        if name in ("And", "Or"):
            parts = tuple(self.node(child, depth + 1) for child in _children(element))
            if not parts:
                raise bad_constraint(f"ogc:{name} holds no operator.")
            return AllOf(parts) if name == "And" else AnyOf(parts)
        if name == "Not":
            parts = _children(element)
            if len(parts) != 1:
                raise bad_constraint("ogc:Not holds one operator.")
            return Negated(self.node(parts[0], depth + 1))
        if name in FES_OPS:
            prop = _text(_child(element, "PropertyName", "ValueReference"), "PropertyName")
            value = _text(_child(element, "Literal"), "Literal")
            fold = element.get("matchCase", "true").strip().lower() == "false"
            return comparison(prop, FES_OPS[name], value, fold)
        if name == "PropertyIsLike":
            prop = _text(_child(element, "PropertyName", "ValueReference"), "PropertyName")
            literal = _child(element, "Literal")
            value = "".join(literal.itertext()) if literal is not None else _text(None, "Literal")
            marks = []
            for attr, default in (("wildCard", "%"), ("singleChar", "_"), ("escapeChar", "\\")):
                mark = element.get(attr, element.get("escape" if attr == "escapeChar" else attr, default))
                if len(mark) != 1:
                    raise bad_constraint(f"The {attr} of ogc:PropertyIsLike must be one character.")
                marks.append(mark)
            if len(set(marks)) != 3:
                raise bad_constraint("The wildCard, singleChar and escapeChar of ogc:PropertyIsLike must differ.")
            return comparison(prop, "like", like_pattern(value, *marks), True)
        if name == "PropertyIsBetween":
            prop = _text(_child(element, "PropertyName", "ValueReference"), "PropertyName")
            low, high = (_text(_child(_boundary(element, side), "Literal"), side)
                         for side in ("LowerBoundary", "UpperBoundary"))
            return AllOf((comparison(prop, "ge", low), comparison(prop, "le", high)))
        if name in ("BBOX", "Intersects"):
            return self.bbox(element)
        raise bad_constraint(f'The filter operator "{name}" is not offered here.')

    def bbox(self, element: etree._Element) -> Node:
        prop = _child(element, "PropertyName", "ValueReference")
        if prop is not None and queryable(_text(prop, "PropertyName")) != "box":
            raise bad_constraint("BBOX applies to BoundingBox only.")
        shape = _child(element, "Envelope", "Box")
        if shape is None:
            raise bad_constraint("BBOX needs a gml:Envelope (or gml:Box).")
        srs = shape.get("srsName")
        if _local(shape) == "Envelope":
            lower, upper = _child(shape, "lowerCorner"), _child(shape, "upperCorner")
            numbers = _text(lower, "lowerCorner").split() + _text(upper, "upperCorner").split()
            return box(numbers, srs)
        coordinates = _child(shape, "coordinates")
        if coordinates is not None:
            decimal, cs, ts = coordinates.get("decimal", "."), coordinates.get("cs", ","), coordinates.get("ts", " ")
            text = _text(coordinates, "coordinates")
            pairs = [p for p in text.split(ts) if p.strip()] if ts.strip() else text.split()
            numbers = [n.strip().replace(decimal, ".") for pair in pairs for n in pair.split(cs)]
            return box(numbers, srs)
        numbers = [_text(_child(coord, name), name) for coord in _children(shape) if _local(coord) == "coord"
                   for name in ("X", "Y")]
        return box(numbers, srs)


def from_filter(root: etree._Element) -> Node:
    return FilterReader().read(root)
