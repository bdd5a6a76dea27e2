"""The rule table (tests/rules/table.py) against a running server, cell by cell.

For every cell: the action, done as that row's user through HTTP, is allowed or refused as the
table says (`test_cell`, `test_thing`); and, on a resource, it is allowed exactly when the
`perms` of the resource's body, read by the same user, shows the permission that governs it
(table.PERM_OF).
A refusal is a clean 401, 403 or 404 (an OGC exception report for WMS and WFS, a set flag left
as it was) that changes nothing; anything else fails the cell. Writes are undone, or done on a
thing made for that cell.

Cells that today's code gets wrong are in KNOWN, each marked xfail(strict) with the reason: the
table is not weakened, the code is to be fixed.
"""

from __future__ import annotations

import pytest

from tests.api.test_uploads import CITIES, shapefile_parts
from tests.conftest import Server, make_group, make_user, unique
from tests.rules import table
from tests.rules.world import World, build, data_uri, finish, owner_request, png

REFUSED = (401, 403, 404)

# (type or "things", row, action) -> why today's code differs from the table (or from its perms)
KNOWN: dict[tuple[str, str, str], str] = {}


def known(reason: str, kinds: tuple[str, ...], rows: tuple[str, ...], actions: tuple[str, ...]) -> None:
    for kind in kinds:
        for row in rows:
            for action in actions:
                if table.TABLES[kind].get((row, action)) is not None:
                    KNOWN[(kind, row, action)] = reason




@pytest.fixture(scope="module")
def world(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("rules") / "catalogue")
    w = build(srv.url, str(srv.data_dir / "catalogue.sqlite3"))
    yield w
    w.close()
    w.admin.close()
    srv.stop()


def refused(r, what: str) -> bool:
    """False for a 2xx answer, True for a clean refusal; anything else is a failure."""
    if 200 <= r.status_code < 300:
        return False
    assert r.status_code in REFUSED, f"{what}: {r.status_code} {r.text[:300]}"
    return True


def ogc_refused(r, what: str) -> bool:
    """As ``refused``, for an OGC service: a layer the caller may not see is unknown (a 400
    exception report), features it may not download a 401 or 403 report."""
    unknown = b"LayerNotDefined" in r.content or b"Unknown layer" in r.content
    if r.status_code == 400 and unknown or r.status_code in (401, 403):
        assert b"ServiceException" in r.content or b"ExceptionReport" in r.content, r.text[:300]
        return True
    assert r.status_code == 200, f"{what}: {r.status_code} {r.text[:300]}"
    return False


# -- the actions: each answers whether the row's user was allowed ---------------------------------

def job_allowed(w: World, r, what: str, created: int = 200) -> bool:
    """An action answered by a job: allowed when accepted and finished."""
    if refused(r, what):
        return False
    assert r.status_code == created, f"{what}: {r.status_code} {r.text}"
    status = finish(w.admin, r.json()["execution_id"])
    assert status["status"] == "finished", f"{what}: accepted, then {status['status']}: {status.get('log')}"
    return True


def admin_view(w: World, pk: int) -> dict:
    r = w.admin.get(f"/api/v2/resources/{pk}")
    assert r.status_code == 200, r.text
    return r.json()["resource"]


def do_view(w, kind, row, c, res):
    return not refused(c.get(f"/api/v2/resources/{res['pk']}"), "view")


def do_list(w, kind, row, c, res):
    r = c.get("/api/v2/resources/", params={"filter{pk.in}": res["pk"], "page_size": 10})
    assert r.status_code == 200, r.text
    return str(res["pk"]) in {str(x["pk"]) for x in r.json()["resources"]}


def do_meta(w, kind, row, c, res):
    before = admin_view(w, res["pk"])["abstract"]
    text = f"Changed by {row} ({unique('n')})"
    allowed = not refused(c.patch(f"/api/v2/resources/{res['pk']}", json={"abstract": text}), "meta")
    after = admin_view(w, res["pk"])["abstract"]
    assert after == (text if allowed else before), (allowed, after)
    return allowed


def do_attrs(w, kind, row, c, res):
    r = c.patch(f"/api/v2/datasets/{res['pk']}/attribute_set", json=[{"attribute": "name", "description": row}])
    return not refused(r, "attrs")


