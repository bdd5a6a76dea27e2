"""Signing in by keyboard alone: from the home page, Tab reaches the header's Sign in, Enter opens
the form with the focus in its first field, a wrong password is said and the focus goes back to
the password, and the right one brings the person back to the page they were on. In English and
in Arabic (right to left). No mouse."""

from __future__ import annotations

import pytest

from tests.conftest import USER_PASSWORD
from tests.ui.keyboard import message, tab_to, use_language


@pytest.mark.parametrize("lang", ["en", "ar"])
def test_sign_in_by_keyboard_and_come_back(tab, ui_server, alice, lang):
    page = tab.page
    use_language(page, lang)
    tab.allow(r"status of 400 .*/account/login/")  # the wrong password, on purpose
    tab.go("/?q=cities", wait="#nav #sign-in")

    tab_to(page, "#nav #sign-in")
    page.keyboard.press("Enter")
    page.wait_for_selector("main form.card-form")
    assert page.inner_text("main h1") == message(lang, "login.title")
    assert page.evaluate("document.documentElement.dir") == ("rtl" if lang == "ar" else "ltr")
    assert tab.until("document.activeElement && document.activeElement.name === 'username'")

    # a wrong password: said in the form, and the keyboard is back in the password field
    page.keyboard.type(alice["username"])
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "password"
    page.keyboard.type("not the password")
    page.keyboard.press("Enter")
    alert = page.wait_for_selector("main p.error[role=alert]:not([hidden])")
    assert alert.inner_text() == message(lang, "login.refused")
    assert tab.until("document.activeElement && document.activeElement.name === 'password' && !document.activeElement.value")
    tab.shot(f"{lang}-wrong")

    # the right one: signed in, back on the search the person was looking at
    page.keyboard.type(USER_PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#nav .who:text-is('{alice['username']}')")
    assert tab.until("location.hash === '#/?q=cities'")
    assert page.locator("#sign-in").count() == 0
    tab.shot(f"{lang}-back")
