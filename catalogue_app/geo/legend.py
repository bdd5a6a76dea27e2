"""Legend images: the symbol of a style in a small PNG (a filled square for polygons, a line
for lines, the mark for points, a grey ramp for rasters), on a clear background."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, ImageDraw

from .symbolizers import LineSymbol, PointSymbol, PolygonSymbol, vector_symbols
from .vector_render import mark_sprite

MAX_SIZE = 512


def legend_png(sld: bytes | None, kind: str, width: int = 20, height: int = 20) -> bytes:
    """The legend of a style for a layer of ``kind`` ("polygon", "line", "point" or "raster")."""
    if not (0 < width <= MAX_SIZE and 0 < height <= MAX_SIZE):
        raise ValueError(f"width and height must be between 1 and {MAX_SIZE}")
    image = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    if kind == "raster":
        ramp = np.linspace(255, 0, height).astype(np.uint8)[:, None].repeat(width, axis=1)
        image = Image.merge("RGBA", [Image.fromarray(ramp)] * 3 + [Image.new("L", (width, height), 255)])
    else:
        draw = ImageDraw.Draw(image)
        for sym, _families in vector_symbols(sld, [kind]):
            if isinstance(sym, PolygonSymbol):
                line = max(1, round(sym.width)) if sym.stroke else 0
                draw.rectangle([1, 1, width - 2, height - 2], fill=sym.fill, outline=sym.stroke, width=line or 1)
            elif isinstance(sym, LineSymbol) and kind == "polygon":
                draw.rectangle([1, 1, width - 2, height - 2], outline=sym.stroke, width=max(1, round(sym.width)))
            elif isinstance(sym, LineSymbol):
                draw.line([(1, height - 2), (width // 3, 2), (2 * width // 3, height - 3), (width - 2, 1)],
                          fill=sym.stroke, width=max(1, round(sym.width)))
            elif isinstance(sym, PointSymbol):
                sprite = mark_sprite(sym)
                if sprite.width > min(width, height):
                    side = max(1, min(width, height))
                    sprite = sprite.resize((side, side), Image.Resampling.LANCZOS)
                image.alpha_composite(sprite, dest=((width - sprite.width) // 2, (height - sprite.height) // 2))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()
