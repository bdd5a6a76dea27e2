"""This catalogue's signing key as administrators see it: its fingerprint (what the other side
adds to its trusted keys), its public key, and the package settings that use it. The key lives
in the data folder (packages/keys.py), not in the database; it is made here on first use."""

from __future__ import annotations

from dataclasses import dataclass

from catalogue_app import rules
from catalogue_app.config import Settings
from catalogue_app.packages import keys
from catalogue_app.services.errors import Conflict, Forbidden, NotSignedIn


@dataclass(frozen=True)
class SigningKey:
    fingerprint: str
    public_key: str  # PEM
    signs_packages: bool
    trusted_keys: tuple[str, ...]


def describe(caller, settings: Settings) -> SigningKey:
    """The key and its settings, for staff and superusers (NotSignedIn, Forbidden otherwise)."""
    if caller.is_anonymous:
        raise NotSignedIn()
    if not rules.is_admin(caller):
        raise Forbidden("Only administrators may see the catalogue's signing key and its trusted keys.")
    try:
        signer = keys.signer(settings.data_dir)
    except ValueError as exc:  # a damaged key file: the message says how to mend it
        raise Conflict(str(exc), code="signing_key_unreadable") from None
    return SigningKey(signer.fingerprint, signer.public_pem, settings.sign_packages, tuple(settings.trusted_keys))
