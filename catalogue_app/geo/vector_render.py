"""Drawing vector parts (see geometry_arrays.py) onto a canvas (see canvas.py), with numpy.

Every step works on all parts of a symbol at once, not one part at a time:
- parts smaller than two pixels set the pixels under their box;
- polygons are filled by a scanline rule: each edge adds its crossings of the pixel-row centres
  to a per-row sum, weighted so that exterior rings count +1 and holes -1 whatever their
  orientation; pixels where the running sum is not zero are filled (overlapping features stay
  filled, holes stay empty);
- outlines and lines are sampled at least once per pixel along each edge, after clipping the
  edge to the image, and drawn as squares of the stroke width (a square per sample, or for
  wide strokes over many samples, the samples' mask widened row-wise then column-wise);
- point marks are small antialiased images pasted with Pillow one point at a time, or for many
  points, each mostly opaque pixel of the mark set for all points at once.
Within one symbol all fills are drawn before all outlines. There is no antialiasing. Symbols
with any transparency are drawn on a clear sheet, then laid over the canvas. The work of marks
is bounded by WORK: beyond it, of the marks whose centres fall in one small cell (a fraction of
the mark's side) only the last is drawn.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from PIL import Image, ImageDraw

from .canvas import View, over, packed, words
from .geometry_arrays import Geometries, Shapes, ranges
from .symbolizers import LineSymbol, PointSymbol, PolygonSymbol

TINY = 2.0          # parts narrower and lower than this many pixels set the pixels under their box
MANY_POINTS = 20000  # above this, point marks are stamped with numpy instead of pasted
WORK = 40_000_000    # pixel writes of point marks per symbol, at most (about)


def _select(shapes: Shapes, view: View, margin_px: float) -> tuple[np.ndarray, np.ndarray]:
    """Indexes of the parts meeting the view (widened by ``margin_px``): the tiny and the others."""
    b = shapes.bounds
    sx, sy = view.scale
    mx, my = margin_px / sx, margin_px / sy
    x0, y0, x1, y1 = view.bbox
    hit = (b[:, 2] >= x0 - mx) & (b[:, 0] <= x1 + mx) & (b[:, 3] >= y0 - my) & (b[:, 1] <= y1 + my)
    if shapes.alive is not None:  # parts removed or changed by edits since the arrays were read
        hit &= shapes.alive
    small = ((b[:, 2] - b[:, 0]) * sx < TINY) & ((b[:, 3] - b[:, 1]) * sy < TINY)
    return np.flatnonzero(hit & small), np.flatnonzero(hit & ~small)


def _set(pixels: np.ndarray, view: View, cols: np.ndarray, rows: np.ndarray, colour: np.uint32) -> None:
    """Set the pixels at (cols, rows) that lie on the canvas (int64 arrays)."""
    ok = (cols.view(np.uint64) < view.width) & (rows.view(np.uint64) < view.height)  # negatives wrap high
    pixels[(rows * view.width + cols)[ok]] = colour


def _stamp(pixels: np.ndarray, bounds: np.ndarray, view: View, colour: np.uint32) -> None:
    """Set the pixels under the boxes of tiny parts (at most 3 x 3 each)."""
    c0, r0 = view.pixels(bounds[:, 0], bounds[:, 3])
    c1, r1 = view.pixels(bounds[:, 2], bounds[:, 1])
    c0, r0, c1, r1 = (np.floor(v).astype(np.int64) for v in (c0, r0, c1, r1))
    seen = (c1 >= 0) & (c0 < view.width) & (r1 >= 0) & (r0 < view.height)
    if not seen.all():
        c0, r0, c1, r1 = c0[seen], r0[seen], c1[seen], r1[seen]
    np.clip(c0, 0, view.width - 1, out=c0)
    np.clip(c1, 0, view.width - 1, out=c1)
    np.clip(r0, 0, view.height - 1, out=r0)
    np.clip(r1, 0, view.height - 1, out=r1)
    first = r0 * view.width + c0
    pixels[first] = colour
    wide, high = c1 - c0, r1 - r0
    for dy in range(3):
        for dx in range(3):
            if dx or dy:
                more = first[(wide >= dx) & (high >= dy)]
                if len(more):
                    pixels[more + (dy * view.width + dx)] = colour


class _Edges:
    """The edges of chosen parts in pixel coordinates: each vertex to the next one; the last
    vertex of a ring to the ring's first (polygons) or to itself, a point (lines)."""

    def __init__(self, shapes: Shapes, parts: np.ndarray, view: View, closed: bool):
        b = shapes.bounds[parts]
        x0, y0, x1, y1 = view.bbox
        # whether every edge lies on the canvas: no clipping needed
        self.contained = bool((b[:, 0].min() >= x0) & (b[:, 2].max() <= x1) & (b[:, 1].min() >= y0)
                              & (b[:, 3].max() <= y1)) if len(parts) else True
        if len(parts) * 2 > shapes.count:  # most parts: mask all coordinates rather than gather
            coord_ring, ring_part = shapes.owners()
            chosen = np.zeros(shapes.count, bool)
            chosen[parts] = True
            ring_chosen = chosen[ring_part]
            take = np.flatnonzero(ring_chosen[coord_ring])
            ring = coord_ring[take]
            rings = np.flatnonzero(ring_chosen)
            ring = np.searchsorted(rings, ring)
        else:
            ring_lo, ring_hi = shapes.part_ring[parts], shapes.part_ring[parts + 1]
            rings = ranges(ring_lo, ring_hi)
            lo, hi = shapes.ring_start[rings], shapes.ring_start[rings + 1]
            take = ranges(lo, hi)
            ring = np.repeat(np.arange(len(rings)), hi - lo)
        x, y = view.pixels(np.take(shapes.xy[0], take), np.take(shapes.xy[1], take))
        # of consecutive vertices on one pixel, the first is enough (and the last of each ring);
        # points that could not be transformed are left out
        cx, cy = np.floor(x), np.floor(y)
        keep = np.isfinite(x) & np.isfinite(y)
        keep[1:-1] &= ((cx[1:-1] != cx[:-2]) | (cy[1:-1] != cy[:-2]) | (ring[1:-1] != ring[:-2])
                       | (ring[1:-1] != ring[2:]))
        if not keep.all():
            kept = np.flatnonzero(keep)
            x, y, ring = x[kept], y[kept], ring[kept]
        n = len(x)
        index = np.arange(n)
        starts = np.ones(n, bool)
        starts[1:] = ring[1:] != ring[:-1]
        ends = np.ones(n, bool)
        ends[:-1] = starts[1:]
        following = index + 1
        # the last vertex of a ring leads back to its first (polygons) or to itself (lines)
        following[ends] = np.flatnonzero(starts) if closed else index[ends]
        self.xa, self.ya, self.xb, self.yb = x, y, x[following], y[following]
        self.ring = ring
        self.rings = len(rings)
        self.ring_weight = None
        if closed:  # exterior rings weigh +1, holes -1, whatever their orientation
            n = len(rings)
            area = np.bincount(self.ring, weights=self.xa * self.yb - self.xb * self.ya, minlength=n)
            part_of_ring = shapes.owners()[1][rings]
            exterior = np.ones(n, bool)
            exterior[1:] = part_of_ring[1:] != part_of_ring[:-1]
            self.ring_weight = np.sign(area) * np.where(exterior, 1.0, -1.0)

    @classmethod
    def joined(cls, pieces: list[_Edges]) -> _Edges:
        """The edges of several pieces as one set (drawing them at once is drawing them together)."""
        if len(pieces) == 1:
            return pieces[0]
        out = cls.__new__(cls)
        out.contained = all(p.contained for p in pieces)
        for name in ("xa", "ya", "xb", "yb"):
            setattr(out, name, np.concatenate([getattr(p, name) for p in pieces]))
        offsets = np.cumsum([0] + [p.rings for p in pieces])
        out.ring = np.concatenate([p.ring + offsets[i] for i, p in enumerate(pieces)])
        out.rings = int(offsets[-1])
        weights = [p.ring_weight for p in pieces]
        out.ring_weight = None if any(w is None for w in weights) else np.concatenate(weights)
        return out


