"""Each page of the web UI in the browser: what it shows, what it refuses, and that nothing
breaks: no console errors, user text shown as text, CSRF enforced, a first load under 500 KB."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD
from tests.ui.conftest import DATA, PUBLISHING_PROBE, console_text

XSS_TITLE = '<img src=x onerror="window.__xss=1">Harbour <b>depths</b>'
XSS_ABSTRACT = '<script>window.__xss=2</script>An abstract with <img src=y onerror="window.__xss=3">'


def png_bytes(colour=(200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (60, 40), colour).save(out, "PNG")
    return out.getvalue()


def test_first_page_is_small_and_clean(tab, ui_admin):
    ui_admin.post("/api/v2/documents", files={"doc_file": ("a.txt", b"hello", "text/plain")}, data={"title": "Field notes"})
    page = tab.go("/", wait="[data-loaded]")
    tab.until("document.querySelectorAll('.basemap-tiles img.leaflet-tile-loaded').length > 0")
    page.wait_for_load_state("networkidle")
    sent = page.evaluate("""() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const res = performance.getEntriesByType('resource');
      return { total: nav.transferSize + res.reduce((n, r) => n + r.transferSize, 0),
               hosts: [...new Set(res.map((r) => new URL(r.name).host))] };
    }""")
    assert sent["total"] < 500_000, sent
    assert sent["hosts"] == [page.url.split("/")[2]], sent  # nothing from another host
    assert page.locator(".card").count() >= 1
    tab.shot("home")


def test_user_text_is_shown_as_text(tab, ui_admin):
    doc = ui_admin.post("/api/v2/documents", files={"doc_file": ("x.txt", b"x", "text/plain")},
                        data={"title": "placeholder"}).json()["document"]
    r = ui_admin.patch(f"/api/v2/resources/{doc['pk']}", json={"title": XSS_TITLE, "abstract": XSS_ABSTRACT})
    assert r.status_code == 200, r.text
    page = tab.go("/?q=Harbour", wait="[data-loaded]")
    page.wait_for_selector(f".card[data-pk='{doc['pk']}']")
    assert page.inner_text(f".card[data-pk='{doc['pk']}'] h2") == XSS_TITLE
    tab.go(f"/document/{doc['pk']}", wait="h1")
    page.wait_for_timeout(300)
    assert page.inner_text("h1") == XSS_TITLE
    assert page.evaluate("window.__xss") is None
    assert page.locator("main img[src='x'], main img[src='y'], main script").count() == 0
    tab.shot("xss")


def test_unsafe_requests_need_the_csrf_token(tab, ui_server, ui_admin, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        doc = as_alice.post("/api/v2/documents", files={"doc_file": ("c.txt", b"c", "text/plain")},
                            data={"title": "Owned by alice"}).json()["document"]
    tab.sign_in("alice", USER_PASSWORD)
    tab.allow("status of 403")
    without = tab.page.evaluate(f"""async () => {{
      const r = await fetch('/api/v2/resources/{doc['pk']}', {{ method: 'PATCH', credentials: 'same-origin',
        headers: {{ 'Content-Type': 'application/json' }}, body: JSON.stringify({{ title: 'Changed by a forged request' }}) }});
      return [r.status, await r.json()];
    }}""")
    assert without[0] == 403
    assert without[1]["errors"] == ["CSRF Failed: CSRF token missing or incorrect."]
    assert ui_admin.get(f"/api/v2/resources/{doc['pk']}").json()["resource"]["title"] == "Owned by alice"
    with_token = tab.page.evaluate(f"""async () => {{
      const s = await (await fetch('/account/session/')).json();
      const r = await fetch('/api/v2/resources/{doc['pk']}', {{ method: 'PATCH', credentials: 'same-origin',
        headers: {{ 'Content-Type': 'application/json', 'X-CSRFToken': s.csrf_token }}, body: JSON.stringify({{ title: 'Changed by alice' }}) }});
      return r.status;
    }}""")
    assert with_token == 200
    assert ui_admin.get(f"/api/v2/resources/{doc['pk']}").json()["resource"]["title"] == "Changed by alice"


def test_document_dropped_uploaded_and_previewed(tab, alice):
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.go("/upload?kind=document", wait=".dropzone")
    encoded = base64.b64encode(png_bytes()).decode()
    # a real drop: a DataTransfer holding the file, dropped on the zone
    page.evaluate(f"""() => {{
      const bytes = Uint8Array.from(atob('{encoded}'), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], 'red-square.png', {{ type: 'image/png' }}));
      document.querySelector('.dropzone').dispatchEvent(new DragEvent('drop', {{ dataTransfer: transfer, bubbles: true, cancelable: true }}));
    }}""")
    page.wait_for_selector(".upload.done a")
    tab.shot("document-uploaded")
    page.click(".upload.done a")
    image = page.wait_for_selector("img.document-image")
    tab.until("document.querySelector('img.document-image').complete")
    assert page.evaluate("document.querySelector('img.document-image').naturalWidth") == 60
    assert page.inner_text("h1") == "red-square"
    tab.shot("document-detail")
    assert image.get_attribute("alt") == "red-square"


def test_files_refused_before_upload(tab, alice):
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.go("/upload", wait=".dropzone")
    page.set_input_files("#upload-files", [
        {"name": "notes.exe", "mimeType": "application/octet-stream", "buffer": b"MZ"},
        {"name": "roads.shp", "mimeType": "application/octet-stream", "buffer": b"\x00" * 100},
    ])
    page.wait_for_selector(".upload.failed")
    text = page.inner_text(".uploads")
    assert "notes.exe" in text and "not a data format" in text
    assert "roads.shp: the .dbf file of this Shapefile is missing" in text
    tab.shot("refused")


def test_admin_creates_a_user_who_signs_in(tab):
    tab.sign_in("admin", ADMIN_PASSWORD)
    page = tab.go("/admin/users", wait="form[aria-label='New user']")
    page.fill("form[aria-label='New user'] input[name=username]", "bruno")
    page.fill("form[aria-label='New user'] input[name=email]", "bruno@example.org")
    page.fill("form[aria-label='New user'] input[name=first_name]", "Bruno")
    page.fill("form[aria-label='New user'] input[name=password]", "bruno-secret-1")
    page.click("form[aria-label='New user'] button[type=submit]")
    page.wait_for_selector("tr[data-username='bruno']")
    tab.shot("admin-users")
    tab.go("/admin/groups", wait="form[aria-label='New group']")
    page.fill("form[aria-label='New group'] input[name=title]", "Survey crew")
    page.click("form[aria-label='New group'] button[type=submit]")
    page.wait_for_selector(".group-card h3:text('Survey crew')")
    card = page.locator(".group-card", has_text="Survey crew")
    card.locator("select[name=user]").select_option(label="bruno")
    card.locator("button:text('Add')").click()
    card.locator("li:has-text('bruno')").wait_for()
    tab.shot("admin-groups")
    tab.go("/admin/executions", wait="h2:text('Background jobs')")
    tab.shot("admin-jobs")
    tab.sign_out()
    tab.sign_in("bruno", "bruno-secret-1")
    assert "Admin" not in tab.page.inner_text("#nav")


def test_wrong_password_is_said_plainly(tab):
    page = tab.go("/login", wait="form[aria-label='Sign in']")
    tab.allow("status of 400")
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", "not the password")
    page.click("button[type=submit]")
    page.wait_for_selector("p.error:text('Wrong username or password.')")
    tab.shot("login-wrong")


def test_every_page_at_laptop_and_phone_size(browser, ui_server, ui_admin, alice):
    """Screenshots of every page, signed in as the owner, on a 1280x800 laptop and a phone."""
    doc = ui_admin.post("/api/v2/documents", files={"doc_file": ("p.png", png_bytes((30, 90, 200)), "image/png")},
                        data={"title": "Blue square"}).json()["document"]
    pages = ["/", "/login", f"/document/{doc['pk']}", f"/document/{doc['pk']}/edit", "/upload", "/me",
             "/admin/users", "/admin/groups", "/admin/executions", "/admin/commands", "/admin/harvesting",
             "/admin/remotes"]
    for name, viewport in (("laptop", {"width": 1280, "height": 800}), ("phone", {"width": 390, "height": 844})):
        context = browser.new_context(viewport=viewport, is_mobile=name == "phone", has_touch=name == "phone")
        page = context.new_page()
        errors = []
        page.on("console", lambda m, seen=errors: seen.append(console_text(m)) if m.type == "error" else None)
        page.on("pageerror", lambda e, seen=errors: seen.append(str(e)))
        page.goto(f"{ui_server.url}/#/login")
        page.fill("input[name=username]", "admin")
        page.fill("input[name=password]", ADMIN_PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_selector("#nav .who")
        for path in pages:
            # the page shown goes first: from one tab to the next only the fragment changes, and
            # the last page's heading would end the wait at once
            page.evaluate("(path) => { if (location.hash !== `#${path}`) document.getElementById('main').replaceChildren(); }", path)
            page.goto(f"{ui_server.url}/#{path}")
            page.wait_for_selector("main h1, main .summary")
            if path.startswith("/admin/"):  # the tab's own content, drawn once its lists have come
                page.wait_for_selector(".tab-body > *")
            page.wait_for_load_state("networkidle")
            from tests.ui.conftest import OUTPUT
            OUTPUT.mkdir(parents=True, exist_ok=True)
            label = path.strip("/").replace("/", "-") or "home"
            page.screenshot(path=str(OUTPUT / f"{name}-{label}.png"), full_page=True)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= viewport["width"] + 1, f"{path} is wider than the {name} screen ({width} px)"
        context.close()
        errors = [e for e in errors if not PUBLISHING_PROBE.search(e)]
        assert not errors, errors


@pytest.mark.parametrize("path", ["/", "/catalogue/"])
def test_keyboard_reaches_the_search(tab, path):
    page = tab.page
    page.goto(f"{tab.server.url}{path}")
    page.wait_for_selector("[data-loaded]")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    found = [page.evaluate("document.activeElement.getAttribute('aria-label') || document.activeElement.textContent")]
    for _ in range(4):
        page.keyboard.press("Tab")
        found.append(page.evaluate("document.activeElement.getAttribute('aria-label') || document.activeElement.textContent"))
    assert "Search text" in found, found


RED_SLD = b"""<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor version="1.0.0" xmlns="http://www.opengis.net/sld" xmlns:ogc="http://www.opengis.net/ogc">
  <NamedLayer><Name>countries</Name><UserStyle><Title>Red</Title><FeatureTypeStyle><Rule>
    <PolygonSymbolizer><Fill><CssParameter name="fill">#ff0000</CssParameter></Fill></PolygonSymbolizer>
  </Rule></FeatureTypeStyle></UserStyle></NamedLayer>
