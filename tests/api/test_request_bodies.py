"""Request bodies read over one kept-alive connection: a body ends when the bytes its
Content-Length announced have come, whether they came in one piece or several, and the next
request on the connection is answered as if alone."""

from __future__ import annotations

import base64
import json
import socket
import time

import pytest

from tests.conftest import ADMIN_PASSWORD, Server, insert_resource

AUTH = "Basic " + base64.b64encode(f"admin:{ADMIN_PASSWORD}".encode()).decode()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A real server: these tests write HTTP on a socket of their own."""
    srv = Server(tmp_path_factory.mktemp("bodies") / "data")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def admin(server):
    with server.client(auth=("admin", ADMIN_PASSWORD)) as c:
        yield c


def request(method: str, path: str, body: bytes = b"") -> bytes:
    head = (f"{method} {path} HTTP/1.1\r\nHost: test\r\nAuthorization: {AUTH}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode() + body


def answer(stream) -> tuple[int, dict]:
    status = int(stream.readline().split()[1])
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return status, json.loads(stream.read(length))


def test_bodies_in_pieces_and_back_to_back(server, admin):
    me = admin.get("/api/v2/users/", params={"filter{username}": "admin"}).json()["users"][0]["pk"]
    rid = insert_resource(server, me, "Before")
    path = f"/api/v2/resources/{rid}"
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        stream = sock.makefile("rb")
        for n in range(3):  # the body's bytes in two pieces, the second after a pause
            whole = request("PATCH", path, json.dumps({"title": f"Piece {n}"}).encode())
            sock.sendall(whole[:-5])
            time.sleep(0.2)
            sock.sendall(whole[-5:])
            status, body = answer(stream)
            assert status == 200, body
            assert body["resource"]["title"] == f"Piece {n}"
        # two writes and a read sent at once: each answered in turn
        sock.sendall(request("PATCH", path, b'{"title": "First"}') + request("PATCH", path, b'{"title": "Second"}')
                     + request("GET", path))
        titles = []
        for _ in range(3):
            status, body = answer(stream)
            assert status == 200, body
            titles.append(body["resource"]["title"])
        assert titles == ["First", "Second", "Second"]
