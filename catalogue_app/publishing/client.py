"""A small client of a remote GeoNode REST API v2 (a GeoNode, or another instance of this
catalogue): what publishing needs and nothing more. It sends what geonodectl sends (Bearer
token, ``uploads/upload`` with ``base_file``, ``executionrequest/{id}``, ``resources/{pk}``,
``resources/{pk}/permissions``, ``resources/{pk}/set_thumbnail``, ``documents``), and turns every
refusal into a RemoteError that says which address answered what."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import msgspec

from catalogue_app.harvesting import http
from catalogue_app.harvesting.types import HarvestError

OPEN = ("ready", "running")
CHECK_TIMEOUT = httpx.Timeout(15.0, connect=5.0)  # a person waits for the check of a remote
MAKE_TOKEN = ("Make a new token there (in a catalogue like this one: My things › My tokens; in GeoNode: an access "
              "token from its administration pages) and save it here.")


class RemoteError(Exception):
    """The remote could not be reached, or refused: the message says where and what it said.
    ``status`` is the HTTP status of a refusal (None when there was no answer)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def said(response: httpx.Response) -> str:
    """What an error answer says, in a line: GeoNode's envelope (``errors``), DRF's ``detail``,
    an action's ``message``, or the start of the body."""
    try:
        body = msgspec.json.decode(response.content)
    except msgspec.DecodeError:
        body = None
    if isinstance(body, dict):
        for key in ("errors", "detail", "message", "error"):
            value = body.get(key)
            if isinstance(value, list) and value:
                return "; ".join(str(v) for v in value)
            if isinstance(value, str) and value:
                return value
        return str(body)[:300]
    text = response.text.strip()
    return text[:300] if text else "(no message)"


def base_of(url: str) -> str:
    """The site's base address: without a trailing slash or a trailing /api/v2."""
    url = url.strip().rstrip("/")
    return url[: -len("/api/v2")] if url.endswith("/api/v2") else url


