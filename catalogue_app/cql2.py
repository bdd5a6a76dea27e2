"""CQL2 (OGC Common Query Language), text and JSON, checked against the queryables of a
collection: what the Records and Features ``filter=`` parameters take.

``parse`` gives an expression tree (the dataclasses below) that names only declared queryables,
with values of their kinds; ``store/cql2_sql.py`` writes it as SQL over the catalogue's
resources (Records), and ``geo/cql2_features.py`` as a filter over a dataset's features
(Features). Every filter that cannot be used raises ``Cql2Error`` with a message for its author.

What is read (text and JSON alike):
- comparisons ``= <> < <= > >=`` of a queryable with a literal (either side), ``LIKE`` (``%``
  any text, ``_`` one character, ``\\`` escapes either), ``IN (...)``, ``BETWEEN``, ``IS NULL``,
  each with ``NOT``; ``AND``, ``OR``, ``NOT``, ``TRUE``/``FALSE``;
- ``CASEI(...)`` and ``ACCENTI(...)`` around a string queryable and its literals;
- ``S_INTERSECTS`` (also ``S_DISJOINT``, its negation) of a geometry queryable with a WKT literal
  (text), a GeoJSON geometry (JSON) or ``BBOX(w, s, e, n)`` (``{"bbox": [...]}`` in JSON), in
  CRS84 (longitude, latitude);
- ``TIMESTAMP('...')``, ``DATE('...')`` (a whole day: ``= DATE(d)`` is any moment of it) and
  ``INTERVAL(a, b)`` (``'..'`` for an open end); ``T_INTERSECTS``, ``T_BEFORE``, ``T_AFTER``,
  ``T_DURING``, ``T_EQUALS`` on datetime queryables (an instant, or an interval when the
  queryable has an ``end`` column). A plain string in ISO 8601 form is taken as a date or a
  timestamp where a datetime queryable is compared.

The checked tree has no temporal nodes and no dates: temporal predicates and dates become
comparisons of instants, so the compilers see only ``Compare``, ``Like``, ``In``, ``Between``,
``IsNull``, ``Intersects``, ``And``, ``Or``, ``Not`` and ``Const``. Nulls follow SQL: a test of a
null value is unknown, and a filter selects what it finds true.

The parsers are written here, not taken from pygeofilter: its CQL2 text grammar (0.4.0) reads
neither ``T_INTERSECTS(a, b)`` nor ``DATE('...')``, ``INTERVAL``, ``''`` in a string or one-letter
names, and its JSON reader swaps the corners of a ``bbox``. Both parsers count their depth
(MAX_DEPTH) and the text's length (MAX_LENGTH), so no RecursionError escapes.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from typing import Any, Union

KINDS = ("string", "number", "integer", "boolean", "datetime", "geometry")
MAX_LENGTH = 20_000  # characters of filter text
MAX_DEPTH = 100  # nesting of parentheses, operators and JSON objects


@dataclass(frozen=True)
class Queryable:
    """One property a filter may name: ``name`` as clients write it, its ``kind`` (one of KINDS),
    ``column`` what a compiler writes for it (an SQL expression, or a field name of a layer), and a
    ``title`` for /queryables.

    ``exists`` (SQL only) is for a to-many relation: a condition template on the row with
    ``{cond}`` where the test of ``column`` goes, e.g. ``r.id IN (SELECT ... WHERE {cond})``
    (store/resources.py ``KEYWORDS``); the filter then asks whether any related value passes.
    ``end`` makes a datetime queryable an interval from ``column`` to ``end``."""

    name: str
    kind: str
    column: str
    title: str = ""
    exists: str | None = None
    end: str | None = None


class Cql2Error(ValueError):
    """A filter that cannot be used: not CQL2, an unknown queryable, a value of the wrong type,
    an operator not supported. ``message`` says it to the person who wrote the filter."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --- the checked tree ------------------------------------------------------------------------

Value = Union[str, int, float, bool, datetime]


@dataclass(frozen=True)
class Compare:
    """``queryable op value``; op is one of = <> < <= > >=. ``casei``/``accenti``: compared
    without regard to case / accents (strings only). Datetimes are aware, in UTC."""

    queryable: Queryable
    op: str
    value: Value
    casei: bool = False
    accenti: bool = False


@dataclass(frozen=True)
class Like:
    """``queryable LIKE pattern``: ``%`` any text, ``_`` one character, ``\\`` makes the next
    character plain."""

    queryable: Queryable
    pattern: str
    casei: bool = False
    accenti: bool = False


@dataclass(frozen=True)
class In:
    queryable: Queryable
    values: tuple[Value, ...]
    casei: bool = False
    accenti: bool = False


@dataclass(frozen=True)
class Between:
    """``low <= queryable <= high``."""

    queryable: Queryable
    low: Value
    high: Value


@dataclass(frozen=True)
class IsNull:
    queryable: Queryable


@dataclass(frozen=True)
class Intersects:
    """The queryable's geometry meets ``geometry`` (a shapely geometry in CRS84)."""

    queryable: Queryable
    geometry: Any = field(compare=False)
    wkt: str = ""


@dataclass(frozen=True)
class And:
    parts: tuple["Expr", ...]


@dataclass(frozen=True)
class Or:
    parts: tuple["Expr", ...]


@dataclass(frozen=True)
class Not:
    part: "Expr"


@dataclass(frozen=True)
class Const:
    value: bool


Expr = Union[Compare, Like, In, Between, IsNull, Intersects, And, Or, Not, Const]


