"""Issue 31's story, end to end, as one test: an office catalogue and a field laptop, two
`catalogue serve` processes with data folders of their own, and nothing between them but
package files.

1. Office: people, a group, real data (Natural Earth countries as a Shapefile, points as a
   GeoPackage, the cities as a dataset the field user may view but not download, a world
   GeoTIFF, three documents), keywords, a category, regions, a map with layers, permissions for
   users and a group. The field user takes a search with a drawn area offline, clipped, over
   HTTP as the web UI does; the same resources are also exported whole with
   `catalogue package export`.
2. Field: `catalogue package import FILE` into a fresh catalogue: same uuids, owners and groups
   by name (an owner unknown there: the importer, and said so), the dataset without download
   marked metadata only, every page and service working. The whole package goes over HTTP into
   a second fresh catalogue (a dry run first, which writes nothing).
3. Field work: a new dataset uploaded, features edited (the JSON edits endpoint and WFS-T),
   metadata edited, two documents deleted.
4. The field exports what changed since the package it got; the office meanwhile changed two
   of the same resources. The office imports it: new resources appear, field-only changes are
   applied with their history, a deletion of an unchanged resource is applied and one of a
   resource changed at the office is kept and listed, the resource changed on both sides is a
   conflict (office copy kept, the field's copy a version aside). The same package imported
   again changes nothing. The conflict is resolved through the API.

Each step prints its number. A check that later steps do not depend on (``expect``) is
remembered when it fails and the story goes on; the test then fails at its end naming each such
check with its step, so that one run shows every step that does not work yet.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.api.test_uploads import COUNTRIES, CITIES, DATA, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, Server, make_group, make_user, poll, unique
from tests.edits.conftest import points_gpkg

AREA = (-12.0, 34.0, 32.0, 62.0)  # the area drawn on the search page: western and central Europe
KEYWORD = "fieldwork"
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
NOTES = b"Old field notes: the river gauge at site 4 reads 2.35 m\n"
CONTACTS = b"name,phone\nAna,+41 00 000 00 00\n"
GETMAP = {"service": "WMS", "version": "1.3.0", "request": "GetMap", "styles": "", "crs": "CRS:84",
          "width": "256", "height": "256", "format": "image/png", "transparent": "true"}
WFS = "http://www.opengis.net/wfs"
OGC = "http://www.opengis.net/ogc"


FAILED: list[str] = []  # the checks that failed, each with its step; the test fails at its end if any did
STEP = [""]


def step(n: str, what: str) -> None:
    STEP[0] = n
    print(f"\n[story] step {n}: {what}", flush=True)


def expect(condition: bool, detail=None) -> bool:
    """A check the steps after it do not depend on: a failure is printed and remembered with its
    step and line, and the story goes on, so that one run tells every step that does not work."""
    if condition:
        return True
    caller = inspect.stack()[1]
    where = f"step {STEP[0]}, line {caller.lineno}: {(caller.code_context or [''])[0].strip()}"
    if detail is not None:
        where += f"  -- {str(detail)[:600]}"
    print(f"[story] FAILED {where}", flush=True)
    FAILED.append(where)
    return False


# -- HTTP helpers -------------------------------------------------------------------------------
def ok(r: httpx.Response, status: int = 200) -> dict:
    assert r.status_code == status, f"{r.request.method} {r.request.url}: {r.status_code} {r.text[:800]}"
    return r.json()


def done(client: httpx.Client, receipt: dict, timeout: float = 180) -> dict:
    """The execution a receipt names, once finished; fails with its message otherwise."""
    url = receipt.get("status_url") or f"/api/v2/resource-service/execution-status/{receipt['execution_id']}"
    body = poll(client, url, timeout=timeout)
    assert body["status"] == "finished", body
    return body


def upload_dataset(client: httpx.Client, files: dict, title: str, permissions: dict | None = None) -> dict:
    data = {"dataset_title": title}
    if permissions is not None:
        data["permissions"] = json.dumps(permissions)
    status = done(client, ok(client.post("/api/v2/uploads/upload", files=files, data=data), 201))
    pk = status["output_params"]["resources"][0]["id"]
    return ok(client.get(f"/api/v2/datasets/{pk}"))["dataset"]


def upload_document(client: httpx.Client, name: str, content: bytes, title: str) -> dict:
    return ok(client.post("/api/v2/documents", files={"doc_file": (name, content, "application/octet-stream")},
                          data={"title": title}), 201)["document"]


def set_permissions(client: httpx.Client, pk: int, spec: dict) -> None:
    done(client, ok(client.put(f"/api/v2/resources/{pk}/permissions", json=spec)))


def permissions(client: httpx.Client, pk: int) -> dict:
    """{"users": {username: level}, "organizations": {group name: level}}."""
    body = ok(client.get(f"/api/v2/resources/{pk}/permissions"))
    return {"users": {u["username"]: u["permissions"] for u in body["users"]},
            "organizations": {g["name"]: g["permissions"] for g in body["organizations"]}}


def by_uuid(client: httpx.Client) -> dict[str, dict]:
    """Every resource the client sees, by uuid."""
    out, page = {}, 1
    while True:
        body = ok(client.get("/api/v2/resources/", params={"page_size": 100, "page": page}))
        out.update({r["uuid"]: r for r in body["resources"]})
        if not body.get("links", {}).get("next"):
            return out
        page += 1


def features(client: httpx.Client, alternate: str, **params) -> dict[int, dict]:
    r = client.get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0", "request": "GetFeature",
                                             "typeNames": alternate, "outputFormat": "application/json", **params})
    assert r.status_code == 200 and "ExceptionReport" not in r.text[:300], r.text[:500]
    return {int(f["id"].rsplit(".", 1)[1]): f for f in r.json()["features"]}


def get_map(client: httpx.Client, alternate: str, bbox=AREA) -> bytes:
    r = client.get("/geoserver/ows", params={**GETMAP, "layers": alternate, "bbox": ",".join(map(str, bbox))})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png", (alternate, r.status_code, r.text[:300])
    return r.content


def drawn(png: bytes) -> int:
    """How many pixels of a map are not transparent."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGBA")
    return sum(image.getchannel("A").histogram()[1:])


