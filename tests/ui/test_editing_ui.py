"""Editing a dataset's features in the web UI, and every resource's history: the owner changes a
value in the attribute table and reverts it, deletes a row, adds a point on the map and moves
one; someone who may not edit sees no control for it and is refused; the history lists metadata
changes too and reverts them; an edit made on data changed meanwhile is refused and said plainly."""

from __future__ import annotations

import re

import pytest

from tests.conftest import USER_PASSWORD, make_user
from tests.edits.conftest import features, upload_points
from tests.ogc.conftest import upload_shapefile
from tests.ui.conftest import DATA

TILE_KEY = """(() => { let v = null; document.getElementById('preview-map').leafletMap.eachLayer((l) => {
  if (l.options?.className === 'dataset-tiles') v = l.wmsParams ? l.wmsParams.v : new URL(l._url, location.href).searchParams.get('v');
}); return v; })()"""


@pytest.fixture(scope="module")
def bob(ui_admin):
    return make_user(ui_admin, username="bob", first_name="Bob", last_name="Other")


@pytest.fixture
def as_alice(ui_server, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as client:
        yield client


@pytest.fixture
def points(as_alice, tmp_path, request) -> dict:
    """A public point layer of alice's (20 points, fids 1 to 20), made for the test."""
    name = request.node.name.replace("test_", "")[:40]
    return upload_points(as_alice, tmp_path, 20, name=name, title=f"Survey points {name.replace('_', ' ')}")


def cell(fid: int, column: str) -> str:
    return f".attributes tr[data-fid='{fid}'] td[data-column='{column}'] button.cell-value"


def open_dataset(tab, pk) -> object:
    page = tab.go(f"/dataset/{pk}", wait=".attributes table")
    page.wait_for_selector(".history ol[data-loaded]")
    return page


def edit_value(page, fid: int, column: str, value: str) -> None:
    page.click(cell(fid, column))
    page.fill(f".attributes td[data-column='{column}'] input", value)
    page.keyboard.press("Enter")
    page.wait_for_selector(f"{cell(fid, column)}:text-is('{value}')")


def test_the_owner_edits_a_value_and_reverts_it(tab, as_alice, points):
    tab.sign_in("alice", USER_PASSWORD)
    page = open_dataset(tab, points["pk"])
    edit_value(page, 1, "label", "Fixed")  # version 1, kept
    page.wait_for_selector(cell(2, "label"))
    assert page.inner_text(cell(2, "label")) == "p1"
    page.click(cell(2, "label"))
    page.fill(".attributes td[data-column='label'] input", "Corrected name")
    page.keyboard.press("Enter")
    page.wait_for_selector(".attributes .edit-feedback .ok-note:has-text('feature 2')")
    assert "Saved: label of feature 2 is now “Corrected name” (version 2)" in page.inner_text(".attributes .edit-feedback")
    assert page.inner_text(cell(2, "label")) == "Corrected name"
    assert page.evaluate("document.activeElement.dataset.focus") == "cell-2-label"  # the keyboard stays there
    assert features(as_alice, points)[2]["properties"]["label"] == "Corrected name"

    # the history says what happened and shows the values before and after
    first = page.locator(".history li.version").first
    first.locator("text=1 feature changed by alice in the web UI").wait_for()
    first.locator("button:text('Show changes')").click()
    row = first.locator(".version-changes tbody tr").first
    row.wait_for()
    assert row.locator("td").all_inner_texts() == ["label", "p1", "Corrected name"]
    tab.shot("changed")

    # a number, typed; Escape gives up an edit
    page.click(cell(3, "n"))
    page.fill(".attributes td[data-column='n'] input", "41")
    page.keyboard.press("Escape")
    assert page.inner_text(cell(3, "n")) == "2"
    assert features(as_alice, points)[3]["properties"]["n"] == 2

    # revert to version 1: the page shows the data as they were then, at once
    page.click(".history li[data-number='1'] button:text('Revert to this version')")
    page.wait_for_selector("dialog[open]")
    assert "puts back 1 feature as it was" in page.inner_text("dialog[open]")
    page.click("dialog[open] button:text('Revert')")
    page.wait_for_selector(".history-status .ok-note")
    assert "Reverted to version 1" in page.inner_text(".history-status")
    page.wait_for_selector(cell(2, "label"))
    assert page.inner_text(cell(2, "label")) == "p1" and page.inner_text(cell(1, "label")) == "Fixed"
    page.locator(".history li.version").first.locator("text=Reverted to version 1 by alice: 1 feature changed").wait_for()
    found = features(as_alice, points)
    assert found[2]["properties"]["label"] == "p1" and found[1]["properties"]["label"] == "Fixed"
    tab.shot("reverted")


def test_the_owner_reverts_the_data_to_the_upload(tab, as_alice, points):
    tab.sign_in("alice", USER_PASSWORD)
    page = open_dataset(tab, points["pk"])
    edit_value(page, 2, "label", "Corrected name")
    page.click(".attributes button[aria-label='Delete feature 6']")
    page.click("dialog[open] button.danger")
    page.wait_for_selector(".attributes .count:text-is('All 19 features.')")
    page.click(".history li[data-number='0'] button:text('Revert to this version')")
    assert "puts back 2 features as they were" in page.wait_for_selector("dialog[open]").inner_text()
    page.click("dialog[open] button:text('Revert')")
    page.wait_for_selector(".history-status .ok-note")
    page.wait_for_selector(f"{cell(2, 'label')}:text-is('p1')")
    assert page.inner_text(".attributes .count") == "All 20 features."
    page.locator(".history li.version").first.locator("text=Reverted to version 0 by alice").wait_for()
    found = features(as_alice, points)
    assert found[2]["properties"]["label"] == "p1" and found[6]["properties"]["label"] == "p5"  # back with its id


def test_the_owner_deletes_a_row(tab, as_alice, points):
    tab.sign_in("alice", USER_PASSWORD)
    page = open_dataset(tab, points["pk"])
    assert page.inner_text(".attributes .count") == "All 20 features."
    page.click(".attributes button[aria-label='Delete feature 5']")
    page.wait_for_selector("dialog[open]")
    assert "Delete feature 5 (p4)?" in page.inner_text("dialog[open]")
    page.click("dialog[open] button:text('Cancel')")  # nothing happens
    assert 5 in features(as_alice, points)
    page.click(".attributes button[aria-label='Delete feature 5']")
    page.click("dialog[open] button.danger")
    page.wait_for_selector(".attributes .edit-feedback .ok-note")
    assert page.inner_text(".attributes .count") == "All 19 features."
    assert page.locator(".attributes tr[data-fid='5']").count() == 0
    assert 5 not in features(as_alice, points)
    page.locator(".history li.version").first.locator("text=1 feature deleted by alice in the web UI").wait_for()
    tab.shot("deleted")


def test_the_owner_adds_and_moves_points(tab, as_alice, points):
    tab.sign_in("alice", USER_PASSWORD)
    page = open_dataset(tab, points["pk"])
    key = page.evaluate(TILE_KEY)
    map_box = page.locator("#preview-map").bounding_box()
    page.click("button:text('Add point')")
    assert page.get_attribute("button:text('Add point')", "aria-pressed") == "true"
    page.locator("#preview-map").scroll_into_view_if_needed()
    map_box = page.locator("#preview-map").bounding_box()
    where = page.evaluate("(() => { const m = document.getElementById('preview-map').leafletMap; return m.containerPointToLatLng([300, 200]).wrap(); })()")
    page.mouse.click(map_box["x"] + 300, map_box["y"] + 200)
    form = page.locator("form[aria-label='New point']")
    form.wait_for()
    said = re.search(r"At ([\d.]+)° ([NS]), ([\d.]+)° ([EW])", form.inner_text())
    lat, lng = float(said[1]) * (1 if said[2] == "N" else -1), float(said[3]) * (1 if said[4] == "E" else -1)
    assert [lng, lat] == pytest.approx([where["lng"], where["lat"]], abs=0.1)  # where it was clicked
    form.locator("input[name=label]").fill("Spring")
    form.locator("input[name=n]").fill("7")
    form.locator("select[name=ok]").select_option("true")
    form.locator("input[name=day]").fill("2025-04-01")
    tab.shot("new-point")
    form.locator("button:text('Save the point')").click()
    page.wait_for_selector(".map-editing .ok-note")
    assert page.inner_text(".attributes .count") == "All 21 features."
    added = features(as_alice, points)[21]
    assert added["properties"] == {"label": "Spring", "n": 7, "height": None, "ok": True, "day": "2025-04-01"}
    assert added["geometry"]["coordinates"] == pytest.approx([lng, lat], abs=1e-5)  # where the form said
    assert page.evaluate(TILE_KEY) != key  # the map's tiles are drawn again
    page.keyboard.press("Escape")
    assert page.get_attribute("button:text('Add point')", "aria-pressed") == "false"

    # move feature 10: dragged, saved when let go
    key = page.evaluate(TILE_KEY)
    page.click("button:text('Move points')")
    handle = page.locator(".point-handle.move[data-fid='10']")
    handle.wait_for()
    page.locator("#preview-map").scroll_into_view_if_needed()
    map_box, box = page.locator("#preview-map").bounding_box(), handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    target = page.evaluate(f"(() => document.getElementById('preview-map').leafletMap.containerPointToLatLng([{x - map_box['x'] + 40}, {y - map_box['y'] + 30}]).wrap())()")
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 20, y + 15, steps=4)
    page.mouse.move(x + 40, y + 30, steps=4)
    page.mouse.up()
    page.wait_for_selector(".map-editing .ok-note:has-text('Feature 10 moved')")
    before = features(as_alice, points)[11]["geometry"]["coordinates"]  # a neighbour, left where it was
    moved = features(as_alice, points)[10]["geometry"]["coordinates"]
    assert moved == pytest.approx([target["lng"], target["lat"]], abs=0.1)  # where it was let go, within a few pixels
    assert before == pytest.approx([-10 + 10 * 20 / 19, 40 + 10 * 10 / 19])
    assert page.evaluate(TILE_KEY) != key
    tab.until("document.querySelector('.history li.version')?.textContent.includes('1 feature changed by alice in the web UI')")
    tab.shot("moved")

    # and with the keyboard: arrows, then Enter
    page.focus(".point-handle.move[data-fid='12']")
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.wait_for_selector(".map-editing .ok-note:has-text('Feature 12 moved')")
    east, north = features(as_alice, points)[12]["geometry"]["coordinates"]
    west, same = -10 + 20 * 11 / 19, 40 + 10 * 11 / 19
    assert east > west + 0.2 and north == pytest.approx(same, abs=0.05)  # within a pixel


