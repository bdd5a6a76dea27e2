"""Accessibility, a standing test: axe-core (vendored in tests/vendor/axe-core/, see
scripts/vendor_axe.sh) runs inside Chromium on every page of the web UI, at laptop and at phone
size, signed out, signed in as a member and as the administrator, and the test fails on any
serious or critical violation, WCAG 2.2's target size (24 px) included, and on any page wider
than the screen. Screenshots go to test-output/ui/a11y/.

Every page is also checked in Arabic (right to left) at both sizes, and in French, Spanish and
Portuguese at laptop size, each of those three taking a third of the anonymous reader's and the
administrator's pages in turn (all of them in every language would take minutes); the language is chosen as a reader's choice is kept, in
localStorage, before the page loads. The home page of each language is saved as
test-output/ui/home-<language>.png.

A new page is one more line in PAGES (and, when its selectors name English text, in
LANGUAGE_NEUTRAL)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from PIL import Image

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, make_group
from tests.ogc.conftest import PRIVATE, upload_shapefile, upload_tif
from tests.ui.conftest import DATA, OUTPUT, PUBLISHING_PROBE, console_text

AXE = Path(__file__).resolve().parents[1] / "vendor" / "axe-core" / "axe.min.js"

SIZES = {
    "laptop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}

# (who looks, the address, what the page shows once it has loaded, [a control to press first]).
# Who: "anonymous", "member" (alice, who owns the resources below) or "admin" (a superuser).
# In the address, {vector}, {raster}, {document}, {map}, {private} and {harvester} are the ids
# of what the `catalogue` fixture makes. The control is pressed where it is visible.
PAGES = [
    ("anonymous", "/", "section.search[data-loaded] .card"),
    ("anonymous", "/?q=nothing-is-called-this", "section.search[data-loaded] .empty"),
    ("anonymous", "/?type=dataset&sort=title", "section.search[data-loaded] select[name=type]"),
    ("anonymous", "/dataset/{vector}", ".attributes table"),
    ("anonymous", "/dataset/{raster}", "#preview-map .dataset-tiles img"),
    ("anonymous", "/dataset/{private}", "main a:text('sign in')"),
    ("anonymous", "/document/{document}", "img.document-image"),
    ("anonymous", "/map/{map}", ".layer-item"),
    ("anonymous", "/login", "form[aria-label='Sign in']"),
    ("anonymous", "/no/such/page", "h1:text('Page not found')"),
    ("anonymous", "/", "section.search[data-loaded] .card", "#menu-toggle"),
    ("member", "/", "section.search[data-loaded] .card"),
    ("member", "/", "section.search[data-loaded] .card", "#menu-toggle"),
    ("member", "/dataset/{vector}", ".attributes table"),
    ("member", "/dataset/{vector}/edit", "form[aria-label='Sharing'] tbody tr"),
    # editing a dataset's features and its history (editing.js, history.js): the private points have versions
    ("member", "/dataset/{vector}", ".edit-note"),
    ("member", "/dataset/{private}", ".history ol[data-loaded] li.version", "button.cell-value"),
    ("member", "/dataset/{private}", ".history ol[data-loaded] li.version", "button[aria-label='Delete feature 1']"),
    ("member", "/dataset/{private}", ".history ol[data-loaded] li.version", "button:text('Add point')", "#preview-map"),
    ("member", "/dataset/{private}", ".history ol[data-loaded] li.version", "button:text('Move points')"),
    ("member", "/dataset/{private}", ".history ol[data-loaded] li.version", ".history button:text('Show changes')"),
    ("member", "/dataset/{private}", ".history ol[data-loaded] li.version", ".history li:nth-child(2) button:text('Show changes')"),
    ("member", "/dataset/{raster}/edit", "form[aria-label='Sharing'] tbody tr"),
    ("member", "/document/{document}/edit", "form[aria-label='Sharing'] tbody tr"),
    ("member", "/map/{map}/edit", "form[aria-label='Sharing'] tbody tr"),
    ("member", "/map/new", ".found-item"),
    ("member", "/map/{map}/compose", ".layer-item"),
    ("member", "/upload", ".dropzone"),
    ("member", "/upload?kind=document", ".dropzone"),
    ("member", "/me", "h1:text('My things')"),
    # field packages: the search page's "Take offline" dialog, the Packages page
    ("member", "/?extent=-10,35,30,60", "section.search[data-loaded] .card", "#take-offline"),
    ("member", "/packages", "section.packages[data-loaded]"),
    ("member", "/me/tokens", "form[aria-label='New token']"),
    ("member", "/admin", "text=Only staff may administer"),
    ("admin", "/", "section.search[data-loaded] .card", "#menu-toggle"),
    ("admin", "/dataset/{vector}", ".attributes table"),
    ("admin", "/document/{document}", "img.document-image"),
    ("admin", "/admin/users", "tr[data-username]"),
    ("admin", "/admin/groups", ".group-card .members li:has(button)"),
    ("admin", "/admin/executions", ".tab-body table, .tab-body p.muted"),
    ("admin", "/admin/commands", "li.command"),
    ("admin", "/admin/harvesting", "tr[data-harvester]"),
    ("admin", "/admin/harvesting", "tr[data-harvester]", "button:text('New harvester')"),
    ("admin", "/admin/harvesting?harvester={harvester}", ".sessions h3, .sessions li"),
    ("admin", "/admin/remotes", ".tab-body h2:text('Remote catalogues')"),
    ("admin", "/admin/keys", ".signing-key #key-fingerprint"),
]


# The pages' ready selectors and controls that name English text, as any language finds them.
LANGUAGE_NEUTRAL = {
    "main a:text('sign in')": "main a[href*='#/login']",
    "form[aria-label='Sign in']": "main form input[name=password]",
    "h1:text('Page not found')": "main section.narrow h1",
    "button[aria-label='Delete feature 1']": "button[data-focus='delete-1']",
    "button:text('Add point')": ".edit-tools button:nth-child(1)",
    "button:text('Move points')": ".edit-tools button:nth-child(2)",
    ".history button:text('Show changes')": ".history .version-actions button[aria-expanded]",
    ".history li:nth-child(2) button:text('Show changes')": ".history li:nth-child(2) button[aria-expanded]",
    "form[aria-label='Sharing'] tbody tr": "#sharing form tbody tr",
    "h1:text('My things')": "section.mine h1",
    "form[aria-label='New token']": "main form input",
    "text=Only staff may administer": "main section.narrow p.error",
    ".tab-body h2:text('Remote catalogues')": ".tab-body h2",
}
LANGUAGES = ("en", "fr", "es", "pt", "ar")
# (language, size, who): English and Arabic check every page at both sizes; French, Spanish and
# Portuguese a third each of the anonymous reader's and the administrator's pages, at laptop size
# (about a minute between them; the member's pages are the same pages with more controls)
RUNS = [(lang, size, who) for lang in ("en", "ar") for size in SIZES for who in ("anonymous", "member", "admin")] + [
    (lang, "laptop", who) for lang in ("fr", "es", "pt") for who in ("anonymous", "admin")]


def pages_of(lang: str, who: str) -> list[tuple]:
    """The pages a run checks, their selectors neutral where the language is not English."""
    mine = [entry for entry in PAGES if entry[0] == who]
    if lang in ("fr", "es", "pt"):
        share = ("fr", "es", "pt").index(lang)
        mine = [entry for i, entry in enumerate(mine) if i % 3 == share]
    if lang == "en":
        return mine
    return [tuple(LANGUAGE_NEUTRAL.get(part, part) if i >= 2 else part for i, part in enumerate(entry)) for entry in mine]


# The outermost elements that go past an edge of the screen (a page must not scroll sideways;
# a table scrolls inside its own box).
WIDER_THAN_THE_SCREEN = """() => {
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth <= width + 1) return [];
  const out = [];
  // past either edge (right to left, a page overflows on its left); what is wholly off the screen is hidden on purpose
  const past = (el) => { const r = el.getBoundingClientRect(); return (r.right > width + 1 && r.left < width) || (r.left < -1 && r.right > 0); };
  const visit = (el) => {
    for (const child of el.children) {
      if (past(child) && !past(el)) {
        out.push(child.tagName.toLowerCase() + (child.id ? `#${child.id}` : '')
          + (typeof child.className === 'string' && child.className.trim() ? `.${child.className.trim().split(/\\s+/).join('.')}` : ''));
      } else if (getComputedStyle(child).overflowX === 'visible') {
        visit(child);  // what scrolls or is clipped inside its own box does not widen the page
      }
    }
  };
  visit(document.body);
  return out.slice(0, 6);
}"""


@pytest.fixture(scope="module")
def catalogue(ui_server, ui_admin, alice) -> dict[str, int]:
    """What the pages show: alice's public countries (vector, one of her favorites), raster,
    document and map, her private dataset, a group with a member, a job of the commands,
    and a harvester of this catalogue itself."""
    image = io.BytesIO()
    Image.new("RGB", (60, 40), (200, 30, 30)).save(image, "PNG")
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        vector = upload_shapefile(as_alice, DATA / "naturalearth_lowres")
        raster = upload_tif(as_alice, "world.byte.tif")
        private = upload_shapefile(as_alice, DATA / "naturalearth_cities", PRIVATE, dataset_title="Private cities")
        document = as_alice.post("/api/v2/documents", files={"doc_file": ("field.png", image.getvalue(), "image/png")},
                                 data={"title": "Field photograph", "abstract": "A red square."}).json()["document"]
        made = as_alice.post("/api/v2/maps", json={
            "resource_type": "map", "title": "Countries of the world", "abstract": "One layer.",
            "maplayers": [{"name": vector["alternate"], "order": 0, "visibility": True, "opacity": 1,
                           "dataset": int(vector["pk"]), "extra_params": {"msId": "countries"}}]})
        assert made.status_code == 201, made.text
        assert as_alice.post(f"/api/v2/resources/{vector['pk']}/favorite").status_code < 300
        # a history to show: a change of the private points' abstract, then one of their features
        assert as_alice.patch(f"/api/v2/resources/{private['pk']}", json={"abstract": "Checked."}).status_code == 200
        r = as_alice.post(f"/api/v2/datasets/{private['pk']}/edits", json={"update": [{"id": 1, "properties": {"name": "Renamed"}}]})
        assert r.status_code == 200, r.text
    group = make_group(ui_admin, title="Surveyors")
    r = ui_admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [alice["pk"]], "role": "member"})
    assert r.status_code < 300, r.text
    r = ui_admin.post("/api/v2/management/commands/ping_mngmt_commands_http/", json={"args": [], "autostart": True})
    assert r.status_code < 300, r.text
    harvester = ui_admin.post("/api/v2/harvesters/", json={
        "name": "Ourselves", "remote_url": ui_server.url, "scheduling_enabled": False,
        "harvester_type": "geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker"})
    assert harvester.status_code == 201, harvester.text
    return {"vector": vector["pk"], "raster": raster["pk"], "document": document["pk"],
            "map": made.json()["map"]["pk"], "private": private["pk"], "harvester": harvester.json()["harvester"]["id"]}


def sign_in(page, url: str, username: str, password: str) -> None:
    page.goto(f"{url}/#/login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_selector(f"#nav .who:text-is('{username}')", state="attached")


def check(page) -> list[dict]:
    """axe's serious and critical violations on the page as it is now (a message fading in or
    out is waited for: half-way, its contrast is no one's to read)."""
    for _ in range(40):
        if page.evaluate("['0', '1'].includes(getComputedStyle(document.getElementById('toast')).opacity)"):
            break
        page.wait_for_timeout(25)
    return page.evaluate("""async () => {
      const result = await axe.run(document, {
        resultTypes: ['violations'],
        rules: { 'target-size': { enabled: true } },
      });
      return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                       targets: v.nodes.map((n) => n.target.join(' ')) }));
    }""")


