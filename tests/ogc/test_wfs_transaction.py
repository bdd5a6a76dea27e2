"""WFS-T through HTTP: the Transactions QGIS and GDAL send at 1.0.0, 1.1.0 and 2.0.0 (the bodies of
the WFS-T research), their answers read as each client reads them, WFS 2.0's own Transaction with
Replace, the capabilities each caller gets, who may edit, and every bad input refused whole with
an exception report, the features and the history as they were."""

from __future__ import annotations

import sqlite3

import pytest
from lxml import etree
from owslib.wfs import WebFeatureService

from tests.conftest import ADMIN_PASSWORD, login
from tests.ogc.wfst_helpers import (
    FES,
    NS,
    OGC,
    PRIVATE,
    WFS,
    WFS20,
    exception_code,
    features,
    fresh,
    gdal_delete,
    gdal_insert_10,
    gdal_insert_11,
    gdal_reads,
    gdal_update_11,
    make_world,
    post,
    qgis_delete,
    qgis_insert,
    qgis_reads,
    qgis_update,
    refused,
    snapshot,
)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = make_world(tmp_path_factory)
    w["points"] = fresh(w)          # the layer the bad inputs are tried on (never changed)
    yield w
    w["admin"].close()
    w["srv"].stop()


def owner(world):
    return login(world["srv"], world["owner"])


def point(feature) -> tuple[float, float]:
    x, y = feature["geometry"]["coordinates"][:2]
    return round(x, 9), round(y, 9)


def new_ids(before: dict, after: dict) -> list[str]:
    return sorted(set(after) - set(before), key=lambda i: int(i.rpartition(".")[2]))


# --- capabilities ------------------------------------------------------------------------------


def _capabilities(client, version: str) -> etree._Element:
    r = client.get("/geoserver/ows", params={"service": "WFS", "version": version, "request": "GetCapabilities"})
    assert r.status_code == 200, r.text
    assert "no-cache" in r.headers.get("cache-control", "") and "private" in r.headers["cache-control"]
    return etree.fromstring(r.content)


def _offers(root: etree._Element, version: str) -> tuple[str | None, dict[str, list[str]]]:
    """What GDAL reads (the global Transaction and its POST address) and what QGIS reads (each
    type's Operations)."""
    ops: dict[str, list[str]] = {}
    if version == "1.0.0":
        post_ = root.find(f"{{{WFS}}}Capability/{{{WFS}}}Request/{{{WFS}}}Transaction/{{{WFS}}}DCPType/{{{WFS}}}HTTP/"
                          f"{{{WFS}}}Post")
        href = post_.get("onlineResource") if post_ is not None else None
        for ft in root.iter(f"{{{WFS}}}FeatureType"):
            found = ft.find(f"{{{WFS}}}Operations")
            ops[ft.findtext(f"{{{WFS}}}Name")] = [etree.QName(o).localname for o in found] if found is not None else []
        return href, ops
    ows = "http://www.opengis.net/ows/1.1" if version == "2.0.0" else "http://www.opengis.net/ows"
    wfs = WFS20 if version == "2.0.0" else WFS
    href = None
    for op in root.iter(f"{{{ows}}}Operation"):
        if op.get("name") == "Transaction":
            href = op.find(f".//{{{ows}}}Post").get("{http://www.w3.org/1999/xlink}href")
    for ft in root.iter(f"{{{wfs}}}FeatureType"):
        ops[ft.findtext(f"{{{wfs}}}Name")] = [o.text for o in ft.iter(f"{{{wfs}}}Operation")]
    return href, ops


@pytest.mark.parametrize("version", ["1.0.0", "1.1.0", "2.0.0"])
def test_capabilities_offer_transaction_to_those_who_may_edit(world, version):
    srv = world["srv"]
    mine = fresh(world)                                  # the owner's; the group may edit it
    theirs = fresh(world, who="other", share=False)      # the other user's alone
    editors = {"owner": {mine["alternate"]}, "member": {mine["alternate"]},
               "admin": {mine["alternate"], theirs["alternate"]}, "other": {theirs["alternate"]}, "anonymous": set()}
    for who, editable in editors.items():
        client = (srv.client() if who == "anonymous" else srv.client(auth=("admin", ADMIN_PASSWORD)) if who == "admin"
                  else login(srv, world[who]))
        with client:
            root = _capabilities(client, version)
        href, ops = _offers(root, version)
        assert (href is not None) == bool(editable), (who, href)
        if href:
            assert href == f"{srv.url}/geoserver/ows"
        if version != "2.0.0":
            for name in (mine["alternate"], theirs["alternate"]):
                want = ["Query", "Insert", "Update", "Delete"] if name in editable else []
                assert ops[name] == want, (who, name, ops[name])
        else:
            constraint = [c for c in root.iter("{http://www.opengis.net/ows/1.1}Constraint")
                          if c.get("name") == "ImplementsTransactionalWFS"][0]
            assert constraint.findtext("{http://www.opengis.net/ows/1.1}DefaultValue") == ("TRUE" if editable else "FALSE")


