"""What the WFS-T tests share: a server with editors of every kind, fresh layers to edit, the
Transaction bodies QGIS and GDAL send (from the WFS-T research, with our names), and each
client's reading of the answers."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import pyogrio.raw
import shapely
from lxml import etree

from tests.api.test_uploads import imported
from tests.conftest import ADMIN_PASSWORD, Server, login, make_group, make_user, poll

WFS = "http://www.opengis.net/wfs"
WFS20 = "http://www.opengis.net/wfs/2.0"
OGC = "http://www.opengis.net/ogc"
FES = "http://www.opengis.net/fes/2.0"
NS = "urn:catalogue:workspace:catalogue"
PUBLIC = '{"users": {"AnonymousUser": ["view_resourcebase", "download_resourcebase"]}}'
PRIVATE = '{"users": {"AnonymousUser": []}}'


def make_world(tmp_path_factory, name: str = "wfst", start=Server) -> dict:
    """A server (made by ``start`` from a data folder); the admin (a superuser), an owner, another
    user, and a member of a group that will be granted edit on the layers."""
    folder = tmp_path_factory.mktemp(name)
    srv = start(folder / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, other, member = make_user(admin), make_user(admin), make_user(admin)
    group = make_group(admin)
    r = admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [member["pk"]], "role": "member"})
    assert r.status_code < 300, r.text
    return {"srv": srv, "admin": admin, "owner": owner, "other": other, "member": member, "group": group,
            "folder": folder, "count": 0}


def points_file(folder: Path, name: str, count: int = 3) -> Path:
    """A GeoPackage of points in EPSG:4326 with a text, an integer, a real and a date field."""
    path = folder / f"{name}.gpkg"
    shapes = shapely.to_wkb(np.array([shapely.Point(i, 40 + i) for i in range(count)], dtype=object))
    fields = [np.array([f"p{i}" for i in range(count)], dtype=object), np.arange(1, count + 1, dtype=np.int32),
              np.arange(count) + 0.5, np.array([f"2024-01-0{1 + i % 9}" for i in range(count)], dtype="datetime64[D]")]
    pyogrio.raw.write(path, shapes, fields, ["name", "n", "v", "day"], driver="GPKG", crs="EPSG:4326",
                      geometry_type="Point", layer=name)
    return path


def polygons_file(folder: Path, name: str) -> Path:
    path = folder / f"{name}.gpkg"
    shapes = shapely.to_wkb(np.array([shapely.MultiPolygon([shapely.box(i, 40, i + 1, 41)]) for i in range(2)],
                                     dtype=object))
    pyogrio.raw.write(path, shapes, [np.array(["a", "b"], dtype=object)], ["name"], driver="GPKG", crs="EPSG:4326",
                      geometry_type="MultiPolygon", layer=name)
    return path


def fresh(world: dict, kind: str = "points", who: str = "owner", permissions: str = PUBLIC, share: bool = True,
          **kw) -> dict:
    """A new dataset uploaded by ``who`` (public unless said), which the group may edit (with
    ``share``): its detail."""
    world["count"] += 1
    base = f"{kind[:3]}{world['count']}"
    path = points_file(world["folder"], base, **kw) if kind == "points" else polygons_file(world["folder"], base)
    with login(world["srv"], world[who]) as c:
        detail = imported(c, c.post("/api/v2/uploads/upload", data={"permissions": permissions},
                                    files={"base_file": (path.name, path.read_bytes(), "application/octet-stream")}))
        if share:
            r = c.put(f"/api/v2/resources/{detail['pk']}/permissions",
                      json={"organizations": [{"id": world["group"]["group"]["pk"], "permissions": "edit"}]})
            assert poll(c, r.json()["status_url"])["status"] == "finished"
    return detail


# --- requests ----------------------------------------------------------------------------------


def post(client, body: str | bytes, media: str = "text/xml", path: str = "/geoserver/ows"):
    data = body.encode("utf-8") if isinstance(body, str) else body
    return client.post(path, content=data, headers={"Content-Type": media})


def features(client, alternate: str, version: str = "2.0.0") -> dict[str, dict]:
    """The layer's features by id, as GetFeature gives them (GeoJSON)."""
    r = client.get("/geoserver/ows", params={"service": "WFS", "version": version, "request": "GetFeature",
                                             "typeNames" if version == "2.0.0" else "typeName": alternate,
                                             "outputFormat": "application/json", "count": "10000"})
    assert r.status_code == 200, r.text
    return {f["id"]: f for f in r.json()["features"]}


