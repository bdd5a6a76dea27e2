"""The web UI: its page at `/` (and at GeoNode's `/catalogue/`, where `detail_url` values point,
e.g. /catalogue/#/dataset/12) and its files at /ui/.

The files come from the `catalogue_ui` package (the top-level ui/ folder). Text files are sent
gzip-compressed to browsers that accept it, compressed once per process and kept in memory with
their ETag; a changed file on disk (during development) is read again. The page forbids framing
and anything not served by the catalogue itself (Content-Security-Policy: default-src 'self').
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import mimetypes
import threading
from dataclasses import dataclass
from pathlib import Path

from litestar import Request, Response, get
from litestar.params import FromPath

ROOT = Path(str(importlib.resources.files("catalogue_ui")))
CSP = ("default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
       "object-src 'none'; base-uri 'self'; form-action 'self'; frame-src 'self'; frame-ancestors 'none'")
PAGE_HEADERS = {"Content-Security-Policy": CSP, "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "same-origin", "Cache-Control": "no-cache"}
MAX_PATH = 255  # no file of the UI has a longer path
COMPRESSIBLE = {".html", ".js", ".css", ".svg", ".json"}
TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html",
         ".svg": "image/svg+xml", ".png": "image/png", ".json": "application/json"}


@dataclass(frozen=True)
class _File:
    mtime: float
    etag: str
    body: bytes
    gzipped: bytes | None
    media_type: str


_files: dict[Path, _File] = {}
_lock = threading.Lock()


def _load(path: Path) -> _File | None:
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    cached = _files.get(path)
    if cached is not None and cached.mtime == mtime:
        return cached
    body = path.read_bytes()
    gzipped = gzip.compress(body, 9, mtime=0) if path.suffix in COMPRESSIBLE and len(body) > 512 else None
    media = TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    found = _File(mtime, '"' + hashlib.sha256(body).hexdigest()[:20] + '"', body, gzipped, media)
    with _lock:
        _files[path] = found
    return found


def _send(request: Request, found: _File, headers: dict[str, str]) -> Response[bytes]:
    headers = {**headers, "ETag": found.etag, "Vary": "Accept-Encoding"}
    if found.etag in request.headers.get("if-none-match", ""):
        return Response(b"", status_code=304, headers=headers)
    if found.gzipped is not None and "gzip" in request.headers.get("accept-encoding", ""):
        return Response(found.gzipped, media_type=found.media_type, headers={**headers, "Content-Encoding": "gzip"})
    return Response(found.body, media_type=found.media_type, headers=headers)


def _not_found() -> Response[bytes]:
    return Response(b'{"success":false,"errors":["Not found."],"code":"not_found","detail":"Not found."}',
                    status_code=404, media_type="application/json")


@get(["/", "/catalogue", "/catalogue/"], include_in_schema=False)
async def index(request: Request) -> Response[bytes]:
    found = _load(ROOT / "index.html")
    return _send(request, found, PAGE_HEADERS) if found else _not_found()


@get("/ui/{path:path}", include_in_schema=False)
async def asset(request: Request, path: FromPath[str]) -> Response[bytes]:
    if len(path) > MAX_PATH or "\x00" in path:
        return _not_found()
    try:
        target = (ROOT / path.lstrip("/")).resolve()
        if not target.is_relative_to(ROOT.resolve()) or target.suffix == ".py" or "__pycache__" in target.parts:
            return _not_found()
        found = _load(target) if target.is_file() else None
    except OSError:  # a name the file system refuses (too long, say) names no file of the UI
        return _not_found()
    if found is None:
        return _not_found()
    return _send(request, found, {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"})


ROUTES = [index, asset]
