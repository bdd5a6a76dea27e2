"""The Harvesting and Packages pages in another language, as a new reader sees them: in Arabic
the page reads right to left, no message key shows instead of its text, and axe-core finds no
serious or critical violation; in French the same pages read in French. Screenshots of both
languages go to test-output/ui/languages/.

The reader's language is the one kept in this browser (localStorage `catalogue.language`), set
after signing in, as the language switch does."""

from __future__ import annotations

import io
import time

import pytest
from PIL import Image

from catalogue_app.packages import conflicts
from catalogue_app.store.db import Database
from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, Server, wait_finished
from tests.packages.conflict_world import add_package, incoming_record
from tests.ui.conftest import OUTPUT, Browsing
from tests.ui.test_accessibility import AXE, check

GEONODE = "geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker"

# Text nodes and labels that are a message key ("packages.title"): a message missing from the
# language's catalogue shows its key.
KEYS_SHOWN = r"""() => {
  const key = /^[a-z]+\.[a-z_]+$/;
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const text = walker.currentNode.textContent.trim();
    if (key.test(text)) found.push(text);
  }
  for (const el of document.body.querySelectorAll('[aria-label], [placeholder], [title], [data-label]')) {
    for (const name of ['aria-label', 'placeholder', 'title', 'data-label']) {
      const value = (el.getAttribute(name) || '').trim();
      if (key.test(value)) found.push(`${name}=${value}`);
    }
  }
  return found;
}"""

# The outermost elements of the page's content that go past either edge of the screen (right to
# left, what goes past the left edge widens the page as what goes past the right one does in
# English); what scrolls or is clipped inside its own box does not count.
PAST_THE_EDGES = """() => {
  const width = document.documentElement.clientWidth;
  const past = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && (r.left < -1 || r.right > width + 1); };
  const out = [];
  const visit = (el) => {
    for (const child of el.children) {
      if (child.classList.contains('visually-hidden')) continue;
      if (past(child) && !past(el)) {
        out.push(child.tagName.toLowerCase() + (typeof child.className === 'string' && child.className.trim()
          ? `.${child.className.trim().split(/\\s+/).join('.')}` : ''));
      } else if (getComputedStyle(child).overflowX === 'visible') {
        visit(child);
      }
    }
  };
  visit(document.getElementById('main'));
  return out.slice(0, 6);
}"""

# Latin text the catalogue's people or its server wrote (a title, a job's message), set in a
# right-to-left page, must still read left to right: its first letter left of its last one (a
# title's closing parenthesis, a message's leading number, do not jump to the other end).
# Returns the texts of ``selector`` that do not.
OUT_OF_ORDER = r"""(selector) => {
  const wrong = [];
  for (const el of document.querySelectorAll(selector)) {
    const text = el.textContent;
    const first = text.search(/\S/);
    const last = text.length - 1 - [...text].reverse().join('').search(/\S/);
    if (first < 0 || !/^[\x20-\x7e]+$/.test(text.trim())) continue;
    const at = (i) => {
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      let offset = i;
      while (walker.nextNode()) {
        const n = walker.currentNode;
        if (offset < n.length) { const r = document.createRange(); r.setStart(n, offset); r.setEnd(n, offset + 1); return r.getBoundingClientRect(); }
        offset -= n.length;
      }
      return null;
    };
    const a = at(first), b = at(last);
    if (a && b && Math.abs(a.top - b.top) < 2 && a.left > b.left) wrong.push(text.trim());
  }
  return wrong;
}"""


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory, ui_env):
    """A catalogue that takes up harvesting work at once."""
    srv = Server(tmp_path_factory.mktemp("ui-languages") / "catalogue", env={**ui_env, "CATALOGUE_HARVEST_TICK": "0.2"})
    yield srv
    srv.stop()


