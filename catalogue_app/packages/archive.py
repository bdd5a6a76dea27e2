"""The package file: a zip of members with a ``manifest.json`` naming each member's size and
SHA-256, optionally signed (``manifest.sig``). The format is written down in
docs/package-format.md.

``PackageWriter`` writes one member at a time (streamed, memory bounded whatever the sizes) into a
temporary file, then the manifest last, and renames it into place. ``Package`` opens one and
checks it before anything is read out of it: a zip at all, a manifest of a known format version,
safe names, bounded sizes, every member listed and no other, the signature and who made it, and the
free disk space. Every refusal is a PackageError whose message says why, for the user.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import keys

FORMAT = "catalogue-package"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SIGNATURE = "manifest.sig"


class PackageError(ValueError):
    """The package cannot be read or trusted; the message says why, for the user (a 400)."""


class PackageWriter:
    """Writes a package: ``with PackageWriter(final_path, workspace) as w: w.add_file(...); ...;
    w.finish(manifest, signer)``. The zip is written at a temporary name in ``workspace`` (on the
    same disk as ``final_path`` for the rename to be atomic) and removed if ``finish`` is not
    reached."""

    def __init__(self, final_path: Path, workspace: Path) -> None:
        raise NotImplementedError

    def __enter__(self) -> "PackageWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError

    def add_file(self, name: str, source: Path) -> None:
        """Add the file ``source`` as the member ``name`` (a safe relative path), streamed and hashed."""
        raise NotImplementedError

    def add_bytes(self, name: str, data: bytes) -> None:
        """Add ``data`` as the member ``name``."""
        raise NotImplementedError

    def add_json(self, name: str, value: Any) -> None:
        """Add ``value`` as JSON (UTF-8, indented) as the member ``name``."""
        raise NotImplementedError

    def finish(self, manifest: dict, signer: keys.Signer | None) -> int:
        """Complete the package: set the manifest's ``members`` (and, with a signer, its
        ``catalogue.key`` and ``catalogue.public_key``; without, both null), write manifest.json
        and manifest.sig, fsync, rename to ``final_path``; return the file's size in bytes."""
        raise NotImplementedError

    def abort(self) -> None:
        """Drop the unfinished package (the temporary file is removed)."""
        raise NotImplementedError


class Package:
    """A package opened for reading, checked. ``with Package.open(path, trusted_keys=..., room_in=folder) as p:``"""

    manifest: dict
    signer: str | None  # the signing key's fingerprint (None: not signed)
    path: Path

    @classmethod
    def open(cls, path: Path, *, trusted_keys: tuple[str, ...] = (), room_in: Path | None = None) -> "Package":
        """Open and check the package at ``path``: a readable zip, manifest present and valid, format
        version known, names safe (no ``..``, absolute paths, drive letters or links), sizes bounded
        (zip bombs), every member listed in the manifest and no other, the signature (a bad one is
        refused; with ``trusted_keys``, a package not signed by one of them is refused), and, with
        ``room_in``, that the free disk there holds the members twice over plus the reserve
        (``CATALOGUE_PACKAGE_RESERVE_MB``). PackageError on any failure; nothing is written."""
        raise NotImplementedError

    def names(self) -> list[str]:
        """The members listed in the manifest, in the zip's order."""
        raise NotImplementedError

    def size_of(self, name: str) -> int:
        """A member's uncompressed size (from the manifest)."""
        raise NotImplementedError

    def read_bytes(self, name: str) -> bytes:
        """A member's bytes, hash checked (PackageError on a mismatch or an unknown name)."""
        raise NotImplementedError

    def read_json(self, name: str) -> Any:
        """A member parsed as JSON (PackageError when it is not JSON)."""
        raise NotImplementedError

    def extract(self, name: str, target: Path) -> Path:
        """Stream a member to the file ``target`` (its folder is made), hash checked; on a mismatch the
        file is removed and PackageError raised. Returns ``target``."""
        raise NotImplementedError

    def verify(self) -> None:
        """Hash every member against the manifest (the import calls it before it writes anything)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> "Package":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