def language_context(browser, lang: str, **options):
    """A browser context whose reader has chosen `lang` (English: no choice kept, the browser's)."""
    context = browser.new_context(**options)
    if lang != "en":
        context.add_init_script(f"try {{ localStorage.setItem('catalogue.language', '{lang}'); }} catch {{}}")
    return context


@pytest.mark.parametrize(("lang", "size", "who"), RUNS, ids=["-".join(run) for run in RUNS])
def test_no_serious_violation(browser, ui_server, catalogue, lang, size, who):
    context = language_context(browser, lang, **SIZES[size])
    context.add_init_script(path=str(AXE))  # run before the page's own scripts, whatever its CSP
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(console_text(m)) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    expected = [PUBLISHING_PROBE, re.compile(rf"status of 40[134] .*/api/v2/datasets/{catalogue['private']}")]
    if who == "member":
        sign_in(page, ui_server.url, "alice", USER_PASSWORD)
    elif who == "admin":
        sign_in(page, ui_server.url, "admin", ADMIN_PASSWORD)
    found = []
    try:
        for entry in pages_of(lang, who):
            viewer, path, ready, *press = entry
            path = path.format(**catalogue)
            # the page shown goes first: only the address's fragment changes from one to the next,
            # and what the last page showed would end the wait at once
            page.evaluate("(path) => { if (location.hash !== `#${path}`) document.getElementById('main')?.replaceChildren(); }", path)
            page.goto(f"{ui_server.url}/#{path}")
            page.wait_for_selector(ready, state="attached")
            page.wait_for_timeout(150)  # what comes right after (a map's controls, lists filled in)
            for control in press:  # each in turn, where visible
                if page.is_visible(control):
                    page.click(control)
                    page.wait_for_timeout(150)
            pressed = f"-{re.sub(r'[^a-z0-9]+', '-', press[0].lower()).strip('-')[:30]}" if press else ""
            shot = OUTPUT / "a11y" / f"{lang}-{size}-{who}-{re.sub(r'[^a-z0-9]+', '-', path.lower()).strip('-') or 'home'}{pressed}.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            page.evaluate("window.scrollTo(0, 0)")  # the sticky header then stays at the top
            page.screenshot(path=str(shot), full_page=True)
            for v in check(page):
                found.append(f"{path}{' (after pressing ' + press[0] + ')' if press else ''}: {v['id']} ({v['impact']}) "
                             f"{v['help']}: {', '.join(v['targets'][:6])}{' …' if len(v['targets']) > 6 else ''}")
            wide = page.evaluate(WIDER_THAN_THE_SCREEN)
            if wide:
                found.append(f"{path}: wider than the screen ({SIZES[size]['viewport']['width']} px): {', '.join(wide)}")
            if press and page.is_visible(press[0]):
                page.keyboard.press("Escape")
        assert page.evaluate("document.documentElement.lang") == lang
    finally:
        context.close()
    assert not found, f"axe in {lang} at {size} size, {who}:\n" + "\n".join(found)
    unexpected = [e for e in errors if not any(p.search(e) for p in expected)]
    assert not unexpected, f"errors in the browser console: {unexpected}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_home_page_in_each_language(browser, ui_server, catalogue, lang):
    """The home page as a new reader of each language first sees it (saved as home-<lang>.png):
    the shell in that language, Arabic right to left, axe clean."""
    context = language_context(browser, lang, viewport={"width": 1280, "height": 800})
    context.add_init_script(path=str(AXE))
    page = context.new_page()
    try:
        page.goto(f"{ui_server.url}/#/")
        page.wait_for_selector("section.search[data-loaded] .card")
        page.wait_for_timeout(400)  # the map's tiles
        assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == [lang, "rtl" if lang == "ar" else "ltr"]
        assert page.locator(".languages button[aria-current]").get_attribute("lang") == lang
        OUTPUT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"home-{lang}.png"))
        violations = check(page)
        assert not violations, violations
    finally:
        context.close()
