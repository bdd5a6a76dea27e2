"""Tiles drawn lately, kept in memory (per process) up to a number of bytes, least recently used
out first.

A tile is kept under its source (a dataset, a map, the basemap), the source's signature (the
data version and the style of each layer it draws: what makes it look as it does), its kind and
its z/y/x. Nothing of the caller is in the key: whoever may see the source sees the same tile,
and whether they may is asked before the cache (the tile handler reads the signature in the same
read that checks the permission, so that a tile is only ever found after that check).

Because the signature is read from the catalogue for each request, a tile kept before an edit or
a style change, in this process or another, is never served after it: its key is no longer
asked for. When a source is seen with a new signature, its tiles kept under the old one are
dropped at once, so they do not wait for the least recently used to leave.

Why memory, not files in the data folder: a hit costs a dictionary look-up (well under a
millisecond, where the target is 3 ms), nothing is written to disk on reads, nothing is left to
clean up or back up, and every process stays correct on its own since keys carry the data
version; the price is that each process draws its own tiles once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

MB = 1024 * 1024


class TileCache:
    """Tiles by (source, signature, kind, z, y, x), at most ``limit`` bytes of them."""

    def __init__(self, limit: int = 64 * MB):
        self.limit = limit
        self._tiles: OrderedDict[tuple, bytes] = OrderedDict()
        self._signatures: dict[Hashable, Hashable] = {}  # source -> the signature its tiles are kept under
        self._by_source: dict[Hashable, set[tuple]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def _settle(self, source: Hashable, signature: Hashable) -> None:
        """Drop the source's tiles of another signature (lock held)."""
        held = self._signatures.get(source)
        if held is not None and held != signature:
            for key in self._by_source.pop(source, ()):
                body = self._tiles.pop(key, None)
                if body is not None:
                    self._bytes -= len(body)
        self._signatures[source] = signature

    def get(self, source: Hashable, signature: Hashable, tile: tuple) -> bytes | None:
        key = (source, signature, *tile)
        with self._lock:
            body = self._tiles.get(key)
            if body is not None:
                self._tiles.move_to_end(key)
                return body
            self._settle(source, signature)
            return None

    def put(self, source: Hashable, signature: Hashable, tile: tuple, body: bytes) -> None:
        if len(body) > self.limit // 16:
            return
        key = (source, signature, *tile)
        with self._lock:
            self._settle(source, signature)
            if key in self._tiles:
                return
            self._tiles[key] = body
            self._by_source.setdefault(source, set()).add(key)
            self._bytes += len(body)
            while self._bytes > self.limit and self._tiles:
                old, dropped = self._tiles.popitem(last=False)
                self._bytes -= len(dropped)
                keys = self._by_source.get(old[0])
                if keys is not None:
                    keys.discard(old)
                    if not keys:
                        del self._by_source[old[0]]

    def drop(self, source: Hashable) -> None:
        """Forget every tile of a source."""
        with self._lock:
            for key in self._by_source.pop(source, ()):
                body = self._tiles.pop(key, None)
                if body is not None:
                    self._bytes -= len(body)
            self._signatures.pop(source, None)

    def clear(self) -> None:
        with self._lock:
            self._tiles.clear()
            self._signatures.clear()
            self._by_source.clear()
            self._bytes = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._tiles)


CACHE = TileCache()


def cache(limit_mb: int) -> TileCache | None:
    """The process's tile cache at ``limit_mb`` megabytes; None when the setting turns it off (0)."""
    if limit_mb <= 0:
        return None
    if CACHE.limit != limit_mb * MB:
        CACHE.limit = limit_mb * MB
    return CACHE