def test_owslib_still_reads_the_capabilities_of_an_editor(world):
    for version in ("1.0.0", "1.1.0", "2.0.0"):
        wfs = WebFeatureService(f"{world['srv'].url}/geoserver/ows", version=version,
                                username=world["owner"]["username"], password=world["owner"]["password"])
        assert world["points"]["alternate"] in wfs.contents


# --- GDAL's bodies ---------------------------------------------------------------------------


def versions(world, pk: int) -> list[tuple]:
    """The dataset's versions in the catalogue: (number, via, kind, state), oldest first."""
    with sqlite3.connect(f"file:{world['srv'].data_dir / 'catalogue.sqlite3'}?mode=ro", uri=True, timeout=30) as db:
        return db.execute("SELECT number, via, kind, state FROM resource_versions WHERE resource_id = ? ORDER BY number",
                          (pk,)).fetchall()


def test_gdal_11_insert_update_delete(world):
    layer = fresh(world)
    name = layer["name"]
    with owner(world) as c:
        before = features(c, layer["alternate"])
        start = versions(world, layer["pk"])
        r = post(c, gdal_insert_11(name), media="application/xml; charset=UTF-8")
        ids = gdal_reads(r, "1.1.0", 2)
        # one Transaction, one version, through WFS-T
        assert versions(world, layer["pk"])[len(start):] == [(len(start) + 1, "wfs-t", "data", "done")]
        assert qgis_reads(r, "1.1.0") == ids
        after = features(c, layer["alternate"])
        assert ids == new_ids(before, after)  # InsertResults ids are those GetFeature gives
        first, second = after[ids[0]], after[ids[1]]
        assert point(first) == (5.5, 45.25)  # urn:ogc:def:crs:EPSG::4326 is latitude first
        assert first["properties"]["name"] == "new & <2>" and first["properties"]["n"] == 10
        assert first["properties"]["v"] is None  # left out: null
        assert second["properties"]["v"] == 2.25 and second["properties"]["day"] == "2024-05-06"

        fid = int(ids[1].rpartition(".")[2])
        r = post(c, gdal_update_11(name, fid), media="application/xml; charset=UTF-8")
        assert gdal_reads(r, "1.1.0", 0) == []
        assert qgis_reads(r, "1.1.0") == []
        changed = features(c, layer["alternate"])[ids[1]]
        assert changed["properties"]["name"] == "changed" and changed["properties"]["n"] is None
        assert changed["properties"]["v"] == 7.5 and changed["properties"]["day"] == "2024-05-06"
        assert point(changed) == (5.5, 45.25)

        r = post(c, gdal_delete(name, fid), media="application/xml; charset=UTF-8")
        root = etree.fromstring(r.content)
        assert root.findtext(f"{{{WFS}}}TransactionSummary/{{{WFS}}}totalDeleted") == "1", r.text
        final = features(c, layer["alternate"])
        assert ids[1] not in final and ids[0] in final and len(final) == len(before) + 1
        assert [v[1] for v in versions(world, layer["pk"])[len(start):]] == ["wfs-t"] * 3


def test_gdal_10_insert_is_east_first_and_answers_10(world):
    layer = fresh(world)
    name = layer["name"]
    with owner(world) as c:
        before = features(c, layer["alternate"])
        r = post(c, gdal_insert_10(name), media="application/xml; charset=UTF-8")
        assert r.text.startswith("<?xml") and "WFS_TransactionResponse" in r.text
        ids = gdal_reads(r, "1.0.0", 1)
        assert ids == qgis_reads(r, "1.0.0") == new_ids(before, features(c, layer["alternate"]))
        assert point(features(c, layer["alternate"])[ids[0]]) == (5.5, 45.25)
        fid = int(ids[0].rpartition(".")[2])
        body = gdal_update_11(name, fid, version="1.0.0", id_element=f'<ogc:FeatureId fid="{name}.{fid}"/>')
        body = body.replace('<gml:Point srsName="urn:ogc:def:crs:EPSG::4326"><gml:pos>45.25 5.5</gml:pos>',
                            '<gml:Point srsName="EPSG:4326"><gml:coordinates>8,48</gml:coordinates>')
        r = post(c, body)
        qgis_reads(r, "1.0.0")
        changed = features(c, layer["alternate"])[ids[0]]
        assert point(changed) == (8, 48) and changed["properties"]["name"] == "changed"
        r = post(c, gdal_delete(name, fid, version="1.0.0"))
        gdal_reads(r, "1.0.0", 0)
        assert ids[0] not in features(c, layer["alternate"])