def do_thumb(w, kind, row, c, res):
    r = c.put(f"/api/v2/resources/{res['pk']}/set_thumbnail", json={"file": data_uri(png((20, 90, 160)))})
    return not refused(r, "thumb")


def do_layers(w, kind, row, c, res):
    return not refused(c.patch(f"/api/v2/maps/{res['pk']}", json={"maplayers": []}), "layers")


def spare(w: World, kind: str, row: str) -> int:
    """A resource set up as the table says, made for this cell (all of a type at once)."""
    if ("spare", kind, row) not in w.made:
        rows = table.rows_of(kind)
        w.made.update(zip((("spare", kind, r) for r in rows), w.spares([kind] * len(rows))))
    return w.made[("spare", kind, row)]


def do_del(w, kind, row, c, res):
    pk = spare(w, kind, row)
    allowed = not refused(c.delete(f"/api/v2/resources/{pk}"), "del")
    assert w.admin.get(f"/api/v2/resources/{pk}").status_code == (404 if allowed else 200)
    return allowed


def do_pread(w, kind, row, c, res):
    return not refused(c.get(f"/api/v2/resources/{res['pk']}/permissions"), "pread")


def do_pwrite(w, kind, row, c, res):
    r = c.put(f"/api/v2/resources/{res['pk']}/permissions",
              json={"users": [{"id": w.bystander["pk"], "permissions": "view"}]})
    return job_allowed(w, r, "pwrite")


def do_dl(w, kind, row, c, res):
    path = (f"/datasets/{res['alternate']}/dataset_download" if kind == "dataset"
            else f"/documents/{res['pk']}/download")
    r = c.get(path)
    allowed = not refused(r, "dl")
    assert not allowed or len(r.content) > 100
    return allowed


def current_style(w: World, res: dict) -> tuple[str, bytes]:
    url = w.admin.get(f"/api/v2/datasets/{res['pk']}").json()["dataset"]["default_style"]["sld_url"]
    r = w.admin.get(url)
    assert r.status_code == 200, r.text
    return url, r.content


def do_style(w, kind, row, c, res):
    url, sld = current_style(w, res)
    r = c.put(url, content=sld, headers={"Content-Type": "application/vnd.ogc.sld+xml"})
    return not refused(r, "style")


def do_sldup(w, kind, row, c, res):
    _, sld = current_style(w, res)
    r = c.post("/api/v2/uploads/upload", files={"base_file": ("style.sld", sld, "application/xml")},
               data={"action": "resource_style_upload", "resource_pk": str(res["pk"])})
    return job_allowed(w, r, "sldup", created=201)


def do_data(w, kind, row, c, res):
    r = c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
               data={"action": "replace", "resource_pk": str(res["pk"])})
    return job_allowed(w, r, "data", created=201)


def do_copy(w, kind, row, c, res):
    return job_allowed(w, c.put(f"/api/v2/resources/{res['pk']}/copy"), "copy")


def do_fav(w, kind, row, c, res):
    r = c.post(f"/api/v2/resources/{res['pk']}/favorite")
    if refused(r, "fav"):
        return False
    assert r.status_code == 201, r.text
    assert c.delete(f"/api/v2/resources/{res['pk']}/favorite").status_code == 200
    return True


def flag(name: str):
    def do(w, kind, row, c, res):
        before = admin_view(w, res["pk"])[name]
        r = c.patch(f"/api/v2/resources/{res['pk']}", json={name: not before})
        refused(r, name)  # a flag the caller may not set is left as it is, with or without a 200
        allowed = admin_view(w, res["pk"])[name] != before
        if allowed:
            assert w.admin.patch(f"/api/v2/resources/{res['pk']}", json={name: before}).status_code == 200
        return allowed
    return do


def do_wms(w, kind, row, c, res):
    r = c.get("/geoserver/ows", params={
        "service": "WMS", "version": "1.3.0", "request": "GetMap", "layers": res["alternate"], "styles": "",
        "crs": "EPSG:4326", "bbox": "-90,-180,90,180", "width": "64", "height": "32", "format": "image/png"})
    allowed = not ogc_refused(r, "wms")
    assert not allowed or r.headers["content-type"] == "image/png"
    return allowed


def do_wfs(w, kind, row, c, res):
    r = c.get("/geoserver/ows", params={
        "service": "WFS", "version": "2.0.0", "request": "GetFeature", "typeNames": res["alternate"],
        "count": "1", "outputFormat": "application/json"})
    allowed = not ogc_refused(r, "wfs")
    assert not allowed or len(r.json()["features"]) == 1
    return allowed


