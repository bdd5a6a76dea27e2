"""API tokens and remote catalogues in the browser: a user makes a token on My tokens (shown once,
copied, used by a program, its last use shown, revoked, then refused); an administrator adding a
remote catalogue with a made-up token, or an address where nothing answers, is told plainly in
the form; a publish refused by the remote says what to do, and after a new token it works.

The catalogue publishes to itself here (its own address as the remote): a real GeoNode API v2
that answers, checks tokens and takes uploads, as a second server would."""

from __future__ import annotations

import time

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD

TOKENS_PAGE = "section.page.tokens[data-loaded]"
NEW_REMOTE = "form[aria-label='New remote catalogue']"


def test_my_tokens_make_see_once_use_and_revoke(tab, ui_server, alice):
    page = tab.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=ui_server.url)
    tab.sign_in(alice["username"], USER_PASSWORD)
    tab.go("/me", wait="h1:text('My things')")
    page.click("main a:text-is('My tokens')")
    page.wait_for_selector(TOKENS_PAGE)
    assert page.locator("main").inner_text().count("You have no tokens yet.") == 1
    assert "Authorization: Bearer" in page.inner_text("main") and "QGIS" in page.inner_text("main")

    # made with a label: shown once, focused, announced, with a Copy button that says it copied
    page.fill("input[name=label]", "QGIS on my laptop")
    page.get_by_label("What is it for?").press("Enter")
    page.wait_for_selector("section.new-token")
    assert tab.until("document.activeElement && document.activeElement.id === 'new-token'")
    secret = page.input_value("#new-token")
    assert len(secret) >= 40
    assert "you will not see it again" in page.inner_text("section.new-token")
    assert "Copy it now" in page.inner_text("[role=status][aria-live=polite]")
    page.click("section.new-token button:text('Copy')")
    page.wait_for_selector("section.new-token button:text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == secret
    row = page.locator("tr[data-token]")
    assert row.count() == 1
    assert row.locator("td").nth(0).inner_text() == "QGIS on my laptop"
    assert row.locator("td.last-used").inner_text() == "Never" and row.locator("td.expires").inner_text() == "Never"
    tab.shot("made")

    # a program uses it
    with ui_server.client(token=secret) as program:
        assert program.get("/api/v2/tokens/").status_code == 200
        deadline = time.monotonic() + 10
        while program.get("/api/v2/tokens/").json()["tokens"][0]["last_used"] is None:
            assert time.monotonic() < deadline
            time.sleep(0.1)

    # seen again: the token itself is not shown any more, its last use is
    page.reload()
    page.wait_for_selector(TOKENS_PAGE)
    assert page.locator("#new-token").count() == 0 and secret not in page.content()
    assert page.locator("tr[data-token] td.last-used").inner_text() != "Never"
    tab.shot("used")

    # revoked, after a confirmation: the program is refused
    page.click("button[aria-label='Revoke QGIS on my laptop']")
    page.wait_for_selector("dialog.confirm[open]")
    assert "Programs that use it will be refused" in page.inner_text("dialog.confirm")
    page.click("dialog.confirm button:text('Revoke')")
    page.wait_for_selector("main p:text('You have no tokens yet.')")
    assert tab.until("document.activeElement && document.activeElement.textContent.startsWith('Your tokens (0)')")
    with ui_server.client(token=secret) as program:
        assert program.get("/api/v2/tokens/").status_code == 401


def test_a_bad_label_is_said_in_the_form(tab, alice):
    tab.sign_in(alice["username"], USER_PASSWORD)
    page = tab.go("/me/tokens", wait=TOKENS_PAGE)
    page.fill("input[name=label]", "   ")
    page.click("form[aria-label='New token'] button[type=submit]")
    page.wait_for_selector("main p.error[role=alert]:has-text('label: say what the token is for')")
    tab.allow(r"status of 400 .*/api/v2/tokens/")
    assert page.locator("section.new-token").count() == 0


def admin_token(ui_server) -> str:
    """A token of the admin, as a program gets one (/o/token/)."""
    with ui_server.client() as c:
        r = c.post("/o/token/", data={"grant_type": "password", "username": "admin", "password": ADMIN_PASSWORD})
    assert r.status_code == 200, r.text
    return r.json()["access_token"]


def add_remote(page, name: str, url: str, token: str) -> None:
    page.fill(f"{NEW_REMOTE} input[name=name]", name)
    page.fill(f"{NEW_REMOTE} input[name=url]", url)
    page.fill(f"{NEW_REMOTE} input[name=token]", token)
    page.click(f"{NEW_REMOTE} button[type=submit]")


def test_a_made_up_token_for_a_remote_is_refused_plainly(tab, ui_server, ui_admin):
    page = tab.page
    tab.allow(r"status of 400 .*/api/v2/remotes/")
    tab.sign_in("admin", ADMIN_PASSWORD)
    tab.go("/admin/remotes", wait=NEW_REMOTE)
    add_remote(page, "Self bogus", ui_server.url, "made-up-token")
    alert = page.wait_for_selector(f"{NEW_REMOTE} [role=alert]:has-text('refused this token')", timeout=30_000)
    assert "Make a new token there" in alert.inner_text() and "My tokens" in alert.inner_text()
    tab.shot("bogus-token")
    add_remote(page, "Nowhere", "http://127.0.0.1:9", "made-up-token")
    page.wait_for_selector(f"{NEW_REMOTE} [role=alert]:has-text('Nothing answers at http://127.0.0.1:9')", timeout=30_000)
    assert ui_admin.get("/api/v2/remotes/").json()["remotes"] == []  # nothing was saved

    # with a real token it is added; a made-up one as its new token is refused in the dialog
    add_remote(page, "Self", ui_server.url, admin_token(ui_server))
    page.wait_for_selector("tr[data-remote]:has-text('Self')")
    page.click("button[aria-label='Change the token of Self']")
    page.fill("dialog form input[name=token]", "still-made-up")
    page.click("dialog form button:text('Check and save')")
    page.wait_for_selector("dialog [role=alert]:has-text('refused this token')", timeout=30_000)
    tab.shot("change-token-refused")
    try:
        page.click("dialog button:text('Cancel')")
        page.wait_for_selector("dialog", state="detached")  # the dialog closes (not at once under load)
    finally:
        for remote in ui_admin.get("/api/v2/remotes/").json()["remotes"]:
            assert ui_admin.delete(f"/api/v2/remotes/{remote['id']}").status_code == 204


def test_a_publish_refused_by_the_remote_says_what_to_do(tab, ui_server, ui_admin):
    page = tab.page
    doc = ui_admin.post("/api/v2/documents", files={"doc_file": ("survey.txt", b"field survey", "text/plain")},
                        data={"title": "survey_report"}).json()["document"]
    token = admin_token(ui_server)
    r = ui_admin.post("/api/v2/remotes/", json={"name": "Self", "url": ui_server.url, "token": token})
    assert r.status_code == 201, r.text
    assert ui_admin.post("/o/revoke_token/", data={"token": token}).status_code == 200  # revoked on the remote

    tab.sign_in("admin", ADMIN_PASSWORD)
    tab.go(f"/document/{doc['pk']}", wait="section.publish")
    page.select_option("select[name=remote]", label="Self")
    page.click("form.publish-form button[type=submit]")
    failure = page.wait_for_selector(".publish-status [role=alert]", timeout=60_000)
    text = failure.inner_text()
    assert text.startswith("Self refused the token this catalogue sends"), text
    assert "Make a new token on Self" in text and "failed at step" not in text and "answered 401" not in text, text
    link = page.locator(".publish-status a:text('Renew the token of Self in Administration › Remote catalogues')")
    assert link.get_attribute("href") == "#/admin/remotes"
    item = page.wait_for_selector(".publications li:has-text('Self')")
    assert item.query_selector(".badge").inner_text().lower() == "not published"
    assert "unfinished" not in item.inner_text().lower() and "failed at step" not in item.inner_text()
    tab.shot("publish-refused")

    # renewed where the message says, then published
    link.click()
    page.wait_for_selector("tr[data-remote]:has-text('Self')")
    page.click("button[aria-label='Change the token of Self']")
    page.fill("dialog form input[name=token]", admin_token(ui_server))
    page.click("dialog form button:text('Check and save')")
    page.wait_for_selector("#toast:has-text('Self: new token saved.')", timeout=30_000)
    tab.go(f"/document/{doc['pk']}", wait="section.publish")
    page.select_option("select[name=remote]", label="Self")
    page.click("form.publish-form button[type=submit]")
    page.wait_for_selector(".publish-status .ok", timeout=60_000)
    page.wait_for_selector(".publications li:has-text('Self') .badge:text-matches('published', 'i')")
    assert page.locator(".publications li .badge").first.inner_text().lower() == "published"
    tab.shot("published")