def snapshot(client, detail: dict, data_dir: Path | None = None) -> tuple:
    """What a bad Transaction must leave as it was: the features, how many GetFeature counts, and
    the dataset's history (from the history API where the server has it, and from the catalogue's
    version rows and data version, read from its file when ``data_dir`` is given)."""
    found = features(client, detail["alternate"])
    r = client.get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0", "request": "GetFeature",
                                             "typeNames": detail["alternate"], "resultType": "hits"})
    hits = re.search(r'numberMatched="(\d+)"', r.text).group(1)
    history = client.get(f"/api/v2/resources/{detail['pk']}/versions")
    rows = None
    if data_dir is not None:
        with sqlite3.connect(f"file:{data_dir / 'catalogue.sqlite3'}?mode=ro", uri=True, timeout=30) as db:
            rows = (db.execute("SELECT uuid, number, state FROM resource_versions WHERE resource_id = ? ORDER BY number",
                               (detail["pk"],)).fetchall(),
                    db.execute("SELECT data_version, feature_count FROM datasets WHERE resource_id = ?",
                               (detail["pk"],)).fetchone())
    return found, hits, history.json() if history.status_code == 200 else history.status_code, rows


# --- answers as each client reads them ------------------------------------------------------------


def exception_code(response) -> str:
    """The exceptionCode of an OWS exception report, as GDAL finds it (the literal
    "<ows:ExceptionReport" in the body) and QGIS reads it."""
    assert "<ows:ExceptionReport" in response.text, response.text
    root = etree.fromstring(response.content)
    first = root[0]
    assert first.get("exceptionCode") and first[0].text, response.text
    return first.get("exceptionCode")


def refused(response, code: str | None = None) -> str:
    """A Transaction refusal: 200 and an exception report; its text."""
    assert response.status_code == 200, (response.status_code, response.text)
    got = exception_code(response)
    if code:
        assert got == code, response.text
    return etree.fromstring(response.content)[0][0].text


def qgis_reads(response, version: str) -> list[str]:
    """QGIS's reading of a Transaction answer (qgswfsprovider.cpp): success, then the new ids."""
    assert response.status_code == 200, response.text
    root = etree.fromstring(response.content)
    if version == "1.0.0":
        status = root.find(f".//{{{WFS}}}Status")
        assert status is not None and etree.QName(status[0]).localname == "SUCCESS", response.text
        return [e.get("fid") for r in root.iter(f"{{{WFS}}}InsertResult") for e in r.iter(f"{{{OGC}}}FeatureId")]
    summary = root.find(f"{{{WFS}}}TransactionSummary")
    assert summary is not None, response.text
    totals = [int(e.text) for e in summary]
    assert any(t > 0 for t in totals), response.text  # "no features were added, deleted or changed"
    return [e.get("fid") for r in root.iter(f"{{{WFS}}}InsertResults") for e in r.iter(f"{{{OGC}}}FeatureId")]


def _stripped(element) -> etree._Element:
    """A copy without namespaces, as GDAL's CPLStripXMLNamespace leaves it."""
    copy = etree.fromstring(etree.tostring(element))
    for e in copy.iter():
        if isinstance(e.tag, str):
            e.tag = etree.QName(e).localname
        for key in list(e.attrib):
            if "}" in key:
                e.attrib[etree.QName(key).localname] = e.attrib.pop(key)
    return copy