def walk(expr: Expr):
    """Every node of the tree, parents first."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (And, Or)):
            stack.extend(reversed(node.parts))
        elif isinstance(node, Not):
            stack.append(node.part)


# --- the raw tree both parsers give ----------------------------------------------------------

@dataclass
class _Op:
    name: str  # lower case: and or not = <> < <= > >= like between in isnull casei accenti s_... t_...
    args: list
    where: str = ""  # "at character n" (text) or "" for JSON


@dataclass
class _Prop:
    name: str


@dataclass
class _Geom:
    geometry: Any


@dataclass
class _Interval:
    start: Any  # date | datetime | None (open)
    end: Any


@dataclass
class _Date:
    day: date


SPATIAL = ("s_intersects", "s_disjoint", "s_equals", "s_touches", "s_within", "s_overlaps", "s_crosses", "s_contains")
TEMPORAL_SUPPORTED = ("t_intersects", "t_before", "t_after", "t_during", "t_equals")
TEMPORAL = (*TEMPORAL_SUPPORTED, "t_meets", "t_metby", "t_overlaps", "t_overlappedby", "t_starts", "t_startedby",
            "t_finishes", "t_finishedby", "t_contains", "t_disjoint")
ARRAY = ("a_equals", "a_contains", "a_containedby", "a_overlaps")
COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")
FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
WKT_TYPES = ("POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION")


# --- literals --------------------------------------------------------------------------------

_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _timestamp(text: str, where: str = "") -> datetime:
    """An ISO 8601 timestamp as an aware UTC datetime (no zone: UTC)."""
    if not isinstance(text, str) or not _TIMESTAMP.match(text.strip()):
        raise Cql2Error(f"'{text}' is not a timestamp{where}: write it as YYYY-MM-DDThh:mm:ssZ.")
    value = text.strip().replace(" ", "T").replace("t", "T")
    if value[-1] in "zZ":
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise Cql2Error(f"'{text}' is not a timestamp{where}: write it as YYYY-MM-DDThh:mm:ssZ.") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def _date(text: str, where: str = "") -> date:
    try:
        if not isinstance(text, str) or not _DATE.match(text.strip()):
            raise ValueError
        return date.fromisoformat(text.strip())
    except ValueError:
        raise Cql2Error(f"'{text}' is not a date{where}: write it as YYYY-MM-DD.") from None


def _instant_or_date(text: str, where: str = "") -> datetime | _Date:
    if isinstance(text, str) and _DATE.match(text.strip()):
        return _Date(_date(text, where))
    return _timestamp(text, where)


def day_start(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=timezone.utc)


def _geometry_from_geojson(obj: dict) -> Any:
    from catalogue_app.geo.geojson_read import geometry_of

    try:
        geom = geometry_of(obj)
    except ValueError as exc:
        raise Cql2Error(str(exc)) from None
    return _checked_geometry(geom)


def _geometry_from_wkt(text: str, where: str) -> Any:
    import shapely.errors
    import shapely.wkt

    if re.search(r"\bEMPTY\b", text, re.IGNORECASE):
        raise Cql2Error(f"empty geometry{where}: a filter needs coordinates.")
    import numpy as np

    try:
        with np.errstate(all="ignore"):  # an overflowing coordinate is refused below, not warned of
            geom = shapely.wkt.loads(text)
    except (shapely.errors.ShapelyError, ValueError, TypeError) as exc:
        raise Cql2Error(f"not a WKT geometry{where}: {str(exc)[:200]}") from None
    return _checked_geometry(geom)


def _checked_geometry(geom: Any) -> Any:
    import shapely

    if geom.is_empty:
        raise Cql2Error("empty geometry: a filter needs coordinates.")
    coords = shapely.get_coordinates(geom)
    if not all(math.isfinite(v) for v in coords.ravel()):
        raise Cql2Error("a geometry's coordinates must be finite numbers.")
    if not geom.is_valid:
        geom = shapely.make_valid(geom)
    return geom


def _bbox(numbers: list, where: str = "") -> Any:
    import shapely.geometry

    if len(numbers) not in (4, 6) or not all(isinstance(n, (int, float)) and not isinstance(n, bool)
                                             and math.isfinite(n) for n in numbers):
        raise Cql2Error(f"BBOX takes 4 numbers (west, south, east, north) or 6 (with heights){where}.")
    if len(numbers) == 6:
        numbers = [numbers[0], numbers[1], numbers[3], numbers[4]]
    west, south, east, north = (float(n) for n in numbers)
    if south > north:
        raise Cql2Error(f"BBOX's south ({south:g}) is above its north ({north:g}){where}.")
    if west > east:  # across the antimeridian: two boxes
        return shapely.geometry.MultiPolygon([shapely.geometry.box(west, south, 180, north),
                                              shapely.geometry.box(-180, south, east, north)])
    return shapely.geometry.box(west, south, east, north)


# --- CQL2 text ---------------------------------------------------------------------------------

_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_WORD = re.compile(r"[^\W\d][\w:.]*")
_SYMBOL = re.compile(r"<>|<=|>=|!=|[=<>(),+\-*/]")
_WKT_FOLLOWS = re.compile(r"\s*(ZM|Z|M)?\s*(\(|EMPTY\b)", re.IGNORECASE)
_SRID = re.compile(r"\s*=\s*(\d+|CRS84)\s*;", re.IGNORECASE)
KEYWORDS = {"AND", "OR", "NOT", "LIKE", "IN", "BETWEEN", "IS", "NULL", "TRUE", "FALSE"}


def _number(text: str, where: str = "") -> int | float:
    try:
        value: int | float = float(text) if any(ch in text for ch in ".eE") else int(text)
    except ValueError:  # an integer of more digits than Python reads: a float (infinite: refused)
        value = float(text)
    return _finite(value, where)


def _finite(value: int | float, where: str = "") -> int | float:
    """A number SQLite can take: a finite float, an integer of 64 bits (a longer one as a float)."""
    if isinstance(value, int) and not -2**63 <= value < 2**63:
        try:
            value = float(value)
        except OverflowError:
            value = math.inf
    if isinstance(value, float) and not math.isfinite(value):
        raise Cql2Error(f"the number{where} is too large.")
    return value


class _Text:
    """A recursive-descent reader of CQL2 text over a cursor."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    # tokens

    def _skip(self) -> None:
        m = _SPACE.match(self.text, self.pos)
        if m:
            self.pos = m.end()

    def at(self, pos: int | None = None) -> str:
        return f" at character {(self.pos if pos is None else pos) + 1}"

    def peek(self) -> tuple[str, Any, int, int]:
        """The next token without taking it: (kind, value, start, end); kinds: end, string,
        quoted (a "name"), number, word, symbol."""
        self._skip()
        text, pos = self.text, self.pos
        if pos >= len(text):
            return "end", None, pos, pos
        c = text[pos]
        if c == "'":
            out, i = [], pos + 1
            while i < len(text):
                if text[i] == "'":
                    if text.startswith("''", i):
                        out.append("'")
                        i += 2
                        continue
                    return "string", "".join(out), pos, i + 1
                if text.startswith("\\'", i):
                    out.append("'")
                    i += 2
                    continue
                out.append(text[i])
                i += 1
            raise Cql2Error(f"a string opened{self.at(pos)} is not closed with '.")
        if c == '"':
            end = text.find('"', pos + 1)
            if end < 0:
                raise Cql2Error(f'a name opened with "{self.at(pos)} is not closed.')
            return "quoted", text[pos + 1:end], pos, end + 1
        m = _NUMBER.match(text, pos)
        if m:
            return "number", _number(m.group(0), self.at(pos)), pos, m.end()
        m = _WORD.match(text, pos)
        if m:
            return "word", m.group(0), pos, m.end()
        m = _SYMBOL.match(text, pos)
        if m:
            return "symbol", m.group(0), pos, m.end()
        raise Cql2Error(f"unexpected character {c!r}{self.at(pos)}.")

    def take(self) -> tuple[str, Any, int, int]:
        token = self.peek()
        self.pos = token[3]
        return token

    def word_is(self, *words: str) -> bool:
        kind, value, _, _ = self.peek()
        return kind == "word" and value.upper() in words

    def symbol_is(self, *symbols: str) -> bool:
        kind, value, _, _ = self.peek()
        return kind == "symbol" and value in symbols

    def expect(self, symbol: str) -> None:
        kind, value, start, _ = self.peek()
        if kind != "symbol" or value != symbol:
            raise Cql2Error(f"expected '{symbol}'{self.at(start)}, found {self.describe()}.")
        self.take()

    def expect_word(self, word: str) -> None:
        if not self.word_is(word):
            raise Cql2Error(f"expected {word}{self.at(self.peek()[2])}, found {self.describe()}.")
        self.take()

    def describe(self) -> str:
        kind, value, start, end = self.peek()
        if kind == "end":
            return "the end of the filter"
        shown = self.text[start:end]
        return repr(shown if len(shown) <= 40 else shown[:37] + "...")

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Cql2Error(f"the filter is nested too deeply (more than {MAX_DEPTH} levels).")

    # grammar

    def filter(self) -> Any:
        node = self.or_()
        if self.peek()[0] != "end":
            raise Cql2Error(f"unexpected {self.describe()}{self.at(self.peek()[2])}: expected AND, OR or the end.")
        return node

    def or_(self) -> Any:
        self.deeper()
        parts = [self.and_()]
        while self.word_is("OR"):
            self.take()
            parts.append(self.and_())
        self.depth -= 1
        return parts[0] if len(parts) == 1 else _Op("or", parts)

    def and_(self) -> Any:
        parts = [self.not_()]
        while self.word_is("AND"):
            self.take()
            parts.append(self.not_())
        return parts[0] if len(parts) == 1 else _Op("and", parts)

    def not_(self) -> Any:
        if self.word_is("NOT"):
            self.take()
            self.deeper()
            node = _Op("not", [self.not_()])
            self.depth -= 1
            return node
        return self.primary()

    def primary(self) -> Any:
        if self.symbol_is("("):
            self.take()
            node = self.or_()
            self.expect(")")
            return node
        kind, value, start, _ = self.peek()
        if kind == "end":
            raise Cql2Error(f"the filter ends where a condition was expected{self.at(start)}.")
        if kind == "word":
            upper = value.upper()
            lower = value.lower()
            if lower in SPATIAL or lower in TEMPORAL or lower in ARRAY:
                self.take()
                where = self.at(start)
                self.expect("(")
                self.deeper()
                first = self.operand()
                self.expect(",")
                second = self.operand()
                self.depth -= 1
                self.expect(")")
                return _Op(lower, [first, second], where)
            if upper in ("TRUE", "FALSE"):
                self.take()
                if self._comparison_follows():
                    return self.predicate(upper == "TRUE", start)
                return _Op("const", [upper == "TRUE"])
        left = self.operand()
        return self.predicate(left, start)

    def _comparison_follows(self) -> bool:
        return self.symbol_is(*COMPARISONS, "!=") or self.word_is("LIKE", "IN", "BETWEEN", "IS", "NOT")

    def predicate(self, left: Any, start: int) -> Any:
        where = self.at(start)
        kind, value, pos, _ = self.peek()
        if kind == "symbol" and value in (*COMPARISONS, "!="):
            self.take()
            op = "<>" if value == "!=" else value
            return _Op(op, [left, self.operand()], where)
        negate = False
        if self.word_is("NOT"):
            self.take()
            negate = True
            if not self.word_is("LIKE", "IN", "BETWEEN"):
                raise Cql2Error(f"expected LIKE, IN or BETWEEN after NOT{self.at()}, found {self.describe()}.")
        if self.word_is("LIKE"):
            self.take()
            node = _Op("like", [left, self.operand()], where)
        elif self.word_is("BETWEEN"):
            self.take()
            low = self.operand()
            self.expect_word("AND")
            node = _Op("between", [left, low, self.operand()], where)
        elif self.word_is("IN"):
            self.take()
            self.expect("(")
            items = [self.operand()]
            while self.symbol_is(","):
                self.take()
                items.append(self.operand())
            self.expect(")")
            node = _Op("in", [left, items], where)
        elif self.word_is("IS"):
            self.take()
            if self.word_is("NOT"):
                self.take()
                negate = True
            self.expect_word("NULL")
            node = _Op("isnull", [left], where)
        else:
            if kind == "symbol" and value in "+-*/":
                raise Cql2Error(f"arithmetic ({value}){self.at(pos)} is not supported.")
            raise Cql2Error(f"expected a comparison (=, <>, <, <=, >, >=, LIKE, IN, BETWEEN, IS NULL)"
                            f"{self.at(pos)}, found {self.describe()}.")
        return _Op("not", [node]) if negate else node

    def operand(self) -> Any:
        """A property, a literal or a function of them."""
        kind, value, start, end = self.peek()
        if kind == "string":
            self.take()
            return value
        if kind == "number":
            self.take()
            return value
        if kind == "quoted":
            self.take()
            return _Prop(value)
        if kind == "symbol" and value == "-":
            self.take()
            k, v, s, _ = self.peek()
            if k != "number":
                raise Cql2Error(f"expected a number after '-'{self.at(s)}.")
            self.take()
            return -v
        if kind == "symbol" and value == "(":
            raise Cql2Error(f"a parenthesis{self.at(start)} where a property or a value was expected"
                            " (arithmetic is not supported).")
        if kind != "word":
            raise Cql2Error(f"expected a property or a value{self.at(start)}, found {self.describe()}.")
        upper = value.upper()
        self.take()
        if upper in ("TRUE", "FALSE"):
            return upper == "TRUE"
        if upper in WKT_TYPES and _WKT_FOLLOWS.match(self.text, self.pos):
            return self.wkt(start)
        if upper == "SRID" and _SRID.match(self.text, self.pos):
            m = _SRID.match(self.text, self.pos)
            if m.group(1) not in ("4326", "CRS84"):
                raise Cql2Error(f"geometries must be in CRS84 (longitude, latitude){self.at(start)}.")
            self.pos = m.end()
            k, v, s, _ = self.take()
            if k != "word" or v.upper() not in WKT_TYPES:
                raise Cql2Error(f"expected a WKT geometry after SRID=...;{self.at(s)}.")
            return self.wkt(s)
        if not self.symbol_is("("):
            if upper in KEYWORDS:
                raise Cql2Error(f"expected a property or a value{self.at(start)}, found {value!r}.")
            return _Prop(value)
        # a function
        where = self.at(start)
        self.take()
        self.deeper()
        if upper in ("TIMESTAMP", "DATE"):
            k, v, s, _ = self.take()
            if k != "string":
                raise Cql2Error(f"{upper} takes a quoted text{self.at(s)}, e.g. {upper}('2024-01-31"
                                f"{'T12:00:00Z' if upper == 'TIMESTAMP' else ''}').")
            self.expect(")")
            self.depth -= 1
            return _timestamp(v, where) if upper == "TIMESTAMP" else _Date(_date(v, where))
        if upper == "INTERVAL":
            ends = []
            for i in range(2):
                if i:
                    self.expect(",")
                k, v, s, _ = self.take()
                if k == "word" and v.upper() in ("TIMESTAMP", "DATE"):
                    self.pos = s
                    ends.append(self.operand())
                    continue
                if k != "string":
                    raise Cql2Error(f"INTERVAL takes two quoted dates or timestamps ('..' for an open end){self.at(s)}.")
                ends.append(None if v == ".." else _instant_or_date(v, where))
            self.expect(")")
            self.depth -= 1
            return _Interval(*(e.day if isinstance(e, _Date) else e for e in ends))
        args = []
        if not self.symbol_is(")"):
            args.append(self.operand())
            while self.symbol_is(","):
                self.take()
                args.append(self.operand())
        self.expect(")")
        self.depth -= 1
        if upper == "BBOX":
            return _Geom(_bbox(args, where))
        if upper in ("CASEI", "ACCENTI"):
            if len(args) != 1:
                raise Cql2Error(f"{upper} takes one argument{where}.")
            return _Op(upper.lower(), args, where)
        raise Cql2Error(f"unknown function {value}(){where}: supported are CASEI, ACCENTI, TIMESTAMP, DATE, "
                        "INTERVAL and BBOX.")

    def wkt(self, start: int) -> Any:
        """The WKT literal that starts at ``start``: up to its closing parenthesis."""
        if _WKT_FOLLOWS.match(self.text, self.pos).group(2).upper() == "EMPTY":
            raise Cql2Error(f"empty geometry{self.at(start)}: a filter needs coordinates.")
        text, i, depth = self.text, self.pos, 0
        while i < len(text):
            c = text[i]
            if c == "(":
                depth += 1
                if depth > MAX_DEPTH:
                    raise Cql2Error(f"the geometry{self.at(start)} is nested too deeply.")
            elif c == ")":
                depth -= 1
                if depth == 0:
                    i += 1
                    break
                if depth < 0:
                    break
            elif depth == 0 and not (c.isspace() or c.isalpha()):
                break
            i += 1
        literal = text[start:i]
        if depth != 0 or "(" not in literal and "EMPTY" not in literal.upper():
            raise Cql2Error(f"the geometry{self.at(start)} is not complete WKT.")
        self.pos = i
        return _Geom(_geometry_from_wkt(literal, self.at(start)))


