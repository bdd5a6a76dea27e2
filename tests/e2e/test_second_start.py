"""A second start with no arguments (a second double-click) while the catalogue runs on the
user's data folder points to the running one instead of starting another server; once that
one is gone, even killed, a start with no arguments serves again."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx


def start_bare(home: Path) -> subprocess.Popen:
    """`catalogue` with no arguments, its user folders under ``home``, no browser (CI)."""
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "APPDATA": str(home / "data"),
           "LOCALAPPDATA": str(home / "data"), "CI": "1"}
    for name in [n for n in env if n.startswith("CATALOGUE_")]:
        del env[name]
    return subprocess.Popen([sys.executable, "-m", "catalogue_app"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def address(proc: subprocess.Popen) -> str:
    """The address the server prints, once it answers there."""
    deadline = time.monotonic() + 60
    for line in proc.stdout:
        match = re.search(r"Catalogue (http://\S+?)/ ", line)
        if match:
            break
        assert time.monotonic() < deadline
    else:
        raise AssertionError(f"the server stopped: {proc.wait()}")
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{match.group(1)}/api/v2/", timeout=2).status_code == 200:
                return match.group(1)
        except httpx.HTTPError:
            time.sleep(0.05)
    raise AssertionError("the server did not answer")


def test_a_second_bare_start_points_to_the_running_catalogue(tmp_path):
    first = start_bare(tmp_path)
    try:
        url = address(first)
        second = start_bare(tmp_path)
        out, _ = second.communicate(timeout=60)
        assert second.returncode == 0, out
        assert f"The catalogue already runs at {url}/" in out
        assert "Admin account created" not in out
        assert httpx.get(f"{url}/api/v2/", timeout=5).status_code == 200  # the first one still serves
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    # killed: its lock went with it, and a bare start serves the same data folder again
    third = start_bare(tmp_path)
    try:
        again = address(third)
        assert httpx.get(f"{again}/api/v2/", timeout=5).status_code == 200
    finally:
        third.send_signal(signal.SIGTERM)
        third.wait(timeout=30)