def test_gdal_at_20_sends_1x_bodies_and_reads_both_id_forms(world):
    layer = fresh(world)
    name = layer["name"]
    with owner(world) as c:
        before = features(c, layer["alternate"])
        r = post(c, gdal_insert_11(name, version="2.0.0"), media="application/xml; charset=UTF-8")
        ids = gdal_reads(r, "2.0.0", 2)                       # ogr2ogr: FeatureId@fid
        assert gdal_reads(r, "2.0.0", 2, single=True) == ids  # CreateFeature: ResourceId@rid
        assert ids == new_ids(before, features(c, layer["alternate"]))
        root = etree.fromstring(r.content)
        assert root.tag == f"{{{WFS}}}TransactionResponse"
        assert [e.get("rid") for e in root.iter(f"{{{FES}}}ResourceId")] == ids
        fid = int(ids[0].rpartition(".")[2])
        r = post(c, gdal_update_11(name, fid, version="2.0.0", id_element=f'<ogc:ResourceId rid="{name}.{fid}"/>'))
        qgis_reads(r, "2.0.0")
        assert features(c, layer["alternate"])[ids[0]]["properties"]["name"] == "changed"


def test_gdal_native_sql_filters(world):
    """DELETE FROM <layer> WHERE n = 10 (no namespace, no prefix) and WHERE gml_id='<id>'."""
    layer = fresh(world, count=4)
    name = layer["name"]
    with owner(world) as c:
        before = features(c, layer["alternate"])
        by_n = {f["properties"]["n"]: i for i, f in before.items()}
        body = (f'<wfs:Transaction xmlns:wfs="{WFS}" service="WFS" version="1.1.0" xmlns:ogc="{OGC}">'
                f'<wfs:Delete xmlns:feature="{NS}" typeName="feature:{name}"><ogc:Filter><PropertyIsEqualTo>'
                "<PropertyName>n</PropertyName><Literal>2</Literal></PropertyIsEqualTo></ogc:Filter></wfs:Delete>"
                "</wfs:Transaction>")
        r = post(c, body, media="application/xml; charset=UTF-8")
        assert etree.fromstring(r.content).findtext(f".//{{{WFS}}}totalDeleted") == "1", r.text
        body = body.replace("<PropertyIsEqualTo><PropertyName>n</PropertyName><Literal>2</Literal></PropertyIsEqualTo>",
                            f'<GmlObjectId id="{by_n[3]}"/>')
        r = post(c, body)
        assert etree.fromstring(r.content).findtext(f".//{{{WFS}}}totalDeleted") == "1", r.text
        left = features(c, layer["alternate"])
        assert set(left) == set(before) - {by_n[2], by_n[3]}
        # a filter that matches nothing deletes nothing and is no error
        r = post(c, body.replace(f'<GmlObjectId id="{by_n[3]}"/>', "<PropertyIsEqualTo><PropertyName>name"
                                 "</PropertyName><Literal>nobody</Literal></PropertyIsEqualTo>"))
        assert etree.fromstring(r.content).findtext(f".//{{{WFS}}}totalDeleted") == "0", r.text
        # comparisons, And, Or, Not, Like, Between, Null
        body = (f'<wfs:Transaction xmlns:wfs="{WFS}" version="1.1.0" xmlns:ogc="{OGC}"><wfs:Update typeName="'
                f'{layer["alternate"]}"><wfs:Property><wfs:Name>name</wfs:Name><wfs:Value>hit</wfs:Value></wfs:Property>'
                "<ogc:Filter><ogc:Or><ogc:And><ogc:PropertyIsGreaterThanOrEqualTo><ogc:PropertyName>v</ogc:PropertyName>"
                "<ogc:Literal>0</ogc:Literal></ogc:PropertyIsGreaterThanOrEqualTo><ogc:Not><ogc:PropertyIsLike "
                'wildCard="*" singleChar="." escapeChar="!"><ogc:PropertyName>name</ogc:PropertyName><ogc:Literal>p3*'
                "</ogc:Literal></ogc:PropertyIsLike></ogc:Not></ogc:And><ogc:PropertyIsNull><ogc:PropertyName>day"
                "</ogc:PropertyName></ogc:PropertyIsNull></ogc:Or></ogc:Filter></wfs:Update></wfs:Transaction>")
        r = post(c, body)
        assert etree.fromstring(r.content).findtext(f".//{{{WFS}}}totalUpdated") == "1", r.text
        now = features(c, layer["alternate"])
        assert now[by_n[1]]["properties"]["name"] == "hit" and now[by_n[4]]["properties"]["name"] == "p3"
        # a feature inserted a moment ago is found by its properties
        qgis_reads(post(c, qgis_insert(name, "1.1.0").replace("<catalogue:n>5</catalogue:n>",
                                                               "<catalogue:n>99</catalogue:n>")), "1.1.0")
        r = post(c, (f'<wfs:Transaction xmlns:wfs="{WFS}" version="1.1.0" xmlns:ogc="{OGC}"><wfs:Delete typeName="'
                     f'{layer["alternate"]}"><ogc:Filter><ogc:PropertyIsEqualTo><ogc:PropertyName>n</ogc:PropertyName>'
                     "<ogc:Literal>99</ogc:Literal></ogc:PropertyIsEqualTo></ogc:Filter></wfs:Delete></wfs:Transaction>"))
        assert etree.fromstring(r.content).findtext(f".//{{{WFS}}}totalDeleted") == "1", r.text
        assert len(features(c, layer["alternate"])) == len(now)


