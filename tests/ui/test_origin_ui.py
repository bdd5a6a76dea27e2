"""Copies told apart from originals in the browser (issue 28, point 5): an original upload,
Alice's copy of it and a copy the catalogue harvested from itself (as the trial did) share one
title. Their cards say who owns each and where it came from; the Source filter narrows the list
to each; a copy's page names and links its original; the composer's picker shows owner and
origin for each of the three."""

from __future__ import annotations

import time

import pytest

from tests.conftest import USER_PASSWORD, Server, poll
from tests.ogc.conftest import upload_shapefile
from tests.ui.conftest import DATA

GEONODE = "geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker"
TITLE = "naturalearth_lowres"


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory, ui_env):
    """The catalogue the browser shows, taking up harvesting work at once."""
    srv = Server(tmp_path_factory.mktemp("ui-origin") / "catalogue", env={**ui_env, "CATALOGUE_HARVEST_TICK": "0.2"})
    yield srv
    srv.stop()


def wait_ready(admin, hid: int) -> None:
    deadline = time.monotonic() + 90
    while admin.get(f"/api/v2/harvesters/{hid}/").json()["harvester"]["status"] != "ready":
        assert time.monotonic() < deadline
        time.sleep(0.1)


@pytest.fixture(scope="module")
def three(ui_server, ui_admin, alice):
    """The original (admin's), Alice's copy, and the copy harvested from the catalogue itself."""
    original = upload_shapefile(ui_admin, DATA / TITLE)
    assert original["title"] == TITLE
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        r = as_alice.put(f"/api/v2/resources/{original['pk']}/copy")
        assert r.status_code == 200, r.text
        copy_pk = poll(as_alice, r.json()["status_url"], timeout=60)["output_params"]["output"]["pk"]
    h = ui_admin.post("/api/v2/harvesters/", json={
        "name": "Itself", "remote_url": ui_server.url, "harvester_type": GEONODE, "scheduling_enabled": False,
        "harvester_type_specific_configuration": {"harvest_documents": False, "copy_data": True}})
    assert h.status_code == 201, h.text
    hid = h.json()["harvester"]["id"]
    assert ui_admin.patch(f"/api/v2/harvesters/{hid}/", json={"status": "updating-harvestable-resources"}).status_code == 200
    wait_ready(ui_admin, hid)
    r = ui_admin.patch(f"/api/v2/harvesters/{hid}/harvestable-resources/",
                       json=[{"unique_identifier": original["uuid"], "should_be_harvested": True}])
    assert r.status_code == 200, r.text
    assert ui_admin.patch(f"/api/v2/harvesters/{hid}/", json={"status": "harvesting-resources"}).status_code == 200
    wait_ready(ui_admin, hid)
    items = ui_admin.get(f"/api/v2/harvesters/{hid}/harvestable-resources/").json()["harvestable_resources"]
    harvested = next(i["resource"] for i in items if i["unique_identifier"] == original["uuid"])
    assert harvested, items
    return {"original": str(original["pk"]), "copy": str(copy_pk), "harvested": str(harvested),
            "host": ui_server.url.split("//", 1)[1]}


