"""The messages jobs write (an execution's ``log``: why it failed or was refused) in the reader's
language, from ``catalogue_app/locale/<language>/message.json`` (translations.py reads it).

A key is a message's English text; one with ``{name}`` places is a pattern, matched against the
whole message: the text in each place (a user name, a file name, what the job does) is put into
the translation, itself translated where it is a key too ("delete this resource"). A message
no key matches is shown as written."""

from __future__ import annotations

import re
from functools import lru_cache

from catalogue_app import translations

_PLACE = re.compile(r"\{(\w+)\}")


@lru_cache(maxsize=8)
def _patterns(lang: str) -> list[tuple[re.Pattern[str], str]]:
    """The keys with places of one language, as patterns of the whole message, longest first."""
    out = []
    for key, text in translations.catalogue("message", lang).items():
        if not _PLACE.search(key):
            continue
        parts, last = [], 0
        for place in _PLACE.finditer(key):
            parts.append(re.escape(key[last:place.start()]))
            parts.append(f"(?P<{place.group(1)}>.+?)")
            last = place.end()
        parts.append(re.escape(key[last:]))
        try:
            out.append((re.compile("".join(parts), re.DOTALL), text))
        except re.error:  # a place named twice: not a pattern
            continue
    out.sort(key=lambda pair: -len(pair[0].pattern))
    return out


def translated(text: str | None, lang: str) -> str | None:
    """``text`` in ``lang`` where message.json has it (whole, or as a pattern), else unchanged."""
    if not text or lang == translations.DEFAULT:
        return text
    words = translations.catalogue("message", lang)
    if text in words:
        return words[text]
    for pattern, translation in _patterns(lang):
        found = pattern.fullmatch(text)
        if found:
            values = {name: words.get(value, value) for name, value in found.groupdict().items()}
            return _PLACE.sub(lambda m: values.get(m.group(1), m.group(0)), translation)
    return text
