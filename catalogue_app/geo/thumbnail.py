"""Thumbnail images: the view a dataset's thumbnail shows, drawing it, and checking images that
users send (read with Pillow, re-encoded, made smaller when large).

The size is GeoNode's (500 x 200): GeoNode clients lay their resource cards out for that shape,
so an image of it fills a card without being cropped.
"""

from __future__ import annotations

import functools
import io
import math
import warnings

from catalogue_app.geo.crs import to_wgs84_bounds

WIDTH, HEIGHT = 500, 200
MARGIN = 0.05  # of the data's width and height, on each side
MERCATOR_LIMIT = 85.0511287798066  # the latitudes Web Mercator (EPSG:3857) covers
MERCATOR_HALF = 20037508.342789244  # its x and y at the edge of that area
MAX_SIDE = 1024  # a larger image sent by a user is scaled down to fit in this square
MAX_PIXELS = 25_000_000  # beyond this a sent image is refused unread (a small file can unpack to gigabytes)
READABLE = ("PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF")  # formats Pillow reads without outside programs

Box = tuple[float, float, float, float]


class InvalidImage(ValueError):
    """The bytes are not an image of a readable kind."""


def fit(box: Box, width: int = WIDTH, height: int = HEIGHT, margin: float = 0.0, least: float = 0.0) -> Box:
    """``box`` (x0, y0, x1, y1) grown by ``margin`` on each side, then along its narrower
    direction, about its centre, to the width/height shape of the image. A box with no width
    or height (one point) is given ``least`` in both directions first."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    if w <= 0 and h <= 0:
        w = h = least
    elif w <= 0:
        w = h * width / height
    elif h <= 0:
        h = w * height / width
    w, h = w * (1 + 2 * margin), h * (1 + 2 * margin)
    if w / h < width / height:
        w = h * width / height
    else:
        h = w * height / width
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2


def dataset_view(ll_box: Box | None, native_box: Box | None, native_crs: str | None) -> tuple[Box, str]:
    """The box and CRS a dataset's thumbnail shows: its longitude/latitude box in Web Mercator
    when the box lies within the latitudes Mercator covers, else in EPSG:4326 (a box crossing
    the antimeridian shows the whole width of the world); its own box in its own CRS when it has
    no longitude/latitude box. A margin of 5 % is kept around the data."""
    if ll_box is not None and all(v is not None and math.isfinite(v) for v in ll_box):
        x0, y0, x1, y1 = ll_box
        if x0 > x1:  # crosses the antimeridian
            x0, x1 = -180.0, 180.0
        if -MERCATOR_LIMIT <= y0 and y1 <= MERCATOR_LIMIT:
            box = fit(_mercator((x0, y0, x1, y1)), margin=MARGIN, least=2000.0)
            return _clamp_mercator(box), "EPSG:3857"
        return fit((x0, y0, x1, y1), margin=MARGIN, least=0.02), "EPSG:4326"
    if native_box is None or native_crs is None or not all(v is not None for v in native_box):
        raise ValueError("the dataset has no bounding box")
    return fit(native_box, margin=MARGIN, least=1.0), native_crs


def _mercator(box: Box) -> Box:
    """A longitude/latitude box in Web Mercator metres (both axes are monotonic: corners suffice)."""
    def x(lon: float) -> float:
        return lon * MERCATOR_HALF / 180.0

    def y(lat: float) -> float:
        return math.log(math.tan(math.pi / 4 + math.radians(lat) / 2)) * MERCATOR_HALF / math.pi

    return x(box[0]), y(box[1]), x(box[2]), y(box[3])


def _clamp_mercator(box: Box) -> Box:
    """A fitted Mercator box moved back inside the map's north and south edges where it can be."""
    x0, y0, x1, y1 = box
    if y1 - y0 >= 2 * MERCATOR_HALF:
        return box
    if y1 > MERCATOR_HALF:
        y0, y1 = y0 - (y1 - MERCATOR_HALF), MERCATOR_HALF
    if y0 < -MERCATOR_HALF:
        y0, y1 = -MERCATOR_HALF, y1 + (-MERCATOR_HALF - y0)
    return x0, y0, x1, y1


