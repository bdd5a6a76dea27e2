"""Thumbnails of documents: an image document is its own picture, a PDF its first page.

The picture fills the card's shape (geo/thumbnail.py WIDTH x HEIGHT): an image is scaled to cover
it and cut about its centre; a page is scaled to the card's width and its top shown, where a
title and the first lines are. Images go through Pillow with the same size guard as the images
users send (a small file can unpack to gigabytes); PDF pages are drawn by PDFium (pypdfium2) at
the one scale needed, so no page, however large its paper size, is drawn larger than the card.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

from catalogue_app.geo.thumbnail import HEIGHT, MAX_PIXELS, READABLE, WIDTH

IMAGES = {"png", "jpg", "jpe", "jpeg", "gif", "bmp", "bm", "tif", "tiff", "webp"}
PAGES = {"pdf"}
MAX_FILE = 512 * 1024 * 1024  # larger files are not opened to draw a thumbnail
PAPER = (0xFF, 0xFF, 0xFF)


def drawable(extension: str | None) -> bool:
    return (extension or "").lower() in IMAGES | PAGES


def draw(path: Path, extension: str) -> bytes | None:
    """PNG bytes of the document's thumbnail; None when the file is no readable image or PDF."""
    extension = extension.lower()
    try:
        if path.stat().st_size > MAX_FILE:
            return None
    except OSError:
        return None
    if extension in PAGES:
        picture = _first_page(path)
    elif extension in IMAGES:
        picture = _image(path)
    else:
        return None
    if picture is None:
        return None
    out = io.BytesIO()
    picture.save(out, "PNG", optimize=False, compress_level=6)
    return out.getvalue()


def _image(path: Path):
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            image = Image.open(path, formats=READABLE)
            if not image.width or not image.height or image.width * image.height > MAX_PIXELS:
                return None
            image.draft("RGB", (WIDTH * 2, HEIGHT * 2))  # a JPEG decodes at a fraction of its size
            image.load()
            image = ImageOps.exif_transpose(image)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        return None
    if image.mode in ("RGBA", "LA", "P"):
        image = image.convert("RGBA")
        backed = Image.new("RGBA", image.size, PAPER + (255,))
        backed.alpha_composite(image)
        image = backed
    return ImageOps.fit(image.convert("RGB"), (WIDTH, HEIGHT), Image.Resampling.BICUBIC)


def _first_page(path: Path):
    import pypdfium2 as pdfium
    from PIL import Image

    try:
        pdf = pdfium.PdfDocument(str(path))
    except (pdfium.PdfiumError, OSError, ValueError):
        return None
    try:
        if len(pdf) == 0:
            return None
        page = pdf[0]
        width, height = page.get_size()
        if not width > 0 or not height > 0:
            return None
        scale = WIDTH / width
        shown = min(height, HEIGHT / scale)  # the top of the page, in points
        bitmap = page.render(scale=scale, crop=(0, height - shown, 0, 0), fill_color=PAPER + (255,))
        picture = bitmap.to_pil().convert("RGB")
    except (pdfium.PdfiumError, OSError, ValueError):
        return None
    finally:
        pdf.close()
    if picture.size != (WIDTH, HEIGHT):  # a page shorter than the card: on paper-coloured ground
        ground = Image.new("RGB", (WIDTH, HEIGHT), PAPER)
        ground.paste(picture.resize((WIDTH, min(HEIGHT, picture.height))), (0, 0))
        picture = ground
    return picture
