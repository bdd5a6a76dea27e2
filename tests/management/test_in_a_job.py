"""The commands as a job of /api/v2/management/ runs them: in a thread of the process that owns
the Database, their output in a buffer, a user who asked, and stop requests between steps."""

from __future__ import annotations

import io
import threading

import pytest

from catalogue_app.bootstrap import prepare
from catalogue_app.config import load_settings
from catalogue_app.management import registry
from catalogue_app.management.base import CommandContext, CommandError, Stopped
from catalogue_app.store.db import Database


@pytest.fixture
def job(tmp_path):
    settings = load_settings(environ={"CATALOGUE_ADMIN_PASSWORD": "admin-secret-1"}, data_dir=tmp_path / "data")
    prepare(settings)
    db = Database(settings.database_path)

    def run(name: str, *args: str, stop_after: int | None = None) -> str:
        command = registry.command(name)
        asked = [0]

        def stop_requested() -> bool:
            asked[0] += 1
            return stop_after is not None and asked[0] > stop_after

        out = io.StringIO()
        ctx = CommandContext(db=db, data_dir=settings.data_dir, files_dir=settings.files_dir, tmp_dir=settings.tmp_dir,
                             import_dir=settings.import_folder, out=out, user_id=1, server_running=True,
                             stop_requested=stop_requested)
        failure: list[BaseException] = []

        def body() -> None:
            try:
                command.run(ctx, command.parser().parse_args(list(args)))
            except BaseException as exc:
                failure.append(exc)

        thread = threading.Thread(target=body)
        thread.start()
        thread.join(60)
        if failure:
            raise failure[0]
        return out.getvalue()

    yield run, settings
    db.close()


def test_which_commands_are_offered_over_http():
    over_http = registry.known(over_http=True)
    assert {"backup", "check", "repair", "vacuum"} <= set(over_http)
    assert "restore" not in over_http and "restore" in registry.known(over_http=False)


def test_a_backup_job_writes_into_backups_only(job):
    run, settings = job
    out = run("backup", "--output", "nightly.tar")
    assert (settings.data_dir / "backups" / "nightly.tar").is_file()
    assert "Backup written" in out
    with pytest.raises(CommandError, match="file name only"):
        run("backup", "--output", str(settings.data_dir.parent / "elsewhere.tar"))
    with pytest.raises(CommandError, match="exists already"):
        run("backup", "--output", "nightly.tar")


@pytest.mark.parametrize("stop_after", [0, 1])  # in the copy of the database, in the archive
def test_a_stopped_backup_leaves_nothing(job, stop_after):
    run, settings = job
    with pytest.raises(Stopped):
        run("backup", stop_after=stop_after)
    backups = settings.data_dir / "backups"
    assert not backups.exists() or list(backups.iterdir()) == []
    assert list(settings.tmp_dir.iterdir()) == []


def test_check_repair_and_vacuum_as_jobs(job):
    run, settings = job
    assert "no problems" in run("check", "--min-age", "0")
    (settings.files_dir / "stray").mkdir()
    with pytest.raises(CommandError, match="1 problem"):
        run("check", "--min-age", "0")
    assert "fixed: move files/stray" in run("repair", "--min-age", "0")
    assert "no problems" in run("check", "--min-age", "0")
    out = run("vacuum")
    assert "Before:" in out and "After:" in out
    with pytest.raises(Stopped):
        run("check", stop_after=0)
