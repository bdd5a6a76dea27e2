"""The package file: written member by member and read back checked; every bad file of issue 31's
"Bad input" list that is about the file refused with a message a user understands, and nothing
written. Real files, real zips; the damaged ones are made the way they happen (a copy cut short, a
byte changed, a member swapped, a manifest edited after signing)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from catalogue_app.packages import archive, keys
from catalogue_app.packages.archive import FORMAT, FORMAT_VERSION, Package, PackageError, PackageWriter

UUID = "0b6c7a52-5a8e-4c3e-9d1b-6f1f8c7e2a10"
RECORD = f"resources/{UUID}/record.json"
DATA = f"resources/{UUID}/data/roads.gpkg"
ISO = f"resources/{UUID}/iso19139.xml"


def base_manifest() -> dict:
    return {"id": "5f1d9a4e-0d7c-4f7a-8a55-3e0f6c1b2d33", "created": "2026-11-28T07:00:00Z",
            "catalogue": {"id": "c0ffee00-0000-4000-8000-000000000001", "url": "http://office.example"},
            "made_by": "admin", "cut": {"q": "roads", "types": ["dataset"], "keywords": [], "bbox": None, "ids": [],
                                        "clip": False, "query": None},
            "base": None, "resources": [{"uuid": UUID, "resource_type": "dataset", "title": "Roads", "version": 3,
                                         "data_version": 2, "base_version": None, "data": "whole", "record": RECORD}],
            "deleted": [], "left_out": []}


def data_file(folder: Path, size: int = 3 * archive.CHUNK + 123) -> Path:
    """A file of ``size`` bytes that do not compress (a stand-in GeoPackage)."""
    path = folder / "roads.gpkg"
    with open(path, "wb") as out:
        seed = b"field"
        while size > 0:
            seed = hashlib.sha256(seed).digest() * 2048
            out.write(seed[:size])
            size -= len(seed[:size])
    return path


def write_package(folder: Path, signer: keys.Signer | None = None, name: str = "field.zip") -> Path:
    source = data_file(folder)
    target = folder / name
    with PackageWriter(target, folder / "work") as w:
        w.add_json(RECORD, {"uuid": UUID, "resource_type": "dataset", "fields": {"title": "Roads"}})
        w.add_bytes(ISO, b"<gmd:MD_Metadata/>")
        w.add_file(DATA, source)
        w.finish(base_manifest(), signer)
    return target


def rezip(source: Path, target: Path, *, replace: dict[str, bytes | None] | None = None,
          add: dict[str, bytes] | None = None, edit_manifest=None) -> Path:
    """A copy of the zip ``source`` with members replaced, dropped (None) or added, or its
    manifest edited (as someone who tampers with a package would)."""
    replace = dict(replace or {})
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w") as out:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == archive.MANIFEST and edit_manifest is not None:
                manifest = json.loads(data)
                edit_manifest(manifest)
                data = json.dumps(manifest).encode()
            if info.filename in replace:
                data = replace.pop(info.filename)
                if data is None:
                    continue
            out.writestr(info, data)
        for name, data in (add or {}).items():
            out.writestr(name, data)
    return target


def refused(path: Path, *words: str, **open_args) -> str:
    with pytest.raises(PackageError) as caught:
        with Package.open(path, **open_args) as p:
            p.verify()
    message = str(caught.value)
    for word in words:
        assert word in message, message
    assert "Traceback" not in message and len(message) < 600
    return message


@pytest.fixture
def signer(tmp_path) -> keys.Signer:
    return keys.signer(tmp_path / "office-data")


# -- writing and reading back ------------------------------------------------------------------

def test_a_package_reads_back_as_written(tmp_path, signer):
    path = write_package(tmp_path, signer)
    assert sorted(os.listdir(tmp_path / "work")) == []  # the temporary file was renamed, not left
    with Package.open(path, trusted_keys=(signer.fingerprint,), room_in=tmp_path) as p:
        assert p.signer == signer.fingerprint
        assert p.manifest["format"] == FORMAT and p.manifest["format_version"] == FORMAT_VERSION
        assert p.manifest["catalogue"]["key"] == signer.fingerprint
        assert p.manifest["catalogue"]["public_key"] == signer.public_pem
        assert p.manifest["resources"][0]["uuid"] == UUID
        assert p.names() == [RECORD, ISO, DATA]
        assert p.read_json(RECORD)["fields"] == {"title": "Roads"}
        assert p.read_bytes(ISO) == b"<gmd:MD_Metadata/>"
        p.verify()
        out = p.extract(DATA, tmp_path / "out" / "roads.gpkg")
        assert out.read_bytes() == (tmp_path / "roads.gpkg").read_bytes()
        assert p.size_of(DATA) == out.stat().st_size


def test_members_are_stored_or_deflated_by_kind_and_the_manifest_comes_last(tmp_path, signer):
    path = write_package(tmp_path, signer)
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
        assert [i.filename for i in infos][-2:] == [archive.SIGNATURE, archive.MANIFEST]
        kinds = {i.filename: i.compress_type for i in infos}
        assert kinds[DATA] == zipfile.ZIP_STORED  # QGIS may read a GeoPackage in place
        assert kinds[RECORD] == kinds[ISO] == zipfile.ZIP_DEFLATED
        manifest = json.loads(z.read(archive.MANIFEST))
        for name, entry in manifest["members"].items():
            body = z.read(name)
            assert entry == {"size": len(body), "sha256": hashlib.sha256(body).hexdigest()}
        assert set(manifest["members"]) == {RECORD, ISO, DATA}


def test_an_unsigned_package_says_so(tmp_path):
    path = write_package(tmp_path, None)
    with Package.open(path) as p:
        assert p.signer is None
        assert p.manifest["catalogue"]["key"] is None and p.manifest["catalogue"]["public_key"] is None
    with zipfile.ZipFile(path) as z:
        assert archive.SIGNATURE not in z.namelist()


@pytest.mark.skipif(not (shutil.which("unzip") and shutil.which("sha256sum") and shutil.which("openssl")),
                    reason="unzip, sha256sum and openssl are needed")
def test_standard_tools_check_a_package(tmp_path, signer):
    """What docs/package-format.md tells someone without this software to do."""
    path = write_package(tmp_path, signer)
    out = tmp_path / "opened"
    subprocess.run(["unzip", "-q", str(path), "-d", str(out)], check=True)
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "SHA256SUMS").write_text("".join(f"{m['sha256']}  {n}\n" for n, m in manifest["members"].items()))
    subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=out, check=True)
    (out / "signer.pem").write_text(manifest["catalogue"]["public_key"])
    done = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "signer.pem", "-rawin",
                           "-in", "manifest.json", "-sigfile", "manifest.sig"], cwd=out, capture_output=True, text=True)
    assert "Signature Verified Successfully" in done.stdout, done.stdout + done.stderr
    (out / "manifest.json").write_bytes((out / "manifest.json").read_bytes().replace(b"Roads", b"Reads"))
    done = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "signer.pem", "-rawin",
                           "-in", "manifest.json", "-sigfile", "manifest.sig"], cwd=out, capture_output=True, text=True)
    assert "Signature Verified Successfully" not in done.stdout


def test_a_writer_left_unfinished_leaves_nothing(tmp_path):
    target = tmp_path / "never.zip"
    with pytest.raises(RuntimeError):
        with PackageWriter(target, tmp_path / "work") as w:
            w.add_bytes(ISO, b"<x/>")
            raise RuntimeError("the export failed")
    assert not target.exists() and os.listdir(tmp_path / "work") == []


@pytest.mark.parametrize("name", ["../evil.json", "/etc/passwd", "C:/x.json", "a/../../b", "a\\b", "./a",
                                  "manifest.json", "manifest.sig", "", "a//b"])
def test_the_writer_refuses_unsafe_member_names(tmp_path, name):
    with PackageWriter(tmp_path / "p.zip", tmp_path / "work") as w:
        with pytest.raises(PackageError, match="cannot be the name of a member"):
            w.add_bytes(name, b"x")
        w.add_bytes("ok.json", b"{}")
        with pytest.raises(PackageError, match="already"):
            w.add_bytes("ok.json", b"{}")
        w.abort()
    assert not (tmp_path / "p.zip").exists()


def test_memory_stays_bounded_whatever_the_member_sizes(tmp_path):
    big = data_file(tmp_path, 40 * 1024 * 1024)
    tracemalloc.start()
    try:
        with PackageWriter(tmp_path / "big.zip", tmp_path / "work") as w:
            w.add_file(DATA, big)
            w.finish(base_manifest(), None)
        with Package.open(tmp_path / "big.zip") as p:
            p.verify()
            p.extract(DATA, tmp_path / "out.gpkg")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"peak {peak / 1e6:.1f} MB for a 40 MB member"
    assert (tmp_path / "out.gpkg").stat().st_size == big.stat().st_size


# -- bad files ---------------------------------------------------------------------------------

def test_a_truncated_package_is_refused(tmp_path, signer):
    path = write_package(tmp_path, signer)
    body = path.read_bytes()
    for keep in (len(body) // 2, len(body) - 10, 10):
        cut = tmp_path / f"cut-{keep}.zip"
        cut.write_bytes(body[:keep])
        refused(cut, "cut short", f"'cut-{keep}.zip'", room_in=tmp_path)
    (tmp_path / "empty.zip").write_bytes(b"")
    refused(tmp_path / "empty.zip", "not a zip file")


def test_a_file_that_is_not_a_zip_is_refused(tmp_path):
    (tmp_path / "notes.zip").write_text("these are my field notes\n" * 100)
    refused(tmp_path / "notes.zip", "not a zip file")
    refused(tmp_path / "absent.zip", "is not a file")


def test_a_damaged_member_is_refused_when_read_and_what_was_extracted_is_removed(tmp_path, signer):
    path = write_package(tmp_path, signer)
    body = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(DATA)
    at = info.header_offset + 30 + len(DATA) + 1000  # inside the stored GeoPackage's bytes
    body[at] ^= 0xFF
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(bytes(body))
    refused(damaged, "damaged", DATA)
    with Package.open(damaged) as p:  # the manifest and listing are intact: the hash finds it
        with pytest.raises(PackageError, match="damaged"):
            p.extract(DATA, tmp_path / "out" / "roads.gpkg")
        assert not (tmp_path / "out" / "roads.gpkg").exists()
        assert p.read_json(RECORD)["uuid"] == UUID  # the other members are as they were


def test_a_damaged_list_of_members_is_refused(tmp_path, signer):
    path = write_package(tmp_path, signer)
    body = bytearray(path.read_bytes())
    at = body.rfind(b"PK\x01\x02")  # the last central directory entry
    body[at:at + 4] = b"XX\x01\x02"
    (tmp_path / "d.zip").write_bytes(bytes(body))
    refused(tmp_path / "d.zip", "damaged or not a zip file")


def test_a_foreign_zip_is_refused(tmp_path):
    with zipfile.ZipFile(tmp_path / "photos.zip", "w") as z:
        z.writestr("IMG_0001.jpg", b"\xff\xd8 not really")
    refused(tmp_path / "photos.zip", "not a catalogue package", "manifest.json")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "something-else", "members": {}}))
    refused(tmp_path / "other.zip", "not a catalogue package")
    with zipfile.ZipFile(tmp_path / "junk.zip", "w") as z:
        z.writestr("manifest.json", b"\x00\x01 not json")
    refused(tmp_path / "junk.zip", "not JSON")


def test_a_member_whose_hash_does_not_match_is_refused(tmp_path, signer):
    path = write_package(tmp_path, None)
    with zipfile.ZipFile(path) as z:
        original = z.read(ISO)
    swapped = rezip(path, tmp_path / "swapped.zip", replace={ISO: original.upper()})  # same size, other bytes
    with Package.open(swapped) as p:
        with pytest.raises(PackageError, match="does not match its SHA-256"):
            p.read_bytes(ISO)
        with pytest.raises(PackageError, match="does not match its SHA-256"):
            p.extract(ISO, tmp_path / "iso.xml")
        assert not (tmp_path / "iso.xml").exists()
        with pytest.raises(PackageError, match=ISO):
            p.verify()
    longer = rezip(path, tmp_path / "longer.zip", replace={ISO: original + b"<!-- more -->"})
    refused(longer, "damaged", ISO, "bytes")


def test_members_must_be_exactly_those_listed(tmp_path, signer):
    path = write_package(tmp_path, None)
    refused(rezip(path, tmp_path / "extra.zip", add={"resources/evil/record.json": b"{}"}),
            "resources/evil/record.json", "does not list")
    refused(rezip(path, tmp_path / "less.zip", replace={ISO: None}), ISO, "lacks")
    refused(rezip(path, tmp_path / "unlisted.zip", edit_manifest=lambda m: m["members"].pop(ISO)), ISO, "does not list")


def test_a_signature_that_fails_is_refused(tmp_path, signer):
    path = write_package(tmp_path, signer)

    def retitle(manifest):
        manifest["resources"][0]["title"] = "Roads (changed)"

    message = refused(rezip(path, tmp_path / "edited.zip", edit_manifest=retitle), "signature", "fails")
    assert "changed after it was signed" in message
    refused(rezip(path, tmp_path / "badsig.zip", replace={archive.SIGNATURE: b"\x00" * 64}), "signature", "fails")
    refused(rezip(path, tmp_path / "nosig.zip", replace={archive.SIGNATURE: None}), "no signature", signer.fingerprint)
    other = keys.signer(tmp_path / "other-data")

    def other_key(manifest):
        manifest["catalogue"]["public_key"] = other.public_pem

    refused(rezip(path, tmp_path / "otherkey.zip", edit_manifest=other_key), "signature", "fails")

    def rsa_key(manifest):
        manifest["catalogue"]["public_key"] = "-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----\n"

    refused(rezip(path, tmp_path / "garbled.zip", edit_manifest=rsa_key), "signature", "public key")


def test_a_signer_who_is_not_trusted_is_refused(tmp_path, signer):
    signed = write_package(tmp_path, signer, "signed.zip")
    unsigned = write_package(tmp_path, None, "unsigned.zip")
    stranger = keys.signer(tmp_path / "stranger-data").fingerprint
    message = refused(signed, signer.fingerprint, "does not trust", "CATALOGUE_TRUSTED_KEYS", trusted_keys=(stranger,))
    assert stranger not in message
    refused(unsigned, "not signed", "CATALOGUE_TRUSTED_KEYS", trusted_keys=(stranger,))
    with Package.open(signed, trusted_keys=(stranger, signer.fingerprint)) as p:
        assert p.signer == signer.fingerprint
    with Package.open(unsigned) as p:  # no trusted keys set: anyone, or no one, may have signed
        assert p.signer is None


def test_a_package_of_a_newer_format_is_refused(tmp_path):
    path = write_package(tmp_path, None)

    def newer(manifest):
        manifest["format_version"] = FORMAT_VERSION + 1

    refused(rezip(path, tmp_path / "newer.zip", edit_manifest=newer), "newer catalogue",
            f"format {FORMAT_VERSION + 1}", "Update")

    def garbled(manifest):
        manifest["format_version"] = "one"

    refused(rezip(path, tmp_path / "garbled.zip", edit_manifest=garbled), "format_version")


@pytest.mark.parametrize("name", ["../../evil.sh", "/etc/cron.d/evil", "C:/Windows/evil.dll", "resources/../../evil",
                                  "..\\..\\evil.bat"])
def test_zip_slip_is_refused(tmp_path, name):
    path = write_package(tmp_path, None)
    listed = rezip(path, tmp_path / "slip.zip", add={name: b"evil"},
                   edit_manifest=lambda m: m["members"].update({name: {"size": 4, "sha256": hashlib.sha256(b"evil").hexdigest()}}))
    refused(listed, "leaves the package's folder", room_in=tmp_path)
    assert not (tmp_path.parent / "evil.sh").exists() and not (tmp_path / "evil").exists()


def test_a_link_inside_is_refused(tmp_path):
    path = write_package(tmp_path, None)
    link = zipfile.ZipInfo(f"resources/{UUID}/data/passwd")
    link.create_system = 3
    link.external_attr = 0o120777 << 16
    target = rezip(path, tmp_path / "link.zip")
    with zipfile.ZipFile(target, "a") as z:
        z.writestr(link, "/etc/passwd")
    refused(target, "link", "passwd")


def test_a_zip_bomb_is_refused_before_it_is_expanded(tmp_path):
    path = write_package(tmp_path, None)
    zeros = b"\0" * (64 * 1024 * 1024)
    name = f"resources/{UUID}/data/zeros.csv"
    listed = {name: {"size": len(zeros), "sha256": hashlib.sha256(zeros).hexdigest()}}
    bomb = rezip(path, tmp_path / "bomb.zip", edit_manifest=lambda m: m["members"].update(listed))
    with zipfile.ZipFile(bomb, "a", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(name, zeros)
    del zeros
    refused(bomb, "zip bomb", name, room_in=tmp_path)
    assert not list(tmp_path.glob("**/zeros.csv"))


def test_a_forged_list_of_members_is_refused_before_it_is_read(tmp_path):
    """The zip's end record names the count and size of its list of members; a forged one is
    refused before the list is read into memory."""
    path = write_package(tmp_path, None)
    body = bytearray(path.read_bytes())
    at = body.rfind(b"PK\x05\x06")
    huge = bytearray(body)
    huge[at + 12:at + 16] = struct.pack("<L", 0xF0000000)  # the list's size
    (tmp_path / "huge.zip").write_bytes(bytes(huge))
    refused(tmp_path / "huge.zip", "list of members", "more than")
    many = bytearray(body)
    many[at + 8:at + 12] = struct.pack("<2H", 0xFFFE, 0xFFFE)  # the count of members
    (tmp_path / "many.zip").write_bytes(bytes(many))
    limits = archive.LIMITS
    try:  # the limit lowered under the forged count (a real count past it needs a zip of 200,000 members)
        archive.LIMITS = type(limits)(max_total_bytes=limits.max_total_bytes, max_entries=1000,
                                      max_ratio=limits.max_ratio)
        refused(tmp_path / "many.zip", "65534 members", "at most 1000")
    finally:
        archive.LIMITS = limits


def test_a_forged_size_past_the_total_is_refused(tmp_path):
    path = write_package(tmp_path, None)
    body = bytearray(path.read_bytes())
    at = body.find(b"PK\x01\x02")  # the first central directory entry: its uncompressed size at +24
    body[at + 24:at + 28] = struct.pack("<L", 0xFFFFFFF0)
    (tmp_path / "forged.zip").write_bytes(bytes(body))
    refused(tmp_path / "forged.zip", "zip bomb")


def test_a_package_larger_than_the_free_disk_is_refused_before_anything_is_written(tmp_path):
    path = write_package(tmp_path, None)
    room = tmp_path / "import-here"
    room.mkdir()
    free = shutil.disk_usage(room).free
    message = refused(path, "free disk space", "Nothing was written", room_in=room, reserve_bytes=free)
    assert "twice over" in message
    assert os.listdir(room) == []
    with Package.open(path, room_in=room, reserve_bytes=0) as p:  # the same package fits without that reserve
        assert len(p.names()) == 3


def test_unknown_members_cannot_be_read(tmp_path):
    path = write_package(tmp_path, None)
    with Package.open(path) as p:
        for name in (archive.MANIFEST, archive.SIGNATURE, "resources/nope.json", "../x"):
            with pytest.raises(PackageError, match="holds no member"):
                p.read_bytes(name)
