"""This catalogue's signing key (Ed25519) and the checking of other catalogues' signatures.

The key is made on first use and kept in the data folder at ``keys/catalogue-ed25519.pem``
(mode 0600); the backup holds it. A key is named by its fingerprint: ``"SHA256:"`` followed by
the unpadded base64url of the SHA-256 of the raw 32-byte public key. A package carries its
signer's public key (PEM) in its manifest, so anyone can check the signature; whether to trust
the signer is decided by its fingerprint (the ``trusted_keys`` setting).
"""

from __future__ import annotations

from pathlib import Path

KEY_FOLDER = "keys"
KEY_FILE = "catalogue-ed25519.pem"


class BadSignature(ValueError):
    """A signature that does not verify, or a public key that cannot be read."""


class Signer:
    """This catalogue's private key: signs bytes; names itself by its fingerprint."""

    fingerprint: str  # "SHA256:<base64url, no padding>"
    public_pem: str  # the public key, PEM (SubjectPublicKeyInfo)

    def sign(self, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``data``."""
        raise NotImplementedError


def key_path(data_dir: Path) -> Path:
    """Where the catalogue's private key lives in the data folder ``data_dir``."""
    return Path(data_dir) / KEY_FOLDER / KEY_FILE


def signer(data_dir: Path) -> Signer:
    """The catalogue's signer, its key made on first use at ``<data_dir>/keys/catalogue-ed25519.pem``
    (mode 0600, written atomically so that two processes starting at once agree on one key)."""
    raise NotImplementedError


def fingerprint(public_key_bytes: bytes) -> str:
    """``"SHA256:"`` + unpadded base64url of the SHA-256 of the raw 32-byte public key."""
    raise NotImplementedError


def fingerprint_of_pem(public_pem: str) -> str:
    """The fingerprint of a public key given as PEM; BadSignature when it is not an Ed25519 key."""
    raise NotImplementedError


def verify(public_pem: str, signature: bytes, data: bytes) -> str:
    """Check that ``signature`` is the signature of ``data`` by the key ``public_pem``; return the
    key's fingerprint. BadSignature when it is not."""
    raise NotImplementedError
