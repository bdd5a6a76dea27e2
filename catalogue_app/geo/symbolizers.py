"""Simple SLD styles turned into drawing instructions.

What is read: PolygonSymbolizer (Fill: fill, fill-opacity; Stroke: stroke, stroke-width,
stroke-opacity), LineSymbolizer (Stroke), PointSymbolizer (Graphic with a Mark: WellKnownName
circle, square, triangle, star, cross or x; its Fill and Stroke; Size; Opacity) and
RasterSymbolizer (Opacity), in SLD 1.0 (CssParameter) and SE 1.1 (SvgParameter) alike.

Rules: every Rule without a Filter (an ElseFilter counts as none) is drawn; when every Rule has a
Filter, the first Rule alone is drawn with its Filter ignored. Filters, scale denominators,
text, external graphics and expressions are not evaluated. When nothing in a style can be drawn
for a layer's geometries (or the SLD cannot be read), the plain default style of its geometry
type is used, the same one catalogue_app.geo.styles writes for new datasets.

Limits keep one map cheap to draw: at most MAX_SYMBOLS symbolizers of a style are drawn, mark
sizes are at most MAX_MARK pixels and stroke widths at most MAX_STROKE pixels. Parsed styles
are kept in a small cache keyed by a hash of the document; documents over MAX_SLD bytes are not
kept.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

from lxml import etree

from .errors import GeoError
from .styles import default_sld
from .xml import read_xml

RGBA = tuple[int, int, int, int]
SHAPES = ("circle", "square", "triangle", "star", "cross", "x")
MAX_SLD = 64 * 1024   # bytes of a style document sent with a request
MAX_SYMBOLS = 100     # symbolizers of one style that are drawn
MAX_MARK = 64.0       # pixels: the largest mark Size
MAX_STROKE = 32.0     # pixels: the widest stroke
# The root elements of a readable style document.
ROOTS = ("StyledLayerDescriptor", "UserStyle", "FeatureTypeStyle", "CoverageStyle")


@dataclass(frozen=True)
class PolygonSymbol:
    fill: RGBA | None
    stroke: RGBA | None
    width: float = 1.0


@dataclass(frozen=True)
class LineSymbol:
    stroke: RGBA
    width: float = 1.0


@dataclass(frozen=True)
class PointSymbol:
    shape: str
    size: float
    fill: RGBA | None
    stroke: RGBA | None
    width: float = 1.0


@dataclass(frozen=True)
class RasterSymbol:
    opacity: float = 1.0


Symbol = PolygonSymbol | LineSymbol | PointSymbol | RasterSymbol
# Which geometry families each symbol draws: a LineSymbolizer also outlines polygons.
DRAWS = {PolygonSymbol: ("polygon",), LineSymbol: ("line", "polygon"), PointSymbol: ("point",), RasterSymbol: ()}


def _local(el) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def _child(el, name: str):
    if el is None:
        return None
    for c in el:
        if _local(c) == name:
            return c
    return None


def _children(el, name: str) -> list:
    return [c for c in el if _local(c) == name] if el is not None else []


def _value(el) -> str | None:
    """The text of an element and of any ogc:Literal in it; None when it holds an expression."""
    if el is None:
        return None
    if any(_local(c) not in ("Literal", "") for c in el.iter() if c is not el):
        return None
    text = "".join(el.itertext()).strip()
    return text or None


def _params(el) -> dict[str, str]:
    """CssParameter / SvgParameter values by name."""
    out = {}
    if el is not None:
        for c in el:
            if _local(c) in ("CssParameter", "SvgParameter") and c.get("name"):
                value = _value(c)
                if value is not None:
                    out[c.get("name").strip().lower()] = value
    return out


def colour(text: str | None, default: tuple[int, int, int]) -> tuple[int, int, int]:
    """#RRGGBB (or #RGB, 0xRRGGBB) as an RGB tuple; ``default`` when unreadable."""
    if not text:
        return default
    t = text.strip().lower()
    t = t[1:] if t.startswith("#") else t[2:] if t.startswith("0x") else t
    if len(t) == 3:
        t = "".join(ch * 2 for ch in t)
    if len(t) == 8:  # #AARRGGBB: alpha is given by the opacity parameters
        t = t[2:]
    try:
        return (int(t[0:2], 16), int(t[2:4], 16), int(t[4:6], 16)) if len(t) == 6 else default
    except ValueError:
        return default


def _number(text: str | None, default: float, low: float = 0.0, high: float = 1e6) -> float:
    try:
        value = float(text) if text is not None else default
    except ValueError:
        return default
    return min(max(value, low), high) if value == value else default


def _rgba(rgb: tuple[int, int, int], opacity: float) -> RGBA:
    return (*rgb, int(round(255 * min(max(opacity, 0.0), 1.0))))


def _fill(el, opacity: float = 1.0) -> RGBA | None:
    if el is None:
        return None
    p = _params(el)
    return _rgba(colour(p.get("fill"), (128, 128, 128)), _number(p.get("fill-opacity"), 1.0, 0, 1) * opacity)