def _ready(client, hid: int, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        harvester = client.get(f"/api/v2/harvesters/{hid}/").json()["harvester"]
        if harvester["status"] == "ready":
            return harvester
        assert time.monotonic() < deadline, harvester
        time.sleep(0.2)


@pytest.fixture(scope="module")
def world(ui_server, ui_admin, alice) -> dict:
    """alice's photograph and a package she made of it; a conflict waiting on her Packages page;
    a harvester of this catalogue itself that has listed what it offers and harvested it."""
    image = io.BytesIO()
    Image.new("RGB", (60, 40), (30, 120, 200)).save(image, "PNG")
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        r = as_alice.post("/api/v2/documents", files={"doc_file": ("photo.png", image.getvalue(), "image/png")},
                          data={"title": "Field photograph"})
        assert r.status_code == 201, r.text
        pk = int(r.json()["document"]["pk"])
        r = as_alice.post("/api/v2/packages/exports", json={"q": "Field photograph"})
        assert r.status_code == 201, r.text
        out = wait_finished(as_alice, r.json()["status_url"], timeout=60)["output_params"]
        package = as_alice.get(out["download_url"]).content
        assert as_alice.patch(f"/api/v2/resources/{pk}", json={"title": "Field photograph (office)"}).status_code == 200
        here = as_alice.get(f"/api/v2/resources/{pk}").json()["resource"]
    db = Database(ui_server.data_dir / "catalogue.sqlite3")
    try:
        package_id = add_package(db, alice["pk"])
        record = incoming_record(here, title="Field photograph (field)")
        db.write_sync(lambda conn: conflicts.set_aside(conn, package_id, record, pk, "changed_both", None,
                                                       files_dir=ui_server.data_dir / "files"))
    finally:
        db.close()
    r = ui_admin.post("/api/v2/harvesters/", json={"name": "Ourselves", "remote_url": ui_server.url,
                                                   "scheduling_enabled": False, "harvester_type": GEONODE})
    assert r.status_code == 201, r.text
    hid = r.json()["harvester"]["id"]
    _ready(ui_admin, hid)  # its first check of the remote
    assert ui_admin.patch(f"/api/v2/harvesters/{hid}/", json={"status": "updating-harvestable-resources"}).status_code == 200
    _ready(ui_admin, hid)
    items = ui_admin.get(f"/api/v2/harvesters/{hid}/harvestable-resources/").json()["harvestable_resources"]
    assert items, "the harvester lists nothing"
    r = ui_admin.patch(f"/api/v2/harvesters/{hid}/harvestable-resources/",
                       json=[{"unique_identifier": items[0]["unique_identifier"], "should_be_harvested": True}])
    assert r.status_code < 300, r.text
    assert ui_admin.patch(f"/api/v2/harvesters/{hid}/", json={"status": "harvesting-resources"}).status_code == 200
    _ready(ui_admin, hid)
    return {"harvester": hid, "package": package}


def _open(browser, server, name: str, username: str, password: str, lang: str) -> Browsing:
    """A browser tab with axe-core loaded, signed in, reading in ``lang`` from now on."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.add_init_script(path=str(AXE))  # before the page's own scripts, whatever its CSP
    page = context.new_page()
    page.set_default_timeout(30_000)
    tab = Browsing(page, server, name)
    tab.sign_in(username, password)
    page.evaluate("(lang) => localStorage.setItem('catalogue.language', lang)", lang)
    page.reload()  # the language is chosen as the page loads
    page.wait_for_selector("#nav")
    return tab


def _shot(tab: Browsing, label: str) -> None:
    path = OUTPUT / "languages" / f"{label}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    tab.page.evaluate("document.getElementById('toast').className = ''")  # "Signed in as ..." out of the way
    tab.page.wait_for_timeout(300)
    tab.page.evaluate("window.scrollTo(0, 0)")
    tab.page.screenshot(path=str(path), full_page=True)


def _problems(tab: Browsing, where: str, lang: str) -> list[str]:
    page = tab.page
    found = [f"{where}: <html {attr}> is {value!r}, not {want!r}"
             for attr, value, want in [("lang", page.evaluate("document.documentElement.lang"), lang),
                                       ("dir", page.evaluate("document.documentElement.dir"), "rtl" if lang == "ar" else "ltr")]
             if value != want]
    found += [f"{where}: a message key shows: {key}" for key in page.evaluate(KEYS_SHOWN)]
    found += [f"{where}: {v['id']} ({v['impact']}) {v['help']}: {', '.join(v['targets'][:6])}" for v in check(page)]
    wide = page.evaluate(PAST_THE_EDGES)
    if wide:
        found.append(f"{where}: past the edge of the screen: {', '.join(wide)}")
    return found


@pytest.mark.parametrize(("lang", "words"), [
    ("ar", {"packages": "الحزم", "conflicts": "تعارضات تنتظر الحل", "harvesters": "أدوات الحصاد", "offered": "ما يتيحه الفهرس البعيد"}),
    ("fr", {"packages": "Paquets", "conflicts": "Conflits à résoudre", "harvesters": "Moissonneurs", "offered": "Ce que propose le catalogue distant"}),
])
def test_the_field_pages_in_another_language(browser, ui_server, world, tmp_path, lang, words):
    package = tmp_path / "field-package.zip"  # (a name that reads as no message key)
    package.write_bytes(world["package"])
    found: list[str] = []
    tabs: list[Browsing] = []
    try:
        # the Packages page: the open conflict, the packages listed, then a dry run's report
        tab = _open(browser, ui_server, f"languages-{lang}-packages", "alice", USER_PASSWORD, lang)
        tabs.append(tab)
        page = tab.go("/packages", wait="section.packages[data-loaded] article.conflict")
        assert page.inner_text("section.packages h1") == words["packages"]
        assert page.inner_text("#conflicts-title") == words["conflicts"]
        page.wait_for_selector("tr[data-package]")
        _shot(tab, f"{lang}-packages")
        found += _problems(tab, "/packages", lang)
        found += [f"/packages: reads out of order: {text!r}" for text in
                  page.evaluate(OUT_OF_ORDER, "article.conflict h3, article.conflict td, tr[data-package] td")]
        page.set_input_files("section.packages input[type=file]", str(package))
        page.click("section.packages form.import-form button[type=submit]")
        page.wait_for_selector(".import-out .report[data-dry-run=true]", timeout=60_000)
        page.locator(".import-out .report").scroll_into_view_if_needed()
        _shot(tab, f"{lang}-packages-dry-run")
        found += _problems(tab, "/packages (a dry run's report)", lang)
        page.set_viewport_size({"width": 390, "height": 844})  # a phone
        page.wait_for_timeout(200)
        _shot(tab, f"{lang}-packages-phone")
        found += _problems(tab, "/packages (on a phone)", lang)
        found += [f"/packages (a dry run's report): reads out of order: {text!r}" for text in
                  page.evaluate(OUT_OF_ORDER, ".report-items li > *, .report p.small-text code")]

        # the Harvesting page: the harvester, what its remote offers, its sessions; then its form
        tab = _open(browser, ui_server, f"languages-{lang}-harvesting", "admin", ADMIN_PASSWORD, lang)
        tabs.append(tab)
        hid = world["harvester"]
        page = tab.go(f"/admin/harvesting?harvester={hid}", wait=f"tr[data-harvester='{hid}']")
        page.wait_for_selector(".harvestable tr[data-identifier]")
        page.wait_for_selector(".sessions li.session")
        assert page.inner_text(".panel-head h2") == words["harvesters"]
        assert page.inner_text(".harvestable h3") == words["offered"]
        _shot(tab, f"{lang}-harvesting")
        found += _problems(tab, "/admin/harvesting", lang)
        found += [f"/admin/harvesting: reads out of order: {text!r}" for text in
                  page.evaluate(OUT_OF_ORDER, "tr[data-harvester] td, tr[data-harvester] .note, .harvestable td")]
        page.set_viewport_size({"width": 390, "height": 844})  # a phone
        page.wait_for_timeout(200)
        _shot(tab, f"{lang}-harvesting-phone")
        found += _problems(tab, "/admin/harvesting (on a phone)", lang)
        page.set_viewport_size({"width": 1280, "height": 800})
        page.click(".panel-head button")  # a new harvester
        page.wait_for_selector("form.harvester-form")
        page.select_option("select[name=harvester_type]", value="catalogue.harvesting.harvesters.csw.CswHarvester")
        _shot(tab, f"{lang}-harvester-form")
        found += _problems(tab, "/admin/harvesting (the form of a new harvester)", lang)
        for t in tabs:
            errors = t.unexpected_errors()
            assert not errors, f"errors in the browser console: {errors}"
    finally:
        for t in tabs:
            t.page.context.close()
    assert not found, "\n".join(found)
