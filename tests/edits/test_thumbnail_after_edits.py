"""A dataset's thumbnail after edits of its data: drawn again once the edits pause for the quiet
time (CATALOGUE_THUMBNAIL_QUIET, 1 s here), once for several edits in a row."""

from __future__ import annotations

import time

import pytest

from tests.conftest import ADMIN_PASSWORD, Server
from tests.edits.conftest import features, upload_countries
from tests.management.backup_helpers import wait_thumbnail

QUIET = 1.0


@pytest.fixture(scope="module")
def quiet_server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("thumbs") / "data", env={"CATALOGUE_THUMBNAIL_QUIET": str(QUIET)})
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    yield srv, admin
    admin.close()
    srv.stop()


def thumbnail_url(client, pk) -> str:
    return client.get(f"/api/v2/resources/{pk}").json()["resource"]["thumbnail_url"]


def test_the_thumbnail_is_drawn_again_once_after_edits_pause(quiet_server):
    server, admin = quiet_server
    dataset = upload_countries(admin)
    pk = dataset["pk"]
    first = wait_thumbnail(admin, pk)
    before = admin.get(first)
    assert before.status_code == 200 and before.headers["content-type"] == "image/png"
    by_name = {f["properties"]["name"]: fid for fid, f in features(admin, dataset).items()}
    seen = [first]
    started = time.monotonic()
    for name in ("Russia", "Canada", "Brazil"):  # three edits in a row, within the quiet time
        r = admin.post(f"/api/v2/datasets/{pk}/edits", json={"delete": [by_name[name]]})
        assert r.status_code == 200, r.text
        seen.append(thumbnail_url(admin, pk))
        time.sleep(QUIET / 4)
    assert set(seen) == {first}, "drawn again before the edits paused"
    assert time.monotonic() - started < 3 * QUIET
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        url = thumbnail_url(admin, pk)
        if url != first:
            break
        time.sleep(0.05)
    assert url != first, "the thumbnail was not drawn again after the edits"
    after = admin.get(url)
    assert after.status_code == 200 and after.headers["content-type"] == "image/png"
    assert after.content != before.content
    time.sleep(3 * QUIET)  # and only once
    assert thumbnail_url(admin, pk) == url
    # the old file is gone: its address leads to the new one
    old = admin.get(first)
    assert old.status_code == 302 and url.endswith(old.headers["location"])
    assert not (server.data_dir / "thumbs" / first.rsplit("/", 1)[1]).exists()
