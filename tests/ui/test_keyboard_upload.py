"""Uploading by keyboard alone: signed in by keyboard, Tab reaches Upload in the header, then the
kind of upload (arrow keys), then the drop zone, where Enter opens the file chooser (the system's
dialog itself is filled by Playwright). The keyboard's place moves to the upload as it goes; when
it is done, Tab reaches the link to the new resource and Enter opens its page. In English and in
Arabic (right to left). No mouse."""

from __future__ import annotations

import pytest

from tests.conftest import USER_PASSWORD
from tests.ui.conftest import DATA
from tests.ui.keyboard import message, tab_to, use_language

CITIES = DATA / "naturalearth_cities"


def sign_in_by_keyboard(tab, username: str, password: str) -> None:
    page = tab.page
    tab.go("/", wait="#nav #sign-in")
    tab_to(page, "#nav #sign-in")
    page.keyboard.press("Enter")
    page.wait_for_selector("main form.card-form")
    assert tab.until("document.activeElement && document.activeElement.name === 'username'")
    page.keyboard.type(username)
    page.keyboard.press("Tab")
    page.keyboard.type(password)
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#nav .who:text-is('{username}')")
    # back on the page one came from, the keyboard starts at its heading once it is drawn
    assert tab.until("document.querySelector('main h1') && document.activeElement === document.querySelector('main h1')")


def open_upload(tab) -> None:
    page = tab.page
    # Playwright takes over the system's file chooser once something listens for it; it is told
    # so without waiting, so the listener goes in well before a key opens the chooser
    page.on("filechooser", lambda chooser: None)
    tab_to(page, "#nav a[href='#/upload']", back=True)
    page.keyboard.press("Enter")
    page.wait_for_selector(".dropzone")


@pytest.mark.parametrize("lang", ["en", "ar"])
def test_upload_a_shapefile_by_keyboard(tab, alice, lang):
    page = tab.page
    use_language(page, lang)
    sign_in_by_keyboard(tab, alice["username"], USER_PASSWORD)
    open_upload(tab)
    assert page.inner_text("main h1") == message(lang, "upload.title")

    # the kind of upload: a radio group, changed with the arrow keys; the hint follows
    tab_to(page, "input[name=kind]:checked")
    assert page.evaluate("document.activeElement.value") == "dataset"
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.value") == "document"
    assert page.inner_text("#upload-hint") == message(lang, "upload.hint_document")
    page.keyboard.press("ArrowUp")
    assert page.is_checked("input[name=kind][value=dataset]")
    assert page.inner_text("#upload-hint") == message(lang, "upload.hint_dataset")

    # the drop zone is the next stop (the hidden file input is none), and Enter opens the chooser
    passed = tab_to(page, ".dropzone")
    assert len(passed) == 1, passed
    with page.expect_file_chooser() as chooser:
        page.keyboard.press("Enter")
    chooser.value.set_files([str(CITIES / f"naturalearth_cities.{e}") for e in ("shp", "dbf", "shx", "prj")])

    # the keyboard is taken to the upload, which becomes a link to the new dataset
    assert tab.until("document.activeElement && document.activeElement.matches('ol.uploads > li.upload')")
    page.wait_for_selector(".upload.done a", timeout=30_000)
    tab.shot(f"{lang}-done")
    tab_to(page, ".upload.done a", most=3)
    assert page.evaluate("document.activeElement.textContent") == message(lang, "upload.open").replace("{title}", "naturalearth_cities")
    page.keyboard.press("Enter")
    page.wait_for_selector("article.detail h1:text-is('naturalearth_cities')")
    assert page.inner_text("article.detail h2:has-text('" + message(lang, "detail.details") + "')")
    tab.shot(f"{lang}-dataset")


def test_a_refused_file_is_said_where_the_keyboard_is(tab, alice):
    page = tab.page
    sign_in_by_keyboard(tab, alice["username"], USER_PASSWORD)
    open_upload(tab)
    tab_to(page, ".dropzone")
    with page.expect_file_chooser() as chooser:
        page.keyboard.press(" ")
    chooser.value.set_files([{"name": "notes.exe", "mimeType": "application/octet-stream", "buffer": b"MZ"}])
    # the refusal is where the keyboard now is, said at once
    assert tab.until("document.activeElement && document.activeElement.matches('ol.uploads > li.upload.failed')")
    assert "notes.exe" in page.evaluate("document.activeElement.textContent")
    tab.shot("refused")