def test_lines_and_polygons_are_edited_in_qgis(tab, as_alice):
    countries = upload_shapefile(as_alice, DATA / "naturalearth_lowres")
    tab.sign_in("alice", USER_PASSWORD)
    page = open_dataset(tab, countries["pk"])
    note = page.wait_for_selector(".edit-note")
    assert "Lines and polygons are edited in QGIS" in note.inner_text()
    assert "In QGIS, add a WFS connection with this address; editing is then allowed for your account" in note.inner_text()
    assert page.input_value(".edit-note input").endswith("/geoserver/ows")
    assert page.locator(".edit-tools").count() == 0
    page.wait_for_selector(".attributes button.cell-value")  # their values are changed in the table
    tab.shot("polygons")


def test_another_user_sees_no_editing_controls_and_cannot_edit(tab, ui_server, as_alice, points, bob):
    r = as_alice.post(f"/api/v2/datasets/{points['pk']}/edits", json={"update": [{"id": 1, "properties": {"label": "by alice"}}]})
    assert r.status_code == 200, r.text
    tab.sign_in("bob", USER_PASSWORD)
    page = open_dataset(tab, points["pk"])
    page.wait_for_selector(".history li.version:has-text('1 feature changed by alice through the API')")
    assert page.locator(".attributes tbody tr").count() == 20
    for control in ("button.cell-value", ".attributes button:text('Delete')", ".edit-tools", ".edit-note", ".wfst",
                    ".history button:text('Revert to this version')"):
        assert page.locator(control).count() == 0, control
    # what the page does not offer, the API refuses
    tab.allow(r"status of 403")
    status = page.evaluate(f"""async () => {{ const {{ api }} = await import('/ui/js/api.js');
      try {{ await api('/api/v2/datasets/{points['pk']}/edits', {{ method: 'POST', json: {{ update: [{{ id: 1, properties: {{ label: 'by bob' }} }}] }} }}); return 200; }}
      catch (e) {{ return e.status; }} }}""")
    assert status == 403
    assert features(as_alice, points)[1]["properties"]["label"] == "by alice"
    tab.shot("other-user")
    # anonymous: the history of a public dataset, nothing to change
    tab.sign_out()
    page = open_dataset(tab, points["pk"])
    page.wait_for_selector(".history li.version:has-text('1 feature changed by alice through the API')")
    assert page.locator("button.cell-value, .edit-tools, .history button:text('Revert to this version')").count() == 0


