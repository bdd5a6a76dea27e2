"""Refused inputs of backup and restore: a clear message, exit code 1, nothing half-written."""

from __future__ import annotations

import io
import json
import tarfile

import pytest

from tests.conftest import Server
from tests.management.backup_helpers import cli, upload_document


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A small catalogue (no server left running) and an archive of it, plain and gzipped."""
    base = tmp_path_factory.mktemp("bad")
    srv = Server(base / "data")
    with srv.client(auth=("admin", "admin-secret-1")) as c:
        upload_document(c, "a.txt", b"some text\n", "A text")
    srv.stop()
    archive = base / "good.tar"
    r = cli("backup", "--output", str(archive), data_dir=base / "data")
    assert r.returncode == 0, r.stderr
    r = cli("backup", "--gzip", "--output", str(base), data_dir=base / "data")
    assert r.returncode == 0, r.stderr
    gz = next(base.glob("catalogue-*.tar.gz"))
    return {"base": base, "data": base / "data", "archive": archive, "gz": gz}


def leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".restore-" in p.name or ".part-" in p.name)


def refused(made, archive, target_name: str, words: str) -> None:
    target = made["base"] / target_name
    r = cli("restore", str(archive), data_dir=target)
    assert r.returncode == 1, r.stdout + r.stderr
    assert words in r.stderr, r.stderr
    assert not target.exists()
    assert leftovers(made["base"]) == []


def members(archive) -> list[tuple[tarfile.TarInfo, bytes]]:
    with tarfile.open(archive) as tar:
        return [(m, tar.extractfile(m).read()) for m in tar.getmembers()]


def write(path, items) -> None:
    with tarfile.open(path, "w") as tar:
        for info, body in items:
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))


def test_a_gzipped_backup_restores(made):
    target = made["base"] / "from-gz"
    r = cli("restore", str(made["gz"]), data_dir=target)
    assert r.returncode == 0, r.stderr
    assert "1 documents" in r.stdout
    assert cli("check", "--min-age", "0", data_dir=target).returncode == 0


def test_restore_into_a_folder_that_is_not_empty(made):
    target = made["base"] / "busy"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    r = cli("restore", str(made["archive"]), data_dir=target)
    assert r.returncode == 1 and "is not empty" in r.stderr
    assert [p.name for p in target.iterdir()] == ["keep.txt"]
    # an empty folder is fine
    empty = made["base"] / "empty"
    empty.mkdir()
    assert cli("restore", str(made["archive"]), data_dir=empty).returncode == 0
    assert (empty / "catalogue.sqlite3").is_file()


def test_restore_onto_a_running_server(made, tmp_path):
    srv = Server(tmp_path / "running")
    try:
        r = cli("restore", str(made["archive"]), data_dir=srv.data_dir)
        assert r.returncode == 1 and "A server runs on" in r.stderr
    finally:
        srv.stop()


def test_a_damaged_archive_names_its_bad_member(made):
    items = members(made["archive"])
    name, body = next((m.name, b) for m, b in items if m.name.startswith("files/"))
    damaged = made["base"] / "damaged.tar"
    write(damaged, [(m, bytes([b[0] ^ 0xFF]) + b[1:] if m.name == name else b) for m, b in items])
    refused(made, damaged, "r-damaged", f"member {name} does not match its SHA-256")
    # a byte flipped anywhere in the file: refused all the same
    raw = bytearray(made["archive"].read_bytes())
    raw[len(raw) // 3] ^= 0x01
    flipped = made["base"] / "flipped.tar"
    flipped.write_bytes(bytes(raw))
    refused(made, flipped, "r-flipped", "damaged")
    # cut short: the manifest is gone
    cut = made["base"] / "cut.tar"
    cut.write_bytes(made["archive"].read_bytes()[:len(raw) // 2])
    refused(made, cut, "r-cut", "cut short")
    # a member the manifest does not list
    extra = made["base"] / "extra.tar"
    write(extra, items[:-1] + [(tarfile.TarInfo("files/x/new.txt"), b"new")] + items[-1:])
    refused(made, extra, "r-extra", "member files/x/new.txt is not in the manifest")
    gz = bytearray(made["gz"].read_bytes())
    gz[len(gz) // 2] ^= 0x10
    bad_gz = made["base"] / "bad.tar.gz"
    bad_gz.write_bytes(bytes(gz))
    refused(made, bad_gz, "r-gz", "damaged")


def test_members_that_climb_out_or_link_are_refused(made):
    items = members(made["archive"])
    for i, (name, words) in enumerate([("../escape.txt", "'..'"), ("files/../../escape.txt", "'..'"),
                                       ("/tmp/escape.txt", "absolute"), ("other/x.txt", "not part of a catalogue backup")]):
        evil = made["base"] / f"evil{i}.tar"
        write(evil, [(tarfile.TarInfo(name), b"boo")] + items)
        refused(made, evil, f"r-evil{i}", words)
    assert not (made["base"].parent / "escape.txt").exists()
    link = tarfile.TarInfo("files/x/link")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    linked = made["base"] / "link.tar"
    write(linked, items[:-1] + [(link, b"")] + items[-1:])
    refused(made, linked, "r-link", "is a link")


def test_a_manifest_that_lies_is_refused(made):
    items = members(made["archive"])
    manifest = json.loads(items[-1][1])
    manifest["members"][0]["size"] += 1
    lying = made["base"] / "lying.tar"
    write(lying, items[:-1] + [(items[-1][0], json.dumps(manifest).encode())])
    refused(made, lying, "r-lying", f"member {manifest['members'][0]['name']} has")


def test_something_else_than_an_archive(made):
    text = made["base"] / "notes.txt"
    text.write_text("not an archive at all\n" * 100)
    refused(made, text, "r-text", "is not a backup archive")
    refused(made, made["base"] / "nowhere.tar", "r-none", "no such file")
    other = made["base"] / "other.tar"
    write(other, [(tarfile.TarInfo("catalogue.sqlite3"), b"not a database")])
    refused(made, other, "r-other", "not a catalogue backup")


def test_backup_to_a_place_it_cannot_write(made):
    data = made["data"]
    blocker = made["base"] / "a-file"
    blocker.write_text("x")
    for output, words in [(blocker / "backup.tar", "is not a folder"), (made["archive"], "exists already"),
                          (data / "files" / "x.tar", "inside the data folder"),
                          ("/proc/backup.tar", "Cannot write the backup")]:
        before = sorted(p.name for p in made["base"].iterdir())
        r = cli("backup", "--output", str(output), data_dir=data)
        assert r.returncode == 1, (output, r.stdout, r.stderr)
        assert words in r.stderr, (output, r.stderr)
        assert sorted(p.name for p in made["base"].iterdir()) == before
    assert not list((data / "tmp").glob("backup-*")), "the backup's workspace was left"
    assert not (data / "files" / "x.tar").exists()
    r = cli("backup", "--compress", data_dir=data)
    assert r.returncode == 2 and "unrecognized arguments" in r.stderr
