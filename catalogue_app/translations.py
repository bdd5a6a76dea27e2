"""Text the catalogue itself supplies (category, licence and region names, job messages, the
metadata editor's labels and help) in the reader's language, where a translation exists, and
otherwise as stored.

The translations are data: ``catalogue_app/locale/<language>/<kind>.json``, each a mapping from a
stable key (a category's identifier, a licence's identifier, a region's code, a message's English
text, a metadata field's name) to the translated text. English is what is stored, so it has no
files. The reader's language is the request's ``lang`` parameter (as GeoNode's metadata and facets
APIs take it), else the best of its Accept-Language header, else English. API error messages are
not translated (GeoNode's are English; the web UI shows its own sentence beside the code).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

LANGUAGES = ("en", "fr", "es", "pt", "ar")
DEFAULT = "en"
_LOCALE = Path(__file__).resolve().parent / "locale"


def _base(tag: str) -> str:
    return tag.strip().lower().replace("_", "-").split("-")[0]


def language_of(asked: str | None, accept_language: str | None) -> str:
    """The language to answer in: ``asked`` (a ``lang`` parameter) when it names one we have,
    else the Accept-Language entry with the highest q that we have, else English."""
    if asked and _base(asked) in LANGUAGES:
        return _base(asked)
    best, best_q = DEFAULT, 0.0
    for position, part in enumerate((accept_language or "")[:500].split(",")[:20]):
        tag, _, rest = part.partition(";")
        q = 1.0
        rest = rest.strip()
        if rest.startswith("q="):
            try:
                q = float(rest[2:])
            except ValueError:
                q = 0.0
        code = _base(tag)
        q -= position * 1e-6  # equal weights: the earlier entry wins
        if code in LANGUAGES and q > best_q:
            best, best_q = code, q
    return best


@lru_cache(maxsize=64)
def catalogue(kind: str, lang: str) -> dict[str, str]:
    """All translations of one kind into one language (empty for English or when none exist)."""
    if lang not in LANGUAGES or lang == DEFAULT or not kind.isidentifier():
        return {}
    try:
        data = json.loads((_LOCALE / lang / f"{kind}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def translated(kind: str, key: str | None, lang: str, stored: str | None) -> str | None:
    """``stored`` in ``lang`` when a translation of ``key`` exists, else ``stored`` unchanged."""
    if lang == DEFAULT or key is None:
        return stored
    return catalogue(kind, lang).get(str(key), stored)