# --- QGIS's bodies ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.0.0", "1.1.0"])
def test_qgis_insert_update_delete(world, version):
    layer = fresh(world)
    name = layer["name"]
    with owner(world) as c:
        before = features(c, layer["alternate"])
        r = post(c, qgis_insert(name, version))
        ids = qgis_reads(r, version)
        assert ids == new_ids(before, features(c, layer["alternate"])) and len(ids) == 1
        got = features(c, layer["alternate"])[ids[0]]
        assert point(got) == (7, 47)
        assert got["properties"] == {"name": "from qgis", "n": 5, "v": None, "day": "2024-02-03"}
        fid = int(ids[0].rpartition(".")[2])
        old = next(i for i in before)
        r = post(c, qgis_update(name, fid, version))
        qgis_reads(r, version)
        got = features(c, layer["alternate"])[ids[0]]
        assert got["properties"]["name"] == "renamed" and got["properties"]["n"] == 5 and point(got) == (7, 47)
        r = post(c, qgis_delete(name, [fid, int(old.rpartition(".")[2])], version))
        qgis_reads(r, version)
        after = features(c, layer["alternate"])
        assert ids[0] not in after and old not in after and len(after) == len(before) - 1


def test_qgis_322_sends_10_with_urn_names_and_longitude_first(world):
    """QGIS 3.22 on a 2.0.0 connection: version="1.0.0", urn srsName, GML 2 coordinates lon,lat."""
    layer = fresh(world)
    with owner(world) as c:
        r = post(c, qgis_insert(layer["name"], "1.0.0", x=7, y=47, srs="urn:ogc:def:crs:EPSG::4326"))
        ids = qgis_reads(r, "1.0.0")
        assert point(features(c, layer["alternate"])[ids[0]]) == (7, 47)


