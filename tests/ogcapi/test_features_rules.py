"""OGC API - Features against the rule table (tests/rules/table.py), row by row, on the table's
own world (a private dataset in a group, each row's user holding what the table says): the
collection is listed and readable exactly when the table's ``view`` cell allows it, and its
features (items, one feature, the ``items`` link) exactly when the ``wfs`` cell does (the right
to download, as WFS GetFeature). Refusals are 404 for what the row may not view, 401 (anonymous)
or 403 for features it may not download."""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.rules import table
from tests.rules.world import build


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("features-rules") / "catalogue")
    w = build(srv.url, str(srv.data_dir / "catalogue.sqlite3"))
    yield w
    w.close()
    w.admin.close()
    srv.stop()


@pytest.mark.parametrize("row", table.rows_of("dataset"))
def test_a_row_sees_the_collection_and_its_features_as_the_table_says(world, row):
    dataset = world.resources["dataset"]
    cid = dataset["alternate"].split(":", 1)[1]
    view, wfs = table.TABLES["dataset"][(row, "view")], table.TABLES["dataset"][(row, "wfs")]
    c = world.client(row)
    listed = {d["id"] for d in c.get("/ogcapi/collections").json()["collections"]}
    one = c.get(f"/ogcapi/collections/{cid}")
    items = c.get(f"/ogcapi/collections/{cid}/items", params={"limit": 1})
    feature = c.get(f"/ogcapi/collections/{cid}/items/1")
    assert (cid in listed) == view, f"{row}: listed {cid in listed}, the table's view says {view}"
    assert one.status_code == (200 if view else 404), one.text
    if view:
        assert any(lk["rel"] == "items" for lk in one.json()["links"]) == wfs
    refusal = 404 if not view else 401 if row == "anonymous" else 403
    assert items.status_code == (200 if wfs else refusal), items.text
    assert feature.status_code == (200 if wfs else refusal), feature.text
    if wfs:
        assert items.json()["numberReturned"] == 1 and feature.json()["id"] == 1
    else:
        assert set(items.json()) == {"code", "description"}
