"""Request bodies a refusal left unread are read to their end before the answer goes out.

A client sends its whole body before it reads the answer; an answer sent while part of the body
is still unread (a 413 from the size limit, a 401 before an upload is looked at) would leave that
part in the connection, and the client's next request on it would fail. So the rest is read and
dropped, up to DRAIN_LIMIT bytes; a body longer than that is cut off, and the answer carries
``Connection: close``.

A body is also ended as soon as the bytes its Content-Length announced have come: the server
hands them with ``more_body`` set and only says the body is over in a second, empty message,
and each message is a trip through the server's I/O thread and the event loop (some 5 ms at the
median, 30 ms at p99, on a busy worker), which every write with a body would otherwise wait for.
"""

from __future__ import annotations

from litestar.types import ASGIApp, Message, Receive, Scope, Send

DRAIN_LIMIT = 64 * 1024 * 1024


class DrainUnread:
    def __init__(self, app: ASGIApp):
        self.app = app

    def __getattr__(self, name: str):  # the wrapped app's attributes (state, routes, ...)
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        done = not _has_body(scope)
        remaining = _content_length(scope)

        async def tracked_receive() -> Message:
            nonlocal done, remaining
            message = await receive()
            if message["type"] == "http.request" and remaining is not None:
                remaining -= len(message.get("body", b""))
                if remaining <= 0 and message.get("more_body", False):
                    message = {**message, "more_body": False}
            if message["type"] != "http.request" or not message.get("more_body", False):
                done = True
            return message

        async def drain_then_send(message: Message) -> None:
            nonlocal done
            if message["type"] == "http.response.start" and not done:
                headers = list(message.get("headers") or [])
                if not any(k.lower() == b"connection" and v.lower() == b"close" for k, v in headers):
                    seen = 0
                    while not done and seen <= DRAIN_LIMIT:
                        part = await tracked_receive()
                        seen += len(part.get("body", b""))
                    if not done:
                        message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, tracked_receive, drain_then_send)


def _content_length(scope: Scope) -> int | None:
    """The announced length of the body; None when there is none (chunked) or it is not valid."""
    length = None
    for key, value in scope.get("headers") or ():
        if key == b"transfer-encoding":
            return None
        if key == b"content-length":
            if length is not None or not value.strip().isdigit():
                return None  # two of them, or not a number: left to the server
            length = int(value)
    return length


def _has_body(scope: Scope) -> bool:
    for key, value in scope.get("headers") or ():
        if key == b"transfer-encoding" or (key == b"content-length" and value.strip() not in (b"", b"0")):
            return True
    return False
