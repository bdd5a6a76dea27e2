"""OGC API - Features, Part 4 with OWSLib as the client (``Features.collection_item_create``,
``collection_item_update``, ``collection_item_delete``): a feature of the countries created,
replaced and deleted, each change seen through WFS GetFeature and the dataset's history. OWSLib
opens its own connections: a server process."""

from __future__ import annotations

import pytest
from owslib.ogcapi.features import Features
from owslib.util import Authentication

from tests.api.test_uploads import COUNTRIES
from tests.conftest import ADMIN_PASSWORD, Server, login, make_user
from tests.ogc.conftest import upload_shapefile
from tests.ogcapi.test_features_edit import FEATURE, MOVED, cid, fid_of, history, rings, wfs_features


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("ogcapi-edit-owslib") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner = make_user(admin)
    with login(srv, owner) as c:
        detail = upload_shapefile(c, COUNTRIES)
    yield {"srv": srv, "owner": owner, "countries": detail}
    admin.close()
    srv.stop()


def client(world, user: dict | None = None) -> Features:
    auth = Authentication(user["username"], user["password"]) if user else None
    return Features(f"{world['srv'].url}/ogcapi/", auth=auth)


def test_owslib_creates_replaces_and_deletes(world):
    detail, name = world["countries"], cid(world["countries"])
    api = client(world, world["owner"])
    with world["srv"].client() as anon:
        before = wfs_features(anon, detail)
        versions = len(history(anon, detail))
        assert api.collection_item_create(name, dict(FEATURE)) is True
        fid = fid_of(api.response_headers)  # OWSLib keeps the answer's headers: Location and ETag
        assert api.response_headers["etag"]
        now = wfs_features(anon, detail)
        assert set(now) - set(before) == {fid} and now[fid]["properties"]["name"] == "Atlantis"

        assert api.collection_item_update(name, str(fid), {"type": "Feature", "geometry": MOVED,
                                                           "properties": {"name": "Atlantis II"}}) is True
        now = wfs_features(anon, detail)
        assert now[fid]["properties"]["name"] == "Atlantis II" and now[fid]["properties"]["continent"] is None
        assert rings(now[fid]["geometry"]) == rings(MOVED)

        assert api.collection_item_delete(name, str(fid)) is True
        assert wfs_features(anon, detail) == before
        made = history(anon, detail)
        assert len(made) == versions + 3 and {v["via"] for v in made[:3]} == {"ogcapi"}
        assert [(v["summary"]["inserted"], v["summary"]["updated"], v["summary"]["deleted"]) for v in made[:3]] == [
            (0, 0, 1), (0, 1, 0), (1, 0, 0)]


def test_owslib_is_refused_without_rights(world):
    detail, name = world["countries"], cid(world["countries"])
    with world["srv"].client() as anon:
        before = wfs_features(anon, detail)
        with pytest.raises(RuntimeError, match="NotAuthenticated"):
            client(world).collection_item_create(name, dict(FEATURE))
        with world["srv"].client(auth=("admin", ADMIN_PASSWORD)) as admin:
            other = make_user(admin)
        with pytest.raises(RuntimeError, match="Forbidden"):
            client(world, other).collection_item_delete(name, str(min(before)))
        assert wfs_features(anon, detail) == before
