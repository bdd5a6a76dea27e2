"""Searching by keyboard alone: type a query, choose a filter by its count, open a result and come
back to it, with Tab, Enter, Space and the arrow keys only (no mouse), the focus always visible
and where a person would look for it."""

from __future__ import annotations

import pytest

from tests.conftest import unique

FOCUSED = """() => {
  const el = document.activeElement;
  const style = getComputedStyle(el);
  return { tag: el.localName, name: el.getAttribute('name'), value: el.value ?? null,
           text: (el.getAttribute('aria-label') || el.textContent || '').trim().slice(0, 80),
           facet: el.closest('details[data-facet]')?.dataset.facet ?? null, summary: el.localName === 'summary',
           card: el.closest('.card')?.dataset.pk ?? null, visible: el.matches(':focus-visible')
             && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 };
}"""


@pytest.fixture(scope="module")
def otters(ui_admin):
    tag = unique("kbotter")
    pks = {}
    for title, category in (("river otters", "biota"), ("sea otters", "biota"), ("otter trade", "economy")):
        r = ui_admin.post("/api/v2/resources/", json={"resource_type": "document", "title": f"{tag} {title}",
                                                       "category": {"identifier": category}})
        assert r.status_code == 201, r.text
        pks[title] = str(r.json()["resource"]["pk"])
    return {"tag": tag, "pks": pks}


def tab_until(page, wanted: str, most: int = 60) -> dict:
    """Presses Tab until the focused element matches ``wanted`` (a JS test of `f`, the focused
    element's description); returns it."""
    for _ in range(most):
        page.keyboard.press("Tab")
        found = page.evaluate(FOCUSED)
        if page.evaluate(f"(f) => {wanted}", found):
            return found
    raise AssertionError(f"Tab never reached {wanted}")


def test_search_by_keyboard_alone(tab, otters):
    page = tab.page
    tab.go("/", wait="section.search[data-loaded]")

    # the search box is among the first tab stops
    found = tab_until(page, "f.name === 'q'", most=8)
    assert found["visible"], found
    page.keyboard.type(otters["tag"])
    page.evaluate("delete document.querySelector('section.search').dataset.loaded")
    page.keyboard.press("Enter")
    tab.until(f"location.hash.includes('q={otters['tag']}')")
    page.wait_for_selector("section.search[data-loaded]")
    assert page.inner_text(".summary") == "1–3 of 3 results"
    assert page.evaluate(FOCUSED)["name"] == "q"  # the search box keeps the focus

    # the category's part of the filters: opened with Enter, its counts then shown
    found = tab_until(page, "f.summary && f.facet === 'category'")
    assert found["visible"], found
    page.keyboard.press("Enter")
    page.wait_for_selector("details[data-facet=category] .choice .count")
    assert page.eval_on_selector("details[data-facet=category]", "d => d.open")
    # Tab goes into the choices, on the one chosen now ("Any category")
    page.keyboard.press("Tab")
    found = page.evaluate(FOCUSED)
    assert (found["name"], found["value"], found["visible"]) == ("category", "", True), found
    # the arrow keys choose: the first category (the most results: biota, 2) is chosen and searched
    page.evaluate("delete document.querySelector('section.search').dataset.loaded")
    page.keyboard.press("ArrowDown")
    tab.until("location.hash.includes('category=biota')")
    page.wait_for_selector("section.search[data-loaded]")
    assert page.inner_text(".summary") == "1–2 of 2 results"
    found = page.evaluate(FOCUSED)
    assert (found["name"], found["value"], found["visible"]) == ("category", "biota", True), found
    assert page.is_checked("details[data-facet=category] input[value=biota]")
    tab.shot("chosen")

    # on to the results, and into one with Enter
    found = tab_until(page, "f.card !== null && f.tag === 'a'")
    assert found["visible"], found
    opened = found["card"]
    assert opened in (otters["pks"]["river otters"], otters["pks"]["sea otters"])
    page.keyboard.press("Enter")
    page.wait_for_selector("article.detail h1")
    assert f"/document/{opened}" in page.url
    tab.shot("opened")

    # back (the browser's own key): the same search, its filter still open and chosen, and the
    # focus on the result that was opened
    page.keyboard.press("Alt+ArrowLeft")
    if "/document/" in page.url:  # a headless browser without its shortcuts: the same history step
        page.go_back()
    page.wait_for_selector("section.search[data-loaded]")
    assert "category=biota" in page.url
    tab.until(f"document.activeElement.closest('.card')?.dataset.pk === '{opened}'")
    found = page.evaluate(FOCUSED)
    assert found["tag"] == "a" and found["visible"], found
    assert page.eval_on_selector("details[data-facet=category]", "d => d.open")
    page.wait_for_selector("details[data-facet=category] input[value=biota]:checked")
    tab.shot("back")

    # Shift+Tab goes back up to the chips: the filter is taken off with Space
    found = None
    for _ in range(10):
        page.keyboard.press("Shift+Tab")
        found = page.evaluate(FOCUSED)
        if found["text"].startswith("Remove filter Category"):
            break
    assert found["text"] == "Remove filter Category: Biota" and found["visible"], found
    page.evaluate("delete document.querySelector('section.search').dataset.loaded")
    page.keyboard.press("Space")
    tab.until("!location.hash.includes('category=')")
    page.wait_for_selector("section.search[data-loaded]")
    assert page.inner_text(".summary") == "1–3 of 3 results"
    assert page.evaluate(FOCUSED)["tag"] != "body"  # the focus is not lost with the chip
