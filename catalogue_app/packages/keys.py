"""This catalogue's signing key (Ed25519) and the checking of other catalogues' signatures.

The key is made on first use and kept in the data folder at ``keys/catalogue-ed25519.pem``
(PKCS#8 PEM, unencrypted, mode 0600 in a folder of mode 0700); the backup holds it. A key is
named by its fingerprint: ``"SHA256:"`` followed by the unpadded base64url of the SHA-256 of the
raw 32-byte public key. A package carries its signer's public key (PEM) in its manifest, so
anyone can check the signature; whether to trust the signer is decided by its fingerprint (the
``trusted_keys`` setting).
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from catalogue_app import files

KEY_FOLDER = "keys"
KEY_FILE = "catalogue-ed25519.pem"
MAX_PEM = 16 * 1024  # a public key PEM is about 113 bytes; anything this long is not one


class BadSignature(ValueError):
    """A signature that does not verify, or a public key that cannot be read."""


class Signer:
    """This catalogue's private key: signs bytes; names itself by its fingerprint."""

    fingerprint: str  # "SHA256:<base64url, no padding>"
    public_pem: str  # the public key, PEM (SubjectPublicKeyInfo)

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        public = private_key.public_key()
        self.fingerprint = fingerprint(public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
        self.public_pem = public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii")

    def sign(self, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``data``."""
        return self._key.sign(data)


def key_path(data_dir: Path) -> Path:
    """Where the catalogue's private key lives in the data folder ``data_dir``."""
    return Path(data_dir) / KEY_FOLDER / KEY_FILE


def signer(data_dir: Path) -> Signer:
    """The catalogue's signer, its key made on first use at ``<data_dir>/keys/catalogue-ed25519.pem``
    (mode 0600, written atomically so that two processes starting at once agree on one key)."""
    path = key_path(data_dir)
    try:
        pem = path.read_bytes()
    except FileNotFoundError:
        pem = _make_key(path)
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"The signing key {path} cannot be read ({exc}); restore it from a backup or"
                         " move it away to make a new one.") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"The signing key {path} is not an Ed25519 key.")
    return Signer(key)


def _make_key(path: Path) -> bytes:
    """A new key written at ``path`` (never over one there: the first process to link wins)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    part = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(pem)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(part, path)  # fails when another process made the key meanwhile: theirs is kept
        except FileExistsError:
            return path.read_bytes()
        files.sync_folder(path.parent)
        return pem
    finally:
        part.unlink(missing_ok=True)


def fingerprint(public_key_bytes: bytes) -> str:
    """``"SHA256:"`` + unpadded base64url of the SHA-256 of the raw 32-byte public key."""
    digest = hashlib.sha256(public_key_bytes).digest()
    return "SHA256:" + base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def _public_key(public_pem: str) -> Ed25519PublicKey:
    if not isinstance(public_pem, str) or len(public_pem) > MAX_PEM:
        raise BadSignature("the signer's public key is not a PEM text")
    try:
        key = serialization.load_pem_public_key(public_pem.encode("ascii"))
    except (ValueError, TypeError, UnicodeEncodeError):
        raise BadSignature("the signer's public key cannot be read") from None
    if not isinstance(key, Ed25519PublicKey):
        raise BadSignature("the signer's public key is not an Ed25519 key")
    return key


def fingerprint_of_pem(public_pem: str) -> str:
    """The fingerprint of a public key given as PEM; BadSignature when it is not an Ed25519 key."""
    key = _public_key(public_pem)
    return fingerprint(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))


def verify(public_pem: str, signature: bytes, data: bytes) -> str:
    """Check that ``signature`` is the signature of ``data`` by the key ``public_pem``; return the
    key's fingerprint. BadSignature when it is not."""
    key = _public_key(public_pem)
    try:
        key.verify(signature, data)
    except InvalidSignature:
        raise BadSignature("the signature does not match the manifest") from None
    return fingerprint(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
