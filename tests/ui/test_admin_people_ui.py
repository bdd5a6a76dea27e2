"""Administration › People in the browser: who is deactivated is plain to see (a badge, a filter,
a count), and staff deactivate and reactivate an account, which stays so when the page is opened
anew and is what the API says; staff get no such button for a superuser, nor for themselves. The
Administration tabs are also seen in French and in Arabic (right to left), as a new reader would."""

from __future__ import annotations

import time

import pytest

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, make_group, make_user


# What sticks out of the page sideways (the page would scroll sideways).
WIDER = """[...document.querySelectorAll('main *')].filter((e) => {
  const r = e.getBoundingClientRect();
  return r.width > 0 && (r.left < -1 || r.right > document.documentElement.clientWidth + 1);
}).slice(0, 5).map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().left)}..${Math.round(e.getBoundingClientRect().right)}`)"""


def shot(tab, label: str) -> None:
    """A screenshot without the toast of the last action over it."""
    tab.page.evaluate("document.getElementById('toast').className = ''")
    tab.page.wait_for_timeout(250)
    tab.shot(label)


def row(page, username: str):
    return page.locator(f"tr[data-username='{username}']")


def is_active(client, pk: int) -> bool:
    r = client.get(f"/api/v2/users/{pk}")
    assert r.status_code == 200, r.text
    return r.json()["user"]["is_active"]


def test_staff_deactivate_and_reactivate_an_account(tab, ui_server, ui_admin):
    dora = make_user(ui_admin, username="dora", first_name="Dora", last_name="Lake")
    staff = make_user(ui_admin, username="sam")
    assert ui_admin.patch(f"/api/v2/users/{staff['pk']}", json={"is_staff": True}).status_code == 200
    page = tab.page
    tab.sign_in("sam", USER_PASSWORD)
    tab.go("/admin/users", wait="tr[data-username='dora']")
    assert row(page, "dora").get_attribute("data-active") == "true"
    assert row(page, "dora").locator(".account-state").inner_text().lower() == "active"
    # staff change members, not superusers, and not themselves
    assert row(page, "admin").locator("button[data-action=deactivate]").count() == 0
    assert row(page, "sam").locator("button[data-action=deactivate]").count() == 0

    # deactivated, after a question that says what it does
    row(page, "dora").locator("button[data-action=deactivate]").click()
    dialog = page.locator("dialog.confirm[open]")
    assert "no longer sign in" in dialog.inner_text()
    dialog.locator("button.danger").click()
    page.wait_for_selector("tr[data-username='dora'][data-active='false']")
    assert is_active(ui_admin, dora["pk"]) is False

    # opened anew: still shown as deactivated, with the count and the filter
    page.reload()
    page.wait_for_selector("tr[data-username='dora'][data-active='false']")
    assert row(page, "dora").locator(".account-state").inner_text().lower() == "deactivated"
    assert row(page, "dora").locator("button[data-action=reactivate]").is_visible()
    assert "1 of them is deactivated." in page.locator(".people-summary").inner_text()
    page.select_option("select[name=showing]", "inactive")
    shown = page.eval_on_selector_all("tbody tr[data-username]", "(rs) => rs.map((r) => r.dataset.username)")
    assert shown == ["dora"], shown
    shot(tab, "people-deactivated")
    page.select_option("select[name=showing]", "active")
    assert row(page, "dora").count() == 0 and row(page, "sam").count() == 1
    page.select_option("select[name=showing]", "all")

    # a deactivated account cannot sign in
    with ui_server.client() as anon:
        r = anon.post("/account/login/", json={"username": "dora", "password": USER_PASSWORD})
        assert r.status_code >= 400, r.text

    # reactivated: no question, and so after a reload
    row(page, "dora").locator("button[data-action=reactivate]").click()
    page.wait_for_selector("tr[data-username='dora'][data-active='true']")
    assert is_active(ui_admin, dora["pk"]) is True
    page.reload()
    page.wait_for_selector("tr[data-username='dora'][data-active='true']")
    assert row(page, "dora").locator(".account-state").inner_text().lower() == "active"
    assert "deactivated" not in page.locator(".people-summary").inner_text()