def versions(client: httpx.Client, pk: int) -> list[dict]:
    return ok(client.get(f"/api/v2/resources/{pk}/versions", params={"page_size": 100}))["versions"]


def wfs_update(alternate: str, fid: int, field: str, value: str) -> bytes:
    """A WFS-T 1.1.0 Update of one attribute of one feature, as QGIS sends it."""
    workspace, name = alternate.split(":")
    return (f'<Transaction xmlns="{WFS}" xmlns:{workspace}="urn:catalogue:workspace:{workspace}"'
            f' xmlns:gml="http://www.opengis.net/gml" service="WFS" version="1.1.0"><Update xmlns="{WFS}"'
            f' typeName="{alternate}"><Property><Name>{workspace}:{field}</Name><Value>{value}</Value></Property>'
            f'<Filter xmlns="{OGC}"><FeatureId fid="{name}.{fid}"/></Filter></Update></Transaction>').encode()


# -- packages -----------------------------------------------------------------------------------
def cli(server: Server, *args: str) -> subprocess.CompletedProcess:
    """`catalogue ...` on the server's data folder, as a person at that machine runs it."""
    return subprocess.run([sys.executable, "-m", "catalogue_app", *args, "--data-dir", str(server.data_dir)],
                          env=server.env, capture_output=True, text=True, timeout=600)


def export_over_http(client: httpx.Client, body: dict, target: Path) -> tuple[dict, Path]:
    """An export as the web UI starts it: the job, then the file downloaded."""
    status = done(client, ok(client.post("/api/v2/packages/exports", json=body), 201))
    out = status["output_params"]
    assert out["download_url"] == f"/api/v2/packages/{out['package_id']}/download"
    r = client.get(out["download_url"])
    assert r.status_code == 200, r.text[:500]
    target.write_bytes(r.content)
    assert out["size"] == len(r.content)
    return out, target


