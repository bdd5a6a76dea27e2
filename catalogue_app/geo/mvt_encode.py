"""Mapbox Vector Tile 2.1 written with numpy: the geometry commands of every feature of a tile
at once (delta-coded, zigzagged, as varints), the rest of the protocol buffer by hand.

Geometries come in tile units (x right, y down), any mix of (multi)points, (multi)lines and
(multi)polygons. Coordinates are rounded to whole units; repeated vertices are dropped, and so
are rings of fewer than three vertices or no area, and lines of fewer than two. Rings are
turned so that exterior rings have a positive area by the surveyor's formula in tile
coordinates and holes a negative one, as the specification asks.
"""

from __future__ import annotations

import struct

import numpy as np

POINT, LINE, POLYGON = 1, 2, 3
MOVE_TO, LINE_TO, CLOSE = 1, 2, 7


# --- protocol buffer -----------------------------------------------------------------------------


def _slow_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL = [_slow_varint(i) for i in range(1 << 14)]  # 16,384 short byte strings, made once


def _varint(value: int) -> bytes:
    return _SMALL[value] if value < 16384 else _slow_varint(value)


def _key(field: int, wire: int) -> bytes:
    return _SMALL[(field << 3) | wire]


def _bytes_field(field: int, data: bytes) -> bytes:
    return b"".join((_SMALL[(field << 3) | 2], _varint(len(data)), data))


