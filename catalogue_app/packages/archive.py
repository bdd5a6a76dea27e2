"""The package file: a zip of members with a ``manifest.json`` naming each member's size and
SHA-256, optionally signed (``manifest.sig``). The format is written down in
docs/package-format.md.

``PackageWriter`` writes one member at a time (streamed, memory bounded whatever the sizes) into a
temporary file, then the manifest last, and renames it into place. ``Package`` opens one and
checks it before anything is read out of it: a zip at all, a manifest of a known format version,
safe names, bounded sizes (the upload checks of geo/archive.py), every member listed and no other,
the signature and who made it, and the free disk space. Every refusal is a PackageError whose
message says why, for the user.
"""

from __future__ import annotations

import errno
import hashlib
import json
import lzma
import os
import re
import secrets
import shutil
import struct
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

from catalogue_app import files
from catalogue_app.geo import archive as zips

from . import keys

FORMAT = "catalogue-package"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SIGNATURE = "manifest.sig"
CHUNK = 1024 * 1024
# What one package may hold: the uncompressed total and the entries are bounded as uploads are
# (geo/archive.py), with room for a field campaign; one member may expand at most MAX_RATIO times
# (counted above 1 MB); the manifest and the members read into memory are bounded too.
LIMITS = zips.ZipLimits(max_total_bytes=1024**4, max_entries=200_000, max_ratio=200)
MAX_CENTRAL_DIRECTORY = 128 * 1024 * 1024
MAX_MANIFEST = 64 * 1024 * 1024
MAX_IN_MEMORY = 256 * 1024 * 1024
MAX_SIGNATURE = 1024
DEFAULT_RESERVE = 64 * 1024 * 1024  # the CATALOGUE_PACKAGE_RESERVE_MB default
# Stored as they are (compressed formats of their own, or read in place); everything else deflated.
STORED_SUFFIXES = frozenset({".gpkg", ".tif", ".tiff", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".zip", ".pdf",
                             ".gz", ".zst", ".kmz", ".mbtiles"})
READABLE_COMPRESSION = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
SHA256 = re.compile(r"[0-9a-f]{64}")
_READ_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, lzma.LZMAError, EOFError, OSError,
                NotImplementedError, RuntimeError, ValueError, struct.error)


class PackageError(ValueError):
    """The package cannot be read or trusted; the message says why, for the user (a 400)."""


def _member_name(name: str) -> str:
    """``name`` when it is a plain relative member path (``a/b.json``); PackageError otherwise."""
    parts = zips.safe_parts(name) if isinstance(name, str) else None
    if not parts or "/".join(parts) != name or name in (MANIFEST, SIGNATURE):
        raise PackageError(f"'{name}' cannot be the name of a member of a package: use a relative path"
                           " without '..', '\\', './' or a leading '/'.")
    return name


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=1).encode("utf-8")


