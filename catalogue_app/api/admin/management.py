"""/api/v2/management/: GeoNode's management commands over HTTP (facts §16), for staff.

Answers carry GeoNode's ``{"success", "error", "data"}`` wrapper where GeoNode sends it (a job's
detail and status come bare); errors also carry the catalogue's ``errors`` and ``code``. The jobs'
list takes the filters GeoNode declares (``status``, ``command``, ``app_name``, ``user``,
``user__username``, ``task_result_id``) and, unlike GeoNode, applies them.

Beyond GeoNode: ``/backups/`` lists the archives the ``backup`` command wrote into the data
folder's backups/ (staff), ``/backups/{name}`` sends one (superusers only: an archive holds
password hashes and token digests), and a finished backup job names its archive (``archive``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, BinaryIO
from urllib.parse import quote

import anyio
import msgspec
from litestar import Controller, get, patch, post
from litestar.params import FromPath
from litestar.response import Stream

from catalogue_app.api import pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import invalid
from catalogue_app.api.request_bodies import path_id, read_body
from catalogue_app.reads import management as job_reads
from catalogue_app.reads.management import Job, JobBrief, JobStatus
from catalogue_app.services import backups
from catalogue_app.services import management as management_service
from catalogue_app.services.errors import NotFound, Refused

EMPTY_JOB = {"command": "", "app_name": "", "user": None, "status": "CREATED", "created_at": None,
             "start_time": None, "end_time": None, "args": [], "kwargs": {}, "celery_result_id": None,
             "output_message": None}


class Wrapped(msgspec.Struct):
    success: bool
    error: str | None
    data: Any


class JobList(pagination.ListPage):
    data: list[JobBrief]


class BackupFile(msgspec.Struct):
    name: str
    size: int  # bytes
    created: str  # when the archive was written (UTC)
    download_url: str  # superusers only


class BackupList(msgspec.Struct):
    backups: list[BackupFile]  # newest first


class ManagementRoot(msgspec.Struct):
    jobs: str
    commands: str


async def _guarded(call, *args: Any) -> Any:
    """Run a rule; a refusal also carries GeoNode's ``error`` (and ``data`` for a job not started)."""
    try:
        return await call(*args)
    except management_service.JobRefused as exc:
        exc.extra.setdefault("error", exc.message)
        exc.extra.setdefault("data", EMPTY_JOB)
        raise
    except Refused as exc:
        exc.extra.setdefault("error", exc.message)
        raise


def _wake(ctx: Context) -> None:
    runner = getattr(ctx.request.app.state, "management", None)
    if runner is not None:
        runner.wake()


FILTER_KEYS = ("status", "command", "app_name", "user", "task_result_id")


def _filters(params: list[tuple[str, str]]) -> tuple[dict[str, Any], str | None]:
    filters: dict[str, Any] = {}
    for key, value in params:
        if key in FILTER_KEYS:
            if key == "user":
                if not value.isdecimal() or len(value) > 18:
                    raise invalid(f"user: '{value}' is not a user id.")
                filters[key] = int(value)
            else:
                filters[key] = value
    username = next((v for k, v in params if k == "user__username"), None)
    return filters, username