def cards(page) -> dict[str, dict[str, str]]:
    """Each card shown: its title, meta line and origin line, by pk."""
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('.cards .card')].map((c) => [c.dataset.pk, {
      title: c.querySelector('h2').innerText, meta: c.querySelector('.meta').innerText,
      origin: c.querySelector('.origin')?.innerText ?? ''}]))""")


def test_cards_the_source_filter_the_page_and_the_picker_tell_copies_apart(tab, three):
    host = three["host"]
    page = tab.go(f"/?q={TITLE}", wait="section.search[data-loaded]")
    shown = cards(page)
    assert set(shown) == {three["original"], three["copy"], three["harvested"]}
    assert {c["title"] for c in shown.values()} == {TITLE}
    assert shown[three["original"]]["origin"] == "" and "admin" in shown[three["original"]]["meta"]
    assert "Alice Field" in shown[three["copy"]]["meta"]
    assert shown[three["copy"]]["origin"] == f"Copy of “{TITLE}”"
    assert shown[three["harvested"]]["origin"] == f"Harvested from Itself ({host})"
    tab.shot("cards")

    # the Source filter narrows the list to each, in the address and as a chip
    page.wait_for_selector("select[name=source]")
    for source, pk, label in (("copy", "copy", "Copies"), ("harvested", "harvested", "Harvested"),
                              ("local", "original", "Made here")):
        page.select_option("select[name=source]", source)
        tab.until(f"location.hash.includes('source={source}')")
        page.wait_for_selector("section.search[data-loaded]")
        assert list(cards(page)) == [three[pk]], source
        assert page.locator(".summary").inner_text() == "1–1 of 1 result"
        assert page.locator(".chip", has_text=f"Source: {label}").count() == 1
    tab.shot("source-filter")
    page.locator(".chip", has_text="Source: Made here").click()
    tab.until("!location.hash.includes('source=')")
    page.wait_for_selector("section.search[data-loaded]")
    assert len(cards(page)) == 3

    # the copy's page names its original and links to it
    page = tab.go(f"/dataset/{three['copy']}", wait=f"article.detail[data-pk='{three['copy']}'] .metadata")
    assert f"Copy of “{TITLE}”" in page.locator(".byline").inner_text()
    link = page.locator(".metadata dd a", has_text=f"Copy of “{TITLE}”")
    link.wait_for()
    assert link.get_attribute("href") == f"#/dataset/{three['original']}"
    tab.shot("copy-page")
    link.click()
    page.wait_for_selector(f"article.detail[data-pk='{three['original']}']")
    assert page.locator(".byline .origin").count() == 0
    # the harvested one's page says where from, with the remote's page of the record
    # (the page before is a dataset's too: the wait names this one)
    page = tab.go(f"/dataset/{three['harvested']}", wait=f"article.detail[data-pk='{three['harvested']}'] .metadata")
    assert f"Harvested from Itself ({host})" in page.locator(".byline").inner_text()
    there = page.locator(".metadata dd a", has_text="its page there")
    assert there.get_attribute("href").endswith(f"/catalogue/#/dataset/{three['original']}")

    # the composer's picker: owner and origin for each dataset of that title
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.go("/map/new", wait="form[aria-label='Map']")
    page.fill("input[name=q]", TITLE)
    page.click("form[role=search] button[type=submit]")
    tab.until("document.querySelectorAll('.found-item').length === 3")
    found = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('.found-item')].map(
      (li) => [li.dataset.pk, li.querySelector('.origin').innerText]))""")
    assert found == {three["original"]: "admin", three["copy"]: f"Alice Field · Copy of “{TITLE}”",
                     three["harvested"]: f"admin · Harvested from Itself ({host})"}
    tab.shot("composer-picker")


def test_a_copy_of_an_original_since_deleted_says_so(tab, ui_server, ui_admin, alice):
    original = upload_shapefile(ui_admin, DATA / "naturalearth_cities", dataset_title="Cities, soon gone")
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        r = as_alice.put(f"/api/v2/resources/{original['pk']}/copy")
        pk = poll(as_alice, r.json()["status_url"], timeout=60)["output_params"]["output"]["pk"]
    assert ui_admin.delete(f"/api/v2/resources/{original['pk']}").status_code == 204
    page = tab.go(f"/dataset/{pk}", wait=f"article.detail[data-pk='{pk}'] .metadata")
    assert "Copy of “Cities, soon gone” (deleted)" in page.locator(".metadata").inner_text()
    assert page.locator(".metadata dd a", has_text="Copy of").count() == 0



@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_the_origin_lines_and_the_source_filter_pass_axe(browser, ui_server, three, size):
    """The pages above, as the standing accessibility test looks at every page (axe-core: no
    serious or critical violation, target size included; nothing wider than the screen)."""
    from tests.ui.test_accessibility import AXE, SIZES, WIDER_THAN_THE_SCREEN, check, sign_in

    context = browser.new_context(**SIZES[size])
    context.add_init_script(path=str(AXE))
    page = context.new_page()
    page.set_default_timeout(15_000)
    found = []
    try:
        sign_in(page, ui_server.url, "alice", USER_PASSWORD)
        for path, ready in ((f"/?q={TITLE}&source=copy", "section.search[data-loaded] .card .origin"),
                            (f"/?q={TITLE}", "section.search[data-loaded] .card .origin"),
                            (f"/dataset/{three['copy']}", f"article[data-pk='{three['copy']}'] .metadata dd a"),
                            (f"/dataset/{three['harvested']}", f"article[data-pk='{three['harvested']}'] .metadata dd a"),
                            ("/map/new", ".found-item .origin")):
            page.evaluate("(path) => { if (location.hash !== `#${path}`) document.getElementById('main')?.replaceChildren(); }",
                          path)
            page.goto(f"{ui_server.url}/#{path}")
            page.wait_for_selector(ready, state="attached")
            page.wait_for_timeout(150)
            found += [f"{path}: {v['id']} ({v['impact']}) {v['help']}: {', '.join(v['targets'][:6])}" for v in check(page)]
            wide = page.evaluate(WIDER_THAN_THE_SCREEN)
            if wide:
                found.append(f"{path}: wider than the screen: {', '.join(wide)}")
    finally:
        context.close()
    assert not found, "\n".join(found)