def do_csw(w, kind, row, c, res):
    r = c.get("/catalogue/csw", params={"service": "CSW", "version": "2.0.2", "request": "GetRecordById",
                                        "id": res["uuid"], "elementsetname": "brief"})
    if r.status_code == 404:  # a record the caller may not see has no such id
        assert b"No record has this id" in r.content, r.text
        return False
    assert r.status_code == 200, r.text
    assert res["uuid"] in r.text
    return True


def layer_name(res: dict) -> str:
    return res["alternate"].split(":")[-1]


def do_rec(w, kind, row, c, res):
    r = c.get(f"/ogcapi/collections/metadata:main/items/{res['uuid']}")
    allowed = not refused(r, "rec")
    assert not allowed or r.json()["id"] == res["uuid"]
    if not allowed:
        assert set(r.json()) >= {"code", "description"}, r.text
    return allowed


def do_dcat(w, kind, row, c, res):
    r = c.get(f"/dcat/resources/{res['uuid']}")
    allowed = not refused(r, "dcat")
    assert not allowed or res["uuid"] in r.text
    return allowed


def do_oapif(w, kind, row, c, res):
    r = c.get(f"/ogcapi/collections/{layer_name(res)}/items", params={"limit": 1})
    allowed = not refused(r, "oapif")
    assert not allowed or len(r.json()["features"]) == 1
    return allowed


def do_oedit(w, kind, row, c, res):
    path = f"/ogcapi/collections/{layer_name(res)}/items"
    first = w.admin.get(path, params={"limit": 1}).json()["features"][0]
    name, value = next((k, v) for k, v in first["properties"].items() if isinstance(v, str))
    r = c.patch(f"{path}/{first['id']}", json={"properties": {name: value}},
                headers={"Content-Type": "application/merge-patch+json"})
    return not refused(r, "oedit")


def do_tile(w, kind, row, c, res):
    cid = layer_name(res) if kind == "dataset" else f"map-{res['pk']}"
    r = c.get(f"/ogcapi/collections/{cid}/map/tiles/WebMercatorQuad/0/0/0")
    allowed = not refused(r, "tile")
    assert not allowed or r.headers["content-type"] == "image/png"
    return allowed


def do_mvt(w, kind, row, c, res):
    r = c.get(f"/ogcapi/collections/{layer_name(res)}/tiles/WebMercatorQuad/0/0/0")
    allowed = not refused(r, "mvt")
    assert not allowed or r.headers["content-type"].startswith("application/vnd.mapbox-vector-tile")
    return allowed


ACTIONS = {"view": do_view, "list": do_list, "meta": do_meta, "attrs": do_attrs, "thumb": do_thumb,
           "layers": do_layers, "del": do_del, "pread": do_pread, "pwrite": do_pwrite, "dl": do_dl,
           "style": do_style, "sldup": do_sldup, "data": do_data, "copy": do_copy, "fav": do_fav,
           "feat": flag("featured"), "appr": flag("is_approved"), "pub": flag("is_published"),
           "wms": do_wms, "wfs": do_wfs, "csw": do_csw,
           "rec": do_rec, "dcat": do_dcat, "oapif": do_oapif, "oedit": do_oedit, "tile": do_tile, "mvt": do_mvt}
assert set(ACTIONS) == set(table.RESOURCE_ACTIONS)



def outcome(w: World, kind: str, row: str, action: str) -> bool:
    """Whether the row's user may do the action (it is done)."""
    return ACTIONS[action](w, kind, row, w.client(row), w.resources[kind])


def perms(w: World, kind: str, row: str) -> list[str]:
    """The `perms` of the resource's body as the row's user reads it (none when it may not)."""
    if ("perms", kind, row) not in w.made:
        r = w.client(row).get(f"/api/v2/resources/{w.resources[kind]['pk']}")
        w.made[("perms", kind, row)] = [] if refused(r, "view") else r.json()["resource"]["perms"]
    return w.made[("perms", kind, row)]


def shown(w: World, kind: str, row: str, action: str) -> bool:
    """Whether `perms` shows the action allowed."""
    held = set(perms(w, kind, row))
    names = table.PERM_OF[action]
    if names is not None:
        return bool(held & set(names))
    needed = {"view_resourcebase"} | ({"download_resourcebase"} if action == "copy" and kind in ("dataset", "document")
                                      else set())
    return row != "anonymous" and needed <= held


