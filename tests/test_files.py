"""The start-up sweep of crash leftovers, on real folders: what it removes and what it must keep."""

import json
import time

from catalogue_app import files


def test_the_sweep_keeps_live_work_and_removes_leftovers(tmp_path):
    tmp, store = tmp_path / "tmp", tmp_path / "files"
    for folder in (tmp / "old-upload", store / "resource", store / "orphan"):
        folder.mkdir(parents=True)
    time.sleep(0.7)  # these are now older than the sweep's age limit below
    for folder in (tmp / "open-request", tmp / "ended-request", tmp / "upload-in-progress", store / "young-orphan"):
        folder.mkdir(parents=True)
    (tmp / "upload-in-progress" / "part").write_bytes(b"x")
    removed = files.sweep(tmp, store, keep_tmp=["open-request"], known=lambda name: name == "resource",
                          ended=lambda name: name == "ended-request", min_age_seconds=0.5)
    assert {p.name for p in removed} == {"ended-request", "old-upload", "orphan"}
    assert {p.name for p in tmp.iterdir()} == {"open-request", "upload-in-progress"}  # another process's upload
    assert {p.name for p in store.iterdir()} == {"resource", "young-orphan"}  # a folder renamed in a moment ago


def test_folders_a_stopped_commit_noted_go_with_its_workspace(tmp_path):
    """A job stopped between renaming its folders into files/ and its commit: start-up removes the
    folders no resource uses, at once (not after the age limit), and keeps those in use."""
    tmp, store = tmp_path / "tmp", tmp_path / "files"
    workspace = tmp / "failed-request"
    workspace.mkdir(parents=True)
    for name in ("renamed-in", "replaced-but-still-used", "unrelated-young"):
        (store / name).mkdir(parents=True)
    files.note_folders(workspace, ["renamed-in", "replaced-but-still-used"])
    files.note_folders(workspace, ["renamed-in", "../escape"])  # noted twice, and a name no folder of files/ has
    assert json.loads((workspace / files.MANIFEST).read_text()) == ["renamed-in", "replaced-but-still-used", "../escape"]
    files.sweep(tmp, store, keep_tmp=[], known=lambda name: name == "replaced-but-still-used",
                ended=lambda name: name == "failed-request")
    assert {p.name for p in store.iterdir()} == {"replaced-but-still-used", "unrelated-young"}
    assert not workspace.exists() and (tmp_path / "files").exists()


def test_a_deleted_resource_takes_every_folder_named_after_it(tmp_path):
    for name in ("abc", "abc-1234", "abc-5678", "abcd", "other"):
        (tmp_path / name).mkdir()
    files.remove_resource_files(tmp_path, "abc")
    assert {p.name for p in tmp_path.iterdir()} == {"abcd", "other"}