def gdal_reads(response, version: str, inserts: int, single: bool = False) -> list[str]:
    """GDAL's reading (ogrwfslayer.cpp): the batched commit of 1.1 and 2.0 needs totalInserted ==
    the number sent, an InsertResults node with as many children, each with FeatureId@fid, and no
    text between them; a single CreateFeature reads FeatureId@fid at 1.x, ResourceId@rid at 2.x."""
    assert response.status_code == 200, response.text
    assert "<ServiceExceptionReport" not in response.text and "<ows:ExceptionReport" not in response.text
    root = _stripped(etree.fromstring(response.content))
    if version == "1.0.0":
        assert root.find("TransactionResult/Status/FAILED") is None
        return [e.get("fid") for e in root.findall("InsertResult/FeatureId")]
    assert int(root.find("TransactionSummary/totalInserted").text) == inserts, response.text
    if not inserts:
        return []
    results = root.find("InsertResults")
    assert results is not None and len(results) == inserts, response.text
    inside = re.search(rb"<wfs:InsertResults>.*</wfs:InsertResults>", response.content, re.S).group(0)
    assert not re.search(rb">\s+<", inside), "GDAL wants no text between the children"
    if single and version.startswith("2"):
        return [f.find("ResourceId").get("rid") for f in results]
    return [f.find("FeatureId").get("fid") for f in results]


# --- bodies --------------------------------------------------------------------------------------


def gdal_insert_11(name: str, version: str = "1.1.0") -> str:
    """ogr2ogr -append at VERSION=1.1.0: every feature in one Insert (GML 3.1, latitude first)."""
    return (f'<wfs:Transaction xmlns:wfs="{WFS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" service="WFS" '
            f'version="{version}" xmlns:gml="http://www.opengis.net/gml" xmlns:ogc="{OGC}" xsi:schemaLocation="'
            f'{WFS} http://127.0.0.1:9/geoserver/ows?SERVICE=WFS&amp;VERSION={version}&amp;REQUEST=DescribeFeatureType'
            f'&amp;TYPENAME=catalogue:{name}">\n<wfs:Insert>\n'
            f'<feature:{name} xmlns:feature="{NS}">\n'
            '<feature:geom><gml:Point srsName="urn:ogc:def:crs:EPSG::4326"><gml:pos>45.25 5.5</gml:pos></gml:Point>'
            '</feature:geom>\n'
            f'<feature:name>new &amp; &lt;2&gt;</feature:name>\n<feature:n>10</feature:n>\n</feature:{name}>\n'
            f'<feature:{name} xmlns:feature="{NS}">\n'
            '<feature:geom><gml:Point srsName="urn:ogc:def:crs:EPSG::4326"><gml:pos>46 6</gml:pos></gml:Point>'
            '</feature:geom>\n'
            f'<feature:name>second</feature:name>\n<feature:n>11</feature:n>\n<feature:v>2.25</feature:v>\n'
            f'<feature:day>2024/05/06</feature:day>\n</feature:{name}>\n'
            '</wfs:Insert>\n</wfs:Transaction>\n')


def gdal_update_11(name: str, fid: int, version: str = "1.1.0", id_element: str | None = None) -> str:
    """GDAL's ISetFeature: every field, a null as a Property without Value, names without prefix."""
    ident = id_element or f'<ogc:GmlObjectId gml:id="{name}.{fid}"/>'
    return (f'<wfs:Transaction xmlns:wfs="{WFS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" service="WFS" '
            f'version="{version}" xmlns:gml="http://www.opengis.net/gml" xmlns:ogc="{OGC}">'
            f'<wfs:Update typeName="feature:{name}" xmlns:feature="{NS}">'
            '<wfs:Property><wfs:Name>geom</wfs:Name><wfs:Value><gml:Point srsName="urn:ogc:def:crs:EPSG::4326">'
            '<gml:pos>45.25 5.5</gml:pos></gml:Point></wfs:Value></wfs:Property>'
            '<wfs:Property><wfs:Name>name</wfs:Name><wfs:Value>changed</wfs:Value></wfs:Property>'
            '<wfs:Property><wfs:Name>n</wfs:Name></wfs:Property>'
            '<wfs:Property><wfs:Name>v</wfs:Name><wfs:Value>7.5</wfs:Value></wfs:Property>'
            f'<ogc:Filter>{ident}</ogc:Filter></wfs:Update></wfs:Transaction>')


