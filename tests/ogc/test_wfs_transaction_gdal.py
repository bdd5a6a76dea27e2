"""GDAL's own WFS-T client (Debian's gdal-bin) edits a layer as its users do, through
`WFS:<address>?VERSION=...` with Basic authentication: `ogr2ogr -update -append` inserts,
`ogrinfo -dialect SQLite -sql "UPDATE ..."` and `"DELETE ..."` change and remove, and ogrinfo
reads the layer back. ogrinfo exits 0 even when a Transaction failed, so every check reads back."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from tests.conftest import login
from tests.ogc.wfst_helpers import features, fresh, make_world

pytestmark = pytest.mark.skipif(shutil.which("ogr2ogr") is None or shutil.which("ogrinfo") is None,
                                reason="gdal-bin is missing (make test installs it: scripts/ensure_gdal.sh)")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = make_world(tmp_path_factory)
    yield w
    w["admin"].close()
    w["srv"].stop()


def gdal(world, user: dict | None, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", ""), "GDAL_HTTP_TIMEOUT": "60"}  # no proxy: the server is here
    if user is not None:
        env.update(GDAL_HTTP_AUTH="BASIC", GDAL_HTTP_USERPWD=f"{user['username']}:{user['password']}")
    return subprocess.run(args, capture_output=True, text=True, timeout=180, env=env)


def address(world, version: str) -> str:
    return f"WFS:{world['srv'].url}/geoserver/ows?VERSION={version}"


def new_points(tmp_path, rows: list[tuple[float, float, dict]]) -> str:
    path = tmp_path / "new.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [x, y]}, "properties": props}
        for x, y, props in rows]}))
    return str(path)


def read_back(world, user: dict, version: str, alternate: str) -> dict[str, dict]:
    """The layer as ogrinfo shows it: {gml_id: {field: text, "geometry": WKT}}."""
    r = gdal(world, user, "ogrinfo", "-ro", "-q", address(world, version), alternate)
    assert r.returncode == 0, r.stderr
    out: dict[str, dict] = {}
    for block in r.stdout.split("OGRFeature(")[1:]:
        fields = dict(re.findall(r"^  (\w+) \(\w+\) = (.*)$", block, re.M))
        fields["geometry"] = re.search(r"^  (POINT .*)$", block, re.M).group(1)
        out[fields.pop("gml_id")] = fields
    return out


def test_ogr2ogr_inserts_and_ogrinfo_updates_and_deletes_at_110(world, tmp_path):
    layer = fresh(world)
    owner = world["owner"]
    url = address(world, "1.1.0")
    before = read_back(world, owner, "1.1.0", layer["alternate"])
    source = new_points(tmp_path, [(5.5, 45.25, {"name": "new & <2>", "n": 10}),
                                   (6.5, 46.25, {"name": "second", "n": 11, "v": 1.5})])
    r = gdal(world, owner, "ogr2ogr", "-update", "-append", "-nln", layer["alternate"], url, source)
    assert r.returncode == 0 and "ERROR" not in r.stderr, r.stderr
    after = read_back(world, owner, "1.1.0", layer["alternate"])
    added = {k: v for k, v in after.items() if k not in before}
    assert sorted((v["name"], v.get("n"), v["geometry"]) for v in added.values()) == [
        ("new & <2>", "10", "POINT (5.5 45.25)"), ("second", "11", "POINT (6.5 46.25)")]
    # the ids GDAL was given are those GetFeature gives
    with login(world["srv"], owner) as c:
        assert set(features(c, layer["alternate"])) == set(after)

    r = gdal(world, owner, "ogrinfo", url, "-dialect", "SQLite", "-sql", f"UPDATE {layer['name']} SET name='x' WHERE n=10")
    assert "ERROR" not in r.stderr, r.stderr
    r = gdal(world, owner, "ogrinfo", url, "-dialect", "SQLite", "-sql", f"DELETE FROM {layer['name']} WHERE n=11")
    assert "ERROR" not in r.stderr, r.stderr
    final = read_back(world, owner, "1.1.0", layer["alternate"])
    names = sorted(v["name"] for v in final.values())
    assert names == sorted([v["name"] for v in before.values()] + ["x"])
    changed = next(v for v in final.values() if v["name"] == "x")
    assert changed["n"] == "10" and changed["geometry"] == "POINT (5.5 45.25)"  # the rest as it was
    assert {k: v for k, v in final.items() if k in before} == before


@pytest.mark.parametrize("version", ["1.0.0", "2.0.0"])
def test_ogr2ogr_inserts_at_other_versions(world, tmp_path, version):
    layer = fresh(world)
    owner = world["owner"]
    source = new_points(tmp_path, [(7.25, 47.5, {"name": f"at {version}", "n": 3})])
    r = gdal(world, owner, "ogr2ogr", "-update", "-append", "-nln", layer["alternate"], address(world, version), source)
    assert r.returncode == 0 and "ERROR" not in r.stderr, r.stderr
    found = [v for v in read_back(world, owner, "1.1.0", layer["alternate"]).values() if v["name"] == f"at {version}"]
    assert [f["geometry"] for f in found] == ["POINT (7.25 47.5)"]


def test_gdal_cannot_change_what_its_user_may_not(world, tmp_path):
    layer = fresh(world)
    owner = world["owner"]
    before = read_back(world, owner, "1.1.0", layer["alternate"])
    source = new_points(tmp_path, [(1, 2, {"name": "intruder", "n": 1})])
    url = address(world, "1.1.0")
    # a user who may edit nothing: no Transaction is offered, GDAL will not open for update
    r = gdal(world, world["other"], "ogr2ogr", "-update", "-append", "-nln", layer["alternate"], url, source)
    assert r.returncode != 0
    # a user who may edit a layer of their own (Transaction offered) but not this one
    fresh(world, who="other", share=False)
    r = gdal(world, world["other"], "ogr2ogr", "-update", "-append", "-nln", layer["alternate"], url, source)
    assert r.returncode != 0 or "ERROR" in r.stderr
    gdal(world, world["other"], "ogrinfo", url, "-dialect", "SQLite", "-sql", f"DELETE FROM {layer['name']} WHERE n=1")
    # no credentials at all
    gdal(world, None, "ogr2ogr", "-update", "-append", "-nln", layer["alternate"], url, source)
    assert read_back(world, owner, "1.1.0", layer["alternate"]) == before
