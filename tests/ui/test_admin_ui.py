"""Administration in the browser, as a new administrator finds it: the Jobs tab names who asked
for each job and shows the newest first, in a scroller the keyboard reaches; a group's card
shows each member's role, changes it, and offers to add only those not in the group yet; a
superuser downloads a backup from the Commands tab (the file is the archive, and restores),
while staff are told that only superusers may; a new harvester has not been checked yet rather
than being unavailable, says whether it runs by itself, and a harvest with nothing ticked says so."""

from __future__ import annotations

import hashlib

import pytest

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, Server, make_group, make_user, poll
from tests.management.backup_helpers import cli


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory, ui_env):
    """The catalogue the browser shows, taking up harvesting work at once."""
    srv = Server(tmp_path_factory.mktemp("ui-admin") / "catalogue", env={**ui_env, "CATALOGUE_HARVEST_TICK": "0.2"})
    yield srv
    srv.stop()


def shot(tab, label: str) -> None:
    """A screenshot without the toast of the last action over it."""
    tab.page.evaluate("document.getElementById('toast').className = ''")
    tab.page.wait_for_timeout(250)
    tab.shot(label)


def document_of(client, title: str) -> int:
    r = client.post("/api/v2/documents", files={"doc_file": ("notes.txt", b"some notes\n", "text/plain")},
                    data={"title": title})
    assert r.status_code == 201, r.text
    return int(r.json()["document"]["pk"])


def copied(client, pk: int) -> None:
    r = client.put(f"/api/v2/resources/{pk}/copy")
    assert r.status_code == 200, r.text
    assert poll(client, r.json()["status_url"])["status"] == "finished"


def assert_focusable_scroller(page, selector: str) -> None:
    """The box scrolls with the keyboard: it takes the focus, and says what it holds."""
    box = page.locator(selector)
    assert box.get_attribute("tabindex") == "0"
    assert box.get_attribute("role") == "region" and box.get_attribute("aria-label")
    box.focus()
    assert page.evaluate(f"document.activeElement === document.querySelector({selector!r})")


def test_jobs_name_their_users_newest_first(tab, ui_server, ui_admin, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        copied(ui_admin, document_of(ui_admin, "Admin's notes"))
        copied(as_alice, document_of(as_alice, "Alice's notes"))  # the newest
    page = tab.page
    tab.sign_in("admin", ADMIN_PASSWORD)
    tab.go("/admin/executions", wait=".tab-body table tbody tr")
    rows = page.locator(".tab-body table tbody tr")
    assert rows.count() == 2
    # the newest first, as the Commands tab lists its jobs, each with the name of who asked for it
    cells = [rows.nth(i).locator("td").all_inner_texts() for i in range(2)]
    assert cells[0][4] == "alice" and cells[1][4] == "admin", cells
    assert page.locator("thead th").all_inner_texts() == ["When", "Job", "Input", "Status", "By", "Message"]
    expected = ui_admin.get("/api/v2/executionrequest", params={"sort[]": "-created"}).json()["requests"]
    assert page.eval_on_selector_all(".executions-table tbody tr", "(rs) => rs.map((r) => r.dataset.exec)") == \
        [r["exec_id"] for r in expected]
    assert_focusable_scroller(page, ".executions-table")
    shot(tab, "jobs-tab")


def test_group_members_show_and_change_their_role(tab, ui_server, ui_admin, alice):
    bob = make_user(ui_admin, username="bob", first_name="Bob", last_name="Stone")
    gone = make_user(ui_admin, username="gone")
    assert ui_admin.patch(f"/api/v2/users/{gone['pk']}", json={"is_active": False}).status_code == 200
    group = make_group(ui_admin, title="Surveyors")
    assert ui_admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [alice["pk"]], "role": "member"}).status_code == 200
    members = f"/api/v2/groups/{group['pk']}/members"
    managers = f"/api/v2/groups/{group['pk']}/managers"

    def role_of(username: str) -> str | None:
        if username in [m["username"] for m in ui_admin.get(managers).json()]:
            return "manager"
        return "member" if username in [m["username"] for m in ui_admin.get(members).json()] else None

    page = tab.page
    tab.sign_in("admin", ADMIN_PASSWORD)
    tab.go("/admin/groups", wait=".group-card:has(h3:text-is('Surveyors')) li:has-text('alice')")
    card = page.locator(".group-card:has(h3:text-is('Surveyors'))")
    # the picker offers only those who may join and are not in the group
    offered = card.locator("select[name=user] option").all_inner_texts()
    assert offered == ["bob"], offered
    # each member with their role; the creator manages the group
    assert card.locator("li[data-username='admin'] .role").inner_text().lower() == "manager"
    assert card.locator("li[data-username='alice'] .role").inner_text().lower() == "member"
    assert "Alice Field" in card.locator("li[data-username='alice']").inner_text()
    shot(tab, "group-card")

    # promoted, then back to member
    card.locator("li[data-username='alice'] button[data-action='promote']").click()
    card.locator("li[data-username='alice'][data-role='manager']").wait_for()
    assert role_of("alice") == "manager"
    card.locator("li[data-username='alice'] button[data-action='demote']").click()
    card.locator("li[data-username='alice'][data-role='member']").wait_for()
    assert role_of("alice") == "member"

    # bob added as a manager: nobody is left to add
    card.locator("select[name=role]").select_option("manager")
    card.locator("form button[type=submit]").click()
    card.locator("li[data-username='bob'][data-role='manager']").wait_for()
    assert role_of("bob") == "manager"
    assert card.locator("select[name=user]").count() == 0
    assert "Every active user is in this group already" in card.inner_text()
    shot(tab, "group-card-full")

    card.locator("li[data-username='bob'] button[data-action='remove']").click()
    card.locator("select[name=user] option:text-is('bob')").wait_for(state="attached")
    assert role_of("bob") is None and bob["username"] == "bob"


