"""HEAD requests: answered as the GET of the same URL would be, without the body.

Wraps the whole application, because Litestar picks the route (and so the 405) before any
middleware of its own runs.
"""

from __future__ import annotations

from litestar.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp):
        self.app = app

    def __getattr__(self, name: str):  # the wrapped app's attributes (state, routes, ...)
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if not message.get("more_body", False):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_headers_only)
