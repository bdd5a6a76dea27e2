"""The web UI on a phone (a menu button, the results first, controls large enough to tap) and the
header's "Sign in", which returns to the page shown when it is pressed."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD
from tests.ogc.conftest import PRIVATE, upload_shapefile
from tests.ui.conftest import DATA, Browsing

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
NAV_LINKS = "#nav a, #nav button"

# The width and height of every visible checkbox, radio button, "↗" link and ▲▼ button.
TARGETS = """() => [...document.querySelectorAll('input[type=checkbox], input[type=radio], a.small-link, .layer-tools button')]
  .filter((e) => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden')
  .map((e) => { const r = e.getBoundingClientRect();
                return { what: e.type || e.textContent, label: e.getAttribute('aria-label') || e.name || '', width: r.width, height: r.height }; })"""


@pytest.fixture
def phone(browser, ui_server, request):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    browsing = Browsing(page, ui_server, re.sub(r"[^\w.-]+", "-", f"phone-{request.node.name}").strip("-"))
    yield browsing
    errors = browsing.unexpected_errors()
    context.close()
    assert not errors, f"errors in the browser console: {errors}"


@pytest.fixture(scope="module")
def datasets(ui_server, alice) -> dict:
    """alice's public countries, in a public map, and her private cities."""
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        countries = upload_shapefile(as_alice, DATA / "naturalearth_lowres")
        private = upload_shapefile(as_alice, DATA / "naturalearth_cities", PRIVATE, dataset_title="Private cities")
        made = as_alice.post("/api/v2/maps", json={
            "resource_type": "map", "title": "The world's countries",
            "maplayers": [{"name": countries["alternate"], "order": 0, "visibility": True, "opacity": 1,
                           "dataset": int(countries["pk"]), "extra_params": {"msId": "countries"}}]})
        assert made.status_code == 201, made.text
    return {"countries": countries, "private": private, "map": made.json()["map"]}


def header_rows(page) -> dict:
    return page.evaluate("""() => {
      const header = document.querySelector('header.top').getBoundingClientRect();
      const brand = document.querySelector('header .brand').getBoundingClientRect();
      return { height: header.height, brand: brand.height };
    }""")


def test_phone_navigation_is_one_row_with_a_menu_button(phone, alice):
    page = phone.page
    phone.sign_in("alice", USER_PASSWORD)  # and back on Browse
    page.wait_for_selector("section.search[data-loaded]")
    button = page.locator("#menu-toggle")
    assert button.is_visible() and button.inner_text().strip() == "Menu"
    assert button.get_attribute("aria-controls") == "nav"
    assert button.get_attribute("aria-expanded") == "false"
    rows = header_rows(page)
    assert rows["height"] < rows["brand"] + 32, rows  # the brand and the button: one row
    assert not page.locator("#nav a:text('Upload')").is_visible()
    phone.shot("menu-closed")

    # by mouse (a finger): opens below the header, closes again
    button.click()
    assert button.get_attribute("aria-expanded") == "true"
    for name in ("Browse", "Upload", "Packages", "New map", "My things"):
        assert page.locator(f"#nav a:text-is('{name}')").is_visible()
    assert page.locator("#nav button:text('Sign out')").is_visible()
    links = page.eval_on_selector_all(NAV_LINKS, "(els) => els.map((e) => e.getBoundingClientRect().height)")
    assert min(links) >= 24, links
    phone.shot("menu-open")
    button.click()
    assert button.get_attribute("aria-expanded") == "false"
    assert not page.locator("#nav a:text('Upload')").is_visible()

    # a link of the menu is followed: the menu closes on the new page
    button.click()
    page.click("#nav a:text-is('My things')")
    page.wait_for_selector("h1:text('My things')")
    assert button.get_attribute("aria-expanded") == "false"
    assert not page.locator("#nav a:text('Upload')").is_visible()

    # by keyboard: Enter opens, Tab goes into the menu, Escape closes and gives the focus back
    button.focus()
    page.keyboard.press("Enter")
    assert button.get_attribute("aria-expanded") == "true"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Browse"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Upload"
    page.keyboard.press("Escape")
    assert button.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.id") == "menu-toggle"
    assert not page.locator("#nav a:text('Upload')").is_visible()
    page.keyboard.press(" ")
    assert button.get_attribute("aria-expanded") == "true"
    page.keyboard.press(" ")
    assert button.get_attribute("aria-expanded") == "false"
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Upload: the menu closes, the keyboard goes on from the new page
    page.wait_for_selector(".dropzone")
    assert button.get_attribute("aria-expanded") == "false"
    phone.until("document.activeElement === document.querySelector('main h1')")  # the new page's heading

    # a tap elsewhere closes it
    button.click()
    page.click("main h1")
    assert button.get_attribute("aria-expanded") == "false"


def test_laptop_navigation_has_no_menu_button(tab):
    page = tab.page
    tab.sign_in("admin", ADMIN_PASSWORD)  # and back on Browse
    page.wait_for_selector("section.search[data-loaded]")
    assert not page.locator("#menu-toggle").is_visible()
    tops = page.eval_on_selector_all(NAV_LINKS + ", #nav .who", "(els) => els.map((e) => Math.round(e.getBoundingClientRect().top))")
    assert len(tops) == 8 and max(tops) - min(tops) <= 8, tops  # all in one row
    assert page.locator("#nav a:text-is('Admin')").is_visible()


def test_phone_browse_shows_a_result_on_the_first_screen(phone, datasets):
    page = phone.go("/", wait="section.search[data-loaded] .card")
    first = page.evaluate("(() => { const r = document.querySelector('.card').getBoundingClientRect(); return [r.top, r.bottom]; })()")
    assert first[1] <= 844, f"the first result is at {first[0]}–{first[1]} px, below the first screen"
    the_map = page.evaluate("document.querySelector('#search-map').getBoundingClientRect().top")
    assert the_map > first[1]  # the map comes after the results
    phone.shot("browse")


@pytest.mark.parametrize("who, path, least", [
    ("alice", "/upload", 2),                 # the kind of upload (radio buttons)
    ("anonymous", "/map/{map}", 4),          # a layer's checkbox, its "↗" link, ▲ and ▼
    ("alice", "/map/{map}/compose", 5),      # and Remove
    ("admin", "/admin/harvesting", 4),       # the harvester form's checkboxes
])
def test_phone_controls_are_at_least_24_px(phone, datasets, who, path, least):
    page = phone.page
    if who == "alice":
        phone.sign_in("alice", USER_PASSWORD)
    elif who == "admin":
        phone.sign_in("admin", ADMIN_PASSWORD)
    phone.go(path.format(map=datasets["map"]["pk"]), wait="main h1")
    if path == "/admin/harvesting":
        page.wait_for_selector("form.harvester-form, tr[data-harvester]")
        if not page.locator("form.harvester-form").is_visible():
            page.click("button:text('New harvester')")
    else:
        page.wait_for_selector(".layer-item, .dropzone")
    found = page.evaluate(TARGETS)
    assert len(found) >= least, found
    small = [t for t in found if t["width"] < 24 or t["height"] < 24]
    phone.shot(f"targets-{path.strip('/').split('/')[0] or 'home'}")
    assert not small, f"smaller than 24 px: {small}"


def test_header_sign_in_returns_to_the_page_shown(tab, datasets):
    page = tab.page
    private = datasets["private"]["pk"]
    tab.allow(rf"status of 40[134] .*/api/v2/datasets/{private}")
    tab.go("/", wait="section.search[data-loaded]")
    tab.go("/upload", wait="form[aria-label='Sign in']")  # Upload asks to sign in first
    tab.go(f"/dataset/{private}", wait="main a:text('sign in')")
    assert page.get_attribute("#nav a:text('Sign in')", "href") == f"#/login?next=%2Fdataset%2F{private}"
    page.click("#nav a:text('Sign in')")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", USER_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("article.detail h1:text('Private cities')")
    assert page.evaluate("location.hash") == f"#/dataset/{private}"
    tab.shot("back-after-sign-in")

    # after another move, by the address alone (as a bookmark or a pasted link would)
    tab.sign_out()
    page.evaluate("location.hash = '#/?q=cities'")
    page.wait_for_selector("section.search[data-loaded]")
    assert page.get_attribute("#nav a:text('Sign in')", "href") == "#/login?next=%2F%3Fq%3Dcities"
    # on the sign-in page itself, the link keeps where to go back to
    page.click("#nav a:text('Sign in')")
    page.wait_for_selector("form[aria-label='Sign in']")
    assert page.get_attribute("#nav a:text('Sign in')", "href") == "#/login?next=%2F%3Fq%3Dcities"
