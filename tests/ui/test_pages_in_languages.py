"""The pages of one's own things in French and in Arabic (right to left): sign in, a dataset's
page, a document's, My things, My tokens (with a token made), Upload and the map composer, each
with its title from the language's catalogue and no message key left showing. Screenshots of each
under test-output/ui/, to look at as a reader of the language would."""

from __future__ import annotations

import re

import pytest

from tests.conftest import USER_PASSWORD
from tests.ogc.conftest import upload_shapefile
from tests.ui.conftest import DATA
from tests.ui.keyboard import message, use_language

COUNTRIES = DATA / "naturalearth_lowres"
# a message key shown instead of its message (a key missing from the language's catalogue)
KEY_SHOWN = re.compile(r"\b(detail|login|mine|upload|tokens|composer)\.[a-z_0-9]+\b")


@pytest.fixture(scope="module")
def countries(ui_server, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        dataset = upload_shapefile(as_alice, COUNTRIES)
        as_alice.post(f"/api/v2/resources/{dataset['pk']}/favorite")
        as_alice.post("/api/v2/tokens/", json={"label": "QGIS", "expires_in_days": 30})
        doc = as_alice.post("/api/v2/documents", files={"doc_file": ("field notes.txt", b"notes", "text/plain")},
                            data={"title": "Field notes"}).json()["document"]
    return {"dataset": dataset, "document": doc}


def look(tab, lang: str, path: str, ready: str, title: str | None, label: str) -> None:
    page = tab.go(path, wait=ready)
    if title is not None:
        assert page.inner_text("main h1") == title
    assert page.evaluate("document.documentElement.dir") == ("rtl" if lang == "ar" else "ltr")
    assert page.evaluate("document.documentElement.lang") == lang
    shown = page.inner_text("main") + " " + " ".join(page.eval_on_selector_all(
        "main [aria-label], main [alt], main [placeholder]",
        "(els) => els.map((e) => [e.getAttribute('aria-label'), e.getAttribute('alt'), e.getAttribute('placeholder')].join(' '))"))
    assert not KEY_SHOWN.search(shown), KEY_SHOWN.search(shown).group(0)
    tab.shot(f"{lang}-{label}")


@pytest.mark.parametrize("lang", ["fr", "ar"])
def test_my_pages_in_the_readers_language(tab, countries, lang):
    use_language(tab.page, lang)
    look(tab, lang, "/login", "main form.card-form", message(lang, "login.title"), "login")
    page = tab.page
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", USER_PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_selector("#nav .who:text-is('alice')")
    pk = countries["dataset"]["pk"]
    look(tab, lang, f"/dataset/{pk}", f"article.detail[data-pk='{pk}'] .metadata dl", None, "dataset")
    assert message(lang, "detail.details") in tab.page.inner_text(".metadata h2")
    doc = countries["document"]["pk"]
    look(tab, lang, f"/document/{doc}", f"article.detail[data-pk='{doc}'] .metadata dl", "Field notes", "document")
    look(tab, lang, "/me", "section.page.mine", message(lang, "mine.title"), "mine")
    look(tab, lang, "/me/tokens", "section.page.tokens[data-loaded] tr[data-token]", message(lang, "tokens.title"), "tokens")
    look(tab, lang, "/upload", ".dropzone", message(lang, "upload.title"), "upload")
    look(tab, lang, "/map/new", "section.composer .found-item", message(lang, "composer.a_new_map"), "composer")
