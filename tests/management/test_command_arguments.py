"""Bad arguments give a clear message and an exit status, never a traceback; and the rules of a
command run over HTTP (a caller known): only the import folder, links out of it refused, and a
stop asked between two file sets. The latter drive the command objects as the job runner does,
on a real data folder."""

from __future__ import annotations

import io
import os
import shutil

import pytest

from catalogue_app.management import registry
from catalogue_app.management.base import CommandContext, CommandError, Stopped
from catalogue_app.store import datasets
from catalogue_app.store.db import Database
from tests.management.helpers import CITIES, DATA, copy_shapefile, run

LAYER_COMMANDS = ("importlayers", "updatelayers", "sync_geonode_datasets", "sync_geonode_maps",
                  "set_all_datasets_metadata", "set_layers_permissions")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("args") / "catalogue"
    result = run(folder, "sync_geonode_maps")  # prepares the data folder (and says there is no map)
    assert result.returncode == 0, result.stderr
    assert "No map matches." in result.stdout
    return folder


@pytest.mark.parametrize("args, status, message", [
    (["importlayers"], 2, "the following arguments are required: PATH"),
    (["importlayers", "/no/such/place"], 1, "there is no file or folder '/no/such/place'"),
    (["importlayers", "{drop}", "-u", "nobody"], 1, "--user: there is no user 'nobody'"),
    (["importlayers", "{drop}", "-c", "nosuch"], 1, "--category: there is no category 'nosuch' (known: "),
    (["importlayers", "{drop}", "-p", "{bad json"], 1, "--permissions: not valid JSON"),
    (["importlayers", "{drop}", "-p", '{"users": {"nobody": "view"}}'], 1, "there is no user named 'nobody'"),
    (["importlayers", "{drop}", "-p", '{"users": {"admin": "boss"}}'], 1, "unknown level 'boss'"),
    (["importlayers", "{drop}", "-p", '{"groups": {"anonymous": "edit"}}'], 1, "may be given at most 'download'"),
    (["importlayers", "{drop}", "-t", "One title"], 1, "--title names one dataset, and 2 file sets were found"),
    (["importlayers", "{drop}", "-o", "--skip-existing"], 2, "not allowed with argument"),
    (["importlayers", "{drop}", "-C", "klingon"], 1, "--charset: charset: 'klingon' is not a known character set"),
    (["importlayers", "{drop}/notes.txt"], 1, "notes.txt is not a dataset file"),
    (["importlayers", "{drop}", "-r", "Atlantis"], 1, "Invalid value for 'regions'"),
    (["updatelayers", "--folder", "/no/such/place"], 1, "--folder: there is no file or folder"),
    (["set_layers_permissions", "-r", "1", "-u", "admin"], 2, "the following arguments are required: -p/--permission"),
    (["set_layers_permissions", "-r", "1", "-p", "boss", "-u", "admin"], 1, "unknown permission level 'boss'"),
    (["set_layers_permissions", "-p", "view", "-u", "admin"], 1, "name the datasets: --resources"),
    (["set_layers_permissions", "-r", "Atlantis", "-p", "view", "-u", "admin"], 1,
     "--resources: there is no dataset with id, title or name 'Atlantis'"),
    (["set_layers_permissions", "-r", "1", "-p", "view"], 1, "name the users (-u) or groups (-g)"),
    (["set_layers_permissions", "-r", "1", "-p", "view", "-g", "nogroup"], 1, "--groups: there is no group named"),
    (["sync_geonode_datasets", "--ids", "12345"], 1, "--ids: there is no dataset with id 12345"),
    (["sync_geonode_datasets", "--ids", "1,x"], 1, "--ids: 'x' is not an id"),
    (["sync_geonode_datasets", "--username", "nobody"], 1, "--username: there is no user 'nobody'"),
    (["sync_geonode_maps", "--bogus"], 2, "unrecognized arguments: --bogus"),
])
def test_bad_arguments(data_dir, tmp_path, args, status, message):
    drop = tmp_path / "drop"
    copy_shapefile(CITIES, drop, "one")
    shutil.copyfile(DATA / "shade.tif", drop / "two.tif")
    (drop / "notes.txt").write_text("no data\n")
    before = datasets_in(data_dir)
    result = run(data_dir, *[a.replace("{drop}", str(drop)) for a in args])
    assert result.returncode == status, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert datasets_in(data_dir) == before