class ManagementController(Controller):
    path = "/api/v2/management"
    tags = ["management"]

    @get("/", summary="The management API's routes (staff)")
    async def root(self, ctx: Ctx) -> ManagementRoot:
        await _guarded(self._staff, ctx)
        return ManagementRoot(f"{ctx.base}/api/v2/management/jobs/", f"{ctx.base}/api/v2/management/commands/")

    async def _staff(self, ctx: Context) -> None:
        management_service.require_staff(ctx.caller)

    @get("/commands", summary="The commands offered over HTTP (staff)")
    async def commands(self, ctx: Ctx) -> Wrapped:
        await _guarded(self._staff, ctx)
        from catalogue_app.management import registry

        return Wrapped(True, None, registry.known())

    @get("/commands/{cmd:str}", summary="A command's help text (staff)")
    async def command_help(self, ctx: Ctx, cmd: FromPath[str]) -> Wrapped:
        def help_of() -> str:  # the command's module is imported here: off the event loop
            return management_service.command_named(ctx.caller, cmd, from_body=False).help_text()

        return Wrapped(True, None, await _guarded(anyio.to_thread.run_sync, help_of))

    @post("/commands", status_code=201, summary="Run a command: {command, args, kwargs, autostart} (staff)")
    async def create_from_body(self, ctx: Ctx) -> Wrapped:
        return await self._create(ctx, None)

    @post("/jobs", status_code=201, summary="Run a command: {command, args, kwargs, autostart} (staff)")
    async def create_job(self, ctx: Ctx) -> Wrapped:
        return await self._create(ctx, None)

    @post("/commands/{cmd:str}", status_code=201, summary="Run this command: {args, kwargs, autostart} (staff)")
    async def create_for_command(self, ctx: Ctx, cmd: FromPath[str]) -> Wrapped:
        return await self._create(ctx, cmd)

    @post("/commands/{cmd:str}/jobs", status_code=201, summary="Run this command (staff)")
    async def create_in_jobs(self, ctx: Ctx, cmd: FromPath[str]) -> Wrapped:
        return await self._create(ctx, cmd)

    async def _create(self, ctx: Context, cmd: str | None) -> Wrapped:
        async def make() -> int:
            management_service.require_staff(ctx.caller)
            body = await read_body(ctx.request)
            if cmd is None:
                name = body.get("command") if isinstance(body, dict) else None
                rest = {k: v for k, v in body.items() if k != "command"} if isinstance(body, dict) else body
                # the command's module is imported here, off the event loop and outside the writer
                await anyio.to_thread.run_sync(lambda: management_service.command_named(ctx.caller, name, from_body=True))
                return await ctx.db.write(management_service.create_job, ctx.caller, name, rest, True)
            await anyio.to_thread.run_sync(lambda: management_service.command_named(ctx.caller, cmd, from_body=False))
            return await ctx.db.write(management_service.create_job, ctx.caller, cmd, body)

        job_id = await _guarded(make)
        _wake(ctx)
        return Wrapped(True, None, await ctx.db.read(job_reads.one, job_id))

    @get("/jobs", summary="Jobs, newest first (staff); filters status, command, app_name, user, user__username")
    async def list_jobs(self, ctx: Ctx) -> JobList:
        return await self._list(ctx, None)

    @get("/commands/{cmd:str}/jobs", summary="This command's jobs, newest first (staff)")
    async def list_command_jobs(self, ctx: Ctx, cmd: FromPath[str]) -> JobList:
        return await self._list(ctx, cmd)

    async def _list(self, ctx: Context, cmd: str | None) -> JobList:
        await _guarded(self._staff, ctx)
        filters, username = _filters(ctx.params)
        if cmd is not None:
            filters["command"] = cmd

        page = pagination.wanted(ctx.request, ctx.params)
        total, items = await ctx.db.read(job_reads.page, filters, username, page.size, page.offset)
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, JobList, page, total, items)

    @get("/jobs/{job_id:str}", summary="One job, with its output (staff)")
    async def get_job(self, ctx: Ctx, job_id: FromPath[str]) -> Job:
        return await self._job(ctx, job_id, job_reads.detail)

    @get("/commands/{cmd:str}/jobs/{job_id:str}", summary="One job of this command (staff)")
    async def get_command_job(self, ctx: Ctx, cmd: FromPath[str], job_id: FromPath[str]) -> Job:
        found = await self._job(ctx, job_id, job_reads.detail)
        if found.command != cmd:
            raise NotFound("Job")
        return found

    @get("/jobs/{job_id:str}/status", summary="A job with its task's state (staff)")
    async def job_status(self, ctx: Ctx, job_id: FromPath[str]) -> JobStatus:
        return await self._job(ctx, job_id, job_reads.with_status)

    async def _job(self, ctx: Context, job_id: str, read: Any) -> Any:
        """The job at ``job_id`` as ``read`` shows it (job_reads.detail or with_status)."""
        pk = path_id(job_id, "Job")
        return await _guarded(ctx.db.read, read, ctx.caller, pk, ctx.settings.data_dir)

    @patch("/jobs/{job_id:str}/start", summary="Start a job that was created without autostart (staff)")
    async def start_job(self, ctx: Ctx, job_id: FromPath[str]) -> Wrapped:
        pk = path_id(job_id, "Job")
        await _guarded(ctx.db.write, management_service.start, ctx.caller, pk)
        _wake(ctx)
        return Wrapped(True, None, await ctx.db.read(job_reads.one, pk))

    @patch("/jobs/{job_id:str}/stop", summary="Stop a job: at once if it has not started, else at its next step (staff)")
    async def stop_job(self, ctx: Ctx, job_id: FromPath[str]) -> Wrapped:
        pk = path_id(job_id, "Job")
        await _guarded(ctx.db.write, management_service.stop, ctx.caller, pk)
        return Wrapped(True, None, await ctx.db.read(job_reads.one, pk))

    @get("/backups", summary="The backups in the data folder's backups/, newest first (staff)")
    async def list_backups(self, ctx: Ctx) -> BackupList:
        found = await anyio.to_thread.run_sync(backups.listing, ctx.caller, ctx.settings.data_dir)
        return BackupList([BackupFile(b.name, b.size, b.created, backup_url(ctx.base, b.name)) for b in found])

    @get("/backups/{name:str}",
         summary="A backup's archive, as an attachment (superusers: it holds password hashes and token digests)")
    async def download_backup(self, ctx: Ctx, name: FromPath[str]) -> Stream:
        handle, found = await anyio.to_thread.run_sync(backups.open_for_download, ctx.caller, ctx.settings.data_dir,
                                                       name)
        media = "application/gzip" if name.endswith((".gz", ".tgz")) else "application/x-tar"
        return Stream(_chunks(handle, found.size), media_type=media, headers={
            "Content-Length": str(found.size), "Content-Disposition": attachment(found.name),
            "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})


CHUNK = 1024 * 1024


async def _chunks(handle: BinaryIO, size: int) -> AsyncIterator[bytes]:
    """The file's first ``size`` bytes (its size when opened), read off the event loop; the
    file is closed at the end, or when the client goes away."""
    try:
        left = size
        while left > 0:
            data = await anyio.to_thread.run_sync(handle.read, min(CHUNK, left))
            if not data:
                break
            left -= len(data)
            yield data
    finally:
        handle.close()


def backup_url(base: str, name: str) -> str:
    return f"{base}/api/v2/management/backups/{quote(name, safe='')}"


def attachment(name: str) -> str:
    """A Content-Disposition naming the file (RFC 6266: an ASCII name, and the exact one encoded)."""
    plain = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


ROUTES = [ManagementController]
