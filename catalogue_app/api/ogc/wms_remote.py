"""Remote datasets in the catalogue's WMS: their maps, feature information and legends are asked
of the remote WMS that serves them (store/remote_layers.py), with the same box, size, CRS and
format, within a time and a size limit. A remote that cannot be read, or answers with an
exception, gives an OGC exception with status 502 that says so.

Requests to the remote use WMS 1.1.1 (x, y box order whatever the CRS), which every WMS speaks.
A map mixing remote and local layers is put together here, in the layers' order.
"""

from __future__ import annotations

import io
import re
import threading
from typing import Any

import httpx
from PIL import Image

from catalogue_app.api.ogc.common import OgcError
from catalogue_app.harvesting import http
from catalogue_app.harvesting.types import HarvestError

TIMEOUT = httpx.Timeout(20.0, connect=5.0)
MAX_IMAGE = 32 * 1024 * 1024
MAX_INFO = 4 * 1024 * 1024
MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))
EXCEPTION_TEXT = re.compile(rb"<(?:\w+:)?(?:ServiceException|ExceptionText)\b[^>]*>(.*?)</", re.S)

_client: httpx.Client | None = None
_lock = threading.Lock()


def client() -> httpx.Client:
    """One client for the process (it is safe across threads), with short time limits: a map
    is waited for by a person."""
    global _client
    with _lock:
        if _client is None:
            _client = http.client()
            _client.timeout = TIMEOUT
        return _client


def is_remote(layer: dict[str, Any]) -> bool:
    return bool(layer.get("remote_url"))


def _srs(crs: str) -> str:
    return "EPSG:4326" if crs.upper() in ("CRS:84", "OGC:CRS84") else crs


def _box(bbox: tuple[float, float, float, float]) -> str:
    return ",".join(repr(float(v)) for v in bbox)


def _fetch(layer: dict[str, Any], params: dict[str, str], limit: int) -> bytes:
    """The remote's answer; one with an error status is read too, for the exception it holds
    (one without is an OgcError saying the status)."""
    url = layer["remote_url"]
    try:
        with client().stream("GET", url, params=params) as response:
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise HarvestError(f"{url} sent more than {limit // (1024 * 1024)} MB.")
                chunks.append(chunk)
            body = b"".join(chunks)
            if response.status_code >= 400:
                if EXCEPTION_TEXT.search(body):
                    raise _refusal(layer, body)
                raise HarvestError(f"{url} answered {response.status_code}.")
            return body
    except httpx.TimeoutException:
        problem = f"{url} did not answer in time."
    except httpx.HTTPError as exc:
        problem = f"{url} could not be reached: {exc}"
    except HarvestError as exc:
        problem = str(exc)
    raise OgcError("NoApplicableCode", f'The remote service of "{layer["alternate"]}" could not be read: {problem}',
                   None, 502)


def _refusal(layer: dict[str, Any], body: bytes) -> OgcError:
    found = EXCEPTION_TEXT.search(body)
    said = " ".join(found.group(1).decode("utf-8", "replace").split()) if found else "no image"
    return OgcError("NoApplicableCode", f'The remote service of "{layer["alternate"]}" answered: {said[:500]}',
                    None, 502)


def image_type(body: bytes) -> str | None:
    return next((media for magic, media in MAGIC if body.startswith(magic)), None)


def get_map(layer: dict[str, Any], bbox: tuple[float, float, float, float], crs: str, width: int, height: int,
            image_format: str, transparent: bool, bgcolor: tuple[int, int, int]) -> tuple[bytes, str]:
    """The remote's image of its layer (bbox in x, y order of ``crs``) and its media type."""
    params = {"SERVICE": "WMS", "VERSION": "1.1.1", "REQUEST": "GetMap", "LAYERS": layer["remote_layer"],
              "STYLES": "", "SRS": _srs(crs), "BBOX": _box(bbox), "WIDTH": str(width), "HEIGHT": str(height),
              "FORMAT": image_format, "TRANSPARENT": "TRUE" if transparent else "FALSE",
              "BGCOLOR": "0x%02X%02X%02X" % bgcolor, "EXCEPTIONS": "application/vnd.ogc.se_xml"}
    body = _fetch(layer, params, MAX_IMAGE)
    media = image_type(body)
    if media is None:
        raise _refusal(layer, body)
    return body, media