def datasets_in(data_dir) -> list[str]:
    return [p.name for p in (data_dir / "files").iterdir()] if (data_dir / "files").is_dir() else []


@pytest.mark.parametrize("name", LAYER_COMMANDS)
def test_help_is_the_argparse_help(name, data_dir):
    command = registry.command(name)
    assert command is not None and command.over_http
    text = command.help_text()
    assert text.startswith(f"usage: {name}") and command.help.split(",")[0][:40] in " ".join(text.split())
    result = run(data_dir, name, "--help")
    assert result.returncode == 0 and result.stdout.strip() == text.strip()


# -- over HTTP: the job runner's way ------------------------------------------------------------
@pytest.fixture
def job(data_dir):
    database = Database(data_dir / "catalogue.sqlite3")
    out = io.StringIO()
    import_dir = data_dir / "import"
    import_dir.mkdir(exist_ok=True)
    ctx = CommandContext(db=database, data_dir=data_dir, files_dir=data_dir / "files", tmp_dir=data_dir / "tmp",
                         import_dir=import_dir, out=out, user_id=1)
    yield ctx
    database.close()


def start(ctx, name: str, *args: str) -> str:
    command = registry.command(name)
    command.run(ctx, command.parser().parse_args(list(args)))
    return ctx.out.getvalue()


def test_over_http_only_the_import_folder(job, tmp_path):
    before = datasets_in(job.data_dir)
    outside = tmp_path / "outside"
    shutil.copytree(CITIES, outside)
    with pytest.raises(CommandError, match="outside the import folder"):
        start(job, "importlayers", str(outside))
    with pytest.raises(CommandError, match="outside the import folder"):
        start(job, "importlayers", "../../outside")
    with pytest.raises(CommandError, match="--folder: .* is outside the import folder"):
        start(job, "updatelayers", "--folder", str(outside))

    inside = job.import_dir / "links"
    inside.mkdir()
    os.symlink(outside / "naturalearth_cities.shp", inside / "stolen.shp")
    os.symlink(outside, inside / "elsewhere")
    with pytest.raises(CommandError, match="2 file sets could not be imported"):
        start(job, "importlayers", "links")
    said = job.out.getvalue()
    assert "failed      links/stolen.shp: stolen.shp is a link leading out of the import folder: refused" in said
    assert "failed      links/elsewhere: a link leading out of the import folder: refused" in said
    assert datasets_in(job.data_dir) == before


def test_over_http_a_relative_path_inside_is_imported_for_the_caller(job):
    folder = job.import_dir / "mine"
    folder.mkdir()
    shutil.copyfile(DATA / "float_raster_with_nodata.tif", folder / "floaty.tif")
    said = start(job, "importlayers", "mine/floaty.tif")
    assert "imported    floaty.tif: dataset" in said
    rid = job.db.read_sync(datasets.of_owner_named, 1, "floaty")
    assert rid is not None and f"dataset {rid} 'floaty'" in said


def test_a_stop_asked_between_file_sets(job):
    folder = job.import_dir / "stopping"
    folder.mkdir()
    for name in ("a.tif", "b.tif"):
        shutil.copyfile(DATA / "shade.tif", folder / name)
    asked = iter([False, True])
    job.stop_requested = lambda: next(asked)
    with pytest.raises(Stopped):
        start(job, "updatelayers", "--folder", "stopping")
    said = job.out.getvalue()
    assert "imported    stopping/a.tif" in said and "stopped after 1 of 2 file sets." in said
    assert job.db.read_sync(datasets.of_owner_named, 1, "b") is None
    assert [p.name for p in job.tmp_dir.iterdir() if p.name.startswith("command-")] == []