def import_over_http(client: httpx.Client, path: Path, dry_run: bool = False) -> dict:
    r = client.post("/api/v2/packages/imports", files={"file": (path.name, path.read_bytes(), "application/zip")},
                    data={"dry_run": "true" if dry_run else "false"})
    return done(client, ok(r, 201))["output_params"]["report"]


def report_of(client: httpx.Client, package_id: str) -> dict:
    """The report of an import this catalogue made of that package, as its packages API gives it."""
    return ok(client.get(f"/api/v2/packages/{package_id}"))["package"]["report"]


def brief(report: dict) -> dict:
    """A report's outcomes, each a list of (title, message): what a failed check shows."""
    return {k: [(i.get("title"), i.get("message")) for i in v] for k, v in report.items()
            if isinstance(v, list) and v and k != "unchanged"}


def uuids(items: list[dict]) -> set[str]:
    return {item["uuid"] for item in items}


def manifest_of(path: Path) -> dict:
    """What a person opening the file without this software sees: the manifest, every member
    listed with its SHA-256 and matching it."""
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        assert (manifest["format"], manifest["format_version"]) == ("catalogue-package", 1)
        names = set(z.namelist()) - {"manifest.json", "manifest.sig"}
        assert names == set(manifest["members"])
        for name in names:
            assert hashlib.sha256(z.read(name)).hexdigest() == manifest["members"][name]["sha256"], name
    return manifest


def entry(manifest: dict, uuid: str) -> dict:
    return next(r for r in manifest["resources"] if r["uuid"] == uuid)


