"""Map canvases (canvas.py) written as PNG or JPEG.

PNG is written with fast compression. A map drawn only in a few known opaque colours (plain
vector symbols on a background) is written as an indexed PNG: faster to compress and about half
the size; any other map as RGB, or RGBA when transparent.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from .canvas import packed

FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG"}


def _indexed(canvas: np.ndarray, colours: list[tuple[int, int, int, int]]) -> Image.Image | None:
    """The canvas as a palette image when every pixel has one of ``colours``; else None."""
    colours = list(dict.fromkeys(colours))
    if not colours or len(colours) > 256:
        return None
    words = canvas.view(np.uint32).reshape(-1)
    index = np.zeros(len(words), np.uint8)
    found = 0
    for i, colour in enumerate(colours):
        hit = words == packed(colour)
        found += int(np.count_nonzero(hit))
        if i:
            index[hit] = i
    if found != len(words):
        return None
    image = Image.frombuffer("P", (canvas.shape[1], canvas.shape[0]), index, "raw", "P", 0, 1)
    image.putpalette([v for c in colours for v in c[:3]])
    alphas = bytes(c[3] for c in colours)
    if any(a != 255 for a in alphas):
        image.info["transparency"] = alphas
    return image


def encode(canvas: np.ndarray, image_format: str = "image/png", transparent: bool = False,
           colours: list[tuple[int, int, int, int]] | None = None) -> bytes:
    """PNG or JPEG bytes of an RGBA canvas. ``colours``: every colour the canvas may hold, when
    known (then an indexed PNG is tried first)."""
    kind = FORMATS.get(image_format)
    if kind is None:
        raise ValueError(f"unknown image format {image_format!r}: use image/png or image/jpeg")
    out = io.BytesIO()
    if kind == "JPEG":
        Image.fromarray(canvas, "RGBA").convert("RGB").save(out, "JPEG", quality=85)
        return out.getvalue()
    indexed = _indexed(canvas, colours) if colours else None
    if indexed is not None:
        extra = {"transparency": indexed.info["transparency"]} if "transparency" in indexed.info else {}
        indexed.save(out, "PNG", compress_level=1, **extra)
    else:
        image = Image.fromarray(canvas, "RGBA")
        (image if transparent else image.convert("RGB")).save(out, "PNG", compress_level=1)
    return out.getvalue()
