"""The edit page in French and Arabic: the metadata fields' labels and help as the server gives them
in the reader's language, the form's own words from the edit catalogue, right to left in Arabic,
and a refused field's message beside it in the reader's language (the server's own words, English
as GeoNode's, beside it)."""

from __future__ import annotations

import pytest

from tests.conftest import USER_PASSWORD
from tests.ogc.conftest import upload_shapefile
from tests.ui.conftest import DATA
from tests.ui.keyboard import sign_in_by_cookie

FORM = ".metadata-form[data-ready]"

# the language, and what the page says in it
SAID = {
    "fr": {"title": "Titre", "group": "Identification", "save": "Enregistrer", "sharing": "Enregistrer le partage",
           "required": "Ce champ est obligatoire\u00a0: veuillez le remplir.", "dir": "ltr"},
    "ar": {"title": "العنوان", "group": "التعريف", "save": "حفظ", "sharing": "حفظ إعدادات المشاركة",
           "required": "هذا الحقل إلزامي، يُرجى ملؤه.", "dir": "rtl"},
}


@pytest.fixture(scope="module")
def countries(ui_server, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        return upload_shapefile(as_alice, DATA / "naturalearth_lowres")


@pytest.mark.parametrize("lang", sorted(SAID))
def test_edit_page_in_the_readers_language(tab, alice, countries, lang):
    said = SAID[lang]
    tab.page.add_init_script(f"localStorage.setItem('catalogue.language', '{lang}')")
    sign_in_by_cookie(tab, "alice", USER_PASSWORD)
    page = tab.go(f"/dataset/{countries['pk']}/edit", wait=FORM)
    assert page.evaluate("document.documentElement.dir") == said["dir"]
    title = page.locator(f"{FORM} .field[data-path=title]")
    assert title.locator("label").inner_text().replace("*", "").strip() == said["title"]
    assert page.inner_text(f"{FORM} fieldset.group-identification > legend") == said["group"]
    assert page.inner_text(f"{FORM} button[type=submit]") == said["save"]
    page.wait_for_selector(f"#sharing button[type=submit]:text-is('{said['sharing']}')")
    tab.shot("form")

    # a refused field: the reader's sentence, the server's words beside it
    page.fill(f"{FORM} input[name=title]", "")
    page.locator(f"{FORM} input[name=title]").press("Enter")
    error = title.locator(".field-error")
    error.wait_for()
    assert page.inner_text(f"{FORM} .field[data-path=title] .field-error").startswith(said["required"])
    assert error.locator(".server-message[lang=en]").count() == 1
    assert page.evaluate("document.activeElement.name") == "title"
    tab.allow(r"status of 422 .*/api/v2/metadata/instance/")
    tab.shot("refused")
