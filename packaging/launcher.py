"""The start of the single executable.

The executable is this small program followed by the catalogue's one-folder build, in parts
compressed with zstd (see payload.py for the layout). On the first start of a build the archive is unpacked
into the user's cache folder (``<cache>/<build id>``, written under a temporary name and
renamed when complete, so that an interrupted first start leaves nothing half-done), with the
progress on the console; every start then runs the catalogue from there. A start reads the
last bytes of the file to learn the build, and nothing else when its copy is there.

Each running catalogue holds a shared lock on its copy's ``.in-use`` file; copies of other
builds that nobody holds are removed once this build's copy is ready. This program's own
unpacked files (PyInstaller's ``_MEI...`` folder in the temporary folder) are removed before the
catalogue replaces it (see main), so that nothing is left there whichever process is killed.

Only the standard library, platformdirs, zstandard and starting_page are used here: this part is unpacked on
every start.
"""

import os
import shutil
import struct
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import starting_page

NAME = "catalogue"
TRAILER_MAGIC = b"CATPAYL2"  # as payload.py writes them
TRAILER_FORMAT = "!8sQI16s"
PART_FORMAT = "!QQQ"
COOKIE_SIZE = 88  # PyInstaller's archive cookie, copied after the trailer
IN_USE = ".in-use"
COMPLETE = ".complete"


def cache_root() -> Path:
    if os.environ.get("CATALOGUE_CACHE_DIR"):
        return Path(os.environ["CATALOGUE_CACHE_DIR"])
    import platformdirs

    return Path(platformdirs.user_cache_dir(NAME, appauthor=False))


def build_of(executable: str) -> tuple[str, list[tuple[int, int, int]]]:
    """The build id and the parts of the payload (offset, length, unpacked bytes), from the
    trailer and the index at the end of the file."""
    size = struct.calcsize(TRAILER_FORMAT)
    with open(executable, "rb") as f:
        f.seek(-(size + COOKIE_SIZE), os.SEEK_END)
        magic, index_at, count, build_id = struct.unpack(TRAILER_FORMAT, f.read(size))
        if magic != TRAILER_MAGIC:
            raise SystemExit(f"{executable} holds no catalogue: rebuild it with `make build`")
        f.seek(index_at)
        step = struct.calcsize(PART_FORMAT)
        index = f.read(step * count)
    return build_id.decode("ascii"), [struct.unpack_from(PART_FORMAT, index, i * step) for i in range(count)]


def _safe(member: tarfile.TarInfo) -> tarfile.TarInfo:
    """The entry, if its name stays inside the folder it is unpacked into (tarfile's "data"
    filter, which the build requires, checks that and where links point)."""
    name = Path(member.name)
    if name.is_absolute() or ".." in name.parts or not (member.isreg() or member.isdir() or member.issym()):
        raise SystemExit(f"corrupt executable: bad entry {member.name!r}")
    return member


def unpack(executable: str, parts: list[tuple[int, int, int]], target: Path, report) -> None:
    """Every part of the payload into ``target``, file modes and links kept, in as many threads
    as there are cores (zstd and file writes let the others run); ``report(done, total)`` is
    called with the bytes written so far."""
    import zstandard

    total = sum(p[2] for p in parts) or 1
    done = [0]
    lock = threading.Lock()
    errors: list[BaseException] = []
    waiting = list(parts)

    def work() -> None:
        try:
            with open(executable, "rb") as f:
                while True:
                    with lock:
                        if not waiting:
                            return
                        offset, length, _ = waiting.pop(0)
                    f.seek(offset)
                    with zstandard.ZstdDecompressor().stream_reader(f, read_size=1 << 20, closefd=False) as stream, \
                            tarfile.open(fileobj=stream, mode="r|") as tar:
                        for member in tar:
                            # (its folder first: tarfile's own check-then-make races with the other threads)
                            (target / _safe(member).name).parent.mkdir(parents=True, exist_ok=True)
                            tar.extract(member, target, filter="data")
                            with lock:
                                done[0] += member.size
        except BaseException as error:  # noqa: BLE001 - raised again by the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(max(1, min(len(parts), os.cpu_count() or 1)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            report(done[0], total)
            thread.join(0.1)
    if errors:
        raise errors[0]
    report(total, total)


class Progress:
    """"Preparing for first use" with a percentage, on one line of a terminal, or a line per
    quarter otherwise; and in the browser, for a double-click where there is a desktop (see
    starting_page), whose page then opens the catalogue in place of the catalogue itself."""

    def __init__(self, home: Path, root: Path):
        self.tty = sys.stderr.isatty()
        self.started = time.monotonic()
        self.shown = -1
        print(f"Preparing the catalogue for first use (once for this version): unpacking into {home}",
              file=sys.stderr, flush=True)
        self.page = None
        # (Not on Linux, where browsers packaged as snaps may not read a page in a hidden
        # folder: there the catalogue opens its own tab once it answers.)
        if len(sys.argv) == 1 and sys.platform in ("win32", "darwin") and starting_page.desktop_available():
            import webbrowser

            self.page = root / "starting.html"
            starting_page.write(self.page, 0)
            saved = dict(os.environ)
            os.environ.clear()
            os.environ.update(own_environment(saved))  # (the browser must not load this program's libraries)
            try:
                opened = webbrowser.open(self.page.as_uri())
            finally:
                os.environ.clear()
                os.environ.update(saved)
            if opened:
                os.environ["CATALOGUE_NO_BROWSER"] = "1"  # (the page opens it)

    def __call__(self, done: int, total: int) -> None:
        percent = done * 100 // total
        if self.page is not None and percent != self.shown:
            starting_page.write(self.page, percent)
        if self.tty:
            print(f"\r  {percent:3d} %  ({done / 1e6:,.0f} of {total / 1e6:,.0f} MB)", end="", file=sys.stderr,
                  flush=True)
        elif percent // 25 > self.shown // 25:
            print(f"  {percent} %", file=sys.stderr, flush=True)
        self.shown = percent

    def end(self) -> None:
        if self.page is not None:
            starting_page.write(self.page, None)
        print(("\n" if self.tty else "") + f"Ready in {time.monotonic() - self.started:.1f} s.", file=sys.stderr,
              flush=True)


