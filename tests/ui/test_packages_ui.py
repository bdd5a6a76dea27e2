"""Field packages in the browser: "Take offline" on the search page downloads one zip of the search
and its area; the Packages page of a second catalogue (its own server and data folder) imports it,
first as a dry run, and shows the report; a conflict (the same resource changed on both sides) is
resolved from the Packages page; Administration shows the signing key.

With CATALOGUE_README_SCREENSHOTS=1 the README's two screenshots (docs/screenshots/take-offline.png
and import-package.png) are written too."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, Server, make_user, wait_finished
from tests.ogc.conftest import PRIVATE, upload_shapefile
from tests.ui.conftest import CHECKOUT, DATA, Browsing

AREA = [-10.0, 35.0, 30.0, 60.0]  # Europe, more or less
README_SHOTS = CHECKOUT / "docs" / "screenshots"


def readme_shot(page, name: str) -> None:
    """The page as it is (the screen, not the whole page) for the README, when asked for."""
    if os.environ.get("CATALOGUE_README_SCREENSHOTS"):
        README_SHOTS.mkdir(parents=True, exist_ok=True)
        page.evaluate("document.getElementById('toast').className = ''")  # "Signed in as ..." fades out first
        page.wait_for_timeout(300)
        page.screenshot(path=str(README_SHOTS / name))


@pytest.fixture(scope="module")
def office(ui_server, alice):
    """The office catalogue: alice's capitals and countries, public."""
    with ui_server.client(auth=("alice", USER_PASSWORD)) as c:
        cities = upload_shapefile(c, DATA / "naturalearth_cities", dataset_title="Capital cities")
        countries = upload_shapefile(c, DATA / "naturalearth_lowres", dataset_title="Countries of the world")
    return {"cities": cities, "countries": countries}


@pytest.fixture(scope="module")
def field(tmp_path_factory, ui_env):
    """The field laptop: a fresh catalogue with a data folder of its own, where alice has an account too."""
    srv = Server(tmp_path_factory.mktemp("field") / "catalogue", env=ui_env)
    with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
        make_user(admin, username="alice", first_name="Alice", last_name="Field")
    yield srv
    srv.stop()


@pytest.fixture
def field_tab(browser, field, request):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(30_000)
    browsing = Browsing(page, field, f"{request.node.name}-field")
    yield browsing
    errors = browsing.unexpected_errors()
    context.close()
    assert not errors, f"errors in the browser console: {errors}"


def import_from_page(tab: Browsing, package: Path, dry_run: bool) -> None:
    """Chooses the file on the Packages page and imports it; returns once the report is shown."""
    tab.go("/packages", wait="section.packages[data-loaded]")
    tab.page.set_input_files("form[aria-label='Import a package'] input[type=file]", str(package))
    tab.page.set_checked("input[name=dry_run]", dry_run)
    tab.page.click("form[aria-label='Import a package'] button[type=submit]")
    tab.page.wait_for_selector(".import-out .report", timeout=60_000)


def count(tab: Browsing, outcome: str) -> int:
    return int(tab.page.text_content(f".report-counts li[data-outcome={outcome}] strong"))


def export_over_http(client, **cut) -> tuple[dict, bytes]:
    """A package made through the API (as a script would): its execution's output and its bytes."""
    r = client.post("/api/v2/packages/exports", json=cut)
    assert r.status_code == 201, r.text
    out = wait_finished(client, r.json()["status_url"], timeout=60)["output_params"]
    got = client.get(out["download_url"])
    assert got.status_code == 200, got.text
    return out, got.content


