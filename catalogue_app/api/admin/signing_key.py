"""/api/v2/admin/signing-key: this catalogue's package signing key (staff and superusers).

The fingerprint is what another catalogue adds to its CATALOGUE_TRUSTED_KEYS to accept the
packages this one exports; the public key travels in every signed package's manifest.
"""

from __future__ import annotations

import anyio
import msgspec
from litestar import get

from catalogue_app.api.context import Ctx
from catalogue_app.services import signing_key


class SigningKey(msgspec.Struct):
    fingerprint: str  # "SHA256:" + unpadded base64url of the SHA-256 of the raw Ed25519 public key
    public_key: str  # PEM
    signs_packages: bool  # exports are signed with it (CATALOGUE_SIGN_PACKAGES)
    trusted_keys: list[str]  # the fingerprints whose packages are imported (empty: any, and unsigned ones)


@get("/api/v2/admin/signing-key", tags=["packages"],
     summary="This catalogue's package signing key: fingerprint, public key and trust settings (staff)")
async def show_signing_key(ctx: Ctx) -> SigningKey:
    # reads (or makes, the first time) a small file of the data folder: off the event loop
    found = await anyio.to_thread.run_sync(signing_key.describe, ctx.caller, ctx.settings)
    return SigningKey(found.fingerprint, found.public_key, found.signs_packages, list(found.trusted_keys))


ROUTES = [show_signing_key]
