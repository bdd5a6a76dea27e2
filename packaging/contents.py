"""What each top-level package puts into the single executable, after `make build`: its bytes in
the one-folder build (its files, and its modules in the catalogue's module archive) and those
bytes compressed as the payload compresses them (zstd level 19, so about what it adds to
dist/catalogue). Run with the build environment, which has PyInstaller and zstandard:

    .venv-build/bin/python packaging/contents.py                 # the 40 largest, at level 9 (fast)
    .venv-build/bin/python packaging/contents.py rdflib lark     # these, at level 19
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import zstandard
from PyInstaller.archive.readers import ZlibArchiveReader

from payload import LEVEL

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "dist" / "catalogue-folder" / "_internal"
MODULES = ROOT / "build" / "pyinstaller" / "catalogue" / "PYZ-00.pyz"  # the catalogue's module archive


def _package_of(relative: Path) -> str:
    """The package a file of the folder belongs to ("numpy.libs/x.so" and the dist-info of
    numpy count as numpy's; libraries at the top level are counted together)."""
    first = relative.parts[0]
    if first.startswith("lib") and ".so" in first:
        return "(shared libraries)"
    for suffix in (".libs", ".dist-info", ".data"):
        if first.endswith(suffix):
            first = first[: -len(suffix)].split("-")[0]
    return first.split(".")[0].lower()


def contents() -> dict[str, list[bytes]]:
    groups: dict[str, list[bytes]] = defaultdict(list)
    archive = ZlibArchiveReader(str(MODULES))
    for name in archive.toc:
        groups[name.split(".")[0].lower()].append(archive.extract(name, raw=True) or b"")
    for path in FOLDER.rglob("*"):
        if path.is_file() and not path.is_symlink():
            groups[_package_of(path.relative_to(FOLDER))].append(path.read_bytes())
    return groups


def main(names: list[str]) -> None:
    groups = contents()
    chosen = [n.lower() for n in names] or sorted(groups, key=lambda n: -sum(map(len, groups[n])))[:40]
    level = LEVEL if names else 9
    print(f"{'package':28} {'unpacked MB':>12} {f'zstd {level} MB':>12}")
    total = 0
    for name in chosen:
        raw = b"".join(groups.get(name, []))
        packed = len(zstandard.ZstdCompressor(level=level).compress(raw)) if raw else 0
        total += packed
        print(f"{name:28} {len(raw) / 1e6:12.2f} {packed / 1e6:12.2f}", flush=True)
    print(f"{'(these together)':28} {'':12} {total / 1e6:12.2f}")


if __name__ == "__main__":
    if not MODULES.is_file():
        raise SystemExit("no build/pyinstaller/catalogue/PYZ-00.pyz: `make build` first")
    main(sys.argv[1:])