class Remote:
    """One remote API, with one HTTP client (close it, or use ``with``)."""

    def __init__(self, url: str, token: str | None, poll_every: float = 0.2, poll_max: float = 5.0):
        self.base = base_of(url)
        self.has_token = bool(token)
        self.http = http.client(token or None)
        self.poll_every = poll_every
        self.poll_max = poll_max

    def __enter__(self) -> Remote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def api(self, path: str) -> str:
        return f"{self.base}/api/v2/{path}"

    def resource_page(self, resource_type: str, pk: int) -> str:
        """The address of the resource's page on the remote (GeoNode's client side route)."""
        return f"{self.base}/catalogue/#/{resource_type}/{pk}"

    # -- plumbing ------------------------------------------------------------------------------
    def call(self, method: str, path: str, expect: tuple[int, ...] = (200,), **kwargs: Any) -> httpx.Response:
        url = self.api(path)
        try:
            response = http.send(self.http, method, url, **kwargs)
        except HarvestError as exc:
            raise RemoteError(str(exc)) from None
        if response.status_code not in expect:
            raise RemoteError(f"{method} {url} answered {response.status_code}: {said(response)}", response.status_code)
        return response

    def json(self, method: str, path: str, expect: tuple[int, ...] = (200,), **kwargs: Any) -> Any:
        response = self.call(method, path, expect, **kwargs)
        if response.status_code == 404 and 404 in expect:
            return None
        try:
            return msgspec.json.decode(response.content) if response.content else {}
        except msgspec.DecodeError:
            raise RemoteError(f"{method} {self.api(path)} did not answer with JSON "
                              f"(status {response.status_code}).", response.status_code) from None

    # -- checking --------------------------------------------------------------------------------
    def verify(self) -> None:
        """That a GeoNode API v2 answers at this address and, when there is a token, that it takes
        the token (an address that a wrong token cannot read: the caller's execution requests);
        a RemoteError that says plainly what to fix otherwise."""
        root = self.api("")
        response = self._try(root)
        if response.status_code in (401, 403):
            if self.has_token:
                raise RemoteError(f"The remote catalogue refused this token (it answered {response.status_code}). "
                                  f"{MAKE_TOKEN}", response.status_code)
            raise RemoteError(f"{self.base} asks for a token ({root} answered {response.status_code}): "
                              "give one of a user there.", response.status_code)
        if response.status_code >= 500:
            raise RemoteError(f"The catalogue at {self.base} has a problem: {root} answered {response.status_code}. "
                              "Try again later, or ask its administrators.", response.status_code)
        try:
            body = msgspec.json.decode(response.content) if response.status_code == 200 else None
        except msgspec.DecodeError:
            body = None
        if not isinstance(body, dict) or "resources" not in body:
            what = "answered " + str(response.status_code) if response.status_code != 200 else "did not list the API's endpoints"
            raise RemoteError(f"{self.base} answers, but is not a GeoNode API v2 ({root} {what}). Give the address "
                              "of the GeoNode site itself, such as https://geonode.example.org.", response.status_code)
        if not self.has_token:
            return
        mine = self.api("executionrequest")
        response = self._try(mine, params={"page_size": 1})
        if response.status_code in (401, 403):
            raise RemoteError(f"The remote catalogue refused this token (it answered {response.status_code}). {MAKE_TOKEN}",
                              response.status_code)
        if response.status_code != 200:
            raise RemoteError(f"{self.base} answered {response.status_code} when the token was tried ({mine}): "
                              f"{said(response)}", response.status_code)

    def _try(self, url: str, **kwargs: Any) -> httpx.Response:
        """A GET for the check of a remote, with its failures said for a person."""
        try:
            return self.http.get(url, timeout=CHECK_TIMEOUT, **kwargs)
        except httpx.TimeoutException:
            raise RemoteError(f"Nothing answered at {self.base} in time: check the address, and that the "
                              "catalogue there is running.") from None
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            if "CERTIFICATE" in reason.upper():
                raise RemoteError(f"{self.base} answers, but its certificate is not trusted here ({reason}).") from None
            raise RemoteError(f"Nothing answers at {self.base} ({reason}): check the address, and that the "
                              "catalogue there is running.") from None

    # -- reading ---------------------------------------------------------------------------------
    def resource(self, pk: int) -> dict[str, Any] | None:
        """The remote's resource, or None when it is gone (404)."""
        found = self.json("GET", f"resources/{pk}", (200, 404))
        return None if found is None else found.get("resource", found)

    def execution(self, exec_id: str) -> dict[str, Any] | None:
        """An execution request of the remote (None when it does not know it)."""
        found = self.json("GET", f"executionrequest/{exec_id}", (200, 404))
        return None if found is None else found.get("request", found)

    def executions_named(self, name: str) -> list[dict[str, Any]]:
        """The caller's execution requests on the remote whose ``name`` is exactly ``name``
        (the filter is checked here too: a remote that ignores it still gives the right ones)."""
        found = self.json("GET", "executionrequest", params={"filter{name}": name, "page_size": 100})
        rows = found.get("requests", []) if isinstance(found, dict) else []
        return [r for r in rows if isinstance(r, dict) and r.get("name") == name]

    def resources_titled(self, resource_type: str, title: str) -> list[dict[str, Any]]:
        plural = {"dataset": "datasets", "document": "documents"}.get(resource_type, "resources")
        found = self.json("GET", plural, params={"filter{title}": title, "page_size": 100})
        rows = found.get(plural, []) if isinstance(found, dict) else []
        return [r for r in rows if isinstance(r, dict) and r.get("title") == title]

    def user_id(self, username: str) -> int | None:
        found = self.json("GET", "users", params={"filter{username}": username, "page_size": 10})
        for row in found.get("users", []) if isinstance(found, dict) else []:
            if isinstance(row, dict) and row.get("username") == username:
                return int(row["pk"])
        return None

    def group_id(self, slug: str) -> int | None:
        """The id of the group (for a perms spec) whose profile has this slug."""
        found = self.json("GET", "groups", params={"filter{slug}": slug, "page_size": 10})
        for row in found.get("group_profiles", []) if isinstance(found, dict) else []:
            if isinstance(row, dict) and row.get("slug") == slug and isinstance(row.get("group"), dict):
                return int(row["group"]["pk"])
        return None

    def permissions(self, pk: int) -> dict[str, Any]:
        return self.json("GET", f"resources/{pk}/permissions")

    # -- waiting -----------------------------------------------------------------------------------
    def wait(self, exec_id: str, timeout: float) -> dict[str, Any] | None:
        """The execution request once it is no longer ready or running; the last state seen
        when ``timeout`` seconds passed first; None when the remote does not know it."""
        deadline = time.monotonic() + timeout
        pause = self.poll_every
        while True:
            request = self.execution(exec_id)
            if request is None or request.get("status") not in OPEN or time.monotonic() > deadline:
                return request
            time.sleep(pause)
            pause = min(pause * 1.5, self.poll_max)

    # -- writing ---------------------------------------------------------------------------------
    def upload(self, archive: Path, name: str, fields: dict[str, str]) -> str:
        """Send a zipped dataset as geonodectl does (the zip as ``base_file`` and ``zip_file``);
        the remote's execution id."""
        with open(archive, "rb") as first, open(archive, "rb") as second:
            files = {"base_file": (name, first, "application/zip"), "zip_file": (name, second, "application/zip")}
            body = self.json("POST", "uploads/upload", (200, 201), data=fields, files=files)
        exec_id = body.get("execution_id") if isinstance(body, dict) else None
        if not isinstance(exec_id, str) or not exec_id:
            raise RemoteError(f"POST {self.api('uploads/upload')} answered without an execution_id: {str(body)[:200]}")
        return exec_id

    def create_document(self, title: str, path: Path | None, file_name: str | None,
                        doc_url: str | None) -> dict[str, Any]:
        """A new document with this title and its file (or remote address); the remote's record."""
        if path is not None:
            with open(path, "rb") as handle:
                body = self.json("POST", "documents", (200, 201), data={"title": title},
                                 files={"doc_file": (file_name or path.name, handle, "application/octet-stream")})
        else:
            body = self.json("POST", "documents", (200, 201), json={"title": title, "doc_url": doc_url})
        found = body.get("document", body) if isinstance(body, dict) else None
        if not isinstance(found, dict) or "pk" not in found:
            raise RemoteError(f"POST {self.api('documents')} answered without a document: {str(body)[:200]}")
        return found

    def patch(self, pk: int, values: dict[str, Any]) -> dict[str, Any]:
        body = self.json("PATCH", f"resources/{pk}", json=values)
        return body.get("resource", body) if isinstance(body, dict) else {}

    def set_permissions(self, pk: int, spec: dict[str, Any], timeout: float, tries: int = 5) -> None:
        """PUT the perms spec and wait until the remote has applied it. A resource still busy
        with a previous change (GeoNode: 400 while dirty, here: 409) is tried again a little later."""
        for attempt in range(tries):
            try:
                receipt = self.json("PUT", f"resources/{pk}/permissions", json=spec)
                break
            except RemoteError as exc:
                if exc.status not in (400, 409) or attempt == tries - 1:
                    raise
                time.sleep(1 + attempt)
        exec_id = receipt.get("execution_id") if isinstance(receipt, dict) else None
        if not exec_id:
            return  # (a remote that applies them at once)
        done = self.wait(exec_id, timeout)
        if done is None:
            raise RemoteError(f"the remote lost the execution request {exec_id} of the permission change")
        if done.get("status") != "finished":
            raise RemoteError(f"the permission change on the remote ended {done.get('status')}: "
                              f"{done.get('log') or done.get('output_params')}")

    def set_thumbnail(self, pk: int, image: Path | None = None, address: str | None = None) -> None:
        path = f"resources/{pk}/set_thumbnail"
        if image is not None:
            media = "image/jpeg" if image.suffix.lower() in (".jpg", ".jpeg") else "image/png"
            with open(image, "rb") as handle:
                self.call("PUT", path, files={"file": (image.name, handle, media)})
        else:
            self.call("PUT", path, json={"file": address})
