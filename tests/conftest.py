"""Test fixtures: servers, each with its own data folder, and helpers to drive them.

``server`` and ``flagged_server`` run the app inside the test process (tests/in_process.py);
``Server`` starts a real ``catalogue serve`` process, for tests that need a process boundary
(several workers, restarts, the server's log, clients that open their own connections).
Nothing of the project is mocked.
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ADMIN_PASSWORD = "admin-secret-1"
USER_PASSWORD = "user-secret-1"
_names = itertools.count(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
ALL_METHODS = IDEMPOTENT | {"POST", "PATCH"}


class StaleConnectionRetry(httpx.HTTPTransport):
    """Sends a request once more, on a new connection, when the server closed the kept-alive
    connection it went on without answering, as browsers do. Measured here: about one request
    in 30,000 meets such a closed connection (the server stays up, the request is not served);
    long fuzz loops would otherwise fail on it now and then. ``methods`` are those sent again."""

    def __init__(self, methods: frozenset[str]):
        super().__init__()
        self.methods = methods

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return super().handle_request(request)
        except httpx.RemoteProtocolError:
            if request.method not in self.methods:
                raise
            return super().handle_request(request)


class Server:
    """A ``catalogue serve`` process on a free port."""

    pid: int

    def __init__(self, data_dir: Path, env: dict[str, str] | None = None, workers: int = 1, port: int | None = None):
        self.data_dir = data_dir
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "CATALOGUE_ADMIN_PASSWORD": ADMIN_PASSWORD, **(env or {})}
        self.log = data_dir.parent / f"server-{self.port}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "catalogue_app", "serve", "--data-dir", str(data_dir),
             "--port", str(self.port), "--workers", str(workers)],
            env=self.env, stdout=open(self.log, "wb"), stderr=subprocess.STDOUT,
        )
        self.pid = self.proc.pid
        self.wait_ready()

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited:\n{self.log.read_text()}")
            try:
                if httpx.get(f"{self.url}/api/v2/", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"server did not start:\n{self.log.read_text()}")

    def output(self) -> str:
        return self.log.read_text()

    def client(self, auth: tuple[str, str] | None = None, token: str | None = None,
               retry_all: bool = False) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, auth=auth, headers=headers, timeout=30,
                            transport=StaleConnectionRetry(ALL_METHODS if retry_all else IDEMPOTENT))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def in_process(data_dir: Path, env: dict[str, str] | None = None):
    """The app of a server with this data folder and environment, run in this process."""
    from tests.in_process import InProcessServer

    return InProcessServer(data_dir, env, admin_password=ADMIN_PASSWORD, port=free_port())


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("data") / "catalogue")
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def admin(server) -> httpx.Client:
    with server.client(auth=("admin", ADMIN_PASSWORD)) as c:
        yield c


@pytest.fixture
def anon(server) -> httpx.Client:
    with server.client() as c:
        yield c


LOOP_THREAD = "loop_0"  # the name of the thread run_loop runs its loop on


def run_loop(coroutine):
    """``asyncio.run(coroutine)`` on a thread of its own, as a server's loop runs: the test's own
    thread may already hold a running loop (Playwright's, when browser tests ran there first)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix=LOOP_THREAD.removesuffix("_0")) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def unique(prefix: str = "user") -> str:
    return f"{prefix}{os.getpid()}x{next(_names)}"


def make_user(admin: httpx.Client, **fields) -> dict:
    """Create a user through the API and return its JSON with the clear password added."""
    name = fields.pop("username", None) or unique()
    body = {"username": name, "email": f"{name}@example.org", "password": USER_PASSWORD, **fields}
    r = admin.post("/api/v2/users/", json=body)
    assert r.status_code == 200, r.text
    return {**r.json()["user"], "password": body["password"]}


def make_group(admin: httpx.Client, **fields) -> dict:
    title = fields.pop("title", None) or unique("Group ")
    r = admin.post("/api/v2/groups/", json={"title": title, "description": "for tests", **fields})
    assert r.status_code == 201, r.text
    return r.json()["group_profile"]


def login(server: Server, user: dict) -> httpx.Client:
    return server.client(auth=(user["username"], user["password"]))


def assert_envelope(response: httpx.Response, status: int, code: str, message: str | None = None) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["success"] is False
    assert isinstance(body["errors"], list) and len(body["errors"]) == 1
    assert isinstance(body["errors"][0], str) and body["errors"][0]
    assert body["code"] == code
    if message is not None:
        assert body["errors"][0] == message


@pytest.fixture(scope="session")
def flagged_server(tmp_path_factory):
    """A server with bulk update and patch-all on, and both user deletion rules."""
    srv = in_process(tmp_path_factory.mktemp("flagged") / "catalogue", env={
        "ENABLE_BULK_UPDATE": "true", "ENABLE_PATCH_ALL": "true", "USER_DELETION_RULES": "user_has_resources,user_is_manager"})
    yield srv
    srv.stop()


def insert_resource(server: Server, owner_id: int, title: str,
                    grants: list[tuple[int | None, int | None, str]] = (), *, keywords: list[str] = (),
                    regions: list[str] = (), **columns) -> int:
    """Put a resource row straight into the server's SQLite file.

    Used only until resources can be created through the API; ``grants`` are
    (user id, group id, permission name) rows, ``columns`` any other column of ``resources``.
    """
    import sqlite3
    import uuid

    values = {"uuid": str(uuid.uuid4()), "resource_type": "document", "owner_id": owner_id, "title": title,
              "abstract": "", "created": "2026-01-01T00:00:00.000000Z", "last_updated": "2026-01-01T00:00:00.000000Z",
              **columns}
    conn = sqlite3.connect(server.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        with conn:
            names = ", ".join(values)
            rid = conn.execute(f"INSERT INTO resources ({names}) VALUES ({', '.join('?' * len(values))})",
                               list(values.values())).lastrowid
            conn.executemany(
                "INSERT INTO resource_perms (resource_id, user_id, group_id, perm) VALUES (?, ?, ?, ?)",
                [(rid, u, g, p) for u, g, p in grants])
            public = any(g == 1 and p == "view_resourcebase" for _, g, p in grants)
            conn.execute("UPDATE resources SET public_view = ? WHERE id = ?", (int(public), rid))
            for name in keywords:
                conn.execute("INSERT OR IGNORE INTO keywords (name, slug) VALUES (?, ?)", (name, name.lower()))
                conn.execute("INSERT INTO resource_keywords SELECT ?, id FROM keywords WHERE slug = ?",
                             (rid, name.lower()))
            for code in regions:
                conn.execute("INSERT INTO resource_regions SELECT ?, id FROM regions WHERE code = ?", (rid, code))
    finally:
        conn.close()
    return rid


def poll(client: httpx.Client, status_url: str, until: tuple[str, ...] = ("finished", "failed"),
         timeout: float = 30) -> dict:
    """Read an execution request's status URL, as geonodectl does, until its status is one of
    ``until``; returns the last answer."""
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(status_url).json()
        if body["status"] in until or time.monotonic() > deadline:
            return body
        time.sleep(0.02)


def wait_finished(client: httpx.Client, status_url: str, timeout: float = 15) -> dict:
    """Read an execution request's status URL until it is finished, as geonodectl does; any
    status other than ready, running or finished fails at once. Returns the last answer."""
    deadline = time.monotonic() + timeout
    while True:
        r = client.get(status_url)
        assert r.status_code == 200, r.text
        body = r.json()
        if body["status"] == "finished":
            return body
        assert body["status"] in ("ready", "running"), body
        assert time.monotonic() < deadline, f"still {body['status']} after {timeout} s"
        time.sleep(0.02)
