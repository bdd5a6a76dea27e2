"""A resource's history shows the copy a package brought and kept aside as a conflict: a sentence
saying it changed elsewhere too and that it is kept aside, its differences as "here" against
"brought by the package", and never "Revert to this version" on it (it changed nothing here);
the version before it stays the resource as it is now."""

from __future__ import annotations

import pytest

from catalogue_app.packages import conflicts
from catalogue_app.store.db import Database
from tests.conftest import USER_PASSWORD
from tests.packages.conflict_world import MADE_BY, add_package, incoming_record


@pytest.fixture
def as_alice(ui_server, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as client:
        yield client


def test_the_history_shows_a_copy_kept_aside_without_revert(tab, ui_server, as_alice, alice):
    r = as_alice.post("/api/v2/documents", files={"doc_file": ("notes.txt", b"notes\n", "text/plain")},
                      data={"title": "Well survey"})
    assert r.status_code == 201, r.text
    pk = int(r.json()["document"]["pk"])
    assert as_alice.patch(f"/api/v2/resources/{pk}", json={"title": "Well survey (office)"}).status_code == 200
    here = as_alice.get(f"/api/v2/resources/{pk}").json()["resource"]
    db = Database(ui_server.data_dir / "catalogue.sqlite3")
    try:
        package_id = add_package(db, alice["pk"])
        record = incoming_record(here, title="Well survey (field)")
        cid = db.write_sync(lambda conn: conflicts.set_aside(conn, package_id, record, pk, "changed_both", None,
                                                             files_dir=ui_server.data_dir / "files"))
    finally:
        db.close()
    assert cid
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.go(f"/document/{pk}", wait=".history ol[data-loaded]")
    first = page.locator(".history li.version").first
    summary = first.locator(".version-summary").inner_text()
    assert summary.startswith(f"Changed elsewhere too by {MADE_BY}, brought in a package made by {MADE_BY},"
                              " differing in the title and keywords; kept aside until someone chooses which copy"
                              " to keep"), summary
    # no revert on the copy kept aside; the version before it is the resource as it is now
    assert first.locator("button:text('Revert to this version')").count() == 0
    assert first.locator("a:text('Choose which copy to keep')").get_attribute("href") == "#/packages"
    second = page.locator(".history li.version").nth(1)
    assert second.locator("text=This is the resource as it is now.").count() == 1
    assert second.locator("button:text('Revert to this version')").count() == 0
    first.locator("button:text('Show changes')").click()
    table = first.locator(".version-changes table")
    table.wait_for()
    assert table.locator("thead").inner_text().split() == ["Field", "Here", "Brought", "by", "the", "package"]
    row = table.locator("tbody tr:has(th:text-is('Title'))")
    assert row.locator("td").all_inner_texts() == ["Well survey (office)", "Well survey (field)"]
    tab.shot("history-with-a-copy-kept-aside")
