"""A package made here and imported into another catalogue keeps every metadata field: the
scalar fields, category, licence, keywords, thesaurus keywords, regions, linked resources, and
the contacts of each role (users known there by name, and contacts that are no users, with their
organisation and email); the ISO record made there still validates."""

from __future__ import annotations

import sqlite3

from lxml import etree

from tests.conftest import ADMIN_PASSWORD, in_process, make_user
from tests.iso_schema import errors_of
from tests.metadata_world import metadata_world
from tests.packages.test_field_story import export_over_http, import_over_http, ok


def comparable(instance: dict) -> dict:
    """An instance without what differs between catalogues: ids (users', resources')."""
    out = {k: v for k, v in instance.items() if k not in ("linkedresources", "contacts")}
    out["linkedresources"] = [r["label"] for r in instance["linkedresources"]]
    out["contacts"] = {role: ([c.get("label") or c for c in people] if isinstance(people, list)
                              else (people or {}).get("label"))
                       for role, people in instance["contacts"].items()}
    return out


def test_a_package_keeps_every_metadata_field(tmp_path):
    with metadata_world(tmp_path / "office") as office:
        full, other, client = office["full"], office["other"], office["client"]
        here = client.get(f"/api/v2/metadata/instance/{full['pk']}").json()
        _out, path = export_over_http(client, {"ids": [int(full["pk"]), int(other["pk"])]}, tmp_path / "p.zip")
        field = in_process(tmp_path / "field")
        try:
            admin = field.client(auth=("admin", ADMIN_PASSWORD))
            for name in ("alice", "bob", "carol"):  # the same people have accounts there
                make_user(admin, username=office["md"][name]["username"])
            conn = sqlite3.connect(field.data_dir / "catalogue.sqlite3", timeout=30)
            with conn:
                th = conn.execute("INSERT INTO thesauri (identifier, title, uri) VALUES ('themes', 'Themes',"
                                  " 'http://t/themes')").lastrowid
                conn.execute("INSERT INTO thesaurus_keywords (thesaurus_id, alt_label, about) VALUES"
                             " (?, 'Rivers', 'http://t/themes/rivers')", (th,))
            conn.close()
            report = import_over_http(admin, path)
            assert len(report["created"]) == 2, report
            found = ok(admin.get("/api/v2/resources/", params={"filter{uuid}": full["uuid"]}))["resources"]
            pk = found[0]["pk"]
            there = ok(admin.get(f"/api/v2/metadata/instance/{pk}"))
            assert comparable(there) == comparable(here)
            assert there["contacts"]["pointOfContact"][1] == {"name": "Ana Field", "organization": "Delta Survey",
                                                              "email": "ana@delta.example"}
            # the ISO record there carries them and validates
            resource = ok(admin.get(f"/api/v2/resources/{pk}"))["resource"]
            url = next(link["url"] for link in resource["links"] if link["name"] == "ISO")
            root = etree.fromstring(admin.get(url).content)
            record = root.find("{http://www.isotc211.org/2005/gmd}MD_Metadata")
            assert errors_of(record) == [] and b"Delta Survey" in etree.tostring(record)
            # changed there, and the change comes back into the office
            assert admin.patch(f"/api/v2/metadata/instance/{pk}", json={
                "edition": "3rd", "contacts": {"pointOfContact": [{"name": "Ana Field", "organization": "Delta Survey",
                                                                   "email": "ana@field.example"}]}}).status_code == 200
            _out, back = export_over_http(admin, {"ids": [int(pk)]}, tmp_path / "back.zip")
            report = import_over_http(client, back)
            assert [i["title"] for i in report.get("updated") or []] == [here["title"]], report
            again = client.get(f"/api/v2/metadata/instance/{full['pk']}").json()
            assert again["edition"] == "3rd"
            assert again["contacts"]["pointOfContact"] == [{"name": "Ana Field", "organization": "Delta Survey",
                                                            "email": "ana@field.example"}]
            assert again["doi"] == here["doi"] and again["contacts"]["author"] == here["contacts"]["author"]
            admin.close()
        finally:
            field.stop()
