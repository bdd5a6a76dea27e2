"""The headers of an answer that carries text in the reader's language (translations.py): it
varies with Accept-Language (and with who asks), and says which language it is in."""

from __future__ import annotations

from catalogue_app.api.context import Context


def headers(ctx: Context) -> dict[str, str]:
    return {"Vary": "Accept-Language, Authorization, Cookie", "Content-Language": ctx.lang}
