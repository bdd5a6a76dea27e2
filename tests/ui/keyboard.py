"""Driving a page by keyboard alone, for the keyboard-only flow tests: Tab (or Shift+Tab) until a
control has the focus, as someone without a mouse moves through the page."""

from __future__ import annotations


def tab_to(page, selector: str, limit: int = 120, back: bool = False) -> None:
    """Presses Tab (Shift+Tab when back) until the focused element matches `selector`; fails when
    it is not reached within `limit` presses (it cannot be reached by keyboard)."""
    key = "Shift+Tab" if back else "Tab"
    for _ in range(limit):
        if page.evaluate("(s) => Boolean(document.activeElement && document.activeElement.matches(s))", selector):
            return
        page.keyboard.press(key)
    raise AssertionError(f"{selector} not reached with {limit} presses of {key}")


def focused(page, script: str = "e => e.outerHTML.slice(0, 200)"):
    """What the focused element is (by default its opening markup, for messages)."""
    return page.evaluate(f"({script})(document.activeElement)")


def sign_in_by_cookie(tab, username: str, password: str) -> None:
    """Signs the tab's browser in through the sign-in API (the keyboard sign-in is its own flow)."""
    r = tab.page.context.request.post(f"{tab.server.url}/account/login/", data={"username": username, "password": password})
    assert r.ok, r.text()