def test_a_superuser_may_deactivate_staff_but_not_themselves(tab, ui_admin):
    stella = make_user(ui_admin, username="stella2")
    assert ui_admin.patch(f"/api/v2/users/{stella['pk']}", json={"is_staff": True}).status_code == 200
    page = tab.page
    tab.sign_in("admin", ADMIN_PASSWORD)
    tab.go("/admin/users", wait="tr[data-username='stella2']")
    assert row(page, "admin").locator("button[data-action=deactivate]").count() == 0
    row(page, "stella2").locator("button[data-action=deactivate]").click()
    page.locator("dialog.confirm[open] button.danger").click()
    page.wait_for_selector("tr[data-username='stella2'][data-active='false']")
    assert is_active(ui_admin, stella["pk"]) is False
    # a deactivated person is not offered to a group
    make_group(ui_admin, title="Rangers")
    tab.go("/admin/groups", wait=".group-card:has(h3:text-is('Rangers')) select[name=user]")
    offered = page.locator(".group-card:has(h3:text-is('Rangers')) select[name=user] option").all_inner_texts()
    assert "stella2" not in offered and offered, offered
    assert ui_admin.patch(f"/api/v2/users/{stella['pk']}", json={"is_active": True}).status_code == 200


@pytest.fixture(scope="module")
def world(ui_server, ui_admin):
    """A deactivated account, a finished command's job, a remote catalogue (this one) and a document."""
    gone = make_user(ui_admin, username="gone")
    assert ui_admin.patch(f"/api/v2/users/{gone['pk']}", json={"is_active": False}).status_code == 200
    r = ui_admin.post("/api/v2/management/commands/ping_mngmt_commands_http/", json={"args": ["--sleep", "0"], "autostart": True})
    assert r.status_code == 201, r.text
    job = r.json()["data"]["id"]
    poll_until(lambda: ui_admin.get(f"/api/v2/management/jobs/{job}/").json()["status"] == "FINISHED")
    with ui_server.client() as c:
        token = c.post("/o/token/", data={"grant_type": "password", "username": "admin", "password": ADMIN_PASSWORD}).json()["access_token"]
    r = ui_admin.post("/api/v2/remotes/", json={"name": "Ourselves", "url": ui_server.url, "token": token})
    assert r.status_code == 201, r.text
    doc = ui_admin.post("/api/v2/documents", files={"doc_file": ("notes.txt", b"notes", "text/plain")},
                        data={"title": "Field notes"}).json()["document"]
    r = ui_admin.post(f"/api/v2/resources/{doc['pk']}/publish", json={"remote": r.json()["remote"]["id"]})
    assert r.status_code in (200, 201, 202), r.text
    status = f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}"
    poll_until(lambda: ui_admin.get(status).json()["status"] in ("finished", "failed"), 60)
    return {"job": job, "doc": doc["pk"]}


def poll_until(check, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "still not so"
        time.sleep(0.1)


@pytest.mark.parametrize("lang", ["fr", "ar"])
def test_the_admin_tabs_in_another_language(tab, world, lang):
    """Each tab in French and in Arabic: its own words come from the catalogue, and none of the
    English ones that were there before is left; nothing sticks out sideways; Arabic is laid out
    right to left."""
    page = tab.page
    tab.sign_in("admin", ADMIN_PASSWORD)
    page.evaluate(f"localStorage.setItem('catalogue.language', '{lang}')")
    page.reload()  # the language is read when the page loads
    english = {
        "/admin/users": ["New user", "Create user", "Deactivated", "Reset password"],
        "/admin/groups": ["New group", "Create group"],
        "/admin/executions": ["Background jobs", "Newest first"],
        f"/admin/commands?job={world['job']}": ["Common tasks", "Back up now", "Backups", "Jobs", "Output", "finished", "Created"],
        "/admin/keys": ["Signing key", "Fingerprint", "Trusted keys"],
        "/admin/remotes": ["New remote catalogue", "Access token", "Change token"],
        f"/document/{world['doc']}": ["Publish to another catalogue", "Published to", "Last published"],
    }
    for address, words in english.items():
        name = address.split("/")[-1].split("?")[0] if address.startswith("/admin") else "document"
        tab.go(address, wait=".tab-body h2" if name != "document" else "section.publish .publications li")
        if name == "commands":
            page.wait_for_selector(".job-detail:not([hidden]) .job-output")
        if name == "remotes":
            page.wait_for_selector("tr[data-remote]")
        page.wait_for_timeout(200)
        assert page.evaluate("document.documentElement.lang") == lang
        assert page.evaluate("document.documentElement.dir") == ("rtl" if lang == "ar" else "ltr")
        text = page.inner_text("main .page .tab-body" if name != "document" else "section.publish")
        left = [w for w in words if w in text]
        assert not left, f"{lang} {name}: English left {left}"
        shot(tab, f"{lang}-{name}")
        assert page.evaluate(WIDER) == [], f"{lang} {name}: sticks out sideways"
