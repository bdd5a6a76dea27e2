"""The harvesting HTTP client's limits against a real socket: a remote that sends a byte now and
then is cut off at the time limit of the whole answer, one that sends too much at the size limit."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from catalogue_app.harvesting import http
from catalogue_app.harvesting.types import HarvestError


def dribbling_server(body_bytes: int, pause: float) -> tuple[str, threading.Event]:
    """An HTTP server on a free port that sends its body one byte every ``pause`` seconds."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {body_bytes}\r\n\r\n".encode())
            for _ in range(body_bytes):
                if stop.is_set():
                    return
                try:
                    conn.sendall(b"x")
                except OSError:
                    return
                time.sleep(pause)
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/slow", stop


@pytest.mark.parametrize("how", ["get_bytes", "download"])
def test_a_remote_that_dribbles_is_cut_off_at_the_time_limit(monkeypatch, tmp_path, how):
    monkeypatch.setattr(http, "BODY_SECONDS", 0.5)
    monkeypatch.setattr(http, "DOWNLOAD_SECONDS", 0.5)
    url, stop = dribbling_server(10_000, 0.05)
    started = time.monotonic()
    try:
        with http.client() as client, pytest.raises(HarvestError, match="took too long"):
            if how == "get_bytes":
                http.get_bytes(client, url)
            else:
                http.download(client, url, tmp_path / "file")
    finally:
        stop.set()
    assert time.monotonic() - started < 5
    assert not (tmp_path / "file").exists()


def test_a_remote_that_sends_too_much_is_cut_off_at_the_size_limit():
    url, stop = dribbling_server(2000, 0)
    try:
        with http.client() as client, pytest.raises(HarvestError, match="more than"):
            http.get_bytes(client, url, limit=1000)
    finally:
        stop.set()