def backup_from_the_shortcut(tab) -> str:
    """Runs "Back up now"; the name of the archive its job names once finished."""
    page = tab.page
    page.click(".shortcuts button[data-command='backup']")
    link = page.locator(".job-detail .job-archive")
    link.wait_for(timeout=60_000)
    return link.locator("code").inner_text()


def test_a_superuser_downloads_a_backup(tab, ui_server, tmp_path):
    page = tab.page
    tab.sign_in("admin", ADMIN_PASSWORD)
    tab.go("/admin/commands", wait=".backups h2")
    name = backup_from_the_shortcut(tab)
    on_disk = ui_server.data_dir / "backups" / name
    assert on_disk.is_file()
    item = page.locator(f".backup-list li[data-backup='{name}']")
    item.wait_for()
    assert "written" in item.inner_text()
    shot(tab, "backups")

    # the list's link: the download is the archive, and it restores
    with page.expect_download() as info:
        item.locator("a:has-text('Download')").click()
    download = info.value
    assert download.suggested_filename == name
    saved = tmp_path / name
    download.save_as(saved)
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == hashlib.sha256(on_disk.read_bytes()).hexdigest()
    restored = cli("restore", str(saved), data_dir=tmp_path / "restored")
    assert restored.returncode == 0, restored.stdout + restored.stderr

    # the finished job's link gives the same file
    with page.expect_download() as info:
        page.locator(".job-detail .job-archive a:has-text('Download')").click()
    again = tmp_path / "again.tar"
    info.value.save_as(again)
    assert again.read_bytes() == on_disk.read_bytes()


def test_staff_see_backups_but_may_not_download(tab, ui_server, ui_admin):
    staff = make_user(ui_admin, username="stella")
    assert ui_admin.patch(f"/api/v2/users/{staff['pk']}", json={"is_staff": True}).status_code == 200
    page = tab.page
    tab.sign_in("stella", USER_PASSWORD)
    tab.go("/admin/commands", wait=".backups h2")
    name = backup_from_the_shortcut(tab)
    page.locator(f".backup-list li[data-backup='{name}']").wait_for()
    assert page.locator(".backups a, .job-detail .job-archive a").count() == 0
    assert "Only superusers may download backups" in page.locator(".backups").inner_text()
    assert "Only superusers may download backups" in page.locator(".job-detail .job-archive").inner_text()
    shot(tab, "backups-staff")


def test_a_new_harvester_is_not_checked_yet(tab, ui_server, ui_admin):
    r = ui_admin.post("/api/v2/harvesters/", json={
        "name": "Ourselves", "remote_url": ui_server.url, "scheduling_enabled": False,
        "harvester_type": "geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker"})
    assert r.status_code == 201, r.text
    hid = r.json()["harvester"]["id"]
    page = tab.page
    tab.sign_in("admin", ADMIN_PASSWORD)
    tab.go(f"/admin/harvesting?harvester={hid}", wait=f"tr[data-harvester='{hid}']")
    row = page.locator(f"tr[data-harvester='{hid}']")
    assert row.locator("td[data-label=Available]").inner_text() == "not checked yet"
    assert "Harvests when asked" in row.locator("td.checks").inner_text()
    assert_focusable_scroller(page, ".harvester-table")
    shot(tab, "harvester-new")

    # checked: the remote (this catalogue) answers
    page.click("button[aria-label='Check remote: Ourselves']")
    page.wait_for_selector(f"tr[data-harvester='{hid}'] td[data-label=Available]:text-is('Yes')", timeout=30_000)

    # a harvest with nothing ticked says that it had nothing to do
    page.click("button[aria-label='Harvest now: Ourselves']")
    page.wait_for_selector(".session-list li:has-text('Harvest') .idle", timeout=30_000)
    assert "Nothing was ticked" in page.locator(".session-list li", has_text="Harvest").first.inner_text()
    shot(tab, "harvester-idle-harvest")

    # scheduled: it says so
    assert ui_admin.patch(f"/api/v2/harvesters/{hid}/", json={"scheduling_enabled": True}).status_code == 200
    page.reload()
    page.wait_for_selector(f"tr[data-harvester='{hid}'] td.checks:has-text('Harvests by itself every 60 min')")
