"""The single executable's payload: the one-folder build of the catalogue as a zip archive
appended to the small launcher (packaging/launcher.py), which unpacks it once into the user's
cache folder and starts it from there on every start.

Used by catalogue.spec at build time; the launcher has its own reading side (stdlib only).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

SYMLINK = stat.S_IFLNK | 0o777


# Libraries grafted into wheels by auditwheel carry a hash in their names ("libgdal-253d08a6.so");
# they and the wheels' own extension modules were rewritten by patchelf, and stripping them can
# make them unloadable ("ELF load command address/offset not page-aligned").
GRAFTED = re.compile(r"-[0-9a-f]{8}[.-]")


def strip_debug_symbols(folder: Path) -> None:
    """Strip the debugging symbols of Python's own library and modules and of the system
    libraries next to them (pyenv builds keep them: some 20 MB), where `strip` exists."""
    tool = shutil.which("strip")
    if tool is None or sys.platform in ("win32", "darwin"):
        return
    internal = folder / "_internal"
    candidates = [*internal.glob("*.so*"), *(internal / "lib-dynload").glob("*.so")]
    for path in candidates:
        if path.is_file() and not path.is_symlink() and not GRAFTED.search(path.name):
            subprocess.run([tool, "--strip-unneeded", str(path)], check=False, capture_output=True)


def write_payload(folder: Path, target: Path, top: str) -> str:
    """Zip ``folder`` (as ``top`` inside the archive) into ``target``, LZMA-compressed,
    keeping file modes and symbolic links; the archive comment is the build id (a hash of the
    contents), which names the launcher's unpacked copy."""
    digest = hashlib.sha256()
    paths = sorted(p for p in folder.rglob("*") if p.is_file() or p.is_symlink())
    with zipfile.ZipFile(target, "w", zipfile.ZIP_LZMA) as archive:
        for path in paths:
            name = f"{top}/{path.relative_to(folder).as_posix()}"
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            if path.is_symlink():
                link = os.readlink(path)
                info.external_attr = SYMLINK << 16
                info.compress_type = zipfile.ZIP_STORED
                archive.writestr(info, link)
                digest.update(f"{name}->{link}".encode())
                continue
            info.external_attr = (stat.S_IMODE(path.stat().st_mode) | stat.S_IFREG) << 16
            info.compress_type = zipfile.ZIP_LZMA
            data = path.read_bytes()
            archive.writestr(info, data)
            digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
        build_id = digest.hexdigest()[:16]
        archive.comment = build_id.encode()
    return build_id


def append(launcher: Path, payload: Path, target: Path) -> None:
    """``target`` = the launcher executable followed by the payload archive."""
    tmp = target.with_name(target.name + ".part")
    with open(tmp, "wb") as out:
        for part in (launcher, payload):
            with open(part, "rb") as source:
                shutil.copyfileobj(source, out, 1024 * 1024)
    os.chmod(tmp, 0o755)
    os.replace(tmp, target)
