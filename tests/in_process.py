"""The application served inside the test process: the same app a ``catalogue serve`` worker
builds, driven over ASGI instead of a socket.

``InProcessServer`` has the interface of ``tests.conftest.Server`` that API tests use (data_dir,
url, client(auth=..., token=...), pid, stop()), so a test module picks one or the other
in its fixture and nothing else changes. The app runs on an event loop of its own, in a thread,
as a server worker runs it: startup and shutdown go through the ASGI lifespan, every request
through the app's own middleware; the answer returns once its last byte is sent, while whatever
the app still does after it (background tasks, jobs) goes on, as behind a real server.

Not for what needs a process boundary: several workers, restarts, signals, the server's log,
sockets and connection handling, or clients that open their own connections (OWSLib, requests).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
from pathlib import Path

import httpx

from catalogue_app.app import served_app
from catalogue_app.bootstrap import prepare
from catalogue_app.config import load_settings

log = logging.getLogger(__name__)
CHUNK = 64 * 1024  # request bodies reach the app in parts of this size, as from a socket


class InProcessServer:
    def __init__(self, data_dir: Path, env: dict[str, str] | None = None, *, admin_password: str, port: int):
        self.data_dir = data_dir
        self.port = port  # nothing listens there: it names the server in URLs and Host headers
        self.url = f"http://127.0.0.1:{port}"
        self.pid = os.getpid()  # jobs run in this process
        environ = {**os.environ, "CATALOGUE_ADMIN_PASSWORD": admin_password, **(env or {})}
        self.settings = load_settings(environ, data_dir=data_dir, port=port)
        prepare(self.settings)  # what `catalogue serve` does before its workers start
        self.app = served_app(self.settings)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=f"in-process-{port}", daemon=True)
        self.thread.start()
        self._shutdown = asyncio.Event()
        started: concurrent.futures.Future = concurrent.futures.Future()
        self._lifespan = asyncio.run_coroutine_threadsafe(self._run_lifespan(started), self.loop)
        failure = started.result(timeout=60)
        if failure is not None:
            self._stop_loop()
            raise RuntimeError(f"app did not start: {failure}")

    async def _run_lifespan(self, started: concurrent.futures.Future) -> None:
        sent_startup = False

        async def receive() -> dict:
            nonlocal sent_startup
            if not sent_startup:
                sent_startup = True
                return {"type": "lifespan.startup"}
            await self._shutdown.wait()
            return {"type": "lifespan.shutdown"}

        async def send(message: dict) -> None:
            if message["type"] == "lifespan.startup.complete":
                started.set_result(None)
            elif message["type"] == "lifespan.startup.failed":
                started.set_result(message.get("message") or "startup failed")
            elif message["type"] == "lifespan.shutdown.failed":
                raise RuntimeError(message.get("message") or "shutdown failed")

        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.3"}, "state": {}}
        try:
            await self.app(scope, receive, send)
        finally:
            if not started.done():
                started.set_result("the app ended during startup")

    def output(self) -> str:
        """There is no server log: the app logs through this process's logging (pytest shows it
        with a failure). A test that reads the server's log needs a real ``Server``."""
        raise NotImplementedError("an in-process app has no log of its own; use tests.conftest.Server")

    def client(self, auth: tuple[str, str] | None = None, token: str | None = None,
               retry_all: bool = False) -> httpx.Client:
        """A client whose requests go straight to the app. ``retry_all`` is accepted for
        Server's sake: there is no kept-alive connection here to go stale."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, auth=auth, headers=headers, timeout=30,
                            transport=AppTransport(self))

    def stop(self) -> None:
        if not self.thread.is_alive():
            return
        self.loop.call_soon_threadsafe(self._shutdown.set)
        try:
            self._lifespan.result(timeout=30)
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.loop.close()

    async def serve(self, request: httpx.Request, body: bytes) -> httpx.Response:
        """One HTTP exchange with the app; returns when the answer is complete."""
        url = request.url
        raw_path = url.raw_path.split(b"?", 1)[0]
        scope = {
            "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "method": request.method, "scheme": url.scheme, "path": url.path, "raw_path": raw_path,
            "query_string": url.query, "root_path": "",
            "headers": [(name.lower(), value) for name, value in request.headers.raw],
            "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", self.port), "state": {},
        }
        parts = [body[i:i + CHUNK] for i in range(0, len(body), CHUNK)] or [b""]
        answered = asyncio.Event()
        start: dict = {}
        chunks: list[bytes] = []
        complete = False

        async def receive() -> dict:
            if parts:
                part = parts.pop(0)
                return {"type": "http.request", "body": part, "more_body": bool(parts)}
            await answered.wait()  # the client stays connected until it has the answer
            return {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            nonlocal complete
            if answered.is_set():
                return
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    complete = True
                    answered.set()

        async def run_app() -> None:
            try:
                await self.app(scope, receive, send)
            finally:
                answered.set()

        task = asyncio.ensure_future(run_app())
        await answered.wait()
        if not complete:
            # the app ended without a whole answer: a server would answer 500 or drop the
            # connection; here the test sees the app's exception
            await asyncio.wait([task])
            if task.exception() is not None:
                raise task.exception()
            raise RuntimeError(f"the app ended its answer to {request.method} {url} unfinished")
        task.add_done_callback(_log_late_failure)
        return httpx.Response(start["status"], headers=start.get("headers", []), stream=httpx.ByteStream(b"".join(chunks)),
                              request=request, extensions={"http_version": b"HTTP/1.1"})


def _log_late_failure(task: asyncio.Future) -> None:
    """What the app raised after its answer was sent (a background task) goes to the log, as a
    server would write it there."""
    if not task.cancelled() and task.exception() is not None:
        log.error("the app failed after answering", exc_info=task.exception())


class AppTransport(httpx.BaseTransport):
    """Hands each request of a sync httpx client to the app on its event loop."""

    def __init__(self, server: InProcessServer):
        self.server = server

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        timeout = (request.extensions.get("timeout") or {}).get("read")
        future = asyncio.run_coroutine_threadsafe(self.server.serve(request, body), self.server.loop)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise httpx.ReadTimeout("the app did not answer in time", request=request) from None
