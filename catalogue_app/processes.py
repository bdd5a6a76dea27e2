"""Which server process owns something, and whether that process still runs.

A process is named by its id and, where the system tells it, the moment it started: an id that
the system has given again to a newer process is then not mistaken for the owner.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine."""
    if os.name == "nt":  # os.kill would end the process there
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        ctypes.windll.kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        ctypes.windll.kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed process nobody has reaped yet (a zombie) still answers, but runs no more
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def started(pid: int) -> str | None:
    """When the process started, in the system's own units (Linux: clock ticks since boot), or
    None where that is not known."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def me() -> str:
    """This process, written as ``"<pid> <start>"``."""
    pid = os.getpid()
    return f"{pid} {started(pid) or '-'}"


def still_running(owner: str) -> bool:
    """Whether the process written by me() still runs (and is the same process)."""
    parts = owner.split()
    if not parts or not parts[0].isdecimal():
        return False
    pid = int(parts[0])
    if not alive(pid):
        return False
    recorded = parts[1] if len(parts) > 1 and parts[1] != "-" else None
    return recorded is None or started(pid) in (None, recorded)


def end_with(parent: int) -> None:
    """End this process (a server worker) as soon as ``parent`` (the server that started it) is
    gone, as after a SIGKILL of the server: a worker left behind would keep serving on the
    server's port, and a restart could not take it."""
    import signal

    if sys.platform.startswith("linux") and os.getppid() == parent:
        import ctypes

        try:  # PR_SET_PDEATHSIG: the kernel ends this process with its parent
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    # elsewhere, and in case the signal was missed: look every second
    when_gone(parent, lambda: os._exit(1), every=1.0)


def when_gone(parent: int, then, every: float) -> None:
    """Call ``then`` once this process's parent is no longer ``parent`` (it ended, and this
    process was handed to another): at once if that is so already, else from a thread that
    looks ``every`` seconds."""
    import threading
    import time

    if os.getppid() != parent:
        then()
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        then()

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def follow_launcher(folder: Path, launcher: int) -> None:
    """Stop this server (SIGTERM to itself) when the single executable's launcher, its parent
    process ``launcher``, is gone, as after a kill of the executable, even before this was
    called; and remove the launcher's emptied temporary ``folder``, which the launcher would
    have removed after this process (POSIX)."""
    import signal

    def gone() -> None:
        if folder.name.startswith("_MEI"):
            with contextlib.suppress(OSError):
                folder.rmdir()  # (empty: the launcher emptied it)
        os.kill(os.getpid(), signal.SIGTERM)

    when_gone(launcher, gone, every=0.5)


def give_back_memory() -> None:
    """Hand the memory a large job freed back to the system (glibc keeps freed memory in the
    process otherwise: a server that imported a large raster would stay that large)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass
