"""The start of the single executable.

The executable is this small program followed by a zip archive of the catalogue's one-folder
build. On the first start of a build the archive is unpacked into the user's cache folder
(``<cache>/catalogue/<build id>``, written under a temporary name and renamed when complete, so
that an interrupted first start leaves nothing half-done); every start then runs the catalogue
from there, which saves unpacking some 400 MB into a temporary folder each time. Copies left by
earlier builds are removed after a new one is unpacked.

Only the standard library is used here: this part is unpacked on every start.
"""

import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

NAME = "catalogue"


def cache_root() -> Path:
    if os.environ.get("CATALOGUE_CACHE_DIR"):
        return Path(os.environ["CATALOGUE_CACHE_DIR"])
    home = Path.home()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
    return base / NAME


def unpack(archive: zipfile.ZipFile, target: Path) -> None:
    """Every entry of the archive into ``target`` with its mode, links as links."""
    for info in archive.infolist():
        path = target / info.filename
        if ".." in Path(info.filename).parts or Path(info.filename).is_absolute():
            raise SystemExit(f"corrupt executable: bad entry {info.filename!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            os.symlink(archive.read(info).decode(), path)
            continue
        with archive.open(info) as source, open(path, "wb") as out:
            shutil.copyfileobj(source, out, 1024 * 1024)
        if mode:
            os.chmod(path, stat.S_IMODE(mode))


def installed(executable: str) -> Path:
    """The folder holding this build's unpacked copy (unpacked now if it is not there yet)."""
    with zipfile.ZipFile(executable) as archive:
        build_id = archive.comment.decode() or "build"
        root = cache_root()
        home = root / build_id
        if (home / ".complete").is_file():
            return home
        root.mkdir(parents=True, exist_ok=True)
        staging = root / f".{build_id}.{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        print(f"First start of this build: unpacking into {home}", file=sys.stderr, flush=True)
        unpack(archive, staging)
    (staging / ".complete").write_text(build_id)
    try:
        os.replace(staging, home)
    except OSError:  # another first start got there first
        shutil.rmtree(staging, ignore_errors=True)
        if not (home / ".complete").is_file():
            raise
    for other in root.iterdir():  # earlier builds' copies
        if other.name != build_id and not other.name.startswith("."):
            shutil.rmtree(other, ignore_errors=True)
    return home


def main() -> None:
    home = installed(sys.executable)
    program = home / NAME / (NAME + ".exe" if sys.platform == "win32" else NAME)
    env = dict(os.environ)
    env["PYINSTALLER_RESET_ENVIRONMENT"] = "1"  # the catalogue starts as a program of its own
    for name in ("LD_LIBRARY_PATH", "LIBPATH"):
        original = env.pop(name + "_ORIG", None)
        if original is not None:
            env[name] = original
        else:
            env.pop(name, None)
    args = [str(program), *sys.argv[1:]]
    if sys.platform == "win32":
        raise SystemExit(subprocess.call(args, env=env))
    os.execve(program, args, env)  # the same process: signals reach the catalogue itself


if __name__ == "__main__":
    main()
