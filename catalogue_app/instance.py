"""The server that runs on a data folder, as a second start finds it.

A server holds an exclusive lock on ``server.lock`` in its data folder while it runs, and writes
its address there. A start with no arguments (a double-click on the executable) that finds the
lock taken opens the running catalogue instead of starting a second server on the next free
port. The lock goes with the process, however it ends, so a crash leaves nothing to clean up.
"""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path

FILE = "server.lock"
LOCKED_AT = 1 << 20  # the byte locked (Windows locks ranges): past the address, which stays readable


class Instance:
    def __init__(self, data_dir: Path):
        self.path = data_dir / FILE

    def claim(self, url: str) -> bool:
        """Take the lock and write ``url`` (this server's address); False when another running
        server holds it. Kept until the process ends: the file stays open."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _lock(fd):
            os.close(fd)
            return False
        os.lseek(fd, 0, os.SEEK_SET)  # (_lock moved to the locked byte)
        os.ftruncate(fd, 0)
        os.write(fd, url.encode())
        return True

    def held(self) -> bool:
        """Whether a server runs on this data folder now (its lock is taken)."""
        try:
            fd = os.open(self.path, os.O_RDWR)
        except OSError:
            return False
        try:
            if _lock(fd):
                _unlock(fd)
                return False
            return True
        finally:
            os.close(fd)

    def running(self) -> str | None:
        """The address of the server that holds the lock and answers there, else None."""
        try:
            fd = os.open(self.path, os.O_RDWR)
        except OSError:
            return None
        try:
            if _lock(fd):  # nobody holds it: no server runs here
                _unlock(fd)
                return None
            os.lseek(fd, 0, os.SEEK_SET)
            url = os.read(fd, 4096).decode(errors="replace").strip("\0 \n")
        except OSError:
            return None
        finally:
            os.close(fd)
        try:
            with urllib.request.urlopen(f"{url}/api/v2/", timeout=3) as answer:
                return url if answer.status == 200 else None
        except (OSError, ValueError):
            return None


def _lock(fd: int) -> bool:
    if os.name == "nt":
        import msvcrt

        os.lseek(fd, LOCKED_AT, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def _unlock(fd: int) -> None:
    if os.name == "nt":
        import msvcrt

        os.lseek(fd, LOCKED_AT, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)