# -- the story ----------------------------------------------------------------------------------
@pytest.fixture
def places(tmp_path):
    started: list[Server] = []

    def start(name: str) -> Server:
        (tmp_path / name).mkdir()
        started.append(Server(tmp_path / name / "data"))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def test_take_an_area_into_the_field_and_bring_the_changes_back(tmp_path, places):
    import shapely

    FAILED.clear()
    office, field = places("office"), places("field")
    admin = office.client(auth=("admin", ADMIN_PASSWORD))

    # -- 1. the office --------------------------------------------------------------------------
    step("1a", "office: people, a group, data, documents, a map, permissions")
    owner, surveyor, assistant, absent = (make_user(admin, username=unique(n)) for n in
                                          ("owner", "surveyor", "assistant", "absent"))
    team = make_group(admin, title=unique("Field team "))
    team_slug, team_pk = team["slug"], team["group"]["pk"]
    ok(admin.post(f"/api/v2/groups/{team['pk']}/members", json={"users": [surveyor["pk"]], "role": "member"}))
    o = office.client(auth=(owner["username"], owner["password"]))
    s = office.client(auth=(surveyor["username"], surveyor["password"]))
    private = {"users": {"AnonymousUser": []}}
    countries = upload_dataset(o, shapefile_parts(COUNTRIES), "Countries")
    points_file = points_gpkg(tmp_path / "src", 20, "points")
    points = upload_dataset(o, {"base_file": (points_file.name, points_file.read_bytes(), "application/geopackage+sqlite3")},
                            "Gauge points", private)
    cities = upload_dataset(o, shapefile_parts(CITIES), "Protected sites", private)
    world = upload_dataset(o, {"base_file": ("world.byte.tif", (DATA / "world.byte.tif").read_bytes(), "image/tiff")},
                           "World relief")
    protocol = upload_document(o, "protocol.pdf", PDF, "Survey protocol")
    notes = upload_document(o, "notes.txt", NOTES, "Old field notes")
    contacts = upload_document(o, "contacts.csv", CONTACTS, "Contact sheet")
    layer = lambda d, i: {"name": d["alternate"], "order": i, "visibility": True, "opacity": 1,  # noqa: E731
                          "current_style": None, "extra_params": {"msId": f"{d['alternate']}__{i}"}}
    the_map = ok(o.post("/api/v2/maps/", json={"title": "Field map", "maplayers": [
        layer(countries, 0), layer(world, 1), layer(points, 2)]}), 201)["map"]
    resources = {"countries": countries, "points": points, "cities": cities, "world": world, "protocol": protocol,
                 "notes": notes, "contacts": contacts, "map": the_map}
    for name, res in resources.items():
        ok(o.patch(f"/api/v2/resources/{res['pk']}", json={
            "keywords": [KEYWORD, name], "category": {"identifier": "environment"}, "regions": ["FRA", "CHE"],
            # documents and the map get an extent in the area, so that the drawn area finds them
            **({} if name in ("countries", "points", "cities", "world") else {"extent": {
                "coords": [-5.0, 42.0, 10.0, 51.0], "srid": "EPSG:4326"}})}))
    # permissions: the team edits everything but the cities, and may delete the notes and the
    # contact sheet; the gauge points are shared with
    # the assistant (who has an account in the field too) and someone who has none there; the
    # surveyor may view the cities but not download them
    for name in ("countries", "world", "protocol", "map"):
        set_permissions(o, resources[name]["pk"], {"organizations": [{"id": team_pk, "permissions": "edit"}]})
    for name in ("notes", "contacts"):  # the team may delete these (deleting needs "manage")
        set_permissions(o, resources[name]["pk"], {"organizations": [{"id": team_pk, "permissions": "manage"}]})
    set_permissions(o, points["pk"], {"users": [{"id": surveyor["pk"], "permissions": "edit"},
                                                {"id": assistant["pk"], "permissions": "download"},
                                                {"id": absent["pk"], "permissions": "view"}],
                                      "organizations": [{"id": team_pk, "permissions": "view"}]})
    set_permissions(o, cities["pk"], {"users": [{"id": surveyor["pk"], "permissions": "view"}]})
    seen = by_uuid(s)
    assert {r["uuid"] for r in resources.values()} <= set(seen)
    assert "download_resourcebase" not in seen[cities["uuid"]]["perms"]
    office_perms = permissions(admin, points["pk"])

    step("1b", "office: the surveyor takes the search (keyword, drawn area) offline, clipped, over HTTP")
    r = s.get("/api/v2/packages/estimate", params={"keywords": KEYWORD, "bbox": ",".join(map(str, AREA)),
                                                    "clip": "true"})
    estimate = ok(r)
    assert estimate["resources"] == len(resources) and estimate["bytes"] > 0
    out, clipped = export_over_http(s, {"keywords": [KEYWORD], "bbox": list(AREA), "clip": True}, tmp_path / "area.zip")
    manifest = manifest_of(clipped)
    p1 = manifest["id"]
    assert out["package_id"] == p1
    assert {r["uuid"] for r in manifest["resources"]} == {r["uuid"] for r in resources.values()}
    assert manifest["made_by"] == surveyor["username"] and manifest["base"] is None
    assert manifest["cut"]["clip"] is True and manifest["cut"]["bbox"] == list(AREA)
    assert entry(manifest, countries["uuid"])["data"] == "clipped"
    assert entry(manifest, cities["uuid"])["data"] == "metadata_only"
    assert cities["uuid"] in {x["uuid"] for x in manifest["left_out"]}
    types = [r["resource_type"] for r in manifest["resources"]]
    assert types.index("map") > max(i for i, t in enumerate(types) if t == "dataset")  # datasets first
    with zipfile.ZipFile(clipped) as z:  # the clipped countries: a GeoPackage QGIS opens, only the area's
        [gpkg] = [n for n in z.namelist() if n.startswith(f"resources/{countries['uuid']}/data/") and n.endswith(".gpkg")]
        (tmp_path / "clipped.gpkg").write_bytes(z.read(gpkg))
        assert f"resources/{countries['uuid']}/iso19139.xml" in z.namelist()
    whole = names(COUNTRIES / "naturalearth_lowres.shp")
    inside = {name for name, geometry in whole.items() if shapely.intersects(geometry, shapely.box(*AREA))}
    assert set(names(tmp_path / "clipped.gpkg")) == inside
    assert len(inside) < len(whole)

    step("1c", "office: the same resources exported whole with `catalogue package export`")
    ids = ",".join(str(r["pk"]) for r in resources.values())
    done_cli = cli(office, "package", "export", "--ids", ids, "--user", surveyor["username"],
                   "-o", str(tmp_path / "whole.zip"))
    assert done_cli.returncode == 0, done_cli.stdout + done_cli.stderr
    whole_manifest = manifest_of(tmp_path / "whole.zip")
    assert entry(whole_manifest, countries["uuid"])["data"] == "whole"
    assert entry(whole_manifest, cities["uuid"])["data"] == "metadata_only"

    # -- 2. the field ---------------------------------------------------------------------------
    step("2a", "field: a fresh catalogue with the surveyor's and the assistant's accounts and the team")
    fadmin = field.client(auth=("admin", ADMIN_PASSWORD))
    for person in (surveyor, assistant):
        make_user(fadmin, username=person["username"], password=person["password"])
    make_group(fadmin, title=team["title"], slug=team_slug)
    f = field.client(auth=(surveyor["username"], surveyor["password"]))

    step("2b", "field: `catalogue package import FILE` while the field server runs")
    done_cli = cli(field, "package", "import", str(clipped), "--user", surveyor["username"])
    assert done_cli.returncode == 0, done_cli.stdout + done_cli.stderr
    report = report_of(f, p1)
    assert uuids(report["created"]) == {r["uuid"] for r in resources.values()}
    assert not (report["failed"] or report["conflicts"] or report["refused"])
    notes_text = " ".join(report["notes"])
    assert owner["username"] in notes_text and absent["username"] in notes_text  # unknown names, said so

    step("2c", "field: same uuids, owners and groups by name, the metadata-only dataset marked")
    here = by_uuid(f)
    assert {r["uuid"] for r in resources.values()} <= set(here)
    fr = {name: here[res["uuid"]] for name, res in resources.items()}
    for name, res in fr.items():
        expect(res["owner"]["username"] == surveyor["username"], name)  # the owner is unknown here: the importer
        expect(res["title"] == resources[name]["title"] if name != "map" else res["title"] == "Field map")
        expect({k["name"] for k in res["keywords"]} >= {KEYWORD, name}, name)
        expect(res["category"]["identifier"] == "environment", name)
        expect({g["code"] for g in res["regions"]} >= {"FRA", "CHE"}, name)
    field_perms = permissions(f, fr["points"]["pk"])
    expect(field_perms["users"].get(assistant["username"]) == office_perms["users"][assistant["username"]])
    expect(absent["username"] not in field_perms["users"])
    expect(field_perms["organizations"].get(team_slug) == office_perms["organizations"][team_slug])
    fcities = ok(f.get(f"/api/v2/datasets/{fr['cities']['pk']}"))["dataset"]
    expect(fcities["metadata_only"] is True, {k: fcities.get(k) for k in ("metadata_only", "subtype", "sourcetype")})
    r = f.get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0", "request": "GetFeature",
                                        "typeNames": fcities["alternate"], "outputFormat": "application/json"})
    expect(r.status_code < 500, r.text[:300])  # no data here: a clear answer, not a server error

    step("2d", "field: every page and service of the resources works")
    expect(f.get("/catalogue/").status_code == 200)
    for name, res in fr.items():
        detail = ok(f.get(f"/api/v2/resources/{res['pk']}", params={"include[]": "links"}))["resource"]
        expect(detail["uuid"] == resources[name]["uuid"])
        links = [link for link in detail.get("links") or [] if link["url"].startswith(field.url)]
        if name == "cities":  # metadata only: no address that offers data it does not have
            offered = [link["url"] for link in links if link["link_type"] == "data" or "GetMap" in link["url"]
                       or link["link_type"].startswith("OGC:")]
            expect(not offered, f"cities, metadata only, offers {offered}")
            continue
        for link in links:  # its page, metadata documents, services (their capabilities), downloads
            kind = link["link_type"]
            params = {"service": kind[4:], "request": "GetCapabilities"} if kind.startswith("OGC:") else None
            r = f.get(link["url"], params=params)
            expect(r.status_code == 200, f"{name}: {kind} {link['url']}: {r.status_code} {r.text[:200]}")
    fcountries = ok(f.get(f"/api/v2/datasets/{fr['countries']['pk']}"))["dataset"]
    fpoints = ok(f.get(f"/api/v2/datasets/{fr['points']['pk']}"))["dataset"]
    fworld = ok(f.get(f"/api/v2/datasets/{fr['world']['pk']}"))["dataset"]
    got = features(f, fcountries["alternate"])
    expect({x["properties"]["name"] for x in got.values()} == inside)
    office_fids = {x["properties"]["name"]: fid for fid, x in features(o, countries["alternate"]).items()}
    expect(all(office_fids[x["properties"]["name"]] == fid for fid, x in got.items()))  # the office's ids kept
    expect(len(features(f, fpoints["alternate"])) == 20)
    for d in (fcountries, fpoints, fworld):
        expect(drawn(get_map(f, d["alternate"])) > 0, d["alternate"])
    x0, y0, x1, y1 = fworld["ll_bbox_polygon"]["coordinates"][0][0] + fworld["ll_bbox_polygon"]["coordinates"][0][2]
    expect(AREA[0] - 1 <= min(x0, x1) and max(x0, x1) <= AREA[2] + 1, fworld["ll_bbox_polygon"])  # cut to the area
    for name, content in (("protocol", PDF), ("notes", NOTES), ("contacts", CONTACTS)):
        r = f.get(f"/documents/{fr[name]['pk']}/download")
        expect(r.status_code == 200 and r.content == content, name)
    fmap = ok(f.get(f"/api/v2/maps/{fr['map']['pk']}"))["map"]
    expect({layer["name"] for layer in fmap["maplayers"]} == {fcountries["alternate"], fworld["alternate"],
                                                              fpoints["alternate"]})
    expect(len(versions(f, fr["points"]["pk"])) >= 1)  # the history travelled

    step("2e", "a second laptop: the whole package over HTTP (a dry run first, which writes nothing)")
    spare = places("spare")
    sadmin = spare.client(auth=("admin", ADMIN_PASSWORD))
    make_user(sadmin, username=surveyor["username"], password=surveyor["password"])
    sp = spare.client(auth=(surveyor["username"], surveyor["password"]))
    dry = import_over_http(sp, tmp_path / "whole.zip", dry_run=True)
    expect(dry["dry_run"] is True and uuids(dry["created"]) == {r["uuid"] for r in resources.values()})
    expect(by_uuid(sp) == {})
    real = import_over_http(sp, tmp_path / "whole.zip")
    expect(uuids(real["created"]) == {r["uuid"] for r in resources.values()} and not real["failed"])
    spare_countries = by_uuid(sp)[countries["uuid"]]
    expect(len(features(sp, ok(sp.get(f"/api/v2/datasets/{spare_countries['pk']}"))["dataset"]["alternate"])) == len(whole))
    spare.stop()

    # -- 3. field work --------------------------------------------------------------------------
    step("3a", "field: a new dataset uploaded")
    obs_file = points_gpkg(tmp_path / "field", 7, "observations")
    observations = upload_dataset(f, {"base_file": (obs_file.name, obs_file.read_bytes(),
                                                    "application/geopackage+sqlite3")}, "Field observations")
    step("3b", "field: features edited (the JSON edits endpoint, and WFS-T as QGIS sends it)")
    r = f.post(f"/api/v2/datasets/{fpoints['pk']}/edits", json={
        "insert": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [6.25, 46.5]},
                    "properties": {"label": "new gauge", "n": 100, "ok": True, "day": "2026-06-01"}}],
        "update": [{"id": 1, "properties": {"label": "gauge 1, moved"}}],
        "delete": [2]})
    [new_fid] = ok(r)["inserted"]
    france = next(fid for fid, x in got.items() if x["properties"]["name"] == "France")
    r = f.post("/geoserver/ows", content=wfs_update(fcountries["alternate"], france, "name", "France (surveyed)"),
               headers={"Content-Type": "text/xml"})
    assert r.status_code == 200 and "<wfs:totalUpdated>1</wfs:totalUpdated>" in r.text, r.text[:500]
    step("3c", "field: metadata edited; two documents deleted")
    ok(f.patch(f"/api/v2/resources/{fr['world']['pk']}", json={"abstract": "Relief checked on site, June."}))
    ok(f.patch(f"/api/v2/resources/{fr['protocol']['pk']}", json={"abstract": "Protocol as used in the field."}))
    for name in ("notes", "contacts"):
        assert f.delete(f"/api/v2/resources/{fr[name]['pk']}").status_code in (200, 204)
        assert f.get(f"/api/v2/resources/{fr[name]['pk']}").status_code == 404

    step("3d", "office meanwhile: the protocol's title and the contact sheet's abstract changed")
    ok(o.patch(f"/api/v2/resources/{protocol['pk']}", json={"title": "Survey protocol, 2nd edition"}))
    ok(o.patch(f"/api/v2/resources/{contacts['pk']}", json={"abstract": "Phone numbers checked."}))

    # -- 4. back at the office ------------------------------------------------------------------
    step("4a", "field: `catalogue package export --since P`")
    done_cli = cli(field, "package", "export", "--since", p1, "--user", surveyor["username"],
                   "-o", str(tmp_path / "since.zip"))
    assert done_cli.returncode == 0, done_cli.stdout + done_cli.stderr
    since = manifest_of(tmp_path / "since.zip")
    assert since["base"] == p1
    listed = {r["uuid"]: r for r in since["resources"]}
    assert observations["uuid"] in listed
    assert {points["uuid"], countries["uuid"], world["uuid"], protocol["uuid"]} <= set(listed)
    assert listed[points["uuid"]]["data"] == "changes"
    assert {x["uuid"] for x in since["deleted"]} == {notes["uuid"], contacts["uuid"]}
    assert the_map["uuid"] not in listed and cities["uuid"] not in listed  # unchanged in the field

    step("4b", "office: the since package imported over HTTP")
    before_versions = {name: len(versions(s, res["pk"])) for name, res in resources.items()
                       if name not in ("notes",)}
    report = import_over_http(s, tmp_path / "since.zip")
    expect(uuids(report["created"]) == {observations["uuid"]}, brief(report))
    expect(uuids(report["updated"]) == {points["uuid"], countries["uuid"], world["uuid"]}, brief(report))
    expect(uuids(report["conflicts"]) == {protocol["uuid"]}, brief(report))
    expect(uuids(report["deleted"]) == {notes["uuid"]}, brief(report))
    expect(uuids(report["kept"]) == {contacts["uuid"]}, brief(report))
    expect(not (report["failed"] or report["refused"]), brief(report))

    step("4c", "office: the new dataset is there with its uuid and data")
    office_now = by_uuid(s)
    new = ok(s.get(f"/api/v2/datasets/{office_now[observations['uuid']]['pk']}"))["dataset"]
    expect(new["owner"]["username"] == surveyor["username"] and new["title"] == "Field observations")
    expect(len(features(s, new["alternate"])) == 7)
    expect(drawn(get_map(s, new["alternate"])) > 0)

    step("4d", "office: field-only changes applied, with their history")
    after = features(s, points["alternate"])
    expect(2 not in after and after[1]["properties"]["label"] == "gauge 1, moved")
    expect(after[new_fid]["properties"]["label"] == "new gauge")
    expect(after[new_fid]["geometry"]["coordinates"] == [6.25, 46.5])
    data_versions = [v for v in versions(s, points["pk"]) if v["kind"] == "data"]
    expect(data_versions and data_versions[0]["user"]["username"] == surveyor["username"], data_versions)
    office_countries = features(s, countries["alternate"])
    expect(office_countries[france]["properties"]["name"] == "France (surveyed)")
    expect(len(office_countries) == len(whole))  # the countries outside the area are untouched
    world_now = ok(s.get(f"/api/v2/resources/{world['pk']}"))["resource"]
    expect(world_now["abstract"] == "Relief checked on site, June.")
    expect(len(versions(s, world["pk"])) > before_versions["world"])
    for name in ("points", "countries", "world"):  # owners stay as the office knows them
        who = ok(s.get(f"/api/v2/resources/{resources[name]['pk']}"))["resource"]["owner"]["username"]
        expect(who == owner["username"], f"{name}: owned by {who} now")
    # the permissions the field could not hold (a user it does not know) are still there
    expect(permissions(admin, points["pk"]) == office_perms, permissions(admin, points["pk"]))

    step("4e", "office: the deletion applied where the office changed nothing; kept and listed where it did")
    expect(s.get(f"/api/v2/resources/{notes['pk']}").status_code == 404)
    tombstones = ok(admin.get("/api/v2/tombstones", params={"page_size": 100}))["tombstones"]
    expect(notes["uuid"] in {t["uuid"] for t in tombstones})
    kept = ok(s.get(f"/api/v2/resources/{contacts['pk']}"))["resource"]
    expect(kept["abstract"] == "Phone numbers checked.")

    step("4f", "office: the change made on both sides is a conflict: the office copy kept, the field's aside")
    mine = ok(s.get(f"/api/v2/resources/{protocol['pk']}"))["resource"]
    expect(mine["title"] == "Survey protocol, 2nd edition" and mine["abstract"] != "Protocol as used in the field.")
    aside = [v for v in versions(s, protocol["pk"]) if v["kind"] == "incoming"]
    expect(len(aside) == 1, versions(s, protocol["pk"]))
    [conflict] = [c for c in ok(s.get("/api/v2/packages/conflicts"))["conflicts"] if c["uuid"] == protocol["uuid"]]
    expect(int(conflict["pk"]) == int(protocol["pk"]) and conflict["package"] == since["id"], conflict)
    expect(conflict["local"] and conflict["incoming"])

    step("4g", "office: the same package imported again (with the CLI) changes nothing")
    snapshot = office_state(s, admin)
    done_cli = cli(office, "package", "import", str(tmp_path / "since.zip"), "--user", surveyor["username"])
    assert done_cli.returncode == 0, done_cli.stdout + done_cli.stderr
    expect(office_state(s, admin) == snapshot)
    again = report_of(s, since["id"])
    expect(not (again["created"] or again["updated"] or again["conflicts"] or again["deleted"]))

    step("4h", "office: the conflict resolved through the API, keeping the field's copy")
    resolved = ok(s.post(f"/api/v2/packages/conflicts/{conflict['id']}", json={"keep": "incoming"}))["conflict"]
    expect(resolved["id"] == conflict["id"] and resolved["state"] == "kept_incoming", resolved)
    mine = ok(s.get(f"/api/v2/resources/{protocol['pk']}"))["resource"]
    expect(mine["abstract"] == "Protocol as used in the field.")
    expect(protocol["uuid"] not in {c["uuid"] for c in ok(s.get("/api/v2/packages/conflicts"))["conflicts"]})
    for client in (admin, o, s, fadmin, f, sadmin, sp):
        client.close()
    assert not FAILED, "\n".join(FAILED)


def names(path: Path) -> dict:
    """The features of a layer file by their "name" field: {name: geometry}."""
    import pyogrio.raw
    import shapely

    meta, _, geometry, fields = pyogrio.raw.read(path)
    column = fields[list(meta["fields"]).index("name")]
    return dict(zip(column, shapely.from_wkb(geometry)))


def office_state(client: httpx.Client, admin: httpx.Client) -> tuple:
    """What a second import must leave as it was: every resource's title, abstract and last
    change, each one's version count, the open conflicts and the tombstones."""
    seen = by_uuid(client)
    return (sorted((u, r["title"], r["abstract"], r["last_updated"]) for u, r in seen.items()),
            sorted((u, len(versions(client, r["pk"]))) for u, r in seen.items()),
            sorted(c["id"] for c in ok(client.get("/api/v2/packages/conflicts"))["conflicts"]),
            sorted(t["uuid"] for t in ok(admin.get("/api/v2/tombstones", params={"page_size": 100}))["tombstones"]))
