"""Package conflicts on a real catalogue: a resource changed here and in the field, the field's copy
set aside (packages/conflicts.py ``set_aside``, as the import calls it), then resolved by keeping
ours, theirs or both; what the resource, its history and the files folder show after."""

from __future__ import annotations

import pytest

from tests.conftest import unique
from tests.packages.conflict_world import MADE_BY, close_world, make_world


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = make_world(tmp_path_factory)
    yield w
    close_world(w)


def changed_both(world, **incoming):
    """A document changed here (its title) and in the field (its title, abstract and keywords),
    the field's copy set aside with a file: (resource, conflict id, incoming title)."""
    doc = world.new_document()
    world.patch(doc["pk"], title=unique("Office title "))
    here = world.resource(doc["pk"])
    title = unique("Field title ")
    record = world.incoming(here, title=title, abstract="Surveyed again in the field.", **incoming)
    cid = world.set_aside(here, record, folder=world.files_under_tmp())
    return here, cid, title


def test_set_aside_keeps_ours_and_lists_theirs_in_the_history(world):
    here, cid, title = changed_both(world)
    before = world.versions(here["pk"])
    # nothing of the local resource changed
    now = world.resource(here["pk"])
    assert (now["title"], now["abstract"], now["last_updated"]) == (here["title"], here["abstract"], here["last_updated"])
    # the incoming files are kept in a folder of the conflict's own, no longer under tmp/
    assert (world.files / f"aside-{cid}" / "data" / "notes.txt").read_bytes() == b"notes from the field\n"
    # the history lists the incoming copy, aside, with ours before and theirs after
    newest = before[0]
    assert newest["kind"] == "incoming" and newest["via"] == "package"
    assert newest["summary"]["state"] == "aside"
    assert newest["summary"]["made_by"] == MADE_BY and newest["summary"]["changed_by"] == MADE_BY
    assert newest["summary"]["conflict"] == cid
    assert {"title", "abstract", "keywords"} <= set(newest["summary"]["fields"])
    r = world.client("owner").get(f"/api/v2/resources/{here['pk']}/versions/{newest['number']}")
    assert r.status_code == 200, r.text
    fields = r.json()["version"]["changes"]["fields"]
    assert fields["title"] == {"before": here["title"], "after": title}
    assert fields["keywords"]["after"] == ["field"]
    # never a version to revert to: it changed nothing here
    r = world.client("owner").post(f"/api/v2/resources/{here['pk']}/versions/{newest['number']}/revert")
    assert r.status_code == 404, r.text
    assert world.resource(here["pk"])["title"] == here["title"]
    # the conflict, as the API shows it
    shown = world.conflict(cid).json()["conflict"]
    assert (shown["pk"], shown["uuid"], shown["kind"], shown["state"]) == (int(here["pk"]), here["uuid"], "changed_both", "open")
    assert shown["local"]["title"] == here["title"] and shown["incoming"]["title"] == title
    assert shown["incoming"]["version"] == 7 and shown["incoming"]["changed_by"] == MADE_BY
    assert shown["local"]["version"] == max(v["number"] for v in before if v["kind"] != "incoming")
    diffs = {d["field"]: d for d in shown["differences"]}
    assert diffs["title"]["local"] == here["title"] and diffs["title"]["incoming"] == title
    assert shown["version"] == newest["number"]
    assert cid in [c["id"] for c in world.listed("owner")]


def test_keep_local_dismisses_theirs_and_sweeps_its_files(world):
    here, cid, _title = changed_both(world)
    r = world.resolve(cid, "local")
    assert r.status_code == 200, r.text
    shown = r.json()["conflict"]
    assert shown["state"] == "kept_local" and shown["pk"] == int(here["pk"])
    assert shown["resolved_by"] == world.users["owner"]["username"] and shown["resolved"]
    now = world.resource(here["pk"])
    assert (now["title"], now["abstract"]) == (here["title"], here["abstract"])
    assert not (world.files / f"aside-{cid}").exists()
    # the version stays, as a record of what came and was not kept
    incoming = [v for v in world.versions(here["pk"]) if v["kind"] == "incoming"]
    assert [v["summary"]["state"] for v in incoming] == ["dismissed"]
    assert incoming[0]["summary"]["resolved_by"] == world.users["owner"]["username"]
    # no longer listed; resolving again is refused and changes nothing
    assert cid not in [c["id"] for c in world.listed("owner")]
    again = world.resolve(cid, "incoming")
    assert again.status_code == 409, again.text
    assert again.json()["code"] == "conflict"
    assert world.resource(here["pk"])["title"] == here["title"]
    assert world.conflict(cid).json()["conflict"]["state"] == "kept_local"


def test_deleted_here_has_no_version_and_belongs_to_its_importer(world):
    doc = world.new_document()
    record = world.incoming(doc, title=unique("Changed in the field "))
    r = world.client("owner").delete(f"/api/v2/resources/{doc['pk']}")
    assert r.status_code == 204, r.text
    cid = world.set_aside(None, record, kind="deleted_here", importer="member")
    shown = world.conflict(cid, "member").json()["conflict"]
    assert (shown["pk"], shown["local"], shown["version"], shown["kind"]) == (None, None, None, "deleted_here")
    assert cid in [c["id"] for c in world.listed("member")]
    assert cid in [c["id"] for c in world.listed("admin")]
    assert cid not in [c["id"] for c in world.listed("owner")]
    assert world.conflict(cid, "owner").status_code == 404
    r = world.resolve(cid, "local", "member")
    assert r.status_code == 200 and r.json()["conflict"]["state"] == "kept_local"
    assert world.client("admin").get(f"/api/v2/resources/{doc['pk']}").status_code == 404