def test_qgis_and_gdal_multipolygons(world):
    layer = fresh(world, "polygons")
    name = layer["name"]
    ring = "47 7 47 8 48 8 48 7 47 7"
    qgis = (f'<Transaction xmlns="{WFS}" xmlns:catalogue="{NS}" xmlns:gml="http://www.opengis.net/gml" version="1.1.0" '
            f'service="WFS"><Insert><catalogue:{name}><catalogue:name>q</catalogue:name><catalogue:geom>'
            '<gml:MultiPolygon srsName="urn:ogc:def:crs:EPSG::4326"><gml:polygonMember><gml:Polygon><gml:exterior>'
            f'<gml:LinearRing><gml:posList srsDimension="2">{ring}</gml:posList></gml:LinearRing></gml:exterior>'
            f"</gml:Polygon></gml:polygonMember></gml:MultiPolygon></catalogue:geom></catalogue:{name}></Insert>"
            "</Transaction>")
    gdal = (f'<wfs:Transaction xmlns:wfs="{WFS}" version="1.1.0" service="WFS" xmlns:gml="http://www.opengis.net/gml">'
            f'<wfs:Insert><feature:{name} xmlns:feature="{NS}"><feature:geom><gml:MultiSurface '
            'srsName="urn:ogc:def:crs:EPSG::4326"><gml:surfaceMember><gml:Polygon><gml:exterior><gml:LinearRing>'
            f"<gml:posList>{ring}</gml:posList></gml:LinearRing></gml:exterior></gml:Polygon></gml:surfaceMember>"
            f"</gml:MultiSurface></feature:geom><feature:name>g</feature:name></feature:{name}></wfs:Insert>"
            "</wfs:Transaction>")
    with owner(world) as c:
        for body in (qgis, gdal):
            r = post(c, body)
            ids = qgis_reads(r, "1.1.0")
            got = features(c, layer["alternate"])[ids[0]]
            assert got["geometry"]["type"] == "MultiPolygon"
            xs = sorted({round(p[0], 6) for p in got["geometry"]["coordinates"][0][0]})
            assert xs == [7, 8]  # longitude, read from latitude-first URN coordinates


# --- WFS 2.0 -------------------------------------------------------------------------------------


def test_wfs_20_transaction_with_replace(world):
    layer = fresh(world)
    name = layer["name"]
    with owner(world) as c:
        before = features(c, layer["alternate"])
        first, second, third = sorted(before, key=lambda i: int(i.rpartition(".")[2]))
        body = (f'<wfs:Transaction xmlns:wfs="{WFS20}" xmlns:fes="{FES}" xmlns:gml="http://www.opengis.net/gml/3.2" '
                f'xmlns:catalogue="{NS}" service="WFS" version="2.0.0">'
                f'<wfs:Insert handle="new"><catalogue:{name}><catalogue:geom><gml:Point gml:id="p1" '
                'srsName="http://www.opengis.net/def/crs/EPSG/0/4326"><gml:pos>50 9</gml:pos></gml:Point></catalogue:geom>'
                f"<catalogue:name>two</catalogue:name></catalogue:{name}></wfs:Insert>"
                f'<wfs:Update typeName="catalogue:{name}"><wfs:Property><wfs:ValueReference>name</wfs:ValueReference>'
                f'<wfs:Value>updated</wfs:Value></wfs:Property><wfs:Property><wfs:ValueReference action="remove">'
                f'catalogue:n</wfs:ValueReference></wfs:Property><fes:Filter><fes:ResourceId rid="{first}"/></fes:Filter>'
                "</wfs:Update>"
                f"<wfs:Replace><catalogue:{name}><catalogue:geom><gml:Point srsName=\"EPSG:3857\"><gml:pos>0 0</gml:pos>"
                f"</gml:Point></catalogue:geom><catalogue:name>replaced</catalogue:name></catalogue:{name}>"
                f'<fes:Filter><fes:ResourceId rid="{second}"/></fes:Filter></wfs:Replace>'
                f'<wfs:Delete typeName="catalogue:{name}"><fes:Filter><fes:ResourceId rid="{third}"/></fes:Filter>'
                "</wfs:Delete></wfs:Transaction>")
        r = post(c, body)
        root = etree.fromstring(r.content)
        assert root.tag == f"{{{WFS20}}}TransactionResponse" and root.get("version") == "2.0.0", r.text
        summary = {etree.QName(e).localname: int(e.text) for e in root.find(f"{{{WFS20}}}TransactionSummary")}
        assert summary == {"totalInserted": 1, "totalUpdated": 1, "totalReplaced": 1, "totalDeleted": 1}
        inserted = [e.get("rid") for e in root.find(f"{{{WFS20}}}InsertResults").iter(f"{{{FES}}}ResourceId")]
        assert root.find(f"{{{WFS20}}}InsertResults/{{{WFS20}}}Feature").get("handle") == "new"
        assert [e.get("rid") for e in root.find(f"{{{WFS20}}}ReplaceResults").iter(f"{{{FES}}}ResourceId")] == [second]
        after = features(c, layer["alternate"])
        assert inserted == new_ids(before, after)
        assert point(after[inserted[0]]) == (9, 50)
        assert after[first]["properties"]["name"] == "updated" and after[first]["properties"]["n"] is None
        assert after[second]["properties"] == {"name": "replaced", "n": None, "v": None, "day": None}
        assert point(after[second]) == (0, 0)
        assert third not in after


