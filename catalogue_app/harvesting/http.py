"""The HTTP client harvesters and publishers use to read other services: time limits, a size
limit on what is read into memory, and errors turned into HarvestError with a plain message."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from catalogue_app.harvesting.types import HarvestError

TIMEOUT = httpx.Timeout(30.0, connect=10.0)
MAX_BODY = 64 * 1024 * 1024          # a document read into memory (capabilities, JSON pages)
MAX_DOWNLOAD = 4 * 1024 * 1024 * 1024  # a data file written to disk
USER_AGENT = "catalogue-harvester/1"
BODY_SECONDS = 120.0       # a document read into memory, from the request to its last byte
DOWNLOAD_SECONDS = 3600.0  # a data file (the time limit above is per read: a remote sending a
                           # byte now and then would otherwise hold a harvest for ever)


def _in_time(url: str, deadline: float) -> None:
    if time.monotonic() > deadline:
        raise HarvestError(f"{url} took too long to send its answer.")


def client(token: str | None = None) -> httpx.Client:
    headers = {"User-Agent": USER_AGENT}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.Client(timeout=TIMEOUT, headers=headers, follow_redirects=True)


def _fail(url: str, exc: Exception) -> HarvestError:
    if isinstance(exc, httpx.TimeoutException):
        return HarvestError(f"{url} did not answer in time.")
    if isinstance(exc, httpx.HTTPStatusError):
        return HarvestError(f"{url} answered {exc.response.status_code}.")
    return HarvestError(f"{url} could not be reached: {exc}")


def get_bytes(http: httpx.Client, url: str, params: dict[str, Any] | None = None, limit: int = MAX_BODY) -> bytes:
    try:
        deadline = time.monotonic() + BODY_SECONDS
        with http.stream("GET", url, params=params) as response:
            response.raise_for_status()
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                _in_time(url, deadline)
                size += len(chunk)
                if size > limit:
                    raise HarvestError(f"{url} sent more than {limit // (1024 * 1024)} MB.")
                chunks.append(chunk)
            return b"".join(chunks)
    except httpx.HTTPError as exc:
        raise _fail(url, exc) from None


def get_json(http: httpx.Client, url: str, params: dict[str, Any] | None = None) -> Any:
    body = get_bytes(http, url, params)
    try:
        import msgspec

        return msgspec.json.decode(body)
    except Exception:
        raise HarvestError(f"{url} did not answer with JSON.") from None


def download(http: httpx.Client, url: str, target: Path, limit: int = MAX_DOWNLOAD) -> Path:
    """The file at ``url`` written to ``target`` (removed again when the download fails)."""
    try:
        deadline = time.monotonic() + DOWNLOAD_SECONDS
        with http.stream("GET", url) as response, open(target, "wb") as out:
            response.raise_for_status()
            size = 0
            for chunk in response.iter_bytes():
                _in_time(url, deadline)
                size += len(chunk)
                if size > limit:
                    raise HarvestError(f"{url} is larger than {limit // (1024 * 1024)} MB.")
                out.write(chunk)
        return target
    except (httpx.HTTPError, HarvestError) as exc:
        target.unlink(missing_ok=True)
        if isinstance(exc, HarvestError):
            raise
        raise _fail(url, exc) from None


def send(http: httpx.Client, method: str, url: str, **kwargs: Any) -> httpx.Response:
    """One request of any method (a POST with a form or files, a PATCH with JSON...), answered
    whatever its status (the caller reads the remote's error); a remote that cannot be reached
    or does not answer in time is a HarvestError."""
    try:
        return http.request(method, url, **kwargs)
    except httpx.HTTPError as exc:
        raise _fail(url, exc) from None