def requested_view(values: object, srid: object) -> tuple[Box, str]:
    """A box sent as GeoNode's set_thumbnail_from_bbox sends it, [xmin, xmax, ymin, ymax] in
    ``srid`` ("EPSG:n"), as (x0, y0, x1, y1) fitted to the image's shape; ValueError naming
    what is wrong."""
    if not isinstance(values, list) or len(values) != 4:
        raise ValueError("bbox: expected a list of four numbers [xmin, xmax, ymin, ymax].")
    numbers = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError("bbox: expected a list of four numbers [xmin, xmax, ymin, ymax].")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"bbox: {value!r} is not a number.") from None
        if not math.isfinite(number):
            raise ValueError("bbox: the numbers must be finite.")
        numbers.append(number)
    xmin, xmax, ymin, ymax = numbers
    if not (xmin < xmax and ymin < ymax):
        raise ValueError("bbox: expected xmin < xmax and ymin < ymax, in the order [xmin, xmax, ymin, ymax].")
    if isinstance(srid, int) and not isinstance(srid, bool):
        srid = f"EPSG:{srid}"
    if not isinstance(srid, str) or not srid.upper().startswith("EPSG:") or not srid[5:].isdecimal():
        raise ValueError('srid: expected a code such as "EPSG:3857".')
    srid = srid.upper()
    try:
        to_wgs84_bounds(srid, (xmin, ymin, xmax, ymax))
        area = _area(srid)
    except ValueError as exc:
        raise ValueError(f"srid {srid}: {exc}.") from None
    except Exception:  # pyproj refusing the box in ways of its own
        raise ValueError(f"bbox: the box cannot be placed in {srid}.") from None
    if area is not None:
        ax0, ay0, ax1, ay1 = area
        if xmax < ax0 or xmin > ax1 or ymax < ay0 or ymin > ay1:
            raise ValueError(f"bbox: the box lies outside the area {srid} covers.")
        if xmax - xmin > 10 * (ax1 - ax0) or ymax - ymin > 10 * (ay1 - ay0):
            raise ValueError(f"bbox: the box is many times larger than the area {srid} covers.")
    return fit((xmin, ymin, xmax, ymax)), srid


@functools.lru_cache(maxsize=64)
def _area(srid: str) -> Box | None:
    """The area a CRS is meant for, in its own x/y; None when pyproj does not know it."""
    from pyproj import CRS, Transformer

    crs = CRS.from_user_input(srid)
    use = crs.area_of_use
    if use is None:
        return None
    box = Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform_bounds(
        use.west, use.south, use.east, use.north, densify_pts=21)
    return box if all(math.isfinite(v) for v in box) and box[0] < box[2] and box[1] < box[3] else None


def draw(path: str, kind: str, crs: str, sld: bytes | None, box: Box, box_crs: str,
         width: int = WIDTH, height: int = HEIGHT, version: int | None = None) -> bytes:
    """A PNG of one dataset (its working copy at ``path``, at data version ``version``) over
    ``box`` of ``box_crs``."""
    from catalogue_app.geo.render import MapLayer, render_map

    layer = MapLayer(path=path, kind="raster" if kind == "raster" else "vector", crs=crs, sld=sld, version=version)
    return render_map([layer], box, box_crs, width, height, image_format="image/png", transparent=False)


def normalise(data: bytes) -> tuple[bytes, str]:
    """A sent image re-encoded: JPEG stays JPEG, anything else becomes PNG; larger than
    MAX_SIDE, it is scaled down. Returns the bytes and the extension ("png" or "jpg");
    InvalidImage when the bytes are no readable image."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Pillow's DecompressionBombWarning: the size is checked here
            image = Image.open(io.BytesIO(data), formats=READABLE)
            if image.width * image.height > MAX_PIXELS or not image.width or not image.height:
                raise InvalidImage("The image is too large.")
            jpeg = image.format == "JPEG"
            if jpeg:
                image.draft("RGB", (MAX_SIDE, MAX_SIDE))  # decodes a large JPEG at a fraction of its size
            image.load()
            image = ImageOps.exif_transpose(image)
    except InvalidImage:
        raise
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise InvalidImage(str(exc) or "not an image") from None
    if image.width > MAX_SIDE or image.height > MAX_SIDE:
        image.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.BICUBIC)
    out = io.BytesIO()
    if jpeg:
        if image.mode not in ("RGB", "L"):
            image = image.convert("RGB")
        image.save(out, "JPEG", quality=88, optimize=True)
        return out.getvalue(), "jpg"
    if image.mode not in ("1", "L", "LA", "P", "RGB", "RGBA"):
        image = image.convert("RGBA")
    image.save(out, "PNG", optimize=False, compress_level=6)
    return out.getvalue(), "png"