# --- addresses -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/geoserver/wfs", "/gs/ows", "/geoserver/catalogue/ows", "/geoserver/ows?SERVICE=WFS"])
def test_every_wfs_address_takes_a_transaction(world, path):
    layer = fresh(world)
    with owner(world) as c:
        ids = qgis_reads(post(c, qgis_insert(layer["name"], "1.1.0"), path=path), "1.1.0")
        assert ids[0] in features(c, layer["alternate"])


def test_owslib_getfeature_sees_the_change(world):
    layer = fresh(world)
    with owner(world) as c:
        ids = qgis_reads(post(c, qgis_insert(layer["name"], "1.1.0")), "1.1.0")
    wfs = WebFeatureService(f"{world['srv'].url}/geoserver/ows", version="2.0.0")
    got = wfs.getfeature(typename=[layer["alternate"]], outputFormat="application/json").read()
    assert ids[0].encode() in got and b"from qgis" in got


# --- who may edit --------------------------------------------------------------------------------


def test_who_may_edit(world):
    layer = fresh(world)
    srv = world["srv"]
    body = qgis_insert(layer["name"], "1.1.0")
    with srv.client() as anon:
        before = snapshot(anon, layer, srv.data_dir)
        r = post(anon, body)
        assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Basic"), r.text
        assert exception_code(r) == "NoApplicableCode"
        with login(srv, world["other"]) as c:
            text = refused(post(c, body), "NoApplicableCode")
            assert "may not change" in text
        assert snapshot(anon, layer, srv.data_dir) == before
        for client in (login(srv, world["member"]), login(srv, world["owner"]), srv.client(auth=world["admin"].auth)):
            with client:
                assert len(qgis_reads(post(client, body), "1.1.0")) == 1
        assert len(features(anon, layer["alternate"])) == len(before[0]) + 3


def test_a_private_layer_is_unknown_to_those_who_cannot_see_it(world):
    layer = fresh(world, permissions=PRIVATE)
    body = qgis_insert(layer["name"], "1.1.0")
    with login(world["srv"], world["other"]) as c:
        assert "Unknown layer" in refused(post(c, body), "InvalidParameterValue")
    with login(world["srv"], world["member"]) as c:  # the group may edit it
        assert len(qgis_reads(post(c, body), "1.1.0")) == 1


# --- bad input ---------------------------------------------------------------------------------


def _wrap(inner: str, version: str = "1.1.0") -> str:
    return (f'<wfs:Transaction xmlns:wfs="{WFS}" xmlns:ogc="{OGC}" xmlns:gml="http://www.opengis.net/gml" '
            f'xmlns:catalogue="{NS}" service="WFS" version="{version}">{inner}</wfs:Transaction>')


def _insert(name: str, props: str, geometry: str | None = None) -> str:
    geometry = geometry if geometry is not None else (
        '<gml:Point srsName="EPSG:4326"><gml:pos>1 2</gml:pos></gml:Point>')
    return _wrap(f"<wfs:Insert><catalogue:{name}><catalogue:geom>{geometry}</catalogue:geom>{props}"
                 f"</catalogue:{name}></wfs:Insert>")