def test_take_offline_then_import_in_the_field(tab, field_tab, office, tmp_path):
    tab.go("/", wait="section.search[data-loaded] .card")
    assert not tab.page.is_visible("#take-offline")  # signed-in users only
    tab.sign_in("alice", USER_PASSWORD)
    tab.go("/?type=dataset&extent=" + ",".join(str(v) for v in AREA), wait="section.search[data-loaded] .card")
    tab.page.click("#take-offline")
    dialog = tab.page.locator("dialog.offline[open]")
    dialog.wait_for()
    # the dialog is named by its heading, and starts on the area drawn for the search
    assert tab.page.evaluate("document.querySelector('dialog.offline').getAttribute('aria-labelledby')") == "offline-title"
    assert dialog.locator("input[name=area][value=drawn]").is_checked()
    tab.until("/\\d+ resources?, about/.test(document.querySelector('.offline-estimate').textContent)", timeout=30)
    assert "2 resources" in dialog.locator(".offline-estimate").text_content()
    dialog.locator("label:has-text('Cut data to this area') input").check()
    tab.until("/\\d+ resources?, about/.test(document.querySelector('.offline-estimate').textContent)", timeout=30)
    tab.shot("take-offline")
    readme_shot(tab.page, "take-offline.png")
    dialog.locator("button:text('Download package')").click()
    link = dialog.locator(".offline-progress a[download]")
    link.wait_for(timeout=60_000)
    assert tab.page.evaluate("document.activeElement.matches('.offline-progress a[download]')")  # the keyboard goes on from the file
    tab.shot("package-ready")
    with tab.page.expect_download() as got:
        link.click()
    package = tmp_path / "office.zip"
    got.value.save_as(package)

    with zipfile.ZipFile(package) as z:
        manifest = json.loads(z.read("manifest.json"))
        names = set(z.namelist())
    assert manifest["format"] == "catalogue-package"
    assert manifest["made_by"] == "alice"
    assert manifest["cut"]["bbox"] == AREA and manifest["cut"]["clip"] is True
    travelled = {r["uuid"]: r for r in manifest["resources"]}
    assert set(travelled) == {office["cities"]["uuid"], office["countries"]["uuid"]}
    assert {r["data"] for r in travelled.values()} == {"clipped"}
    assert all(r["record"] in names for r in travelled.values())
    dialog.locator("button:text('Close')").first.click()
    assert tab.page.evaluate("document.activeElement.id") == "take-offline"  # back where it was opened

    # the package is listed on the office's Packages page, with its file
    tab.go("/packages", wait="section.packages[data-loaded]")
    row = tab.page.locator(f"tr[data-package='{manifest['id']}']")
    assert row.locator("a[download]").get_attribute("href").endswith(f"/api/v2/packages/{manifest['id']}/download")

    # in the field: a dry run first changes nothing, then the import itself
    field_tab.sign_in("alice", USER_PASSWORD)
    import_from_page(field_tab, package, dry_run=True)
    assert field_tab.page.locator(".import-out .report[data-dry-run=true]").is_visible()
    assert count(field_tab, "created") == 2
    with field_tab.server.client(auth=("alice", USER_PASSWORD)) as c:
        assert c.get("/api/v2/resources").json()["total"] == 0
    field_tab.page.click("button:text('Import office.zip now')")
    field_tab.page.wait_for_selector(".import-out .report[data-dry-run=false]", timeout=60_000)
    assert count(field_tab, "created") == 2
    created = field_tab.page.locator(".report-list[data-outcome=created] li a")
    assert sorted(created.all_text_contents()) == ["Capital cities", "Countries of the world"]
    field_tab.page.locator(".report-list[data-outcome=created] li").first.scroll_into_view_if_needed()
    field_tab.shot("import-package")
    field_tab.page.evaluate("window.scrollTo(0, 0)")
    readme_shot(field_tab.page, "import-package.png")
    # each created resource is a link to its page here
    created.filter(has_text="Capital cities").click()
    field_tab.page.wait_for_selector("h1:text('Capital cities')")
    # the same package again: nothing changes
    import_from_page(field_tab, package, dry_run=False)
    assert count(field_tab, "unchanged") == 2 and count(field_tab, "created") == 0

    # a change in the field, then "Send changes back" on the imported package's row: a package of
    # what changed since it, made and offered under the list
    with field_tab.server.client(auth=("alice", USER_PASSWORD)) as c:
        there = c.get("/api/v2/resources", params={"filter{uuid}": office["cities"]["uuid"]}).json()["resources"][0]
        assert c.patch(f"/api/v2/resources/{there['pk']}", json={"abstract": "Seen in the field."}).status_code == 200
    field_tab.page.reload()  # (the page is the Packages page already: its list read again)
    field_tab.page.wait_for_selector("section.packages[data-loaded]")
    field_tab.page.click(f"tr[data-package='{manifest['id']}'] button[data-send-back]")
    link = field_tab.page.locator(".send-back a[download]")
    link.wait_for(timeout=60_000)
    field_tab.shot("send-back")
    with field_tab.page.expect_download() as got:
        link.click()
    back = tmp_path / "back.zip"
    got.value.save_as(back)
    with zipfile.ZipFile(back) as z:
        since = json.loads(z.read("manifest.json"))
    assert since["base"] == manifest["id"]
    assert [r["uuid"] for r in since["resources"]] == [office["cities"]["uuid"]]