def _stroke(el, opacity: float = 1.0) -> tuple[RGBA | None, float]:
    if el is None:
        return None, 1.0
    p = _params(el)
    width = _number(p.get("stroke-width"), 1.0, 0, MAX_STROKE)
    if width == 0:
        return None, 0.0
    return _rgba(colour(p.get("stroke"), (0, 0, 0)), _number(p.get("stroke-opacity"), 1.0, 0, 1) * opacity), width


def _point(sym) -> PointSymbol:
    graphic = _child(sym, "Graphic")
    opacity = _number(_value(_child(graphic, "Opacity")), 1.0, 0, 1)
    size = _number(_value(_child(graphic, "Size")), 6.0, 1, MAX_MARK)
    mark = _child(graphic, "Mark")
    if mark is None:  # no Mark (an ExternalGraphic, or nothing): the SLD default mark
        return PointSymbol("square", size, _rgba((128, 128, 128), opacity), _rgba((0, 0, 0), opacity))
    shape = (_value(_child(mark, "WellKnownName")) or "square").lower()
    shape = shape.rpartition("//")[2] if "://" in shape else shape
    fill_el, stroke_el = _child(mark, "Fill"), _child(mark, "Stroke")
    if fill_el is None and stroke_el is None:
        return PointSymbol(shape if shape in SHAPES else "square", size, _rgba((128, 128, 128), opacity),
                           _rgba((0, 0, 0), opacity))
    stroke, width = _stroke(stroke_el, opacity)
    return PointSymbol(shape if shape in SHAPES else "square", size, _fill(fill_el, opacity), stroke, width)


def _symbol(sym) -> Symbol | None:
    kind = _local(sym)
    if kind == "PolygonSymbolizer":
        stroke, width = _stroke(_child(sym, "Stroke"))
        fill = _fill(_child(sym, "Fill"))
        return PolygonSymbol(fill, stroke, width) if fill or stroke else None
    if kind == "LineSymbolizer":
        stroke_el = _child(sym, "Stroke")
        stroke, width = _stroke(stroke_el) if stroke_el is not None else ((0, 0, 0, 255), 1.0)
        return LineSymbol(stroke, width) if stroke else None
    if kind == "PointSymbolizer":
        return _point(sym)
    if kind == "RasterSymbolizer":
        return RasterSymbol(_number(_value(_child(sym, "Opacity")), 1.0, 0, 1))
    return None


def _read(sld: bytes) -> tuple[Symbol, ...] | None:
    """The symbols of an SLD document, in drawing order (at most MAX_SYMBOLS); None when it
    cannot be read (not XML, or not a style)."""
    try:
        root = read_xml(sld, "The style", "Send an SLD")
    except GeoError:
        return None
    if _local(root) not in ROOTS:
        return None
    rules = [el for el in root.iter() if _local(el) == "Rule"]
    plain = [r for r in rules if _child(r, "Filter") is None]
    chosen = plain or rules[:1]
    symbols = []
    for rule in chosen:
        for sym in rule:
            found = _symbol(sym) if _local(sym).endswith("Symbolizer") else None
            if found is not None:
                symbols.append(found)
                if len(symbols) >= MAX_SYMBOLS:
                    return tuple(symbols)
    return tuple(symbols)


_PARSED: OrderedDict[bytes, tuple[Symbol, ...] | None] = OrderedDict()
_PARSED_LOCK = threading.Lock()
_PARSED_SIZE = 32


def _parsed(sld: bytes) -> tuple[Symbol, ...] | None:
    """``_read`` with a small cache keyed by a hash of the document (small documents only)."""
    if len(sld) > MAX_SLD:
        return _read(sld)
    key = hashlib.blake2b(sld, digest_size=16).digest()
    with _PARSED_LOCK:
        if key in _PARSED:
            _PARSED.move_to_end(key)
            return _PARSED[key]
    found = _read(sld)
    with _PARSED_LOCK:
        _PARSED[key] = found
        while len(_PARSED) > _PARSED_SIZE:
            _PARSED.popitem(last=False)
    return found


def parse_sld(sld: bytes) -> tuple[Symbol, ...]:
    """The symbols of an SLD document, in drawing order; empty when it cannot be read."""
    return _parsed(sld) or ()


def readable(sld: bytes) -> bool:
    """Whether an SLD document can be read (well-formed XML whose root is a style)."""
    return _parsed(sld) is not None


@functools.lru_cache(maxsize=8)
def default_symbols(kind: str) -> tuple[Symbol, ...]:
    """The default style of a kind ("polygon", "line", "point" or "raster")."""
    return parse_sld(default_sld("default", kind).encode("utf-8"))


def vector_symbols(sld: bytes | None, families: list[str]) -> list[tuple[Symbol, tuple[str, ...]]]:
    """The symbols to draw a vector layer whose parts are of ``families`` (most common first),
    each with the families it draws."""
    symbols = parse_sld(sld) if sld else ()
    out = [(s, tuple(f for f in DRAWS[type(s)] if f in families)) for s in symbols]
    out = [(s, fams) for s, fams in out if fams]
    if out:
        return out
    for family in families or ["polygon"]:
        out.extend((s, (family,)) for s in default_symbols(family))
    return out


def raster_symbol(sld: bytes | None) -> RasterSymbol:
    for s in parse_sld(sld) if sld else ():
        if isinstance(s, RasterSymbol):
            return s
    return RasterSymbol()