# -- keeping theirs or both: the import writes the record (packages/importer.py) --------------------
def test_keep_incoming_makes_theirs_a_new_version(world):
    here, cid, title = changed_both(world)
    r = world.resolve(cid, "incoming")
    assert r.status_code == 200, r.text
    shown = r.json()["conflict"]
    assert shown["state"] == "kept_incoming" and shown["pk"] == int(here["pk"]) and shown["copy"] is None
    now = world.resource(here["pk"])
    assert now["title"] == title and now["abstract"] == "Surveyed again in the field."
    assert now["uuid"] == here["uuid"]
    history = world.versions(here["pk"])
    assert history[0]["kind"] != "incoming" and "title" in history[0]["summary"].get("fields", [])
    assert [v["summary"]["state"] for v in history if v["kind"] == "incoming"] == ["applied"]
    assert not (world.files / f"aside-{cid}").exists()


def test_keep_both_makes_theirs_a_new_resource(world):
    here, cid, title = changed_both(world)
    r = world.resolve(cid, "both")
    assert r.status_code == 200, r.text
    shown = r.json()["conflict"]
    assert shown["state"] == "kept_both" and shown["pk"] == int(here["pk"]) and shown["copy"]
    assert world.resource(here["pk"])["title"] == here["title"]
    copy = world.resource(shown["copy"])
    assert copy["title"] == f"{title} (from {MADE_BY})"
    assert copy["uuid"] != here["uuid"]
    assert [v["summary"]["state"] for v in world.versions(here["pk"]) if v["kind"] == "incoming"] == ["copied"]
    assert not (world.files / f"aside-{cid}").exists()


def test_the_aside_files_are_no_orphans_and_go_into_backups(world):
    """check does not call them orphans (repair and the start-up's sweep ask the same question),
    and a backup holds them."""
    import tarfile

    from tests.management.backup_helpers import job

    _here, cid, _title = changed_both(world)
    admin = world.client("admin")
    found = job(admin, "check", min_age=0)
    assert f"files/aside-{cid}" not in found["output_message"], found["output_message"]
    done = job(admin, "backup", output=f"conflicts-{cid}.tar")
    assert done["outcome"] == "SUCCESS", done
    archive = world.srv.data_dir / "backups" / f"conflicts-{cid}.tar"
    with tarfile.open(archive) as tar:
        assert f"files/aside-{cid}/data/notes.txt" in tar.getnames()


def test_an_incoming_copy_that_cannot_be_written_leaves_all_as_it_was(world):
    """A record the import cannot write (a field of the wrong kind): 409 with the reason, the
    resource, its history, the conflict and its files as they were."""
    doc = world.new_document()
    world.patch(doc["pk"], title=unique("Office title "))
    here = world.resource(doc["pk"])
    record = world.incoming(here, title={"not": "a title"})
    cid = world.set_aside(here, record, folder=world.files_under_tmp())
    history = world.versions(here["pk"])
    for _try in range(2):
        r = world.resolve(cid, "incoming")
        assert r.status_code == 409, r.text
        assert "could not be written here" in r.json()["errors"][0]
        assert world.conflict(cid).json()["conflict"]["state"] == "open"
        assert world.versions(here["pk"]) == history
        assert world.resource(here["pk"])["title"] == here["title"]
        assert (world.files / f"aside-{cid}" / "data" / "notes.txt").is_file()
    assert world.resolve(cid, "local").status_code == 200


def test_vacuum_stops_at_an_open_conflict_and_drops_a_resolved_one(world):
    """``catalogue vacuum --drop-versions-before`` keeps the copy an open conflict keeps aside (and
    what follows it); once resolved, its version goes with the others before the date."""
    from tests.management.backup_helpers import job

    here, cid, _title = changed_both(world)
    world.patch(here["pk"], title=unique("Office title, later "))
    numbers = [(v["number"], v["kind"]) for v in world.versions(here["pk"])]
    assert [kind for _n, kind in numbers] == ["metadata", "incoming", "metadata"]
    cutoff = world.versions(here["pk"])[0]["created"]
    admin = world.client("admin")
    assert job(admin, "vacuum", drop_versions_before=cutoff)["outcome"] == "SUCCESS"
    assert [(v["number"], v["kind"]) for v in world.versions(here["pk"])] == numbers[:2]
    assert world.resolve(cid, "local").status_code == 200
    assert job(admin, "vacuum", drop_versions_before=cutoff)["outcome"] == "SUCCESS"
    assert [(v["number"], v["kind"]) for v in world.versions(here["pk"])] == numbers[:1]
    shown = world.conflict(cid).json()["conflict"]
    assert shown["state"] == "kept_local" and shown["version"] is None
