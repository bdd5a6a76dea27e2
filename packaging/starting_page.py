"""The page the browser shows while a double-clicked executable prepares its first start.

The launcher writes it into the cache folder, opens it, and writes it again as the unpacking
goes on (the page reloads itself every second). The page then looks for the catalogue on the
ports it may take (8000 and the next ones, as `catalogue serve` does) by loading its icon, and
opens the first that answers. Nothing comes from another host.
"""

from __future__ import annotations

import html
import os
import sys
from pathlib import Path

FIRST_PORT, PORTS = 8000, 20
ICON = "/ui/img/logo.svg"  # the web UI's logo, which only the catalogue serves there


def desktop_available() -> bool:
    """As catalogue_app.config.desktop_available: no browser under CI, with
    CATALOGUE_NO_BROWSER, or without a display."""
    if os.environ.get("CI") or os.environ.get("CATALOGUE_NO_BROWSER"):
        return False
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def write(path: Path, percent: int | None) -> None:
    """The page, saying how far the preparation is (None: done, the catalogue is starting)."""
    state = "Starting the catalogue…" if percent is None else f"Unpacking: {percent} %"
    refresh = '<meta http-equiv="refresh" content="1">' if percent is not None else ""
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">{refresh}<title>Catalogue: preparing</title>
<style>body{{font:16px system-ui,sans-serif;margin:15vh auto;max-width:36em;color:#1d2b36;padding:0 1em}}
h1{{font-size:1.4em}}progress{{width:100%;height:1.2em;accent-color:#1f6e5a}}p.small{{color:#5a6b78;font-size:.9em}}</style></head>
<body><h1>Preparing the catalogue for first use</h1>
<p>This happens once for each version of the catalogue. This page opens it as soon as it is ready.</p>
<progress max="100" {'' if percent is None else f'value="{percent}"'}></progress>
<p>{html.escape(state)}</p>
<p class="small">The console window shows the same, then the address and the administrator's login.</p>
<script>
const ports = Array.from({{length: {PORTS}}}, (_, i) => {FIRST_PORT} + i);
function look() {{
  for (const port of ports) {{
    const probe = new Image();
    probe.onload = () => location.replace(`http://127.0.0.1:${{port}}/`);
    probe.src = `http://127.0.0.1:${{port}}{ICON}?t=${{Date.now()}}`;
  }}
}}
look(); setInterval(look, 1000);
</script></body></html>
"""
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, path)
