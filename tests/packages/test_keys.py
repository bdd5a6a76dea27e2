"""The catalogue's signing key: made once in the data folder, private to its user, named by its
fingerprint as packages.md says; `catalogue key` prints it with no server running; the settings
that say which keys are trusted."""

from __future__ import annotations

import base64
import hashlib
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from catalogue_app.config import load_settings
from catalogue_app.packages import keys

REPO = Path(__file__).resolve().parents[2]


def test_the_key_is_made_on_first_use_private_and_kept(tmp_path):
    data = tmp_path / "data"
    first = keys.signer(data)
    path = data / "keys" / "catalogue-ed25519.pem"
    assert path == keys.key_path(data)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) & 0o077 == 0
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    again = keys.signer(data)
    assert again.fingerprint == first.fingerprint and again.public_pem == first.public_pem
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


def test_the_fingerprint_is_sha256_of_the_raw_public_key_in_base64url(tmp_path):
    signer = keys.signer(tmp_path)
    public = serialization.load_pem_public_key(signer.public_pem.encode())
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert len(raw) == 32
    expected = "SHA256:" + base64.urlsafe_b64encode(hashlib.sha256(raw).digest()).decode().rstrip("=")
    assert signer.fingerprint == expected == keys.fingerprint(raw) == keys.fingerprint_of_pem(signer.public_pem)
    assert len(signer.fingerprint) == 7 + 43 and "=" not in signer.fingerprint


def test_signatures_verify_and_others_do_not(tmp_path):
    signer = keys.signer(tmp_path / "a")
    data = b'{"format": "catalogue-package"}'
    signature = signer.sign(data)
    assert len(signature) == 64
    assert keys.verify(signer.public_pem, signature, data) == signer.fingerprint
    with pytest.raises(keys.BadSignature):
        keys.verify(signer.public_pem, signature, data + b" ")
    with pytest.raises(keys.BadSignature):
        keys.verify(keys.signer(tmp_path / "b").public_pem, signature, data)
    rsa_pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    for pem in (rsa_pem, "not a key", "x" * 100_000):
        with pytest.raises(keys.BadSignature):
            keys.verify(pem, signature, data)


def test_processes_starting_at_once_agree_on_one_key(tmp_path):
    found: list[str] = []
    threads = [threading.Thread(target=lambda: found.append(keys.signer(tmp_path).fingerprint)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(found) == 8 and len(set(found)) == 1
    assert len(list((tmp_path / "keys").iterdir())) == 1


def test_a_damaged_key_file_is_said_so(tmp_path):
    keys.key_path(tmp_path).parent.mkdir(parents=True)
    keys.key_path(tmp_path).write_text("garbage")
    with pytest.raises(ValueError, match="cannot be read"):
        keys.signer(tmp_path)
    other = ed25519.Ed25519PrivateKey.generate()
    assert keys.Signer(other).fingerprint.startswith("SHA256:")


def test_catalogue_key_prints_the_fingerprint_and_public_key_without_a_server(tmp_path):
    data = tmp_path / "data"
    done = subprocess.run([sys.executable, "-m", "catalogue_app", "key", "--data-dir", str(data)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    signer = keys.signer(data)  # the key the command made
    assert lines[0] == signer.fingerprint
    assert "\n".join(lines[1:]) + "\n" == signer.public_pem
    assert "CATALOGUE_TRUSTED_KEYS" in done.stderr
    again = subprocess.run([sys.executable, "-m", "catalogue_app", "key", "--data-dir", str(data)], cwd=REPO,
                           capture_output=True, text=True, timeout=60)
    assert again.stdout == done.stdout


def test_the_package_settings():
    default = load_settings({})
    assert default.trusted_keys == () and default.sign_packages is True and default.package_reserve_mb == 64
    fp = "SHA256:mwzyfz7kaMokspG5j8GErSXpne3pFFo59PGhqj-Qo1A"
    settings = load_settings({"CATALOGUE_TRUSTED_KEYS": f" {fp} , RSb1yZqS3fUXhJ8lMHk-mV0O1yY1dWfW3b9g7rWvJ8Q=",
                              "CATALOGUE_SIGN_PACKAGES": "false", "CATALOGUE_PACKAGE_RESERVE_MB": "1000000"})
    assert settings.trusted_keys == (fp, "SHA256:RSb1yZqS3fUXhJ8lMHk-mV0O1yY1dWfW3b9g7rWvJ8Q")
    assert settings.sign_packages is False and settings.package_reserve_mb == 1_000_000
    with pytest.raises(SystemExit, match="CATALOGUE_PACKAGE_RESERVE_MB"):
        load_settings({"CATALOGUE_PACKAGE_RESERVE_MB": "-1"})
    from catalogue_app.config import export_environment

    assert load_settings(export_environment(settings)).trusted_keys == settings.trusted_keys
    assert load_settings(export_environment(default)).trusted_keys == ()