def test_the_history_lists_metadata_changes_and_reverts_them(tab, as_alice, points):
    r = as_alice.post(f"/api/v2/datasets/{points['pk']}/edits", json={"delete": [7]})
    assert r.status_code == 200, r.text
    title = points["title"]
    r = as_alice.patch(f"/api/v2/resources/{points['pk']}", json={"title": "Survey points, checked", "abstract": "Checked in the field."})
    assert r.status_code == 200, r.text
    tab.sign_in("alice", USER_PASSWORD)
    page = open_dataset(tab, points["pk"])
    items = page.locator(".history li.version")
    assert items.nth(0).locator(".version-summary").inner_text().startswith("Title and abstract changed by alice")
    assert items.nth(1).locator(".version-summary").inner_text().startswith("1 feature deleted by alice through the API")
    items.nth(0).locator("button:text('Show changes')").click()
    items.nth(0).locator(".version-changes tbody tr").first.wait_for()
    rows = [r.locator("th, td").all_inner_texts() for r in items.nth(0).locator(".version-changes tbody tr").all()]
    assert ["Title", title, "Survey points, checked"] in rows and ["Abstract", "empty", "Checked in the field."] in rows
    tab.shot("metadata")

    # back to before the title changed: the fields only (the deletion stays)
    items.nth(1).locator("button:text('Revert to this version')").click()
    dialog = page.wait_for_selector("dialog[open]")
    assert "puts back the title and abstract" in dialog.inner_text() and "feature" not in dialog.inner_text()
    page.click("dialog[open] button:text('Revert')")
    page.wait_for_selector(".history-status .ok-note")
    page.wait_for_selector(f"article.detail h1:text-is('{title}')")
    assert page.evaluate("document.activeElement.id") == "history-title"
    assert as_alice.get(f"/api/v2/datasets/{points['pk']}").json()["dataset"]["title"] == title
    assert 7 not in features(as_alice, points)
    assert page.locator(".history li.version").first.locator(".version-summary").inner_text().startswith(
        "Reverted to version 1 by alice: title and abstract put back")

    # a map has its history too
    made = as_alice.post("/api/v2/maps", json={"title": "Field map", "maplayers": []})
    assert made.status_code == 201, made.text
    pk = made.json()["map"]["pk"]
    assert as_alice.patch(f"/api/v2/maps/{pk}", json={"title": "Field map, spring"}).status_code == 200
    page = tab.go(f"/map/{pk}", wait=".history ol[data-loaded]")
    page.locator(".history li.version:has-text('Title changed by alice')").wait_for()
    page.click(".history li[data-number='0'] button:text('Revert to this version')")
    page.click("dialog[open] button:text('Revert')")
    page.wait_for_selector("article.detail h1:text-is('Field map')")


