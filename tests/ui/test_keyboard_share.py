"""Sharing a resource by keyboard alone: a user found by part of their name and a group by its
name, each taken from the suggestions with the arrows and Enter, a level changed, saved, and the
catalogue's permissions checked. No mouse click."""

from __future__ import annotations

import pytest

from tests.conftest import USER_PASSWORD, make_group, make_user
from tests.ogc.conftest import upload_shapefile
from tests.ui.conftest import DATA
from tests.ui.keyboard import focused, sign_in_by_cookie
from tests.ui.keyboard import tab_until as tab_to

FORM = "form[aria-label='Sharing']"
WHO = f"{FORM} input[name=who]"


@pytest.fixture(scope="module")
def cities(ui_server, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        return upload_shapefile(as_alice, DATA / "naturalearth_cities")


def test_share_by_keyboard(tab, ui_server, ui_admin, alice, cities):
    bob = make_user(ui_admin, username="bob", first_name="Bob", last_name="Surveyor")
    surveyors = make_group(ui_admin, title="Field surveyors")
    group_name = surveyors["group"]["name"] if isinstance(surveyors.get("group"), dict) else surveyors["slug"]
    pk = cities["pk"]
    sign_in_by_cookie(tab, "alice", USER_PASSWORD)
    page = tab.go(f"/dataset/{pk}/edit", wait=f"{FORM} select")

    # a user, by part of their name: the suggestions open as one types; the arrow picks, Enter takes
    tab_to(page, WHO)
    page.keyboard.type("Surv")
    page.wait_for_selector(f"{FORM} [role=listbox] [role=option]:text('Bob Surveyor (bob)')")
    assert page.get_attribute(WHO, "aria-expanded") == "true"
    options = page.locator(f"{FORM} [role=option]").all_inner_texts()
    assert options == ["Bob Surveyor (bob)", "Field surveyors (group)"], options
    active = lambda: page.inner_text(f"#{page.get_attribute(WHO, 'aria-activedescendant')}")  # noqa: E731
    assert active() == "Bob Surveyor (bob)"
    page.keyboard.press("ArrowDown")
    assert active() == "Field surveyors (group)"
    page.keyboard.press("ArrowUp")
    assert active() == "Bob Surveyor (bob)"
    page.keyboard.press("Enter")
    bob_level = "select[aria-label='Access for Bob Surveyor']"
    page.wait_for_selector(bob_level)
    # the new row's level has the focus: one arrow down gives Download
    assert focused(page, "e => e.getAttribute('aria-label')") == "Access for Bob Surveyor"
    assert page.input_value(bob_level) == "view"
    page.keyboard.press("ArrowDown")
    assert page.input_value(bob_level) == "download"

    # a group, by its name typed whole and Enter
    tab_to(page, WHO, back=True)
    page.keyboard.type(group_name)
    page.keyboard.press("Enter")
    group_level = "select[aria-label='Access for Field surveyors']"
    page.wait_for_selector(group_level)
    assert page.input_value(group_level) == "view"
    assert page.inner_text(f"{FORM} .actions [role=status]").startswith("Field surveyors added")
    tab.shot("chosen")

    # saved with the form's button
    tab_to(page, f"{FORM} button[type=submit]")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"{FORM} [role=status]:text('Sharing saved.')")
    tab.shot("saved")
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        perms = as_alice.get(f"/api/v2/resources/{pk}/permissions").json()
    users = {u["username"]: u["permissions"] for u in perms["users"]}
    groups = {g["name"]: g["permissions"] for g in perms["groups"] + perms["organizations"]}
    assert users.get("bob") == "download", perms
    assert groups.get(group_name) == "view", perms

    # shown again when the page is opened again (a group with a profile is listed as an organization)
    page = tab.go(f"/dataset/{pk}/edit", wait=group_level)
    assert page.input_value(group_level) == "view"
    assert page.input_value(bob_level) == "download"

    # and bob may now download it
    with ui_server.client(auth=("bob", USER_PASSWORD)) as as_bob:
        assert "download_resourcebase" in as_bob.get(f"/api/v2/resources/{pk}").json()["resource"]["perms"]
    assert bob["username"] == "bob"
