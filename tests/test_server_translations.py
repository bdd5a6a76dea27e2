"""The translations of the text the server supplies (catalogue_app/locale/<lang>/<kind>.json):
every language has every category, licence, region, facet name and job message, each with the
same places ({name}) as its English text, and job messages are found whole or as patterns."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from catalogue_app import job_messages, translations
from catalogue_app.store import seeds

LOCALE = Path(translations.__file__).parent / "locale"
LANGUAGES = [lang for lang in translations.LANGUAGES if lang != translations.DEFAULT]
PLACE = re.compile(r"\{(\w+)\}")


def keys(kind: str) -> set[str]:
    if kind == "category":
        return {c[0] for c in seeds.CATEGORIES}
    if kind == "license":
        return {lic[0] for lic in seeds.LICENSES}
    if kind == "region":
        data = seeds.regions()
        return {"GLO", *data["continents"].values(), *(c["code"] for c in data["countries"])}
    return set(json.loads((LOCALE / "fr" / f"{kind}.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("kind", ["category", "license", "region", "facet", "message"])
def test_every_language_has_every_text(kind, lang):
    found = translations.catalogue(kind, lang)
    assert set(found) == keys(kind), set(found) ^ keys(kind)
    for key, text in found.items():
        assert text.strip() and text == text.strip(), (lang, key)
        if kind == "message":
            assert set(PLACE.findall(key)) == set(PLACE.findall(text)), (lang, key)


def test_job_messages_whole_and_as_patterns():
    stopped = "The server stopped while this was running; nothing of it was kept. Send the request again."
    assert job_messages.translated(stopped, "es").startswith("El servidor se detuvo")
    refused = ("Refused when the job ran: only staff may run management commands; ana no longer is one of them. "
               "Nothing was done.")
    assert job_messages.translated(refused, "fr") == (
        "Refusé à l'exécution de la tâche : seuls les membres du personnel peuvent exécuter des commandes "
        "d'administration ; ana n'en fait plus partie. Rien n'a été fait.")
    assert job_messages.translated("roads.gpkg could not be read: no layer", "pt") == \
        "Não foi possível ler roads.gpkg: no layer"
    for text in ("Something else.", "", None):
        assert job_messages.translated(text, "ar") == text
    assert job_messages.translated(stopped, "en") == stopped