class PackageWriter:
    """Writes a package: ``with PackageWriter(final_path, workspace) as w: w.add_file(...); ...;
    w.finish(manifest, signer)``. The zip is written at a temporary name in ``workspace`` (on the
    same disk as ``final_path`` for the rename to be atomic; it is copied across otherwise) and
    removed if ``finish`` is not reached."""

    def __init__(self, final_path: Path, workspace: Path) -> None:
        self.final_path = Path(final_path)
        workspace = Path(workspace)
        workspace.mkdir(parents=True, exist_ok=True)
        self._part = workspace / f".package-{secrets.token_hex(6)}.zip.part"
        self._zip: zipfile.ZipFile | None = zipfile.ZipFile(self._part, "x", allowZip64=True)
        self.members: dict[str, dict[str, Any]] = {}
        self._stamp = time.gmtime()[:6]
        self._finished = False

    def __enter__(self) -> "PackageWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._finished:
            self.abort()

    def _info(self, name: str, size: int) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, date_time=self._stamp)
        stored = Path(name).suffix.lower() in STORED_SUFFIXES
        info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
        info.create_system = 3  # Unix: a regular file, read and written by its owner, read by others
        info.external_attr = 0o100644 << 16
        info.file_size = size  # tells zipfile whether the entry needs ZIP64 sizes
        return info

    def _write(self, name: str, size: int, chunks) -> None:
        if self._zip is None:
            raise PackageError("The package is finished or dropped: no member can be added.")
        _member_name(name)
        if name in self.members:
            raise PackageError(f"The package holds '{name}' already: a member is written once.")
        sha, written = hashlib.sha256(), 0
        with self._zip.open(self._info(name, size), "w", force_zip64=size > zipfile.ZIP64_LIMIT // 2) as out:
            for chunk in chunks:
                sha.update(chunk)
                written += len(chunk)
                out.write(chunk)
        self.members[name] = {"size": written, "sha256": sha.hexdigest()}

    def add_file(self, name: str, source: Path) -> None:
        """Add the file ``source`` as the member ``name`` (a safe relative path), streamed and hashed."""
        with open(source, "rb") as src:
            size = os.fstat(src.fileno()).st_size
            self._write(name, size, iter(lambda: src.read(CHUNK), b""))

    def add_bytes(self, name: str, data: bytes) -> None:
        """Add ``data`` as the member ``name``."""
        view = memoryview(data)
        self._write(name, len(data), (bytes(view[i:i + CHUNK]) for i in range(0, len(data), CHUNK)))

    def add_json(self, name: str, value: Any) -> None:
        """Add ``value`` as JSON (UTF-8, indented) as the member ``name``."""
        self.add_bytes(name, _json_bytes(value))

    def finish(self, manifest: dict, signer: keys.Signer | None) -> int:
        """Complete the package: set the manifest's ``format``, ``format_version`` and ``members``
        (and, with a signer, its ``catalogue.key`` and ``catalogue.public_key``; without, both
        null), write manifest.sig (the Ed25519 signature of manifest.json's exact bytes) and
        manifest.json last, fsync, rename to ``final_path`` (replacing a file there); return the
        file's size in bytes."""
        if self._zip is None:
            raise PackageError("The package is finished or dropped already.")
        manifest = dict(manifest)
        manifest["format"], manifest["format_version"] = FORMAT, FORMAT_VERSION
        catalogue = dict(manifest.get("catalogue") or {})
        catalogue["key"] = signer.fingerprint if signer else None
        catalogue["public_key"] = signer.public_pem if signer else None
        manifest["catalogue"] = catalogue
        manifest["members"] = self.members
        body = _json_bytes(manifest)
        for name, data in ((SIGNATURE, signer.sign(body) if signer else None), (MANIFEST, body)):
            if data is not None:
                info = self._info(name, len(data))
                info.compress_type = zipfile.ZIP_STORED if name == SIGNATURE else zipfile.ZIP_DEFLATED
                self._zip.writestr(info, data)
        self._zip.close()
        self._zip = None
        try:
            with open(self._part, "rb+") as f:
                os.fsync(f.fileno())
            _move_into_place(self._part, self.final_path)
        except BaseException:
            self.abort()
            raise
        self._finished = True
        return self.final_path.stat().st_size

    def abort(self) -> None:
        """Drop the unfinished package (the temporary file is removed)."""
        if self._zip is not None:
            try:
                self._zip.close()
            except (OSError, ValueError):
                pass
            self._zip = None
        self._part.unlink(missing_ok=True)


def _move_into_place(part: Path, final: Path) -> None:
    """Rename ``part`` to ``final``; across disks, copied beside ``final`` first (fsynced) and renamed."""
    try:
        os.replace(part, final)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        beside = final.with_name(f".{final.name}.part-{secrets.token_hex(4)}")
        try:
            with open(part, "rb") as src, open(beside, "xb") as out:
                shutil.copyfileobj(src, out, CHUNK)
                out.flush()
                os.fsync(out.fileno())
            os.replace(beside, final)
        except BaseException:
            beside.unlink(missing_ok=True)
            raise
        part.unlink(missing_ok=True)
    files.sync_folder(final.parent)


def _end_record(path: Path, label: str) -> tuple[int, int]:
    """The entry count and the central directory's size, from the zip's end records; PackageError
    when there are none (not a zip, or cut short). Read before zipfile reads the whole directory
    into memory, so that a forged count or size is refused first."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        tail_from = max(0, size - (22 + 65535))
        f.seek(tail_from)
        tail = f.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < 22:
            raise PackageError(f"{label} is not a zip file, or it is cut short (its end is missing): it cannot be a"
                               " package. Copy the whole file again.")
        _sig, _disk, _cd_disk, _here, entries, cd_size, _cd_at, _comment = struct.unpack("<4s4H2LH", tail[at:at + 22])
        if entries == 0xFFFF or cd_size == 0xFFFFFFFF:
            locator = tail_from + at - 20
            if locator >= 0:
                f.seek(locator)
                loc = f.read(20)
                if len(loc) == 20 and loc[:4] == b"PK\x06\x07":
                    f.seek(struct.unpack("<Q", loc[8:16])[0])
                    rec = f.read(56)
                    if len(rec) == 56 and rec[:4] == b"PK\x06\x06":
                        entries, cd_size = struct.unpack("<Q", rec[32:40])[0], struct.unpack("<Q", rec[40:48])[0]
    return entries, cd_size


def _why(exc: BaseException) -> str:
    """A reading error in few words (zipfile names the member again, which the message does)."""
    return str(exc).split(" for file ")[0] or type(exc).__name__


def _size(n: int) -> str:
    return zips.size_label(n)


class Package:
    """A package opened for reading, checked. ``with Package.open(path, trusted_keys=..., room_in=folder) as p:``"""

    manifest: dict
    signer: str | None  # the signing key's fingerprint (None: not signed)
    path: Path

    def __init__(self, path: Path, zf: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo], label: str) -> None:
        self.path, self._zip, self._infos, self.label = path, zf, infos, label
        self.manifest = {}
        self.signer = None
        self.members: dict[str, dict[str, Any]] = {}

    @classmethod
    def open(cls, path: Path, *, trusted_keys: tuple[str, ...] = (), room_in: Path | None = None,
             reserve_bytes: int = DEFAULT_RESERVE, label: str | None = None) -> "Package":
        """Open and check the package at ``path``: a readable zip, manifest present and valid, format
        version known, names safe (no ``..``, absolute paths, drive letters or links), sizes bounded
        (zip bombs), every member listed in the manifest and no other, the signature (a bad one is
        refused; with ``trusted_keys``, a package not signed by one of them is refused), and, with
        ``room_in``, that the free disk there holds the members twice over plus ``reserve_bytes``
        (pass ``settings.package_reserve_mb * 1024 * 1024``: CATALOGUE_PACKAGE_RESERVE_MB).
        ``label`` names the file in messages (default: its name). PackageError on any failure;
        nothing is written."""
        path = Path(path)
        label = f"The package '{label or path.name}'"
        if not path.is_file():
            raise PackageError(f"{label} is not a file.")
        entries, cd_size = _end_record(path, label)
        if entries > LIMITS.max_entries:
            raise PackageError(f"{label} holds {entries} members; at most {LIMITS.max_entries} are accepted.")
        if cd_size > MAX_CENTRAL_DIRECTORY:
            raise PackageError(f"{label} has a list of members of {_size(cd_size)}, more than the"
                               f" {_size(MAX_CENTRAL_DIRECTORY)} accepted.")
        try:
            zf = zipfile.ZipFile(path)
        except _READ_ERRORS as exc:
            raise PackageError(f"{label} is damaged or not a zip file ({exc}): it cannot be read.") from None
        try:
            package = cls(path, zf, cls._entries(zf, label), label)
            package._check(tuple(trusted_keys), room_in, reserve_bytes)
        except BaseException:
            zf.close()
            raise
        return package

    @staticmethod
    def _entries(zf: zipfile.ZipFile, label: str) -> dict[str, zipfile.ZipInfo]:
        """The zip's file entries by name, each checked as uploads are (geo/archive.py): a safe
        relative path, no link, no encryption, no extreme compression, the total bounded."""
        infos: dict[str, zipfile.ZipInfo] = {}
        total = 0
        for info in zf.infolist():
            name = info.filename
            parts = zips.safe_parts(name)
            if parts is None:
                raise PackageError(f"{label} holds the member '{name}', whose path leaves the package's folder"
                                   " (absolute, a drive or with '..'): refused.")
            if zips.is_link(info):
                raise PackageError(f"{label} holds the link '{name}': packages with links are refused.")
            if info.flag_bits & 0x1:
                raise PackageError(f"{label} holds the encrypted member '{name}': packages are not encrypted.")
            if info.compress_type not in READABLE_COMPRESSION:
                raise PackageError(f"{label} holds '{name}' compressed in a way this catalogue does not read"
                                   f" (method {info.compress_type}).")
            if zips.too_compressed(info, LIMITS):
                raise PackageError(f"{label} holds '{name}', which would expand to {_size(info.file_size)} from"
                                   f" {_size(info.compress_size)}: refused as a zip bomb.")
            if info.is_dir():
                if info.file_size:
                    raise PackageError(f"{label} holds the folder entry '{name}' with content: refused.")
                continue
            if "/".join(parts) != name:
                raise PackageError(f"{label} holds the member '{name}', whose name is not a plain relative path:"
                                   " refused.")
            if name in infos:
                raise PackageError(f"{label} holds '{name}' twice: refused.")
            total += info.file_size
            if total > LIMITS.max_total_bytes:
                raise PackageError(f"{label} would expand to more than the {_size(LIMITS.max_total_bytes)} accepted:"
                                   " refused as a zip bomb.")
            infos[name] = info
        return infos

    def _check(self, trusted_keys: tuple[str, ...], room_in: Path | None, reserve_bytes: int) -> None:
        label = self.label
        info = self._infos.get(MANIFEST)
        if info is None:
            raise PackageError(f"{label} is not a catalogue package: it holds no {MANIFEST}.")
        if info.file_size > MAX_MANIFEST:
            raise PackageError(f"{label} has a {MANIFEST} of {_size(info.file_size)}, more than the"
                               f" {_size(MAX_MANIFEST)} accepted.")
        body = self._raw(MANIFEST)
        try:
            manifest = json.loads(body)
        except ValueError:
            raise PackageError(f"{label} has a damaged {MANIFEST} (not JSON): it cannot be read.") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise PackageError(f"{label} is not a catalogue package: its {MANIFEST} is not that of one.")
        version = manifest.get("format_version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise PackageError(f"{label} has a damaged {MANIFEST}: its format_version is not a whole number.")
        if version > FORMAT_VERSION:
            raise PackageError(f"{label} was made by a newer catalogue (package format {version}); this catalogue"
                               f" reads format {FORMAT_VERSION} and older. Update it to import this package.")
        members = manifest.get("members")
        if not isinstance(members, dict):
            raise PackageError(f"{label} has a damaged {MANIFEST}: it does not list its members.")
        for name, entry in members.items():
            try:
                _member_name(name)
            except PackageError:
                raise PackageError(f"{label} lists the member '{name}', whose path leaves the package's folder or"
                                   " is not a plain relative path: refused.") from None
            if (not isinstance(entry, dict) or not isinstance(entry.get("size"), int) or entry["size"] < 0
                    or not isinstance(entry.get("sha256"), str) or not SHA256.fullmatch(entry["sha256"])):
                raise PackageError(f"{label} has a damaged {MANIFEST}: the size or SHA-256 of '{name}' is missing"
                                   " or not valid.")
        held = set(self._infos) - {MANIFEST, SIGNATURE}
        extra = sorted(held - set(members))
        if extra:
            raise PackageError(f"{label} holds '{extra[0]}', which its manifest does not list: it was changed after"
                               " it was made. Refused.")
        missing = sorted(set(members) - held)
        if missing:
            raise PackageError(f"{label} lacks '{missing[0]}', which its manifest lists: it is incomplete or was"
                               " changed after it was made. Refused.")
        for name, entry in members.items():
            if self._infos[name].file_size != entry["size"]:
                raise PackageError(f"{label} is damaged: '{name}' has {self._infos[name].file_size} bytes, its"
                                   f" manifest says {entry['size']}.")
        self.manifest, self.members = manifest, members
        self.signer = self._signature(body, trusted_keys)
        if room_in is not None:
            self._room(Path(room_in), reserve_bytes)

    def _signature(self, body: bytes, trusted_keys: tuple[str, ...]) -> str | None:
        label = self.label
        catalogue = self.manifest.get("catalogue")
        catalogue = catalogue if isinstance(catalogue, dict) else {}
        named = catalogue.get("key")
        signer = None
        if SIGNATURE in self._infos:
            if self._infos[SIGNATURE].file_size > MAX_SIGNATURE:
                raise PackageError(f"{label} has a {SIGNATURE} too long to be a signature: refused.")
            public_pem = catalogue.get("public_key")
            if not isinstance(public_pem, str):
                raise PackageError(f"{label} is signed, but its manifest carries no public key to check the signature"
                                   " with: refused.")
            try:
                signer = keys.verify(public_pem, self._raw(SIGNATURE), body)
            except keys.BadSignature as exc:
                raise PackageError(f"{label} has a signature that fails ({exc}): it was changed after it was"
                                   " signed, or damaged. Refused.") from None
            if named is not None and named != signer:
                raise PackageError(f"{label} names the signing key {named} but is signed by {signer}: refused.")
        elif named is not None:
            raise PackageError(f"{label} names the signing key {named} but holds no signature ({SIGNATURE}):"
                               " it was changed after it was signed. Refused.")
        if trusted_keys and signer is None:
            raise PackageError(f"{label} is not signed, and this catalogue accepts only packages signed by a key it"
                               " trusts (CATALOGUE_TRUSTED_KEYS).")
        if trusted_keys and signer not in trusted_keys:
            raise PackageError(f"{label} is signed by the key {signer}, which this catalogue does not trust. To"
                               " accept its packages, add that fingerprint to CATALOGUE_TRUSTED_KEYS.")
        return signer

    def _room(self, folder: Path, reserve_bytes: int) -> None:
        contents = sum(entry["size"] for entry in self.members.values())
        probe = folder
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        free = shutil.disk_usage(probe).free
        needed = 2 * contents + max(0, reserve_bytes)
        if free < needed:
            raise PackageError(f"{self.label} needs {_size(needed)} of free disk space to be imported (its"
                               f" {_size(contents)} of contents twice over, and {_size(max(0, reserve_bytes))} always"
                               f" kept free); {_size(free)} is free. Nothing was written: make room and try again.")

    def _raw(self, name: str) -> bytes:
        """A member's bytes as the zip holds them (CRC checked), for the manifest and signature."""
        try:
            with self._zip.open(self._infos[name]) as src:
                return src.read(MAX_MANIFEST + 1)
        except _READ_ERRORS as exc:
            raise PackageError(f"{self.label} is damaged: '{name}' cannot be read ({_why(exc)}).") from None

    def names(self) -> list[str]:
        """The members listed in the manifest, in the zip's order."""
        return [name for name in self._infos if name in self.members]

    def size_of(self, name: str) -> int:
        """A member's uncompressed size (from the manifest)."""
        return self._entry(name)["size"]

    def _entry(self, name: str) -> dict[str, Any]:
        entry = self.members.get(name)
        if entry is None:
            raise PackageError(f"{self.label} holds no member '{name}'.")
        return entry

    def _stream(self, name: str, sink) -> None:
        """Feed the member's bytes to ``sink`` chunk by chunk; PackageError when they do not match
        the manifest (size or SHA-256) or cannot be read."""
        entry = self._entry(name)
        sha, size = hashlib.sha256(), 0
        try:
            src = self._zip.open(self._infos[name])
        except _READ_ERRORS as exc:
            raise PackageError(f"{self.label} is damaged: '{name}' cannot be read ({_why(exc)}).") from None
        with src:
            while True:
                try:
                    chunk = src.read(CHUNK)
                except _READ_ERRORS as exc:
                    raise PackageError(f"{self.label} is damaged: '{name}' cannot be read ({_why(exc)}).") from None
                if not chunk:
                    break
                size += len(chunk)
                if size > entry["size"]:
                    break
                sha.update(chunk)
                sink(chunk)  # its own errors (a full disk) go up as they are
        if size != entry["size"] or sha.hexdigest() != entry["sha256"]:
            raise PackageError(f"{self.label} is damaged or was changed: '{name}' does not match its SHA-256 in the"
                               " manifest. Refused.")

    def read_bytes(self, name: str) -> bytes:
        """A member's bytes, hash checked (PackageError on a mismatch or an unknown name)."""
        if self._entry(name)["size"] > MAX_IN_MEMORY:
            raise PackageError(f"{self.label}: '{name}' is too large to be read at once.")
        parts: list[bytes] = []
        self._stream(name, parts.append)
        return b"".join(parts)

    def read_json(self, name: str) -> Any:
        """A member parsed as JSON (PackageError when it is not JSON)."""
        try:
            return json.loads(self.read_bytes(name))
        except ValueError:
            raise PackageError(f"{self.label} is damaged: '{name}' is not JSON.") from None

    def extract(self, name: str, target: Path) -> Path:
        """Stream a member to the file ``target`` (its folder is made), hash checked; on a mismatch the
        file is removed and PackageError raised. Returns ``target``."""
        target = Path(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(target, "wb") as out:
                self._stream(name, out.write)
        except BaseException:
            target.unlink(missing_ok=True)
            raise
        return target

    def verify(self) -> None:
        """Hash every member against the manifest (the import calls it before it writes anything)."""
        for name in self.names():
            self._stream(name, lambda chunk: None)

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> "Package":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
