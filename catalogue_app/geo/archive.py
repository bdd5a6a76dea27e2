"""Safe extraction of uploaded zip (and KMZ) archives.

Nothing is ever written outside the folder the caller gives: entries with absolute paths, drive
letters or ``..`` components are refused, and so are links, encrypted entries, archives with too
many entries and archives that expand beyond a size cap (a zip bomb is refused while it is being
counted, before it fills the disk). The sizes written in the archive are checked first, then the
bytes actually written are counted, so a forged header does not get past the cap either.
"""

from __future__ import annotations

import shutil
import stat
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .errors import GeoError

_CHUNK = 1 << 20
# Folders that archivers add and that are never data: macOS resource forks.
_IGNORED_TOP_FOLDERS = ("__MACOSX",)


@dataclass(frozen=True)
class ZipLimits:
    """Caps on what one archive may expand into."""

    max_total_bytes: int = 2 * 1024**3
    max_entries: int = 10_000
    # An entry that would expand more than this many times its compressed size (counted for
    # entries above RATIO_FROM bytes) is refused; None: no such bound.
    max_ratio: int | None = None


RATIO_FROM = 1024 * 1024


DEFAULT_LIMITS = ZipLimits()


def size_label(n: int) -> str:
    """A byte count for people: "512 bytes", "3.4 MB"."""
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"  # pragma: no cover


def too_compressed(info: zipfile.ZipInfo, limits: ZipLimits) -> bool:
    """Whether the entry expands beyond the limits' ratio (the mark of a zip bomb)."""
    return (limits.max_ratio is not None and info.file_size > RATIO_FROM
            and info.file_size > limits.max_ratio * max(info.compress_size, 1))


def safe_parts(name: str) -> tuple[str, ...] | None:
    """The path components of an entry name, or None when the entry must be refused."""
    text = name.replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        return None
    parts = tuple(p for p in PurePosixPath(text).parts if p not in ("", "."))
    if any(p == ".." for p in parts) or "\x00" in text:
        return None
    return parts


def is_link(info: zipfile.ZipInfo) -> bool:
    """Whether the entry is a symbolic link (as zip tools on Unix store one)."""
    mode = info.external_attr >> 16
    return info.create_system == 3 and stat.S_ISLNK(mode)


def extract_zip(archive: str | Path, staging: str | Path, limits: ZipLimits = DEFAULT_LIMITS) -> Path:
    """Extract ``archive`` into a new folder inside ``staging`` and return that folder.

    Raises GeoError (and leaves nothing behind) when the file is not a readable zip, is empty,
    holds an entry with an absolute or ``..`` path, a link or an encrypted entry, or holds more
    than ``limits.max_entries`` entries or ``limits.max_total_bytes`` once expanded.
    """
    archive = Path(archive)
    staging = Path(staging)
    label = archive.name
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise GeoError(f"{label} is not a readable zip archive ({exc}).") from None
    with zf:
        try:
            infos = zf.infolist()
        except (zipfile.BadZipFile, OSError) as exc:  # pragma: no cover - infolist is read at open
            raise GeoError(f"{label} is not a readable zip archive ({exc}).") from None
        if len(infos) > limits.max_entries:
            raise GeoError(f"{label} holds {len(infos)} entries; at most {limits.max_entries} are accepted.")
        plan: list[tuple[zipfile.ZipInfo, tuple[str, ...]]] = []
        declared = 0
        for info in infos:
            parts = safe_parts(info.filename)
            if parts is None:
                raise GeoError(
                    f"{label} holds the entry '{info.filename}', whose path leaves the archive's folder "
                    "(absolute or with '..'); such archives are refused. Zip the files with relative paths."
                )
            if is_link(info):
                raise GeoError(f"{label} holds the link '{info.filename}'; archives with links are refused.")
            if info.flag_bits & 0x1:
                raise GeoError(f"{label} holds the encrypted entry '{info.filename}'; send an archive without a password.")
            if too_compressed(info, limits):
                raise GeoError(f"{label} holds the entry '{info.filename}', which would expand to {size_label(info.file_size)}"
                               f" from {size_label(info.compress_size)}: refused as a zip bomb.")
            if not parts or parts[0] in _IGNORED_TOP_FOLDERS:
                continue
            declared += info.file_size
            plan.append((info, parts))
        if declared > limits.max_total_bytes:
            raise GeoError(
                f"{label} would expand to {size_label(declared)}, more than the {size_label(limits.max_total_bytes)} "
                "accepted; send the files unzipped or in smaller parts."
            )
        if not any(not info.is_dir() for info, _ in plan):
            raise GeoError(f"{label} is empty: it holds no files.")

        staging.mkdir(parents=True, exist_ok=True)
        target = Path(tempfile.mkdtemp(prefix="unzip-", dir=staging)).resolve()
        try:
            _write_entries(zf, plan, target, limits, label)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
    return target


def _write_entries(zf: zipfile.ZipFile, plan, target: Path, limits: ZipLimits, label: str) -> None:
    written = 0
    for info, parts in plan:
        dest = target.joinpath(*parts)
        # Belt and braces: the components were checked, the resolved path must still be inside.
        if not dest.resolve().is_relative_to(target):  # pragma: no cover - refused above
            raise GeoError(f"{label} holds the entry '{info.filename}', whose path leaves the archive's folder.")
        if info.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            raise GeoError(f"{label} holds '{info.filename}' twice.")
        try:
            with zf.open(info) as src, open(dest, "xb") as out:
                while chunk := src.read(_CHUNK):
                    written += len(chunk)
                    if written > limits.max_total_bytes:
                        raise GeoError(
                            f"{label} expands to more than the {size_label(limits.max_total_bytes)} accepted; "
                            "send the files unzipped or in smaller parts."
                        )
                    out.write(chunk)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
            raise GeoError(f"{label}: the entry '{info.filename}' cannot be extracted ({exc}).") from None