# --- CQL2 JSON ---------------------------------------------------------------------------------

def _json_node(node: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise Cql2Error(f"the filter is nested too deeply (more than {MAX_DEPTH} levels).")
    if node is None:
        raise Cql2Error("null is not a value a filter can compare with: use isNull.")
    if isinstance(node, (str, bool)):
        return node
    if isinstance(node, (int, float)):
        return _finite(node)
    if isinstance(node, list):
        return [_json_node(item, depth + 1) for item in node]
    if not isinstance(node, dict):
        raise Cql2Error(f"unexpected JSON value {node!r}.")
    if "op" in node:
        op = node["op"]
        args = node.get("args")
        if not isinstance(op, str):
            raise Cql2Error(f"\"op\" must be a text, not {op!r}.")
        if not isinstance(args, list):
            # "not" and "isNull" are sometimes written with one argument not in a list
            if op in ("not", "isNull", "casei", "accenti") and isinstance(args, dict):
                args = [args]
            else:
                raise Cql2Error(f"\"args\" of \"{op}\" must be a list.")
        name = op.lower()
        alias = {"isnull": "isnull", "eq": "=", "ne": "<>", "lt": "<", "le": "<=", "lte": "<=", "gt": ">",
                 "ge": ">=", "gte": ">=", "!=": "<>"}
        name = alias.get(name, name)
        parsed = [_json_node(a, depth + 1) for a in args]
        if name in ("and", "or"):
            if len(parsed) < 2:
                raise Cql2Error(f"\"{op}\" takes at least two arguments.")
            return _Op(name, parsed)
        if name == "not":
            _arity(op, parsed, 1)
            return _Op("not", parsed)
        if name in COMPARISONS or name == "like" or name in SPATIAL or name in TEMPORAL or name in ARRAY:
            _arity(op, parsed, 2)
            return _Op(name, parsed)
        if name == "between":
            if len(parsed) == 2 and isinstance(parsed[1], list) and len(parsed[1]) == 2:
                parsed = [parsed[0], *parsed[1]]
            _arity(op, parsed, 3)
            return _Op("between", parsed)
        if name == "in":
            _arity(op, parsed, 2)
            if not isinstance(parsed[1], list) or not parsed[1]:
                raise Cql2Error("the second argument of \"in\" must be a non-empty list of values.")
            return _Op("in", parsed)
        if name == "isnull":
            _arity(op, parsed, 1)
            return _Op("isnull", parsed)
        if name in ("casei", "accenti"):
            _arity(op, parsed, 1)
            return _Op(name, parsed)
        if name in ("+", "-", "*", "/", "%", "^", "div"):
            raise Cql2Error(f"arithmetic (\"{op}\") is not supported.")
        raise Cql2Error(f"unknown operator \"{op}\".")
    if "property" in node:
        if not isinstance(node["property"], str):
            raise Cql2Error("\"property\" must be a text.")
        return _Prop(node["property"])
    if "timestamp" in node:
        return _timestamp(node["timestamp"])
    if "date" in node:
        return _Date(_date(node["date"]))
    if "interval" in node:
        ends = node["interval"]
        if not isinstance(ends, list) or len(ends) != 2:
            raise Cql2Error("\"interval\" takes a list of two dates or timestamps ('..' for an open end).")
        out = []
        for end in ends:
            if isinstance(end, dict) and ("date" in end or "timestamp" in end):
                end = _json_node(end, depth + 1)
                out.append(end.day if isinstance(end, _Date) else end)
            elif end == "..":
                out.append(None)
            else:
                value = _instant_or_date(end)
                out.append(value.day if isinstance(value, _Date) else value)
        return _Interval(*out)
    if "bbox" in node:
        if not isinstance(node["bbox"], list):
            raise Cql2Error("\"bbox\" takes a list of 4 or 6 numbers.")
        return _Geom(_bbox(node["bbox"]))
    if "type" in node and ("coordinates" in node or "geometries" in node):
        return _Geom(_geometry_from_geojson(node))
    if "function" in node:
        name = node["function"].get("name") if isinstance(node["function"], dict) else node["function"]
        raise Cql2Error(f"unknown function {name!r}: supported are casei and accenti.")
    raise Cql2Error(f"cannot read {json.dumps(node)[:100]}: expected an \"op\", a \"property\" or a literal.")


def _arity(op: str, args: list, count: int) -> None:
    if len(args) != count:
        raise Cql2Error(f"\"{op}\" takes {count} argument{'s' if count > 1 else ''}, not {len(args)}.")


# --- checking against the queryables -------------------------------------------------------------

class _Checker:
    def __init__(self, queryables: dict[str, Queryable]) -> None:
        self.queryables = queryables
        self.by_lower = {name.lower(): q for name, q in queryables.items()}

    def queryable(self, name: str, where: str) -> Queryable:
        found = self.queryables.get(name) or self.by_lower.get(name.lower())
        if found is None:
            names = sorted(self.queryables)
            known = ", ".join(names[:60]) + (f" and {len(names) - 60} more" if len(names) > 60 else "") or "none"
            raise Cql2Error(f"unknown queryable '{name}'{where}; the queryables are: {known}.")
        return found

    def check(self, node: Any, depth: int = 0) -> Expr:
        if depth > MAX_DEPTH:
            raise Cql2Error(f"the filter is nested too deeply (more than {MAX_DEPTH} levels).")
        if isinstance(node, bool):
            return Const(node)
        if not isinstance(node, _Op):
            raise Cql2Error(f"{_shown(node)} is not a condition.")
        name, args, where = node.name, node.args, node.where
        if name == "const":
            return Const(bool(args[0]))
        if name in ("and", "or"):
            parts = tuple(self.check(a, depth + 1) for a in args)
            return And(parts) if name == "and" else Or(parts)
        if name == "not":
            return Not(self.check(args[0], depth + 1))
        if name in COMPARISONS:
            return self.comparison(name, args[0], args[1], where)
        if name == "like":
            q, casei, accenti = self.subject(args[0], where, "LIKE")
            if q.kind != "string":
                raise Cql2Error(f"LIKE needs a text queryable{where}; '{q.name}' is a {q.kind}.")
            pattern, pcase, paccent = _unwrap(args[1])
            if not isinstance(pattern, str):
                raise Cql2Error(f"the pattern of LIKE{where} must be a text, not {_shown(pattern)}.")
            return Like(q, pattern, casei or pcase, accenti or paccent)
        if name == "between":
            q, _, _ = self.subject(args[0], where, "BETWEEN")
            if q.kind not in ("number", "integer", "datetime"):
                raise Cql2Error(f"BETWEEN needs a number or datetime queryable{where}; '{q.name}' is a {q.kind}.")
            low, high = self.value(q, args[1], where), self.value(q, args[2], where)
            if isinstance(low, _Date):
                low = day_start(low.day)
            if isinstance(high, _Date):  # up to the end of that day
                return And((Compare(q, ">=", low), Compare(q, "<", day_start(high.day + timedelta(days=1)))))
            return Between(q, low, high)
        if name == "in":
            q, casei, accenti = self.subject(args[0], where, "IN")
            if q.kind == "geometry":
                raise Cql2Error(f"IN does not apply to the geometry '{q.name}'{where}.")
            values = []
            for item in args[1]:
                value, icase, iaccent = _unwrap(item)
                casei, accenti = casei or icase, accenti or iaccent
                values.append(self.value(q, value, where))
            if any(isinstance(v, _Date) for v in values):
                return Or(tuple(self.comparison_of(q, "=", v) for v in values))
            return In(q, tuple(values), casei, accenti)
        if name == "isnull":
            q, _, _ = self.subject(args[0], where, "IS NULL")
            return IsNull(q)
        if name in SPATIAL:
            return self.spatial(name, args, where)
        if name in TEMPORAL:
            return self.temporal(name, args, where)
        if name in ARRAY:
            raise Cql2Error(f"array operators ({name.upper()}){where} are not supported.")
        if name in ("casei", "accenti"):
            raise Cql2Error(f"{name.upper()}(){where} is a value, not a condition: compare it.")
        raise Cql2Error(f"unsupported operator {name!r}{where}.")

    def subject(self, node: Any, where: str, what: str) -> tuple[Queryable, bool, bool]:
        inner, casei, accenti = _unwrap(node)
        if not isinstance(inner, _Prop):
            raise Cql2Error(f"{what} needs a queryable on its left{where}, not {_shown(inner)}.")
        q = self.queryable(inner.name, where)
        if (casei or accenti) and q.kind != "string":
            raise Cql2Error(f"CASEI and ACCENTI apply to text; '{q.name}' is a {q.kind}{where}.")
        return q, casei, accenti

    def comparison(self, op: str, left: Any, right: Any, where: str) -> Expr:
        l_inner, r_inner = _unwrap(left)[0], _unwrap(right)[0]
        if not isinstance(l_inner, _Prop) and isinstance(r_inner, _Prop):
            left, right, op = right, left, FLIPPED[op]
            l_inner, r_inner = r_inner, l_inner
        if isinstance(r_inner, _Prop):
            raise Cql2Error(f"comparing two properties{where} is not supported: compare a queryable with a value.")
        if not isinstance(l_inner, _Prop):
            raise Cql2Error(f"a comparison needs a queryable{where}; both sides are values.")
        q, casei, accenti = self.subject(left, where, "a comparison")
        value, vcase, vaccent = _unwrap(right)
        if q.kind == "boolean" and op not in ("=", "<>"):
            raise Cql2Error(f"'{q.name}' is a boolean: compare it with = or <>{where}.")
        if q.kind == "geometry":
            raise Cql2Error(f"'{q.name}' is a geometry: use S_INTERSECTS{where}.")
        checked = self.value(q, value, where)
        return self.comparison_of(q, op, checked, casei or vcase, accenti or vaccent)

    @staticmethod
    def comparison_of(q: Queryable, op: str, value: Any, casei: bool = False, accenti: bool = False) -> Expr:
        if isinstance(value, _Date):  # a whole day
            start, end = day_start(value.day), day_start(value.day + timedelta(days=1))
            return {"=": And((Compare(q, ">=", start), Compare(q, "<", end))),
                    "<>": Or((Compare(q, "<", start), Compare(q, ">=", end))),
                    "<": Compare(q, "<", start), "<=": Compare(q, "<", end),
                    ">": Compare(q, ">=", end), ">=": Compare(q, ">=", start)}[op]
        return Compare(q, op, value, casei, accenti)

    def value(self, q: Queryable, value: Any, where: str) -> Any:
        """The literal as a value of the queryable's kind (a _Date stays a day)."""
        kind = q.kind
        if isinstance(value, (_Prop, _Op)):
            raise Cql2Error(f"expected a value for '{q.name}'{where}, not {_shown(value)}.")
        if kind == "string":
            if isinstance(value, str):
                return value
        elif kind in ("number", "integer"):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return value
        elif kind == "boolean":
            if isinstance(value, bool):
                return value
        elif kind == "datetime":
            if isinstance(value, (datetime, _Date)):
                return value
            if isinstance(value, str):
                try:
                    return _instant_or_date(value, where)
                except Cql2Error:
                    pass
        raise Cql2Error(f"'{q.name}' is a {_kind_name(kind)}: it cannot be compared with {_shown(value)}{where}.")

    def spatial(self, name: str, args: list, where: str) -> Expr:
        a, b = args
        if isinstance(a, _Geom) and isinstance(b, _Prop):
            a, b = b, a
            name = {"s_within": "s_contains", "s_contains": "s_within"}.get(name, name)
        if not isinstance(a, _Prop) or not isinstance(b, _Geom):
            raise Cql2Error(f"{name.upper()}{where} compares a geometry queryable with a geometry literal.")
        q = self.queryable(a.name, where)
        if q.kind != "geometry":
            raise Cql2Error(f"{name.upper()} needs a geometry queryable{where}; '{q.name}' is a {_kind_name(q.kind)}.")
        test = Intersects(q, b.geometry, b.geometry.wkt)
        if name == "s_intersects":
            return test
        if name == "s_disjoint":
            return Not(test)
        raise Cql2Error(f"{name.upper()}{where} is not supported; S_INTERSECTS and S_DISJOINT are.")

    def temporal(self, name: str, args: list, where: str) -> Expr:
        if name not in TEMPORAL_SUPPORTED:
            raise Cql2Error(f"{name.upper()}{where} is not supported; "
                            f"{', '.join(n.upper() for n in TEMPORAL_SUPPORTED)} are.")
        a, b = args
        if not isinstance(a, _Prop) and isinstance(b, _Prop):
            a, b = b, a
            name = {"t_before": "t_after", "t_after": "t_before"}.get(name, name)
            if name == "t_during":
                raise Cql2Error(f"T_DURING{where} needs the queryable first.")
        if not isinstance(a, _Prop):
            raise Cql2Error(f"{name.upper()}{where} needs a datetime queryable.")
        q = self.queryable(a.name, where)
        if q.kind != "datetime":
            raise Cql2Error(f"{name.upper()} needs a datetime queryable{where}; '{q.name}' is a {_kind_name(q.kind)}.")
        lo, hi = _time_span(b, where)
        start = q
        end = Queryable(q.name, "datetime", q.end, q.title, q.exists) if q.end else q
        tests: list[Expr] = []
        if name == "t_intersects":
            if hi is not None:
                tests.append(Compare(start, "<" if hi[1] else "<=", hi[0]))
            if lo is not None:
                tests.append(Compare(end, ">=", lo[0]))
            if not tests:
                tests.append(Not(IsNull(start)))
        elif name == "t_before":
            if lo is None:
                raise Cql2Error(f"T_BEFORE an interval open at its start{where} selects nothing useful.")
            tests.append(Compare(end, "<", lo[0]))
        elif name == "t_after":
            if hi is None:
                raise Cql2Error(f"T_AFTER an interval open at its end{where} selects nothing useful.")
            tests.append(Compare(start, ">=" if hi[1] else ">", hi[0]))
        elif name == "t_during":
            if lo is not None:
                tests.append(Compare(start, ">", lo[0]))
            if hi is not None:
                tests.append(Compare(end, "<", hi[0]))
            if not tests:
                tests.append(Not(IsNull(start)))
        else:  # t_equals: the same start and end (a date's end is its first moment here)
            if lo is None or hi is None:
                raise Cql2Error(f"T_EQUALS needs a closed interval or an instant{where}.")
            last = hi[0] - timedelta(days=1) if hi[1] else hi[0]
            tests += [Compare(start, "=", lo[0]), Compare(end, "=", last)]
        return tests[0] if len(tests) == 1 else And(tuple(tests))


def _time_span(node: Any, where: str) -> tuple[tuple[datetime, bool] | None, tuple[datetime, bool] | None]:
    """A temporal literal as its start and end: (moment, exclusive) pairs, None when open. An
    instant is both; a date is from its first moment to (excluded) the next day's."""
    def bound(value: Any, is_end: bool) -> tuple[datetime, bool] | None:
        if value is None:
            return None
        if isinstance(value, datetime):
            return value, False
        if isinstance(value, date):
            return (day_start(value + timedelta(days=1)), True) if is_end else (day_start(value), False)
        raise Cql2Error(f"expected a date, a timestamp or an interval{where}, not {_shown(value)}.")

    if isinstance(node, _Interval):
        return bound(node.start, False), bound(node.end, True)
    if isinstance(node, _Date):
        return bound(node.day, False), bound(node.day, True)
    if isinstance(node, datetime):
        return (node, False), (node, False)
    if isinstance(node, str):
        value = _instant_or_date(node, where)
        return _time_span(value, where)
    raise Cql2Error(f"expected a date, a timestamp or an interval{where}, not {_shown(node)}.")


def _unwrap(node: Any) -> tuple[Any, bool, bool]:
    """The operand inside CASEI()/ACCENTI() and which of them wrap it."""
    casei = accenti = False
    for _ in range(MAX_DEPTH):
        if isinstance(node, _Op) and node.name in ("casei", "accenti"):
            casei = casei or node.name == "casei"
            accenti = accenti or node.name == "accenti"
            node = node.args[0]
        else:
            break
    return node, casei, accenti


def _kind_name(kind: str) -> str:
    return {"string": "text", "datetime": "date/time"}.get(kind, kind)


def _shown(value: Any) -> str:
    if isinstance(value, _Prop):
        return f"the property '{value.name}'"
    if isinstance(value, _Op):
        return f"an expression ({value.name})"
    if isinstance(value, _Date):
        return f"DATE('{value.day.isoformat()}')"
    if isinstance(value, datetime):
        return f"TIMESTAMP('{value.isoformat()}')"
    if isinstance(value, _Geom):
        return "a geometry"
    if isinstance(value, _Interval):
        return "an interval"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "the text " + repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    return repr(value)[:40]


# --- entry point -------------------------------------------------------------------------------

def parse(text: str, lang: str | None, queryables: dict[str, Queryable]) -> Expr:
    """The filter ``text`` in ``lang`` ("cql2-text", "cql2-json"; None: JSON when it starts with
    "{", else text) as an expression over ``queryables``; Cql2Error when it cannot be used."""
    if not isinstance(text, str) or not text.strip():
        raise Cql2Error("the filter is empty.")
    if len(text) > MAX_LENGTH:
        raise Cql2Error(f"the filter is too long ({len(text)} characters; at most {MAX_LENGTH}).")
    if lang is None:
        lang = "cql2-json" if text.lstrip().startswith("{") else "cql2-text"
    lang = lang.strip().lower()
    try:
        if lang == "cql2-json":
            try:
                document = json.loads(text)
            except ValueError as exc:
                raise Cql2Error(f"the filter is not JSON: {exc}.") from None
            raw = _json_node(document)
        elif lang == "cql2-text":
            raw = _Text(text).filter()
        else:
            raise Cql2Error(f"unknown filter-lang '{lang}': use cql2-text or cql2-json.")
        return _Checker(queryables).check(raw)
    except RecursionError:
        raise Cql2Error(f"the filter is nested too deeply (more than {MAX_DEPTH} levels).") from None


# --- values as compilers write them -------------------------------------------------------------

def store_text(moment: datetime) -> str:
    """A UTC instant as the catalogue's store writes timestamps (clock.py)."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def like_regex(pattern: str, casei: bool = False) -> "re.Pattern[str]":
    """A LIKE pattern as a regular expression matching the whole text."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL | (re.IGNORECASE if casei else 0))


def fold(text: str, casei: bool, accenti: bool) -> str:
    """Text as CASEI/ACCENTI compare it: case folded, accents (combining marks) removed."""
    import unicodedata

    if accenti:
        text = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
        text = unicodedata.normalize("NFC", text)
    if casei:
        text = text.casefold()
    return text


def _pattern_parts(pattern: str) -> list[tuple[str, str]]:
    """A CQL2 LIKE pattern as ("any"|"one"|"text", char) pieces."""
    parts, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            parts.append(("text", pattern[i + 1]))
            i += 2
            continue
        parts.append(("any", c) if c == "%" else ("one", c) if c == "_" else ("text", c))
        i += 1
    return parts


def glob_pattern(pattern: str) -> str:
    """A CQL2 LIKE pattern as an SQLite GLOB pattern (case-sensitive)."""
    out = []
    for kind, c in _pattern_parts(pattern):
        if kind == "any":
            out.append("*")
        elif kind == "one":
            out.append("?")
        else:
            out.append(f"[{c}]" if c in "*?[" else c)
    return "".join(out)


def like_pattern(pattern: str) -> str:
    """A CQL2 LIKE pattern as an SQLite LIKE pattern with ESCAPE '\\'."""
    out = []
    for kind, c in _pattern_parts(pattern):
        if kind == "any":
            out.append("%")
        elif kind == "one":
            out.append("_")
        else:
            out.append("\\" + c if c in "%_\\" else c)
    return "".join(out)


def balanced(parts: list[str], joiner: str, group: int = 16) -> str:
    """SQL terms joined by AND or OR in nested groups, so that a long list stays shallow for
    SQLite's parser (its expression depth is capped at 1000)."""
    while len(parts) > group:
        parts = ["(" + joiner.join(parts[i:i + group]) + ")" for i in range(0, len(parts), group)]
    return "(" + joiner.join(parts) + ")"
