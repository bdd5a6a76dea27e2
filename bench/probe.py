"""The peak memory of a ``catalogue`` command: its process image's high-water mark (VmHWM), read
by the process itself as it exits. ``ru_maxrss`` of the child is not it: on Linux that also counts
the forked copy of the process that started it, before the exec."""

from __future__ import annotations

import subprocess
import sys

MARK = "\nPEAK_KB "
PROBE = ("import atexit, runpy, sys\n"
         "def peak():\n"
         "    for line in open('/proc/self/status'):\n"
         "        if line.startswith('VmHWM:'):\n"
         f"            sys.stderr.write({MARK!r} + line.split()[1] + '\\n')\n"
         "atexit.register(peak)\n"
         "sys.argv[0] = 'catalogue'\n"
         "runpy.run_module('catalogue_app', run_name='__main__')\n")


def run_catalogue(args: list[str], env: dict[str, str], timeout: float | None = None
                  ) -> tuple[subprocess.CompletedProcess, int]:
    """Run ``catalogue ARGS``: its result (stderr without the probe's line) and its peak memory in bytes."""
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          timeout=timeout, env=env)
    head, found, peak = done.stderr.rpartition(MARK)
    if not found:
        return done, 0
    done.stderr = head
    return done, int(peak.split()[0]) * 1024
