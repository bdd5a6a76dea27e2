"""GeoNode's ping of the management commands over HTTP: answers pong (after a pause, if asked)."""

from __future__ import annotations

import time

from catalogue_app.management.base import Command


class Ping(Command):
    name = "ping_mngmt_commands_http"
    help = "Answers pong: a check that commands run (over HTTP and here)."
    app_name = "management_commands_http"

    def add_arguments(self, parser) -> None:
        parser.add_argument("--sleep", type=float, default=0, help="seconds to wait before answering (at most 60)")

    def run(self, ctx, options) -> None:
        left = max(0.0, min(options.sleep, 60.0))
        while left > 0:
            ctx.check()
            time.sleep(min(left, 0.1))
            left -= 0.1
        ctx.say("pong")