def _fill(pixels: np.ndarray, edges: _Edges, view: View, colour: np.uint32) -> None:
    """Fill polygons: sum the weighted crossings of row centres, left to right."""
    w, h = view.width, view.height
    ya, yb = edges.ya, edges.yb
    first = np.clip(np.ceil(np.minimum(ya, yb) - 0.5), 0, h)
    count = np.clip(np.ceil(np.maximum(ya, yb) - 0.5), 0, h) - first  # rows first .. first+count-1
    e = np.flatnonzero(count > 0)
    if not len(e):
        return
    n, first = count[e].astype(np.int64), first[e].astype(np.int64)
    y0, dy = ya[e], yb[e] - ya[e]
    slope = (edges.xb[e] - edges.xa[e]) / dy
    x = edges.xa[e] + (first + 0.5 - y0) * slope  # where each edge crosses its first row centre
    weight = (np.sign(dy) * edges.ring_weight[edges.ring[e]]).astype(np.int32)
    rows = first
    if (n > 1).any():  # edges crossing several rows: one crossing per row
        which = np.repeat(np.arange(len(e)), n)
        step = np.arange(len(which)) - np.repeat(np.cumsum(n) - n, n)
        rows, x, weight = first[which] + step, x[which] + step * slope[which], weight[which]
    cols = np.clip(np.ceil(x - 0.5), 0, w).astype(np.int64)
    top, bottom = int(rows.min()), int(rows.max()) + 1
    sums = np.zeros((bottom - top, w + 1), np.int32)
    np.add.at(sums.reshape(-1), (rows - top) * (w + 1) + cols, weight)
    np.cumsum(sums, axis=1, out=sums)
    np.copyto(pixels.reshape(h, w)[top:bottom], colour, where=sums[:, :w] != 0)


