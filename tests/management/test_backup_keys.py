"""The catalogue's signing key is part of a backup and comes back with a restore: the restored
catalogue signs with the same fingerprint that the other side trusts, and its key stays private.
Only superusers may download a backup (tests/management/test_backup_downloads.py)."""

from __future__ import annotations

import stat
import tarfile

from catalogue_app.packages import keys
from tests.management.backup_helpers import cli


def test_a_backup_holds_the_key_and_restore_puts_it_back(tmp_path):
    data = tmp_path / "office"
    made = cli("token", "admin", data_dir=data)  # a first start: the database and the admin
    assert made.returncode == 0, made.stderr
    printed = cli("key", data_dir=data)
    assert printed.returncode == 0, printed.stderr
    fingerprint = printed.stdout.splitlines()[0]
    original = keys.key_path(data).read_bytes()

    archive = tmp_path / "office.tar"
    backup = cli("backup", "--output", str(archive), data_dir=data)
    assert backup.returncode == 0, backup.stderr + backup.stdout
    with tarfile.open(archive) as tar:
        member = tar.getmember("keys/catalogue-ed25519.pem")
        assert stat.S_IMODE(member.mode) == 0o600
        assert tar.extractfile(member).read() == original

    restored = tmp_path / "restored"
    restore = cli("restore", str(archive), data_dir=restored)
    assert restore.returncode == 0, restore.stderr + restore.stdout
    path = keys.key_path(restored)
    assert path.read_bytes() == original
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    again = cli("key", data_dir=restored)
    assert again.stdout.splitlines()[0] == fingerprint


def test_a_backup_of_a_catalogue_without_a_key_restores_without_one(tmp_path):
    data = tmp_path / "plain"
    assert cli("token", "admin", data_dir=data).returncode == 0
    archive = tmp_path / "plain.tar"
    assert cli("backup", "--output", str(archive), data_dir=data).returncode == 0
    with tarfile.open(archive) as tar:
        assert not [n for n in tar.getnames() if n.startswith("keys")]
    restored = tmp_path / "restored"
    assert cli("restore", str(archive), data_dir=restored).returncode == 0
    assert not (restored / "keys").exists()
