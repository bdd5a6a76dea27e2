"""No sentence of the web UI is written in its code: each comes from a message catalogue (t()).

The modules are read as text and every string literal that reads like text for people (a
capitalised word, or words ending in a sentence's punctuation) is reported, unless it is one of
the names the code itself uses (GeoJSON types, key names, HTTP headers, formats) or its line says
`// i18n: not text` (for a value that looks like a word but is not shown, e.g. a protocol name).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

UI = Path(__file__).resolve().parents[2] / "ui" / "js"

# Modules not yet moved to the catalogues (none now: every module is).
PENDING: set[str] = set()

# Words the code uses as values, never shown as sentences.
NAMES = {
    "Feature", "FeatureCollection", "Point", "MultiPoint", "LineString", "MultiLineString", "Polygon",
    "MultiPolygon", "GeometryCollection", "Enter", "Escape", "Tab", "Home", "End", "ArrowUp", "ArrowDown",
    "ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Backspace", "Delete", "Content-Type", "Accept",
    "Accept-Language", "Authorization", "Bearer", "Basic", "X-CSRFToken", "If-Match", "ETag", "Location",
    "GeoJSON", "GeoPackage", "GeoTIFF", "Shapefile", "ESRI Shapefile", "GPKG", "GTiff", "WMS", "WFS", "WCS",
    "CSW", "EPSG", "OpenStreetMap", "Leaflet", "Error", "Date", "Intl", "Math", "JSON", "Number", "String",
    "Object", "Array", "Promise", "URL", "URLSearchParams", "Blob", "File", "FormData",
}
STRING = re.compile(r"""(['"`])((?:\\.|(?!\1).)*)\1""")
TEXT = re.compile(r"^\s*[A-Z][a-z]{1,}|[A-Za-z]{2,}[^/]* [A-Za-z][^/]*[.?!…:]\s*$")
IGNORE = "// i18n: not text"


def _literals(text: str):
    for number, line in enumerate(text.splitlines(), 1):
        code = line.strip()
        if code.startswith("//") or code.startswith("*") or IGNORE in line:
            continue
        code = re.sub(r"\s//\s.*$", "", line)  # a trailing comment
        for m in STRING.finditer(code):
            body = m.group(2)
            if m.group(1) == "`":
                body = re.sub(r"\$\{[^}]*\}", " ", body)
            yield number, body


def _looks_like_text(body: str) -> bool:
    if body.strip() in NAMES or body.startswith(("/", "#", ".", "http", "data:", "image/", "application/", "text/")):
        return False
    return bool(TEXT.search(body))


def _modules():
    return [p for p in sorted(UI.rglob("*.js")) if p.name != "i18n.js"]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(UI)))
def test_no_sentence_is_written_in_the_code(path):
    name = str(path.relative_to(UI))
    if name in PENDING:
        pytest.skip("not yet moved to the message catalogues")
    found = [f"{name}:{n}: {body!r}" for n, body in _literals(path.read_text(encoding="utf-8")) if _looks_like_text(body)]
    assert not found, "UI text written in the code (use t('area.key')):\n" + "\n".join(found)


def test_pending_names_real_modules():
    names = {str(p.relative_to(UI)) for p in _modules()}
    assert PENDING <= names, sorted(PENDING - names)