MAX_PIXELS = 4096 * 4096  # an image of the remote's is drawn no larger (the WMS's MaxWidth x MaxHeight)


def _decoded(body: bytes) -> Image.Image:
    """The remote's image as RGBA; one that cannot be read (cut short, not what its first bytes
    say) or is larger than any map asked is an OGC exception with status 502, like its other
    failures."""
    try:
        image = Image.open(io.BytesIO(body))
        if image.width * image.height > MAX_PIXELS:
            raise ValueError(f"an image of {image.width} x {image.height} pixels")
        return image.convert("RGBA")
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise OgcError("NoApplicableCode", f"The remote service's image could not be read: {exc}"[:500],
                       None, 502) from None


def rgba(body: bytes, width: int, height: int, opacity: float = 1.0) -> Image.Image:
    """An image as RGBA of the map's size, faded by ``opacity``."""
    image = _decoded(body)
    if image.size != (width, height):
        image = image.resize((width, height))
    if opacity < 1.0:
        alpha = image.getchannel("A").point(lambda a: int(a * max(0.0, opacity)))
        image.putalpha(alpha)
    return image


def encode(image: Image.Image, image_format: str, transparent: bool, bgcolor: tuple[int, int, int]) -> bytes:
    """An RGBA image as PNG or JPEG, laid on the background colour unless transparent PNG."""
    if not (transparent and image_format == "image/png"):
        ground = Image.new("RGBA", image.size, (*bgcolor, 255))
        ground.alpha_composite(image)
        image = ground
    out = io.BytesIO()
    if image_format == "image/jpeg":
        image.convert("RGB").save(out, format="JPEG", quality=90)
    else:
        image.save(out, format="PNG")
    return out.getvalue()


def as_format(body: bytes, media: str, image_format: str, transparent: bool, bgcolor: tuple[int, int, int]) -> bytes:
    """The remote's image in the format asked (most answer in it already)."""
    if media == image_format:
        return body
    return encode(_decoded(body), image_format, transparent, bgcolor)


def get_feature_info(layer: dict[str, Any], bbox: tuple[float, float, float, float], crs: str, width: int,
                     height: int, col: int, row: int, info_format: str, count: int) -> bytes:
    params = {"SERVICE": "WMS", "VERSION": "1.1.1", "REQUEST": "GetFeatureInfo", "LAYERS": layer["remote_layer"],
              "QUERY_LAYERS": layer["remote_layer"], "STYLES": "", "SRS": _srs(crs), "BBOX": _box(bbox),
              "WIDTH": str(width), "HEIGHT": str(height), "X": str(col), "Y": str(row), "INFO_FORMAT": info_format,
              "FEATURE_COUNT": str(count), "EXCEPTIONS": "application/vnd.ogc.se_xml"}
    body = _fetch(layer, params, MAX_INFO)
    if b"ServiceException" in body[:2000] or b"ExceptionReport" in body[:2000]:
        raise _refusal(layer, body)
    return body


def get_legend_graphic(layer: dict[str, Any], width: int, height: int) -> bytes:
    params = {"SERVICE": "WMS", "VERSION": "1.1.1", "REQUEST": "GetLegendGraphic", "LAYER": layer["remote_layer"],
              "FORMAT": "image/png", "WIDTH": str(width), "HEIGHT": str(height),
              "EXCEPTIONS": "application/vnd.ogc.se_xml"}
    body = _fetch(layer, params, MAX_IMAGE)
    if image_type(body) != "image/png":
        if image_type(body) is None:
            raise _refusal(layer, body)
        body = as_format(body, image_type(body) or "", "image/png", True, (255, 255, 255))
    return body