def _varints(values: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Unsigned integers (below 2**35) as varints: the bytes, and where each value's bytes start
    (one more entry: the end)."""
    v = values.astype(np.uint64)
    sizes = 1 + (v >= 1 << 7).astype(np.int64) + (v >= 1 << 14) + (v >= 1 << 21) + (v >= 1 << 28)
    starts = np.zeros(len(v) + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    out = np.zeros(int(starts[-1]), dtype=np.uint8)
    for k in range(5):
        has = sizes > k
        byte = (v[has] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = sizes[has] > k + 1
        out[starts[:-1][has] + k] = (byte | (more.astype(np.uint64) << np.uint64(7))).astype(np.uint8)
    return out.tobytes(), starts


def _zigzag(d: np.ndarray) -> np.ndarray:
    d = d.astype(np.int64)
    return ((d << 1) ^ (d >> 63)).astype(np.int64)


def _value_message(value) -> bytes:
    if isinstance(value, bool):
        return _key(7, 0) + _varint(int(value))
    if isinstance(value, int):
        if value >= 0:
            return _key(5, 0) + _varint(value)
        return _key(6, 0) + _varint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)
    if isinstance(value, float):
        return _key(3, 1) + struct.pack("<d", value)
    return _bytes_field(1, str(value).encode("utf-8"))


# --- geometry commands ---------------------------------------------------------------------------


def _dedupe(xy: np.ndarray, group_starts: np.ndarray) -> np.ndarray:
    """Which vertices to keep: each group's first, and any vertex unlike the one before."""
    keep = np.ones(len(xy), dtype=bool)
    if len(xy) > 1:
        keep[1:] = (xy[1:] != xy[:-1]).any(axis=1)
    keep[group_starts[group_starts < len(xy)]] = True
    return keep


def _groups(offsets: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """New offsets of groups after dropping vertices."""
    kept = np.concatenate([[0], np.cumsum(keep)])
    return kept[offsets]


def _commands(xy: np.ndarray, vertex_feature: np.ndarray, pieces: np.ndarray, kind: int) -> np.ndarray:
    """The command integers of features whose kept vertices are ``xy`` (in feature order), split
    into ``pieces`` (offsets of rings or lines, or one piece per feature for points)."""
    counts = np.diff(pieces)
    # deltas: from the previous vertex of the same feature, the first from (0, 0)
    delta = xy.copy()
    if len(xy) > 1:
        same = vertex_feature[1:] == vertex_feature[:-1]
        delta[1:][same] = xy[1:][same] - xy[:-1][same]
    zz = _zigzag(delta)
    if kind == POINT:
        sizes = 1 + 2 * counts
    elif kind == LINE:
        sizes = 2 + 2 * counts
    else:
        sizes = 3 + 2 * counts
    starts = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    out = np.zeros(int(starts[-1]), dtype=np.int64)
    s = starts[:-1]
    piece_of = np.repeat(np.arange(len(counts)), counts)
    j = np.arange(len(xy)) - pieces[:-1][piece_of]
    if kind == POINT:
        out[s] = (counts << 3) | MOVE_TO
        ix = s[piece_of] + 1 + 2 * j
    else:
        out[s] = (1 << 3) | MOVE_TO
        out[s + 3] = ((counts - 1) << 3) | LINE_TO
        ix = s[piece_of] + 1 + 2 * j + (j > 0)
        if kind == POLYGON:
            out[starts[1:] - 1] = (1 << 3) | CLOSE
    out[ix] = zz[:, 0]
    out[ix + 1] = zz[:, 1]
    return out, starts


def _area2(xy: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Twice the signed area of each ring (surveyor's formula, the ring closed implicitly)."""
    n = np.diff(offsets)
    nxt = np.arange(len(xy)) + 1
    ends = offsets[1:] - 1
    nxt[ends[n > 0]] = offsets[:-1][n > 0]
    cross = xy[:, 0] * xy[nxt, 1] - xy[nxt, 0] * xy[:, 1]
    sums = np.zeros(len(n))
    nz = n > 0
    sums[nz] = np.add.reduceat(cross, offsets[:-1][nz]) if len(cross) else 0
    return sums


def _polygons(geoms: np.ndarray):
    """(features, command bytes per feature) of polygonal geometries."""
    import shapely

    _, coords, offsets = shapely.to_ragged_array(geoms)
    if len(offsets) == 3:
        ring_off, part_off, geom_off = offsets
    else:  # polygons only: each one part
        ring_off, part_off = offsets
        geom_off = np.arange(len(part_off))
    xy = np.rint(coords).astype(np.int64)
    ring_off, part_off, geom_off = (np.asarray(o, dtype=np.int64) for o in (ring_off, part_off, geom_off))
    # drop each ring's closing vertex, then repeats
    n_rings = len(ring_off) - 1
    closing = np.zeros(len(xy), dtype=bool)
    closing[ring_off[1:][np.diff(ring_off) > 0] - 1] = True
    keep = ~closing & _dedupe(xy, ring_off[:-1])
    # a vertex equal to its ring's first, at the end, after dedupe
    rings = _groups(ring_off, keep)
    xy = xy[keep]
    counts = np.diff(rings)
    # a last vertex that rounds onto the ring's first
    full = np.flatnonzero(counts > 1)
    same = (xy[rings[1:][full] - 1] == xy[rings[:-1][full]]).all(axis=1)
    if same.any():
        keep = np.ones(len(xy), dtype=bool)
        keep[rings[1:][full[same]] - 1] = False
        rings = _groups(rings, keep)
        xy = xy[keep]
        counts = np.diff(rings)
    area = _area2(xy.astype(np.float64), rings)
    ring_part = np.repeat(np.arange(len(part_off) - 1), np.diff(part_off))
    first_of_part = np.zeros(n_rings, dtype=bool)
    first_of_part[part_off[:-1][np.diff(part_off) > 0]] = True
    good = (counts >= 3) & (area != 0)
    # a part whose exterior is gone goes with its holes
    part_ok = np.zeros(len(part_off) - 1, dtype=bool)
    part_ok[ring_part[first_of_part & good]] = True
    good &= part_ok[ring_part]
    # turn rings: exterior positive, holes negative
    flip = good & ((first_of_part & (area < 0)) | (~first_of_part & (area > 0)))
    ring_geom = np.repeat(np.arange(len(geom_off) - 1), np.diff(geom_off))[ring_part] if n_rings else np.zeros(0, int)
    vertex_ring = np.repeat(np.arange(n_rings), counts)
    order = np.arange(len(xy))
    if flip.any():
        # reverse the vertices of flipped rings but keep each ring's first vertex first
        fr = flip[vertex_ring]
        local = order - rings[:-1][vertex_ring]
        n_of = counts[vertex_ring]
        rev = np.where(local == 0, 0, n_of - local)
        order = np.where(fr, rings[:-1][vertex_ring] + rev, order)
    keep_v = good[vertex_ring]
    xy = xy[order][keep_v]
    kept_rings = np.flatnonzero(good)
    pieces = np.concatenate([[0], np.cumsum(counts[kept_rings])])
    feature_of_ring = ring_geom[kept_rings]
    vertex_feature = np.repeat(feature_of_ring, counts[kept_rings])
    return _by_feature(xy, vertex_feature, pieces, feature_of_ring, POLYGON)


def _lines(geoms: np.ndarray):
    import shapely

    _, coords, offsets = shapely.to_ragged_array(geoms)
    if len(offsets) == 2:
        line_off, geom_off = offsets
    else:  # lines only: each one part
        (line_off,) = offsets
        geom_off = np.arange(len(line_off))
    xy = np.rint(coords).astype(np.int64)
    line_off, geom_off = np.asarray(line_off, dtype=np.int64), np.asarray(geom_off, dtype=np.int64)
    keep = _dedupe(xy, line_off[:-1])
    lines = _groups(line_off, keep)
    xy = xy[keep]
    counts = np.diff(lines)
    good = counts >= 2
    line_geom = np.repeat(np.arange(len(geom_off) - 1), np.diff(geom_off))
    vertex_line = np.repeat(np.arange(len(counts)), counts)
    xy = xy[good[vertex_line]]
    kept = np.flatnonzero(good)
    pieces = np.concatenate([[0], np.cumsum(counts[kept])])
    return _by_feature(xy, np.repeat(line_geom[kept], counts[kept]), pieces, line_geom[kept], LINE)


def _points(geoms: np.ndarray):
    import shapely

    _, coords, offsets = shapely.to_ragged_array(geoms)
    xy = np.rint(coords).astype(np.int64)
    geom_off = np.asarray(offsets[0], dtype=np.int64) if offsets else np.arange(len(xy) + 1, dtype=np.int64)
    counts = np.diff(geom_off)
    kept = np.flatnonzero(counts >= 1)
    pieces = np.concatenate([[0], np.cumsum(counts[kept])])
    return _by_feature(xy, np.repeat(np.arange(len(counts)), counts), pieces, kept, POINT)


def _by_feature(xy, vertex_feature, pieces, feature_of_piece, kind):
    """{feature index: geometry command bytes} of the features that kept something."""
    if len(pieces) <= 1:
        return {}
    commands, starts = _commands(xy, vertex_feature, pieces, kind)
    data, at = _varints(commands)
    # each feature's pieces are consecutive: its bytes run from its first piece to past its last
    features, first = np.unique(feature_of_piece, return_index=True)
    after = np.append(first[1:], len(feature_of_piece))
    return {int(f): data[at[starts[a]]:at[starts[b]]] for f, a, b in zip(features, first, after)}


# --- the tile ------------------------------------------------------------------------------------


def encode(name: str, geoms: np.ndarray, ids: np.ndarray, properties: list[dict], extent: int = 4096) -> bytes:
    """A tile of one layer ``name``: features of ``geoms`` (tile units, y down; None or empty
    ones are left out) with their ``ids`` and ``properties`` (values: bool, int, float, str)."""
    import shapely

    types = shapely.get_type_id(geoms)
    empty = shapely.is_empty(geoms) | shapely.is_missing(geoms)
    encoded: dict[int, tuple[int, bytes]] = {}
    for kind, ids_of_kind, fn in ((POINT, (0, 4), _points), (LINE, (1, 5), _lines), (POLYGON, (3, 6), _polygons)):
        chosen = np.flatnonzero(np.isin(types, ids_of_kind) & ~empty)
        if len(chosen):
            for i, body in fn(geoms[chosen]).items():
                encoded[int(chosen[i])] = (kind, body)
    keys: dict[str, int] = {}
    values: dict[tuple, int] = {}
    features = []
    small = _SMALL
    id_key, tags_key, type_key, geom_key, feature_key = (small[(1 << 3) | 0], small[(2 << 3) | 2], small[(3 << 3) | 0],
                                                        small[(4 << 3) | 2], small[(2 << 3) | 2])
    for i in sorted(encoded):
        kind, body = encoded[i]
        tags = []
        for k, v in properties[i].items():
            ki = keys.get(k)
            if ki is None:
                ki = keys[k] = len(keys)
            vkey = (type(v), v)
            vi = values.get(vkey)
            if vi is None:
                vi = values[vkey] = len(values)
            tags.append(small[ki] if ki < 16384 else _slow_varint(ki))
            tags.append(small[vi] if vi < 16384 else _slow_varint(vi))
        packed = b"".join(tags)
        message = b"".join((id_key, _varint(int(ids[i])), tags_key, _varint(len(packed)), packed,
                            type_key, small[kind], geom_key, _varint(len(body)), body))
        features.append(b"".join((feature_key, _varint(len(message)), message)))
    layer = [_key(15, 0) + _varint(2), _bytes_field(1, name.encode("utf-8")), *features]
    layer += [_bytes_field(3, k.encode("utf-8")) for k in keys]
    layer += [_bytes_field(4, _value_message(v)) for (_, v) in values]
    layer.append(_key(5, 0) + _varint(extent))
    return _bytes_field(3, b"".join(layer))