def bad_bodies(name: str, other: str) -> dict[str, str | bytes]:
    ok = "<catalogue:name>x</catalogue:name>"
    return {
        "wrong geometry type": _insert(name, ok, '<gml:LineString srsName="EPSG:4326"><gml:posList>0 0 1 1'
                                                 "</gml:posList></gml:LineString>"),
        "empty geometry": _insert(name, ok, '<gml:Point srsName="EPSG:4326"/>'),
        "broken geometry": _insert(name, ok, '<gml:Point srsName="EPSG:4326"><gml:pos>1 x</gml:pos></gml:Point>'),
        "unknown CRS": _insert(name, ok, '<gml:Point srsName="EPSG:99999999"><gml:pos>1 2</gml:pos></gml:Point>'),
        "CRS name not read": _insert(name, ok, '<gml:Point srsName="somewhere"><gml:pos>1 2</gml:pos></gml:Point>'),
        "outside the CRS": _insert(name, ok, '<gml:Point srsName="EPSG:32631"><gml:pos>1e9 1e9</gml:pos></gml:Point>'),
        "unknown attribute": _insert(name, "<catalogue:colour>red</catalogue:colour>"),
        "wrong value type": _insert(name, "<catalogue:n>ten</catalogue:n>"),
        "wrong real": _insert(name, "<catalogue:v>1,5</catalogue:v>"),
        "wrong date": _insert(name, "<catalogue:day>tomorrow</catalogue:day>"),
        "good then bad": _wrap(f"<wfs:Insert><catalogue:{name}><catalogue:name>good</catalogue:name></catalogue:{name}>"
                               f"</wfs:Insert><wfs:Insert><catalogue:{name}><catalogue:n>1.5</catalogue:n>"
                               f"</catalogue:{name}></wfs:Insert>"),
        "unknown feature id": _wrap(f'<wfs:Delete typeName="catalogue:{name}"><ogc:Filter><ogc:FeatureId '
                                    f'fid="{name}.999999"/></ogc:Filter></wfs:Delete>'),
        "unknown feature id in update": _wrap(
            f'<wfs:Update typeName="catalogue:{name}"><wfs:Property><wfs:Name>name</wfs:Name><wfs:Value>x</wfs:Value>'
            f'</wfs:Property><ogc:Filter><ogc:FeatureId fid="{name}.999999"/></ogc:Filter></wfs:Update>'),
        "id of another layer": _wrap(f'<wfs:Delete typeName="catalogue:{name}"><ogc:Filter><ogc:FeatureId '
                                     f'fid="{other}.1"/></ogc:Filter></wfs:Delete>'),
        "not an id": _wrap(f'<wfs:Delete typeName="catalogue:{name}"><ogc:Filter><ogc:FeatureId fid="one"/>'
                           "</ogc:Filter></wfs:Delete>"),
        "no filter": _wrap(f'<wfs:Delete typeName="catalogue:{name}"/>'),
        "spatial filter": _wrap(f'<wfs:Delete typeName="catalogue:{name}"><ogc:Filter><ogc:BBOX><ogc:PropertyName>geom'
                                "</ogc:PropertyName><gml:Envelope><gml:lowerCorner>0 0</gml:lowerCorner><gml:upperCorner>"
                                "1 1</gml:upperCorner></gml:Envelope></ogc:BBOX></ogc:Filter></wfs:Delete>"),
        "unknown layer": _wrap('<wfs:Delete typeName="catalogue:nowhere"><ogc:Filter><ogc:FeatureId fid="nowhere.1"/>'
                               "</ogc:Filter></wfs:Delete>"),
        "two layers": _wrap(f"<wfs:Insert><catalogue:{name}><catalogue:name>a</catalogue:name></catalogue:{name}>"
                            f"<catalogue:{other}><catalogue:name>b</catalogue:name></catalogue:{other}></wfs:Insert>"),
        "unknown action": _wrap("<wfs:Upsert/>"),
        "not WFS": '<?xml version="1.0"?><kml xmlns="http://www.opengis.net/kml/2.2"><Document/></kml>',
        "Transaction of another namespace": '<Transaction xmlns="http://example.org/wfs" version="1.1.0"/>',
        "not XML": "Transaction please",
        "truncated XML": _insert(name, ok)[:-30],
        "entities": ('<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
                     + _insert(name, "<catalogue:name>&b;</catalogue:name>")),
        "nested deeply": _insert(name, "<catalogue:name>" + "<a>" * 300 + "</a>" * 300 + "</catalogue:name>"),
        "10 MB text node": _insert(name, "<catalogue:name>" + "x" * 10_000_001 + "</catalogue:name>"),
    }


BAD = list(bad_bodies("n", "o"))


@pytest.mark.parametrize("case", BAD)
def test_bad_transactions_change_nothing(world, case):
    layer = world["points"]
    other = fresh(world) if case in ("two layers", "id of another layer") else layer
    body = bad_bodies(layer["name"], other["name"])[case]
    with owner(world) as c:
        data = world["srv"].data_dir
        before, other_before = snapshot(c, layer, data), snapshot(c, other, data)
        r = post(c, body)
        if r.status_code == 400:  # not XML at all, posted to /geoserver/ows: not taken for WFS
            assert case in ("not WFS", "not XML") and exception_code(r) == "OperationNotSupported", r.text
        else:
            text = refused(r)
            assert len(text) > 10 and "Traceback" not in text, text
        assert snapshot(c, layer, data) == before, case
        assert snapshot(c, other, data) == other_before, case
        # and posted to the WFS address
        r = post(c, body, path="/geoserver/wfs")
        assert r.status_code in (200, 400) and exception_code(r), r.text
        assert snapshot(c, layer, data) == before, case