def hold(copy: Path) -> bool:
    """Take a shared lock on the copy's in-use file, kept open across the start of the
    catalogue (POSIX: the lock goes with the file, whatever the copy's folder is renamed to);
    whether the copy is complete, as seen under that lock. On Windows this process waits for
    the catalogue, and the catalogue's open files keep its copy from being moved."""
    if os.name == "posix":
        import fcntl

        try:
            fd = os.open(copy / IN_USE, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return False
        fcntl.flock(fd, fcntl.LOCK_SH)
        os.set_inheritable(fd, True)  # held by the catalogue after exec, released when it ends
    return (copy / COMPLETE).is_file()


def set_aside(copy: Path) -> Path | None:
    """Rename a copy that no running catalogue holds to a hidden name, from which it is then
    removed; None when it is in use. Under the exclusive lock on POSIX, so that no start can
    take it meanwhile; on Windows the rename fails while a program has its files open."""
    aside = copy.with_name(f".{copy.name}.old")
    if os.name == "posix":
        import fcntl

        try:
            fd = os.open(copy / IN_USE, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(copy, aside)
            return aside
        except OSError:
            return None
        finally:
            os.close(fd)
    try:
        os.rename(copy, aside)
        return aside
    except OSError:
        return None


def remove_stale(root: Path, build_id: str) -> None:
    """Remove copies of other builds that no running catalogue holds, and leftovers of
    interrupted first starts and removals."""
    for other in root.iterdir():
        if other.name == build_id or not other.is_dir():
            continue
        if other.name.startswith("."):
            pid = other.name.rsplit(".", 1)[-1]
            if other.name.endswith(".old") or (pid.isdigit() and not _alive(int(pid))):
                shutil.rmtree(other, ignore_errors=True)
            continue
        aside = set_aside(other)
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)


def _alive(pid: int) -> bool:
    if os.name == "nt":
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
    except OSError:
        return True
    return True


def _put_in_place(staging: Path, home: Path) -> None:
    """Rename the unpacked copy to its name. Another first start may have got there first (then
    its copy serves); a copy left half-removed there is set aside first. Windows may refuse the
    rename for a moment while a virus scanner reads the new files."""
    for attempt in range(5):
        try:
            os.replace(staging, home)
            return
        except OSError:
            if (home / COMPLETE).is_file():
                shutil.rmtree(staging, ignore_errors=True)
                return
            if home.exists():
                os.replace(home, home.with_name(f".{home.name}.{os.getpid()}.old"))
                continue
            time.sleep(0.2 * (attempt + 1))
    os.replace(staging, home)


def installed(executable: str) -> Path:
    """The folder holding this build's unpacked copy (unpacked now if it is not there yet),
    held by this process (see hold)."""
    build_id, parts = build_of(executable)
    root = cache_root()
    home = root / build_id
    if home.is_dir() and hold(home):
        if len(os.listdir(root)) > 1:  # copies left by earlier builds (in use when it came)
            remove_stale(root, build_id)
        return home
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".{build_id}.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    progress = Progress(home, root)
    unpack(executable, parts, staging, progress)
    (staging / COMPLETE).write_text(build_id)
    hold(staging)  # (the lock goes with the folder's files when it is renamed)
    _put_in_place(staging, home)
    progress.end()
    if not hold(home):
        raise SystemExit(f"the unpacked copy in {home} is incomplete: remove that folder and start again")
    remove_stale(root, build_id)
    return home


def own_environment(environ) -> dict[str, str]:
    """The environment without the library paths that point into this program's own unpacked
    files (PyInstaller keeps the original values under *_ORIG), for the programs it starts."""
    env = dict(environ)
    for name in ("LD_LIBRARY_PATH", "LIBPATH", "DYLD_LIBRARY_PATH"):
        original = env.pop(name + "_ORIG", None)
        if original is not None:
            env[name] = original
        else:
            env.pop(name, None)
    return env


def _bootloader() -> int:
    """The process id of PyInstaller's bootloader that started this program, which waits for
    it and removes its unpacked files afterwards (POSIX); if it is gone already (killed), this
    program removes them itself and ends."""
    parent = os.getppid()
    if parent == 1:
        _abandon()
    if Path("/proc/self/exe").exists():  # (Linux) the parent is this very executable, or it was killed
        try:
            if Path(f"/proc/{parent}/exe").resolve(strict=True) != Path(sys.executable).resolve():
                _abandon()
        except OSError:
            _abandon()
    return parent


def _abandon() -> None:
    own = getattr(sys, "_MEIPASS", None)
    if own and Path(own).name.startswith("_MEI"):
        shutil.rmtree(own, ignore_errors=True)
    os._exit(1)


def main() -> None:
    bootloader = _bootloader() if os.name == "posix" else 0
    home = installed(sys.executable)
    program = home / NAME / (NAME + ".exe" if sys.platform == "win32" else NAME)
    env = own_environment(os.environ)
    env["PYINSTALLER_RESET_ENVIRONMENT"] = "1"  # the catalogue starts as a program of its own
    args = [str(program), *sys.argv[1:]]
    if sys.platform == "win32":  # no exec: this process waits, and Ctrl-C is the catalogue's to handle
        child = subprocess.Popen(args, env=env)
        while True:
            try:
                raise SystemExit(child.wait())
            except KeyboardInterrupt:
                continue
    # This program's own unpacked files are not needed past this point: the catalogue takes
    # over the process (signals reach it directly). Their folder stays, empty, for the
    # bootloader to remove when the catalogue ends; if the bootloader is killed instead, the
    # catalogue removes it and stops (CATALOGUE_LAUNCHER_TMP).
    own = getattr(sys, "_MEIPASS", None)
    if own and Path(own).name.startswith("_MEI"):
        for entry in Path(own).iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
        env["CATALOGUE_LAUNCHER_TMP"] = own
        env["CATALOGUE_LAUNCHER_PID"] = str(bootloader)  # which the catalogue follows
        if os.getppid() != bootloader:  # killed while this unpacked or looked
            _abandon()
    os.execve(program, args, env)


if __name__ == "__main__":
    main()
