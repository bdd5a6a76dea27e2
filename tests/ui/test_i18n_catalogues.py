"""The web UI's message catalogues (ui/i18n/<language>/<area>.json) against the code that uses them.

No browser: the code is read as text. Keys are written literally (t('area.name')), so every key the
UI can show is found here; a key missing from any language, a key no code uses, a message whose
placeholders differ from English's, or a plural without its "other" form fails the suite.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

UI = Path(__file__).resolve().parents[2] / "ui"
LANGUAGES = ("en", "fr", "es", "pt", "ar")
PLURAL_FORMS = {"zero", "one", "two", "few", "many", "other"}
KEY = r"[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_-]+)+"
USE = re.compile(r"(?<![\w.$])t\(\s*(['\"])(" + KEY + r")\1")
BUILT = re.compile(r"(?<![\w.$])t\(\s*(?!['\"]|\))")
LOAD = re.compile(r"(?<![\w.$])load\(([^)]*)\)")
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _sources() -> dict[Path, str]:
    """The UI's modules (i18n.js, which defines t(), aside), with their whole-line comments blanked."""
    return {p: re.sub(r"(?m)^\s*//.*$", "", p.read_text(encoding="utf-8"))
            for p in sorted((UI / "js").rglob("*.js")) if p.name != "i18n.js"}


def _used() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path, text in _sources().items():
        for m in USE.finditer(text):
            found.setdefault(m.group(2), []).append(path.name)
    return found


def _catalogue(lang: str) -> dict[str, object]:
    merged: dict[str, object] = {}
    for path in sorted((UI / "i18n" / lang).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(data, dict), path
        for key, message in data.items():
            assert key.split(".")[0] == path.stem, f"{lang}/{path.name}: {key} belongs in {key.split('.')[0]}.json"
            merged[key] = message
    return merged


def _placeholders(message: object) -> set[str]:
    if isinstance(message, dict):
        return set().union(*(_placeholders(m) for m in message.values()))
    return set(PLACEHOLDER.findall(str(message)))


def test_keys_are_written_literally():
    built = [f"{p.relative_to(UI)}:{text[:m.start()].count(chr(10)) + 1}"
             for p, text in _sources().items() for m in BUILT.finditer(text)]
    assert not built, f"t() must be given a literal key: {built}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_key_used_is_in_the_catalogue(lang):
    catalogue = _catalogue(lang)
    missing = sorted(f"{key} ({', '.join(sorted(set(where)))})" for key, where in _used().items() if key not in catalogue)
    assert not missing, f"missing from ui/i18n/{lang}: {missing}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_key_in_the_catalogue_is_used(lang):
    used = _used()
    unused = sorted(key for key in _catalogue(lang) if key not in used)
    assert not unused, f"ui/i18n/{lang} holds keys nothing uses: {unused}"


def test_every_area_used_is_loaded():
    loaded = {area for text in _sources().values() for m in LOAD.finditer(text)
              for area in re.findall(r"['\"]([a-z][a-z0-9_]*)['\"]", m.group(1))}
    areas = {key.split(".")[0] for key in _used()}
    assert not areas - loaded, f"areas used but never loaded: {sorted(areas - loaded)}"


@pytest.mark.parametrize("lang", LANGUAGES[1:])
def test_messages_keep_their_placeholders_and_forms(lang):
    english, other = _catalogue("en"), _catalogue(lang)
    for key, message in other.items():
        assert key in english, f"{lang}: {key} is not in English"
        if isinstance(message, dict):
            assert "other" in message and set(message) <= PLURAL_FORMS, f"{lang}: {key} plural forms {sorted(message)}"
        assert message != "", f"{lang}: {key} is empty"
        assert _placeholders(message) == _placeholders(english[key]), f"{lang}: {key} placeholders differ from English"
