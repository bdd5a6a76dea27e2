"""A dataset's history names OGC API - Features as the route of an edit made through it."""

from __future__ import annotations

from tests.conftest import USER_PASSWORD
from tests.edits.conftest import upload_points


def test_an_ogcapi_edit_is_named_in_the_history(tab, ui_server, alice, tmp_path):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as client:
        points = upload_points(client, tmp_path, 5, name="ogcapi_points", title="Points edited through OGC API")
        name = points["alternate"].partition(":")[2]
        r = client.patch(f"/ogcapi/collections/{name}/items/2", json={"properties": {"label": "changed"}})
        assert r.status_code == 204, r.text
    page = tab.go(f"/dataset/{points['pk']}", wait=".history ol[data-loaded]")
    page.wait_for_selector(".history li.version:has-text('1 feature changed by alice through OGC API – Features')")
    tab.shot("history-ogcapi")