def gdal_delete(name: str, fid: int, version: str = "1.1.0") -> str:
    return (f'<wfs:Transaction xmlns:wfs="{WFS}" service="WFS" version="{version}" xmlns:gml="http://www.opengis.net/gml" '
            f'xmlns:ogc="{OGC}"><wfs:Delete xmlns:feature="{NS}" typeName="feature:{name}"><ogc:Filter>'
            f'<ogc:FeatureId fid="{name}.{fid}"/></ogc:Filter></wfs:Delete></wfs:Transaction>')


def gdal_insert_10(name: str) -> str:
    """GDAL at VERSION=1.0.0: GML 2, srsName EPSG:4326, coordinates east first."""
    return (f'<wfs:Transaction xmlns:wfs="{WFS}" service="WFS" version="1.0.0" xmlns:gml="http://www.opengis.net/gml" '
            f'xmlns:ogc="{OGC}"><wfs:Insert><feature:{name} xmlns:feature="{NS}"><feature:geom><gml:Point '
            'srsName="EPSG:4326"><gml:coordinates>5.5,45.25</gml:coordinates></gml:Point></feature:geom>'
            f'<feature:name>ten</feature:name><feature:n>10</feature:n></feature:{name}></wfs:Insert></wfs:Transaction>')


def qgis_insert(name: str, version: str, x: float = 7, y: float = 47, srs: str | None = None) -> str:
    """QGIS: default namespace wfs, the layer's namespace on the root, one Insert per feature,
    attributes then geometry. 1.0: GML 2 lon,lat; 1.1: GML 3.1 pos lat lon."""
    if version == "1.0.0":
        srs = srs or "EPSG:4326"
        point = f'<gml:Point srsName="{srs}"><gml:coordinates cs="," ts=" ">{x:g},{y:g}</gml:coordinates></gml:Point>'
    else:
        srs = srs or "urn:ogc:def:crs:EPSG::4326"
        point = f'<gml:Point srsName="{srs}"><gml:pos srsDimension="2">{y:g} {x:g}</gml:pos></gml:Point>'
    return (f'<Transaction xmlns="{WFS}" xmlns:catalogue="{NS}" xmlns:gml="http://www.opengis.net/gml" service="WFS" '
            f'version="{version}"><Insert xmlns="{WFS}"><catalogue:{name}><catalogue:name>from qgis</catalogue:name>'
            f'<catalogue:n>5</catalogue:n><catalogue:day>2024-02-03</catalogue:day>'
            f'<catalogue:geom>{point}</catalogue:geom></catalogue:{name}></Insert></Transaction>')


def qgis_update(name: str, fid: int, version: str, value: str = "renamed") -> str:
    """QGIS: one Update per feature, changed properties only, prefixed names, FeatureId in an ogc Filter."""
    return (f'<Transaction xmlns="{WFS}" xmlns:catalogue="{NS}" xmlns:gml="http://www.opengis.net/gml" service="WFS" '
            f'version="{version}"><Update xmlns="{WFS}" typeName="catalogue:{name}"><Property><Name>catalogue:name</Name>'
            f'<Value>{value}</Value></Property><Property><Name>catalogue:v</Name></Property>'
            f'<Filter xmlns="{OGC}"><FeatureId fid="{name}.{fid}"/></Filter></Update></Transaction>')


def qgis_delete(name: str, fids: list[int], version: str) -> str:
    ids = "".join(f'<FeatureId fid="{name}.{fid}"/>' for fid in fids)
    return (f'<Transaction xmlns="{WFS}" xmlns:catalogue="{NS}" xmlns:gml="http://www.opengis.net/gml" service="WFS" '
            f'version="{version}"><Delete xmlns="{WFS}" typeName="catalogue:{name}"><Filter xmlns="{OGC}">{ids}</Filter>'
            "</Delete></Transaction>")
