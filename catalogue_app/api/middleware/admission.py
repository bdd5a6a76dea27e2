"""Writes go before reads on a busy worker: reads (GET, HEAD) are let in a few at a time.

Every request of a worker is a task of its event loop, and each time one awaits (its body, its
write, its answer) it goes back behind all the others that are ready to run. With many reads in
progress, a write that awaits three or four times waits behind all of them each time. Here at
most ``limit`` reads are past the door at once; the others wait in line before any work is done
for them, and a write never waits at the door. A read leaves as soon as its answer starts (a
long download keeps no one out while it streams), or when it ends.
"""

from __future__ import annotations

import asyncio

from litestar.types import ASGIApp, Message, Receive, Scope, Send

READS = frozenset({"GET", "HEAD"})


class ReadAdmission:
    def __init__(self, app: ASGIApp, limit: int):
        self.app, self.limit = app, limit
        self._door: asyncio.Semaphore | None = None  # made on the worker's event loop

    def __getattr__(self, name: str):  # the wrapped app's attributes (state, routes, ...)
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in READS or self.limit <= 0:
            await self.app(scope, receive, send)
            return
        if self._door is None:
            self._door = asyncio.Semaphore(self.limit)
        door = self._door
        await door.acquire()
        inside = True

        async def answering(message: Message) -> None:
            nonlocal inside
            if inside and message["type"] == "http.response.start":
                inside = False
                door.release()
            await send(message)

        try:
            await self.app(scope, receive, answering)
        finally:
            if inside:
                door.release()