def cases(cells, key) -> list:
    out = []
    for cell in cells:
        k = key(cell)
        reason = KNOWN.get(k)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(*cell, id="-".join(k).replace(" ", "_"), marks=marks))
    return out


@pytest.mark.parametrize("kind,row,action,allowed", cases(table.resource_cells(), lambda c: c[:3]))
def test_cell(world, kind, row, action, allowed):
    did = outcome(world, kind, row, action)
    what = f"{table.RESOURCE_ACTIONS[action]} on the {kind}"
    assert did == allowed, f"{row} {'may' if did else 'may not'} {what}; the table says otherwise"
    assert did == shown(world, kind, row, action), \
        f"{row}: {what} is {'allowed' if did else 'refused'}, yet perms says {perms(world, kind, row)}"


# -- executions, uploads, groups, users ---------------------------------------------------------

def victim(w: World, action: str, row: str):
    """What a destructive cell acts on, made for it: a finished request of the owner's, a group
    with the member and the manager in it, a user without resources."""
    key = ("victim", action, row)
    if key not in w.made:
        if action == "exec_delete":
            w.made[key] = owner_request(w)
        elif action == "group_delete":
            g = make_group(w.admin, title=unique("Spare group "))
            for who, role in (("group member", "member"), ("group manager", "manager")):
                r = w.admin.post(f"/api/v2/groups/{g['pk']}/members", json={"users": [w.users[who]["pk"]], "role": role})
                assert r.status_code == 200, r.text
            w.made[key] = g["pk"]
        else:
            w.made[key] = make_user(w.admin)["pk"]
    return w.made[key]


def thing(w: World, row: str, action: str) -> bool:
    c = w.client(row)
    if action == "exec_read":
        return not refused(c.get(f"/api/v2/executionrequest/{w.exec_id}"), action)
    if action == "exec_status":
        return not refused(c.get(f"/api/v2/resource-service/execution-status/{w.exec_id}"), action)
    if action == "exec_delete":
        exec_id = victim(w, action, row)
        allowed = not refused(c.delete(f"/api/v2/executionrequest/{exec_id}"), action)
        assert w.admin.get(f"/api/v2/executionrequest/{exec_id}").status_code == (404 if allowed else 200)
        return allowed
    if action == "upload_list":
        r = c.get("/api/v2/uploads/", params={"page_size": 100})
        return not refused(r, action) and w.upload_id in {u["id"] for u in r.json()["uploads"]}
    if action == "upload_read":
        return not refused(c.get(f"/api/v2/uploads/{w.upload_id}"), action)
    if action == "group_change":
        return not refused(c.patch(f"/api/v2/groups/{w.group['pk']}", json={"description": f"by {row}"}), action)
    if action == "group_add":
        r = c.post(f"/api/v2/groups/{w.group['pk']}/members", json={"users": [w.bystander["pk"]], "role": "member"})
        if refused(r, action):
            return False
        r = w.admin.request("DELETE", f"/api/v2/groups/{w.group['pk']}/members", json={"users": [w.bystander["pk"]]})
        assert r.status_code == 200, r.text
        return True
    if action == "group_delete":
        pk = victim(w, action, row)
        allowed = not refused(c.delete(f"/api/v2/groups/{pk}"), action)
        assert w.admin.get(f"/api/v2/groups/{pk}").status_code == (404 if allowed else 200)
        return allowed
    if action == "user_change":
        return not refused(c.patch(f"/api/v2/users/{victim(w, action, row)}", json={"first_name": row[:20]}), action)
    if action == "user_delete":
        pk = victim(w, action, row)
        allowed = not refused(c.delete(f"/api/v2/users/{pk}"), action)
        assert w.admin.get(f"/api/v2/users/{pk}").status_code == (404 if allowed else 200)
        return allowed
    raise AssertionError(action)


@pytest.mark.parametrize("row,action,allowed", cases(table.thing_cells(), lambda c: ("things", *c[:2])))
def test_thing(world, row, action, allowed):
    assert thing(world, row, action) == allowed, \
        f"{row} {'may' if not allowed else 'may not'} {table.THINGS_ACTIONS[action]}"