</StyledLayerDescriptor>"""

RED_PIXELS = """() => {
  let red = 0;
  for (const img of document.querySelectorAll('#style-map .dataset-tiles img.leaflet-tile-loaded')) {
    const c = document.createElement('canvas'); c.width = img.naturalWidth; c.height = img.naturalHeight;
    const ctx = c.getContext('2d'); ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    for (let i = 0; i < d.length; i += 4) if (d[i] > 200 && d[i + 1] < 60 && d[i + 2] < 60 && d[i + 3] > 0) red++;
  }
  return red;
}"""


def test_owner_restyles_then_deletes(tab, ui_server, alice):
    from tests.ogc.conftest import upload_shapefile

    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        pk = upload_shapefile(as_alice, DATA / "naturalearth_lowres")["pk"]
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.go(f"/dataset/{pk}/edit", wait="form[aria-label='Style']")
    tab.until("document.querySelectorAll('#style-map .dataset-tiles img.leaflet-tile-loaded').length > 0")
    assert page.evaluate(RED_PIXELS) == 0
    page.set_input_files("form[aria-label='Style'] input[type=file]",
                         {"name": "red.sld", "mimeType": "application/xml", "buffer": RED_SLD})
    page.click("form[aria-label='Style'] button[type=submit]")
    page.wait_for_selector("form[aria-label='Style'] [role=status]:text('Style applied.')")
    tab.until(f"({RED_PIXELS})() > 1000")
    tab.shot("restyled")

    page.click("button:text('Delete this resource')")
    page.wait_for_selector("dialog.confirm[open]")
    tab.shot("confirm-delete")
    page.click("dialog.confirm button:text('Delete')")
    page.wait_for_selector("[data-loaded]")
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        assert as_alice.get(f"/api/v2/resources/{pk}").status_code == 404


def test_a_pdf_is_shown_in_the_page(tab, ui_admin):
    pdf = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
           b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
    doc = ui_admin.post("/api/v2/documents", files={"doc_file": ("report.pdf", pdf, "application/pdf")},
                        data={"title": "Spring report"}).json()["document"]
    page = tab.go(f"/document/{doc['pk']}", wait="iframe.document-pdf")
    src = page.get_attribute("iframe.document-pdf", "src")
    framed = ui_admin.get(src)
    assert framed.status_code == 200 and framed.headers["content-type"] == "application/pdf"
    assert framed.headers["content-disposition"].startswith("inline")
    assert "x-frame-options" not in framed.headers
    assert page.inner_text(".downloads a.button") == "Download the file"
    tab.shot("pdf")


# Forget that results were shown, so that waiting for section.search[data-loaded] waits for the
# next results (the page sets it again once they are shown), not for the ones already there.
UNLOAD = "delete document.querySelector('section.search').dataset.loaded"


def test_filters_go_into_the_address_and_keep_the_focus(tab, ui_admin):
    ui_admin.post("/api/v2/documents", files={"doc_file": ("f.txt", b"f", "text/plain")}, data={"title": "Filter me"})
    page = tab.go("/", wait="section.search[data-loaded]")
    page.wait_for_selector("select[name=type]")
    page.focus("select[name=type]")
    page.evaluate(UNLOAD)
    page.select_option("select[name=type]", "document")
    tab.until("location.hash.includes('type=document')")
    page.wait_for_selector("section.search[data-loaded]")
    assert set(page.locator(".card .badge.document, .card .badge.dataset").all_inner_texts()) == {"DOCUMENT"}
    assert page.evaluate("document.activeElement.name") == "type"
    assert page.is_hidden("select[name=subtype]")
    page.evaluate(UNLOAD)
    page.select_option("select[name=sort]", "title")
    tab.until("location.hash.includes('sort=title')")
    page.wait_for_selector("section.search[data-loaded]")
    titles = page.locator(".card h2").all_inner_texts()
    assert titles == sorted(titles, key=str.lower) or titles == sorted(titles)
    page.evaluate(UNLOAD)
    page.go_back()
    tab.until("!location.hash.includes('sort=title')")
    page.wait_for_selector("section.search[data-loaded]")
    assert page.eval_on_selector("select[name=sort]", "e => e.value") == "-date"
