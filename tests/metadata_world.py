"""A catalogue with a resource whose every metadata field is filled in through GeoNode 5's
metadata editor API (users and named contacts in several roles, a thesaurus keyword, a region, a
linked resource, an extent), one linked to it, and one with nothing filled in: what the ISO,
DCAT, OGC API Records and package tests read."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

from tests.api.test_metadata_editor import document, full_instance
from tests.conftest import ADMIN_PASSWORD, in_process, login, make_user

EVERYONE = {"groups": [{"id": 1, "permissions": "view"}]}


@contextmanager
def metadata_world(data_dir, env=None):
    srv = in_process(data_dir, env)
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    alice, bob, carol = make_user(admin), make_user(admin), make_user(admin)
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:
        th = conn.execute("INSERT INTO thesauri (identifier, title, uri) VALUES ('themes', 'Themes', 'http://t/themes')").lastrowid
        conn.execute("INSERT INTO thesaurus_keywords (thesaurus_id, alt_label, about) VALUES"
                     " (?, 'Rivers', 'http://t/themes/rivers')", (th,))
    conn.close()
    md = {"alice": alice, "bob": bob, "carol": carol}
    client = login(srv, alice)
    other = document(client, "Delta photos")
    full = document(client, "Delta rivers")
    body = full_instance(md, other["pk"])
    body["license"] = {"id": "cc-by"}
    # the extent first: a document's regions follow its extent until they are named
    r = client.patch(f"/api/v2/documents/{full['pk']}", json={"extent": {"coords": [4.5, 43.2, 5.1, 43.7],
                                                                         "srid": "EPSG:4326"}})
    assert r.status_code == 200, r.text
    r = client.put(f"/api/v2/metadata/instance/{full['pk']}", json=body)
    assert r.status_code == 200, r.text
    bare = document(client, "Nothing filled in")
    try:
        yield {"srv": srv, "admin": admin, "client": client, "full": full, "other": other, "bare": bare,
               "body": body, "md": md}
    finally:
        client.close()
        admin.close()
        srv.stop()