def test_bad_input_messages_name_what_is_wrong(world):
    layer = world["points"]
    bodies = bad_bodies(layer["name"], "other")
    with owner(world) as c:
        assert "colour" in refused(post(c, bodies["unknown attribute"]), "InvalidParameterValue")
        assert "ten" in refused(post(c, bodies["wrong value type"]), "InvalidParameterValue")
        assert "not a WFS Transaction" in refused(post(c, bodies["Transaction of another namespace"]),
                                                  "OperationParsingFailed")
        other = fresh(world)
        assert "one layer" in refused(post(c, bad_bodies(layer["name"], other["name"])["two layers"]))
        assert "999999" in refused(post(c, bodies["unknown feature id"]))
        assert "256 elements deep" in refused(post(c, bodies["nested deeply"]), "OperationParsingFailed")
        assert "10 MB" in refused(post(c, bodies["10 MB text node"]), "OperationParsingFailed")
        assert "LineString" in refused(post(c, bodies["wrong geometry type"]), "InvalidParameterValue")


def test_a_transaction_over_the_size_limit_changes_nothing(world):
    layer = world["points"]
    limit = "/api/v2/upload-size-limits/dataset_upload_size"
    admin = world["admin"]
    features_xml = "".join(f"<wfs:Insert><catalogue:{layer['name']}><catalogue:name>{'y' * 900}</catalogue:name>"
                           f"</catalogue:{layer['name']}></wfs:Insert>" for _ in range(40))
    body = _wrap(features_xml)
    assert len(body) > 30_000
    small = fresh(world)
    assert admin.patch(limit, json={"max_size": 30_000}).status_code == 200
    try:
        with owner(world) as c:
            before = snapshot(c, layer, world["srv"].data_dir)
            for media in ("text/xml", "application/xml; charset=UTF-8"):
                text = refused(post(c, body, media=media))
                assert "size limit" in text
            assert snapshot(c, layer, world["srv"].data_dir) == before
            # a small one still goes through (on another layer: the bad-input one stays as it was)
            assert qgis_reads(post(c, qgis_insert(small["name"], "1.1.0")), "1.1.0")
    finally:
        assert admin.patch(limit, json={"max_size": 104857600}).status_code == 200


def test_forms_and_other_xml_are_still_read_as_before(world):
    with world["srv"].client() as anon:
        r = anon.post("/geoserver/ows", data={"SERVICE": "WFS", "VERSION": "2.0.0", "REQUEST": "GetFeature",
                                              "TYPENAMES": world["points"]["alternate"], "COUNT": "1",
                                              "OUTPUTFORMAT": "application/json"})
        assert r.status_code == 200 and len(r.json()["features"]) == 1
        r = anon.post("/geoserver/ows", content=b"<GetFeature/>", headers={"content-type": "text/xml"})
        assert r.status_code == 400 and "OperationNotSupported" in r.text
        r = anon.get("/geoserver/ows", params={"service": "WFS", "request": "Transaction"})
        assert "OperationNotSupported" in r.text
        r = anon.post("/geoserver/ows", content=b"x=" + b"1" * (1024 * 1024 + 10),
                      headers={"content-type": "application/x-www-form-urlencoded"})
        assert r.status_code == 413 and "ExceptionReport" in r.text


def test_an_invalid_polygon_changes_nothing(world):
    layer = fresh(world, "polygons")
    name = layer["name"]
    bowtie = ('<gml:MultiSurface srsName="EPSG:4326"><gml:surfaceMember><gml:Polygon><gml:exterior><gml:LinearRing>'
              "<gml:posList>0 0 1 1 1 0 0 1 0 0</gml:posList></gml:LinearRing></gml:exterior></gml:Polygon>"
              "</gml:surfaceMember></gml:MultiSurface>")
    point = '<gml:Point srsName="EPSG:4326"><gml:pos>1 2</gml:pos></gml:Point>'
    with owner(world) as c:
        before = snapshot(c, layer, world["srv"].data_dir)
        for geometry, words in ((bowtie, "invalid"), (point, "Point")):
            text = refused(post(c, _insert(name, "<catalogue:name>x</catalogue:name>", geometry)), "InvalidParameterValue")
            assert words in text, text
        assert snapshot(c, layer, world["srv"].data_dir) == before
