"""Editing a resource's metadata by keyboard alone: from its page to the edit page, a text, a code
list, a date and a keyword changed, saved and seen saved; then a refused field, whose message is
shown beside it, tied to it for screen readers, with the focus moved to it. No mouse click."""

from __future__ import annotations

import pytest

from tests.conftest import USER_PASSWORD
from tests.ogc.conftest import upload_shapefile
from tests.ui.conftest import DATA
from tests.ui.keyboard import focused, sign_in_by_cookie
from tests.ui.keyboard import tab_until as tab_to

FORM = "form[aria-label='Metadata']"


@pytest.fixture(scope="module")
def countries(ui_server, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        return upload_shapefile(as_alice, DATA / "naturalearth_lowres")


def instance(ui_server, pk):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        r = as_alice.get(f"/api/v2/metadata/instance/{pk}/")
        assert r.status_code == 200, r.text
        return r.json()


def test_edit_metadata_by_keyboard(tab, ui_server, alice, countries):
    pk = countries["pk"]
    sign_in_by_cookie(tab, "alice", USER_PASSWORD)
    page = tab.go(f"/dataset/{pk}", wait=".detail-head a[href$='/edit']")

    # from the resource's page to its edit page
    tab_to(page, ".detail-head a[href$='/edit']")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"{FORM}[data-ready]")

    # required fields are marked, for the eye and for screen readers
    title = f"{FORM} input[name=title]"
    assert page.get_attribute(title, "aria-required") == "true"
    assert page.locator(f"{FORM} .field[data-path=title] label .required").inner_text().strip() == "*"

    # a text
    tab_to(page, title)
    page.keyboard.press("Control+A")
    page.keyboard.type("Countries of the survey")
    # a code list: typing a letter picks the choice it starts
    tab_to(page, f"{FORM} select[name=date_type]")
    page.keyboard.type("c")
    assert page.input_value(f"{FORM} select[name=date_type]") == "creation"
    # a date, typed in the date box's parts
    tab_to(page, f"{FORM} input[name=date]")
    page.keyboard.type("03152024")
    assert page.input_value(f"{FORM} input[name=date]") == "2024-03-15"
    # a keyword, typed and taken with Enter (which does not send the form)
    tab_to(page, f"{FORM} .field[data-path=hkeywords] input[role=combobox]")
    page.keyboard.type("river basins")
    page.keyboard.press("Enter")
    assert page.locator(f"{FORM} .field[data-path=hkeywords] .tokens li").all_inner_texts()[-1].startswith("river basins")
    assert page.inner_text(f"{FORM} .actions [role=status]") == ""
    # a region, from the suggestions: typed, an arrow, Enter
    tab_to(page, f"{FORM} .field[data-path=regions] input[role=combobox]")
    page.keyboard.type("Fran")
    page.wait_for_selector(f"{FORM} .field[data-path=regions] [role=option]:text-is('France')")
    regions = f"{FORM} .field[data-path=regions] input[role=combobox]"
    for _ in range(10):
        if page.evaluate("(s) => { const i = document.querySelector(s); const a = i.getAttribute('aria-activedescendant');"
                         " return a && document.getElementById(a).textContent === 'France'; }", regions):
            break
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    assert page.locator(f"{FORM} .field[data-path=regions] .tokens li").all_inner_texts()[0].startswith("France")

    # contacts: a user of the catalogue as author, a person by name as point of contact
    tab_to(page, f"{FORM} .records-field[data-path='contacts.author'] button[aria-label^='Add a user']")
    page.keyboard.press("Enter")  # the new entry's box has the focus
    page.keyboard.type("Alice")
    page.wait_for_selector(f"{FORM} .records-field[data-path='contacts.author'] [role=option]")
    page.keyboard.press("Enter")
    assert page.inner_text(f"{FORM} .records-field[data-path='contacts.author'] .record-choice") == "alice (Alice Field)"
    tab_to(page, f"{FORM} .records-field[data-path='contacts.pointOfContact'] button[aria-label^='Add by name']")
    page.keyboard.press("Enter")
    page.keyboard.type("Survey office")  # name
    page.keyboard.press("Tab")
    page.keyboard.type("Institute of Field Studies")  # organisation
    page.keyboard.press("Tab")
    page.keyboard.type("office@example.org")  # e-mail
    tab.shot("changed")

    # saved with the Save button
    tab_to(page, f"{FORM} button[type=submit]")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"{FORM} .actions [role=status]:text('Saved.')")
    assert page.inner_text("section.edit h1") == "Edit dataset: Countries of the survey"
    saved = instance(ui_server, pk)
    assert saved["title"] == "Countries of the survey"
    assert saved["date_type"] == "creation"
    assert saved["date"].startswith("2024-03-15")
    assert "river basins" in saved["hkeywords"]
    assert [r["label"] for r in saved["regions"]] == ["France"]
    assert [c.get("id") for c in saved["contacts"]["author"]] == [str(alice["pk"])]
    assert saved["contacts"]["pointOfContact"] == [
        {"name": "Survey office", "organization": "Institute of Field Studies", "email": "office@example.org"}], saved["contacts"]

    # a DOI that is none, and a required field emptied: the catalogue refuses both, each message
    # is beside its field, and the focus goes to the first
    doi = f"{FORM} input[name=doi]"
    tab_to(page, doi, back=True)
    page.keyboard.type("not a doi")
    tab_to(page, title, back=True)
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    page.keyboard.press("Enter")
    doi_error = f"{FORM} .field[data-path=doi] .field-error"
    page.wait_for_selector(f"{doi_error}:visible")
    assert page.inner_text(doi_error).startswith("The catalogue did not accept this value.")
    assert "valid DOI" in page.inner_text(f"{doi_error} .server-message[lang=en]")
    assert page.get_attribute(doi, "aria-invalid") == "true"
    assert page.inner_text(f"{FORM} .form-errors") == "2 fields were not accepted: each message is beside its field."
    error = f"{FORM} .field[data-path=title] .field-error"
    page.wait_for_selector(f"{error}:visible")
    assert page.inner_text(error).startswith("This field is required")
    assert page.get_attribute(title, "aria-invalid") == "true"
    assert page.get_attribute(f"{FORM} .field[data-path=title] .field-error", "id") in page.get_attribute(title, "aria-describedby").split()
    assert focused(page, "e => e.name") == "title", focused(page)
    assert "Nothing was saved." in page.inner_text(f"{FORM} .actions [role=status]")
    assert instance(ui_server, pk)["title"] == "Countries of the survey"
    tab.allow(r"status of 422 .*/api/v2/metadata/instance/")
    tab.shot("refused")

    # put right, the messages go
    page.keyboard.type("Countries again")
    tab_to(page, doi)
    page.keyboard.press("Control+A")
    page.keyboard.type("10.1234/field.2024")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"{FORM} .actions [role=status]:text('Saved.')")
    assert page.locator(f"{error}:visible").count() == 0
    assert page.get_attribute(title, "aria-invalid") is None and page.get_attribute(doi, "aria-invalid") is None
    assert page.inner_text(f"{FORM} .form-errors") == ""
    saved = instance(ui_server, pk)
    assert (saved["title"], saved["doi"]) == ("Countries again", "10.1234/field.2024")
