"""Reads are let in a few at a time and writes never wait for them (api/middleware/admission.py), driven
through the ASGI interface with an application whose reads take as long as the test says."""

from __future__ import annotations

import asyncio

import pytest

from catalogue_app.api.middleware.admission import ReadAdmission
from tests.conftest import run_loop


class Held:
    """An ASGI application whose requests answer when the test lets them (by path)."""

    def __init__(self):
        self.started: list[str] = []
        self.gates: dict[str, asyncio.Event] = {}

    def gate(self, path: str) -> asyncio.Event:
        return self.gates.setdefault(path, asyncio.Event())

    async def __call__(self, scope, receive, send):
        self.started.append(scope["path"])
        await self.gate(scope["path"]).wait()
        if scope["path"].startswith("/fails"):
            raise RuntimeError("the application failed")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        if scope["path"].startswith("/stream"):  # the body comes later
            await self.gate(scope["path"] + "/body").wait()
        await send({"type": "http.response.body", "body": b"ok"})


def request(app, method: str, path: str) -> asyncio.Task:
    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        pass

    return asyncio.ensure_future(app({"type": "http", "method": method, "path": path, "headers": []}, receive, send))


async def settle():
    for _ in range(5):
        await asyncio.sleep(0)


def test_reads_beyond_the_limit_wait_and_writes_go_straight_in():
    async def main():
        inner = Held()
        app = ReadAdmission(inner, 2)
        reads = [request(app, "GET", f"/read{i}") for i in range(4)]
        write = request(app, "PATCH", "/write")
        await settle()
        assert inner.started == ["/read0", "/read1", "/write"]  # two reads in, the write too
        inner.gate("/write").set()
        await write
        inner.gate("/read0").set()
        await reads[0]
        await settle()
        assert inner.started[-1] == "/read2"  # one read out, the next in
        for i in (1, 2, 3):
            inner.gate(f"/read{i}").set()
        await asyncio.gather(*reads)
        assert len(inner.started) == 5

    run_loop(main())


def test_a_read_leaves_once_its_answer_starts_or_it_fails():
    async def main():
        inner = Held()
        app = ReadAdmission(inner, 1)
        streaming = request(app, "GET", "/stream")
        inner.gate("/stream").set()
        await settle()
        failing = request(app, "GET", "/fails")  # in: the stream's answer has started
        await settle()
        assert inner.started == ["/stream", "/fails"]
        inner.gate("/fails").set()
        with pytest.raises(RuntimeError):
            await failing
        last = request(app, "HEAD", "/last")  # in: the failed one let go of its place
        await settle()
        assert inner.started[-1] == "/last"
        inner.gate("/last").set()
        inner.gate("/stream/body").set()
        await asyncio.gather(streaming, last)

    run_loop(main())


def test_no_limit_lets_every_read_in():
    async def main():
        inner = Held()
        app = ReadAdmission(inner, 0)
        reads = [request(app, "GET", f"/read{i}") for i in range(10)]
        await settle()
        assert len(inner.started) == 10
        for gate in list(inner.gates.values()):
            gate.set()
        await asyncio.gather(*reads)

    run_loop(main())