def test_a_conflict_resolved_from_the_page(tab, field, office, tmp_path):
    """Both sides change a resource after the office's package went out; the field's changes come
    back as a conflict, and keeping the incoming copy from the Packages page applies them."""
    cities = office["cities"]
    office_client = tab.server.client(auth=("alice", USER_PASSWORD))
    field_client = field.client(auth=("alice", USER_PASSWORD))
    with office_client, field_client:
        out, data = export_over_http(office_client, q="Capital cities", types=["dataset"], clip=False)
        r = field_client.post("/api/v2/packages/imports", files={"file": ("office.zip", data, "application/zip")},
                              data={"dry_run": "false"})
        assert r.status_code == 201, r.text
        wait_finished(field_client, r.json()["status_url"], timeout=60)
        there = field_client.get("/api/v2/resources", params={"filter{uuid}": cities["uuid"]}).json()["resources"][0]
        assert field_client.patch(f"/api/v2/resources/{there['pk']}", json={"abstract": "Checked in the field."}).status_code == 200
        assert office_client.patch(f"/api/v2/resources/{cities['pk']}", json={"abstract": "Checked at the office."}).status_code == 200
        _, back = export_over_http(field_client, since=out["package_id"])
        (tmp_path / "field.zip").write_bytes(back)

        tab.sign_in("alice", USER_PASSWORD)
        import_from_page(tab, tmp_path / "field.zip", dry_run=False)
        assert count(tab, "conflicts") == 1
        card = tab.page.locator("article.conflict:has(h3:has-text('Capital cities'))")
        card.wait_for()
        assert card.locator("h3 a").get_attribute("href") == f"#/dataset/{cities['pk']}"
        abstract = card.locator("tr.differs[data-field=abstract] td")
        assert abstract.all_text_contents() == ["Checked at the office.", "Checked in the field."]
        tab.shot("conflict")
        card.locator("button[data-keep=incoming]").click()
        tab.page.wait_for_selector("text=No conflicts: nothing waits for your choice.")
        assert office_client.get(f"/api/v2/resources/{cities['pk']}").json()["resource"]["abstract"] == "Checked in the field."


def test_signing_key_in_administration(tab):
    tab.sign_in("admin", ADMIN_PASSWORD)
    tab.go("/admin/keys", wait=".signing-key input#key-fingerprint")
    fingerprint = tab.page.input_value("#key-fingerprint")
    assert fingerprint.startswith("SHA256:")
    assert "CATALOGUE_TRUSTED_KEYS" in tab.page.text_content(".trusted-keys")
    tab.shot("signing-key")


def test_a_file_that_is_no_package_is_refused_with_its_reason(tab, alice, tmp_path):
    bad = tmp_path / "notes.zip"
    bad.write_bytes(b"these are field notes, not a zip")
    tab.allow(r"status of 4\d\d .*/api/v2/packages/imports")  # should the refusal come before the job
    tab.sign_in("alice", USER_PASSWORD)
    tab.go("/packages", wait="section.packages[data-loaded]")
    tab.page.set_input_files("form[aria-label='Import a package'] input[type=file]", str(bad))
    tab.page.click("form[aria-label='Import a package'] button[type=submit]")
    alert = tab.page.locator(".import-out [role=alert]")
    alert.wait_for(timeout=60_000)
    assert alert.text_content().startswith("notes.zip was not imported: ")
    assert len(alert.text_content()) > len("notes.zip was not imported: ") + 10  # and why
    tab.shot("not-a-package")


def test_data_one_may_not_download_is_named_as_left_out(tab, field_tab, ui_admin, alice, tmp_path):
    """A dataset alice may view but not download travels as metadata only, and the dialog says so;
    in the field its page says that its data stayed behind, and asks no service for them."""
    survey = upload_shapefile(ui_admin, DATA / "naturalearth_cities", PRIVATE, dataset_title="Survey points")
    r = ui_admin.put(f"/api/v2/resources/{survey['pk']}/permissions",
                     json={"users": [{"id": alice["pk"], "permissions": "view"}]})
    assert r.status_code == 200, r.text
    tab.sign_in("alice", USER_PASSWORD)
    tab.go("/?q=Survey", wait="section.search[data-loaded] .card")
    tab.page.click("#take-offline")
    dialog = tab.page.locator("dialog.offline[open]")
    assert dialog.locator("input[name=area][value=none]").is_checked()  # no area drawn: the search as it is
    assert dialog.locator("label:has-text('Cut data to this area') input").is_disabled()
    tab.until("/left out/.test(document.querySelector('.offline-estimate').textContent)", timeout=30)
    dialog.locator("button:text('Download package')").click()
    left_out = dialog.locator(".left-out li")
    left_out.first.wait_for(timeout=60_000)
    assert "Survey points" in left_out.first.text_content()
    tab.shot("left-out")
    with tab.page.expect_download() as got:
        dialog.locator(".offline-progress a[download]").click()
    package = tmp_path / "survey.zip"
    got.value.save_as(package)

    field_tab.sign_in("alice", USER_PASSWORD)
    import_from_page(field_tab, package, dry_run=False)
    field_tab.page.click(".report-list[data-outcome=created] li a:has-text('Survey points')")
    note = field_tab.page.locator(".preview .metadata-only")
    note.wait_for()
    assert "data" in note.text_content()
    assert field_tab.page.locator(".preview .leaflet-tile, .preview img.legend").count() == 0
    field_tab.shot("metadata-only")