def test_a_stale_edit_is_said_plainly(tab, as_alice, points):
    tab.sign_in("alice", USER_PASSWORD)
    page = open_dataset(tab, points["pk"])
    page.wait_for_selector(cell(3, "n"))
    # meanwhile, the same feature is changed through the API
    r = as_alice.post(f"/api/v2/datasets/{points['pk']}/edits", json={"update": [{"id": 3, "properties": {"label": "changed meanwhile"}}]})
    assert r.status_code == 200, r.text
    tab.allow(r"status of 409")
    page.click(cell(3, "n"))
    page.fill(".attributes td[data-column='n'] input", "99")
    page.keyboard.press("Enter")
    error = page.wait_for_selector(".attributes .edit-feedback .error")
    text = error.inner_text()
    assert text.startswith("Not saved: the data were changed elsewhere") and "make your change again" in text
    # the page shows the data as they are now; nothing of the refused edit was kept
    page.wait_for_selector(f"{cell(3, 'label')}:text-is('changed meanwhile')")
    assert page.inner_text(cell(3, "n")) == "2"
    assert features(as_alice, points)[3]["properties"]["n"] == 2
    tab.shot("stale")
    # made again on what is there now, it is saved
    page.click(cell(3, "n"))
    page.fill(".attributes td[data-column='n'] input", "99")
    page.keyboard.press("Enter")
    page.wait_for_selector(".attributes .edit-feedback .ok-note")
    assert features(as_alice, points)[3]["properties"]["n"] == 99


def test_a_refused_value_is_said_beside_the_table(tab, as_alice, points):
    tab.sign_in("alice", USER_PASSWORD)
    page = open_dataset(tab, points["pk"])
    tab.allow(r"status of 400")
    page.click(cell(4, "n"))
    page.fill(".attributes td[data-column='n'] input", "3000000000")  # past the field's 32 bits
    page.keyboard.press("Enter")
    error = page.wait_for_selector(".attributes .edit-feedback .error")
    assert "feature 4" in error.inner_text() and "out of the field's range" in error.inner_text()
    assert page.locator(".attributes td[data-column='n'] input").is_visible()  # still there to correct
    tab.shot("refused")
    page.keyboard.press("Escape")
    assert page.inner_text(cell(4, "n")) == "3"
    assert features(as_alice, points)[4]["properties"]["n"] == 3
