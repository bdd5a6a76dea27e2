"""What the keyboard-only flow tests share: pressing Tab until a wanted element has the focus,
checking on the way that the focus is always shown, and the catalogues' messages to compare with."""

from __future__ import annotations

import json
from pathlib import Path

CATALOGUES = Path(__file__).resolve().parents[2] / "ui" / "i18n"

# The focused element, whether it shows a focus ring (it is seen, with an outline or a box-shadow),
# and how to name it in a failure.
FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  const box = el.getBoundingClientRect();
  const seen = box.width > 2 && box.height > 2 && style.visibility !== 'hidden';  // not a visually hidden control
  const ring = seen && ((style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none');
  const name = `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${el.getAttribute('href') ? '[href=' + el.getAttribute('href') + ']' : ''}`
    + ` “${(el.getAttribute('aria-label') || el.textContent || el.name || '').trim().slice(0, 40)}”`;
  return { name, ring };
}"""


def message(lang: str, key: str) -> str:
    """A message of the UI's catalogues, as a reader of that language sees it."""
    area = key.split(".")[0]
    return json.loads((CATALOGUES / lang / f"{area}.json").read_text(encoding="utf-8"))[key]


def tab_to(page, selector: str, most: int = 40, back: bool = False) -> list[str]:
    """Presses Tab (or Shift+Tab) until the element matched by `selector` has the focus, and
    returns the names of the elements passed on the way. Each element focused on the way must show
    that it has the focus."""
    passed = []
    for _ in range(most):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        focused = page.evaluate(FOCUSED)
        if focused is None:
            continue
        assert focused["ring"], f"the focus is not shown on {focused['name']}"
        passed.append(focused["name"])
        if page.evaluate("(s) => document.activeElement && document.activeElement.matches(s)", selector):
            return passed
    raise AssertionError(f"{selector} not reached by {most} presses of Tab; passed: {passed}")


def use_language(page, lang: str) -> None:
    """The reader's choice of language, kept in the browser as the language menu keeps it."""
    page.add_init_script(f"localStorage.setItem('catalogue.language', {json.dumps(lang)})")


def tab_until(page, selector: str, limit: int = 120, back: bool = False) -> None:
    """As tab_to, but stops at once when the focused element already matches, and does not check
    the focus ring on the way; fails when it is not reached within `limit` presses."""
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
