"""The image a map is drawn on: a (height, width, 4) uint8 RGBA numpy array, the View that
places a box of map coordinates on it, and laying one image over another."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image


@dataclass(frozen=True)
class View:
    """The map: a box (x east, y north, in the map's CRS) drawn onto width x height pixels.
    Pixel column i spans [i, i + 1) in pixel coordinates; rows count down from the top."""

    bbox: tuple[float, float, float, float]
    width: int
    height: int

    @property
    def scale(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.bbox
        return self.width / (x1 - x0), self.height / (y1 - y0)

    def pixels(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel coordinates (floats) of map coordinates."""
        sx, sy = self.scale
        return (x - self.bbox[0]) * sx, (self.bbox[3] - y) * sy


def new_canvas(view: View, colour: tuple[int, int, int, int]) -> np.ndarray:
    canvas = np.empty((view.height, view.width, 4), np.uint8)
    canvas[:] = colour
    return canvas


def packed(colour: tuple[int, int, int, int]) -> np.uint32:
    """An RGBA colour as the uint32 that a pixel of a canvas viewed as uint32 holds."""
    return np.array(colour, np.uint8).view(np.uint32)[0]


def words(canvas: np.ndarray) -> np.ndarray:
    """The canvas as a (height * width) uint32 array sharing its memory: one word per pixel."""
    return canvas.view(np.uint32).reshape(-1)


def over(canvas: np.ndarray, layer: np.ndarray) -> np.ndarray:
    """``layer`` (RGBA, straight alpha) laid over ``canvas``; a new array."""
    out = Image.alpha_composite(Image.fromarray(canvas, "RGBA"), Image.fromarray(layer, "RGBA"))
    return np.asarray(out).copy()
