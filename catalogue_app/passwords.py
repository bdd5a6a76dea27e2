"""Password hashing with scrypt (standard library): slow on purpose, salted, self-describing."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

N, R, P = 2**14, 8, 1


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=N, r=R, p=P, dklen=32)
    return f"scrypt${N}${R}${P}${_b64(salt)}${_b64(digest)}"


def verify_password(password: str, stored: str) -> bool:
    """True when ``password`` matches ``stored``; an empty stored hash never matches."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = _unb64(digest)
        actual = hashlib.scrypt(
            password.encode(), salt=_unb64(salt), n=int(n), r=int(r), p=int(p),
            dklen=len(expected), maxmem=256 * 1024 * 1024,
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)


def generate_password() -> str:
    return secrets.token_urlsafe(12)


def check_strength(password: str, username: str = "") -> list[str]:
    """Reasons a new password is refused (empty when it is acceptable)."""
    problems = []
    if len(password) < 8:
        problems.append("This password is too short. It must contain at least 8 characters.")
    if password.isdigit():
        problems.append("This password is entirely numeric.")
    if username and password.lower() == username.lower():
        problems.append("The password is too similar to the username.")
    return problems