def _clip(xa, ya, xb, yb, box):
    """Segments clipped to a box (Liang-Barsky): the kept ones' ends."""
    x0, y0, x1, y1 = box
    dx, dy = xb - xa, yb - ya
    t0, t1 = np.zeros(len(xa)), np.ones(len(xa))
    keep = np.ones(len(xa), bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, xa - x0), (dx, x1 - xa), (-dy, ya - y0), (dy, y1 - ya)):
            parallel = p == 0
            keep &= ~(parallel & (q < 0))
            r = q / p
            t0 = np.where(~parallel & (p < 0), np.maximum(t0, r), t0)
            t1 = np.where(~parallel & (p > 0), np.minimum(t1, r), t1)
    keep &= t0 <= t1
    t0, t1 = t0[keep], t1[keep]
    xa, ya, dx, dy = xa[keep], ya[keep], dx[keep], dy[keep]
    return xa + t0 * dx, ya + t0 * dy, xa + t1 * dx, ya + t1 * dy


def _stroke(pixels: np.ndarray, edges: _Edges, view: View, colour: np.uint32, width: float) -> None:
    """Draw edges as lines ``width`` pixels wide, one sample per pixel step from each edge's
    first vertex up to (not including) its last, which starts the next edge."""
    size = max(1, int(round(width)))
    pad = size + 1
    box = (-pad, -pad, view.width + pad, view.height + pad)
    xa, ya, xb, yb = edges.xa, edges.ya, edges.xb, edges.yb
    inside = None if edges.contained else (
        (np.minimum(xa, xb) >= box[0]) & (np.maximum(xa, xb) <= box[2])
        & (np.minimum(ya, yb) >= box[1]) & (np.maximum(ya, yb) <= box[3]))
    if inside is not None and not inside.all():
        # edges leaving the image: clipped, and their clipped end drawn too
        cut = _clip(*(v[~inside] for v in (xa, ya, xb, yb)), box)
        keep = np.flatnonzero(inside)
        xa = np.concatenate([xa[keep], cut[0], cut[2]])
        ya = np.concatenate([ya[keep], cut[1], cut[3]])
        xb = np.concatenate([xb[keep], cut[2], cut[2]])
        yb = np.concatenate([yb[keep], cut[3], cut[3]])
    if not len(xa):
        return
    cols, rows = [np.floor(xa)], [np.floor(ya)]  # every edge's first vertex
    span = np.ceil(np.maximum(np.abs(xb - xa), np.abs(yb - ya)))
    long = np.flatnonzero(span > 1)  # the pixels between the ends of longer edges
    if len(long):
        steps = span[long].astype(np.int64) - 1
        which = np.repeat(long, steps)
        k = np.arange(len(which)) - np.repeat(np.cumsum(steps) - steps, steps) + 1
        t = k / span[which]
        cols.append(np.floor(xa[which] + t * (xb[which] - xa[which])))
        rows.append(np.floor(ya[which] + t * (yb[which] - ya[which])))
    cols = np.concatenate(cols).astype(np.int64)
    rows = np.concatenate(rows).astype(np.int64)
    if size > 1:
        key = np.unique((rows + pad) * (view.width + 2 * pad) + cols + pad)
        rows, cols = np.divmod(key, view.width + 2 * pad)
        rows, cols = rows - pad, cols - pad
    start = -((size - 1) // 2)
    # a sample's square costs some 20 times a pixel of a widening pass: take the cheaper way
    if size > 1 and 20 * len(rows) * size * size > _widen_cost(rows, cols, view, size):
        _widened(pixels, view, cols, rows, colour, size, start)
        return
    for dy in range(start, start + size):
        for dx in range(start, start + size):
            _set(pixels, view, cols + dx, rows + dy, colour)


def _widen_cost(rows: np.ndarray, cols: np.ndarray, view: View, size: int) -> int:
    """About the work of ``_widened``: passes over the box of the samples."""
    if not len(rows):
        return 0
    h = min(int(rows.max()), view.height) - max(int(rows.min()), 0) + size
    w = min(int(cols.max()), view.width) - max(int(cols.min()), 0) + size
    return max(h, 0) * max(w, 0) * 2 * (size.bit_length() + 1)


def _widened(pixels: np.ndarray, view: View, cols: np.ndarray, rows: np.ndarray, colour: np.uint32, size: int,
             start: int) -> None:
    """Set a ``size`` x ``size`` square at each sample, its corner at (col + start, row + start):
    the samples' mask widened along rows, then along columns (a run of doubling shifts each)."""
    r0 = max(int(rows.min()) + start, 0)
    c0 = max(int(cols.min()) + start, 0)
    r1 = min(int(rows.max()) + start + size, view.height)
    c1 = min(int(cols.max()) + start + size, view.width)
    if r1 <= r0 or c1 <= c0:
        return
    # the mask reaches size - 1 pixels before the area, so squares starting there are counted
    mask = np.zeros((r1 - r0 + size - 1, c1 - c0 + size - 1), bool)
    rr, cc = rows + start - r0 + size - 1, cols + start - c0 + size - 1
    ok = (rr >= 0) & (rr < mask.shape[0]) & (cc >= 0) & (cc < mask.shape[1])
    mask[rr[ok], cc[ok]] = True
    for axis in (1, 0):
        mask = _run(mask, size, axis)
    area = mask[size - 1:, size - 1:]
    np.copyto(pixels.reshape(view.height, view.width)[r0:r1, c0:c1], colour, where=area)


def _run(mask: np.ndarray, length: int, axis: int) -> np.ndarray:
    """``mask`` with each set pixel also setting the ``length`` - 1 pixels after it along ``axis``."""
    out = mask.copy()
    covered = 1
    while covered < length:
        step = min(covered, length - covered)
        if axis == 1:
            out[:, step:] |= out[:, :-step]
        else:
            out[step:] |= out[:-step]
        covered += step
    return out


def _sheet(canvas: np.ndarray, colours: list) -> tuple[np.ndarray, bool]:
    """Where a symbol draws: the canvas itself when its colours are opaque, else a clear sheet."""
    opaque = all(c is None or c[3] == 255 for c in colours)
    return (canvas if opaque else np.zeros_like(canvas)), opaque


def _chosen(pieces: list[Shapes], view: View, margin_px: float) -> list[tuple[Shapes, np.ndarray, np.ndarray]]:
    """Each piece with its tiny and other parts meeting the view (see _select)."""
    return [(shapes, *_select(shapes, view, margin_px)) for shapes in pieces]


def _polygons(canvas: np.ndarray, pieces: list[Shapes], sym: PolygonSymbol, view: View) -> np.ndarray:
    width = sym.width if sym.stroke else 0
    chosen = _chosen(pieces, view, width + 1)
    tiny = [shapes.bounds[t] for shapes, t, _ in chosen if len(t)]
    big = [_Edges(shapes, b, view, closed=True) for shapes, _, b in chosen if len(b)]
    if not tiny and not big:
        return canvas
    sheet, opaque = _sheet(canvas, [sym.fill, sym.stroke])
    pixels = words(sheet)
    if tiny:
        _stamp(pixels, np.concatenate(tiny), view, packed(sym.stroke or sym.fill))
    if big:
        edges = _Edges.joined(big)
        if sym.fill:
            _fill(pixels, edges, view, packed(sym.fill))
        if sym.stroke:
            _stroke(pixels, edges, view, packed(sym.stroke), sym.width)
    return canvas if opaque else over(canvas, sheet)


def _lines(canvas: np.ndarray, pieces: list[Shapes], sym: LineSymbol, view: View) -> np.ndarray:
    """Lines, or the rings of polygons, stroked."""
    chosen = _chosen(pieces, view, sym.width + 1)
    tiny = [shapes.bounds[t] for shapes, t, _ in chosen if len(t)]
    big = [_Edges(shapes, b, view, closed=shapes.family == "polygon") for shapes, _, b in chosen if len(b)]
    if not tiny and not big:
        return canvas
    sheet, opaque = _sheet(canvas, [sym.stroke])
    pixels = words(sheet)
    if tiny:
        _stamp(pixels, np.concatenate(tiny), view, packed(sym.stroke))
    if big:
        _stroke(pixels, _Edges.joined(big), view, packed(sym.stroke), sym.width)
    return canvas if opaque else over(canvas, sheet)


def _mark_outline(shape: str, c: float, r: float) -> list[tuple[float, float]]:
    if shape == "triangle":
        return [(c, c - r), (c + r * math.sqrt(3) / 2, c + r / 2), (c - r * math.sqrt(3) / 2, c + r / 2)]
    if shape == "star":
        pts = []
        for i in range(10):
            a = -math.pi / 2 + i * math.pi / 5
            rr = r if i % 2 == 0 else r * 0.4
            pts.append((c + rr * math.cos(a), c + rr * math.sin(a)))
        return pts
    if shape in ("cross", "x"):
        t = r * 0.3
        pts = [(-t, -r), (t, -r), (t, -t), (r, -t), (r, t), (t, t), (t, r), (-t, r), (-t, t), (-r, t), (-r, -t), (-t, -t)]
        if shape == "x":
            cos, sin = math.cos(math.pi / 4), math.sin(math.pi / 4)
            pts = [(x * cos - y * sin, x * sin + y * cos) for x, y in pts]
        return [(c + x, c + y) for x, y in pts]
    return [(c - r, c - r), (c + r, c - r), (c + r, c + r), (c - r, c + r)]  # square


@functools.lru_cache(maxsize=64)
def mark_sprite(sym: PointSymbol) -> Image.Image:
    """The mark of a point symbol as a small antialiased RGBA image, its centre at its middle."""
    ss = 4  # drawn 4 times bigger, then reduced: smooth edges
    stroke = sym.width if sym.stroke else 0.0
    side = int(math.ceil(sym.size + stroke)) + 2
    side += (side + 1) % 2  # odd: one middle pixel
    big = Image.new("RGBA", (side * ss, side * ss), (0, 0, 0, 0))
    draw = ImageDraw.Draw(big)
    c, r = side * ss / 2, sym.size * ss / 2
    sw = max(1, int(round(stroke * ss))) if sym.stroke else 1
    if sym.shape == "circle":
        draw.ellipse([c - r, c - r, c + r, c + r], fill=sym.fill, outline=sym.stroke, width=sw)
    else:
        draw.polygon(_mark_outline(sym.shape, c, r), fill=sym.fill, outline=sym.stroke, width=sw)
    return big.resize((side, side), Image.Resampling.BOX)


def _point_coords(pieces: list[Shapes], view: View, margin_px: float) -> tuple[np.ndarray, np.ndarray]:
    """The points of the pieces meeting the view, in the order of their features (an edited
    point is drawn where a layer read afresh draws it, under the points of later features)."""
    xs, ys, fids = [], [], []
    for shapes in pieces:
        chosen = np.sort(np.concatenate(_select(shapes, view, margin_px)))
        xs.append(shapes.xy[0, chosen])
        ys.append(shapes.xy[1, chosen])
        fids.append(shapes.fids[chosen] if shapes.fids is not None else None)
    if len(pieces) == 1:
        return xs[0], ys[0]
    x, y = np.concatenate(xs), np.concatenate(ys)
    if all(f is not None for f in fids):
        order = np.argsort(np.concatenate(fids), kind="stable")
        x, y = x[order], y[order]
    return x, y


def _points(canvas: np.ndarray, pieces: list[Shapes], sym: PointSymbol, view: View) -> np.ndarray:
    sprite = mark_sprite(sym)
    side = sprite.width
    half = side // 2
    x, y = _point_coords(pieces, view, half + 1)
    if not len(x):
        return canvas
    px, py = view.pixels(x, y)
    cols, rows = np.floor(px).astype(np.int64), np.floor(py).astype(np.int64)
    ok = (cols >= -half) & (cols < view.width + half) & (rows >= -half) & (rows < view.height + half)
    if not ok.all():
        cols, rows = cols[ok], rows[ok]
    s = np.asarray(sprite)
    opaque = np.nonzero(s[:, :, 3] >= 128)
    marks = max(1, len(opaque[0]))
    # one mark per pixel (the last drawn); with more marks than the work allows, one per cell
    cell = 1
    if len(cols) * marks > WORK:
        area = (view.width + side) * (view.height + side)
        cell = max(1, min(half, math.ceil(math.sqrt(area * marks / WORK))))
    key = ((rows + half) // cell) * ((view.width + side) // cell + 1) + (cols + half) // cell
    _, last = np.unique(key[::-1], return_index=True)
    order = np.sort(len(key) - 1 - last)
    cols, rows = cols[order], rows[order]
    if len(cols) <= MANY_POINTS and len(cols) * side * side <= WORK:
        image = Image.fromarray(canvas, "RGBA")
        for x, y in zip((cols - half).tolist(), (rows - half).tolist()):
            sx, sy = max(0, -x), max(0, -y)
            if sx < sprite.width and sy < sprite.height:
                image.alpha_composite(sprite, dest=(x + sx, y + sy), source=(sx, sy))
        return np.asarray(image).copy()
    # many marks: set each mostly opaque pixel of the mark for all of them at once, on a sheet
    # with a margin of one mark on each side
    w, h = view.width, view.height
    wide = w + 2 * side
    sheet = np.zeros((h + 2 * side, wide, 4), np.uint8)
    flat = words(sheet)
    base = (rows + side - half) * wide + (cols + side - half)
    colours = s.view(np.uint32)[:, :, 0]
    for dy, dx in zip(*opaque):
        flat[base + int(dy * wide + dx)] = colours[dy, dx]
    return over(canvas, np.ascontiguousarray(sheet[side:side + h, side:side + w]))


def draw_vector(canvas: np.ndarray, parts: Geometries, symbols, view: View) -> np.ndarray:
    """Draw ``parts`` with ``symbols`` ((symbol, families) pairs) on ``canvas``; returns the
    canvas drawn on (the same array, or a new one). The parts of an edited layer's ``extra``
    are drawn with the others, symbol by symbol, as one set: the image is the one the layer
    read afresh gives."""
    for sym, families in symbols:
        for family in families:
            if not parts.live(family):
                continue
            pieces = parts.pieces(family)
            if isinstance(sym, PolygonSymbol) and family == "polygon":
                canvas = _polygons(canvas, pieces, sym, view)
            elif isinstance(sym, LineSymbol):
                canvas = _lines(canvas, pieces, sym, view)
            elif isinstance(sym, PointSymbol) and family == "point":
                canvas = _points(canvas, pieces, sym, view)
    return canvas
