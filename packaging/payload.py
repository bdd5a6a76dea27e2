"""The single executable's payload: the one-folder build of the catalogue, appended to the small
launcher (packaging/launcher.py), which unpacks it once into the user's cache folder and starts
it from there on every start.

The file is laid out as::

    launcher (a PyInstaller one-file program) | parts | index | trailer | launcher's cookie again

Each part is a tar archive of some of the folder's files, compressed with zstd; the parts hold
about as many bytes each, so that as many threads as there are cores unpack them side by side.
At level 19 the payload is a tenth smaller than the LZMA zip it replaced, and unpacks in a
twelfth of the time (0.6 s for 376 MB on two cores, was 7 s). The index gives each part's place
and size; the trailer (TRAILER_FORMAT) names the build and where the index is, so that a start
reads the last few bytes of the file and nothing else. The launcher's bootloader finds its own
archive by looking for a "cookie" backwards from the end of the file: without a copy of it at
the end it would read through the whole payload first (0.6 s on every start). The copy says
how far back the archive begins, which is where it was.

Used by catalogue.spec at build time; the launcher has its own reading side.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import zstandard

# magic, offset of the index in the file, number of parts, build id (16 hex digits); the index
# is one PART_FORMAT (offset in the file, compressed length, unpacked bytes) per part. The
# launcher reads the same.
TRAILER_MAGIC = b"CATPAYL2"
TRAILER_FORMAT = "!8sQI16s"
PART_FORMAT = "!QQQ"
PARTS = 4
LEVEL = 19
# PyInstaller's archive cookie: magic, archive length, TOC offset, TOC length, Python version,
# Python library name (PyInstaller.archive.writers.CArchiveWriter)
COOKIE_MAGIC = b"MEI\014\013\012\013\016"
COOKIE_FORMAT = "!8sIIII64s"
# Files of the one-folder build that the catalogue never reads: the GDAL data of drivers for
# formats it does not open (GRIB, S-57 charts, NITF, OSM, VDV, PDS, netCDF, BAG, ...). pyogrio and
# rasterio look for header.dxf and gdalvrt.xsd to find their data folders: those stay.
UNUSED = re.compile(r"/gdal_data/(grib2_|s57|nitf|osmconf|vdv452|pds4|plscenes|ruian|bag_|netcdf_|ozi_|vicar|"
                    r"jpfgdgml|pdfcomposition|template_tiles|inspire_cp|gmlasconf|ecw_cs)")


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


def leave_out_unused(folder: Path) -> int:
    """Remove the files of UNUSED from the one-folder build; returns the bytes saved."""
    saved = 0
    for path in list(folder.rglob("*")):
        if path.is_file() and not path.is_symlink() and UNUSED.search(path.as_posix()):
            saved += path.stat().st_size
            path.unlink()
    return saved


if not hasattr(tarfile, "data_filter"):  # the launcher runs on this Python and relies on it
    raise SystemExit("build with Python 3.11.4 or later: the launcher unpacks with tarfile's data filter")


def write_payload(folder: Path, top: str) -> tuple[list[tuple[bytes, int]], str]:
    """The parts of ``folder`` (as ``top`` inside them): zstd-compressed tar archives keeping
    file modes and symbolic links, with the bytes each unpacks to; and the build id (a hash of
    the contents), which names the unpacked copy."""
    digest = hashlib.sha256()
    paths = sorted(p for p in folder.rglob("*") if p.is_file() or p.is_symlink())
    for path in paths:
        name = f"{top}/{path.relative_to(folder).as_posix()}"
        content = os.readlink(path).encode() if path.is_symlink() else hashlib.sha256(path.read_bytes()).digest()
        digest.update(name.encode() + b"\0" + content)
    lanes: list[list[Path]] = [[] for _ in range(PARTS)]
    loads = [0] * PARTS
    for path in sorted(paths, key=lambda p: -p.lstat().st_size):  # the largest first, to the lightest part
        lane = loads.index(min(loads))
        lanes[lane].append(path)
        loads[lane] += path.lstat().st_size

    def part(lane: list[Path]) -> tuple[bytes, int]:
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path in lane:
                info = tar.gettarinfo(path, arcname=f"{top}/{path.relative_to(folder).as_posix()}")
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mtime = 1577836800  # 2020-01-01: the same build, the same bytes
                if info.isreg():
                    with open(path, "rb") as data:
                        tar.addfile(info, data)
                else:
                    tar.addfile(info)
        return zstandard.ZstdCompressor(level=LEVEL).compress(raw.getvalue()), sum(p.lstat().st_size for p in lane)

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:  # (zstd lets the other threads run)
        parts = list(pool.map(part, lanes))
    return parts, digest.hexdigest()[:16]


def append(launcher: Path, parts: list[tuple[bytes, int]], build_id: str, target: Path) -> None:
    """``target`` = the launcher executable, the parts, their index, the trailer, and a copy
    of the launcher's archive cookie that points back to where its archive is."""
    head = launcher.read_bytes()
    size = struct.calcsize(COOKIE_FORMAT)
    at = head.rfind(COOKIE_MAGIC)
    if at < 0:
        raise SystemExit(f"{launcher}: no PyInstaller archive cookie found")
    magic, length, toc_offset, toc_length, python, library = struct.unpack(COOKIE_FORMAT, head[at:at + size])
    archive_start = at + size - length
    tmp = target.with_name(target.name + ".part")
    with open(tmp, "wb") as out:
        out.write(head)
        index = b""
        for data, unpacked in parts:
            index += struct.pack(PART_FORMAT, out.tell(), len(data), unpacked)
            out.write(data)
        index_at = out.tell()
        out.write(index)
        out.write(struct.pack(TRAILER_FORMAT, TRAILER_MAGIC, index_at, len(parts), build_id.encode("ascii")))
        end = out.tell() + size
        out.write(struct.pack(COOKIE_FORMAT, magic, end - archive_start, toc_offset, toc_length, python, library))
    if sys.platform == "darwin":
        _sign_for_macos(tmp)
    os.chmod(tmp, 0o755)
    os.replace(tmp, target)


def _sign_for_macos(path: Path) -> None:
    """Make the file signable with the payload inside it, then sign it ad hoc: macOS refuses
    to run a binary whose signature does not cover the data after it (PyInstaller does the
    same for its own one-file programs). Untried: no macOS machine here."""
    from PyInstaller.utils import osx

    osx.remove_signature_from_binary(str(path))
    osx.fix_exe_for_code_signing(str(path))
    osx.sign_binary(str(path))
