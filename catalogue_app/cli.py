"""The ``catalogue`` command: serve | createsuperuser | changepassword | token | seed | remote | publish | selfcheck.

With no arguments it serves (what a double-click on the single executable does)."""

from __future__ import annotations

import argparse
import getpass
import multiprocessing
import os
import sys

from catalogue_app import __version__
from catalogue_app.config import desktop_available, export_environment, load_settings


def _settings(args: argparse.Namespace):
    return load_settings(
        data_dir=getattr(args, "data_dir", None), host=getattr(args, "host", None),
        port=getattr(args, "port", None), workers=getattr(args, "workers", None),
        public_url=getattr(args, "public_url", None),
    )


def _prepare(settings, out=sys.stderr) -> None:
    """Create what a first start needs; say so when that made the admin account (whichever
    command ran first), since a generated password is shown this once only. Commands other
    than serve say it on stderr, so that their own output (a token) stays clean for scripts."""
    from catalogue_app.bootstrap import prepare

    prepared = prepare(settings)
    if prepared.created_admin:
        if prepared.admin_password:
            print(f"Admin account created: {prepared.admin_username} / {prepared.admin_password}"
                  "  (shown once; change it with `catalogue changepassword "
                  f"{prepared.admin_username}`)", file=out, flush=True)
        else:
            print(f"Admin account created: {prepared.admin_username} "
                  "(password from CATALOGUE_ADMIN_PASSWORD)", file=out, flush=True)


def serve(args: argparse.Namespace) -> int:
    from catalogue_app.instance import Instance

    os.environ.pop("CATALOGUE_SERVER_PID", None)  # set below for this server's own workers only
    settings = _settings(args)
    if settings.launcher_pid and settings.launcher_tmp and os.name == "posix":
        from pathlib import Path

        from catalogue_app.processes import follow_launcher

        follow_launcher(Path(settings.launcher_tmp), settings.launcher_pid)
    instance = Instance(settings.data_dir)
    if getattr(args, "bare", False) and (running := instance.running()):
        # a second double-click: the catalogue of this data folder runs already
        print(f"The catalogue already runs at {running}/  (data folder: {settings.data_dir})", flush=True)
        if desktop_available():
            import webbrowser

            webbrowser.open(f"{running}/")
        return 0
    if not settings.port_chosen:
        settings.port = _free_port(settings.host, settings.port)
    elif not _port_is_free(settings.host, settings.port):
        raise SystemExit(f"Port {settings.port} on {settings.host} is taken: choose another with --port.")
    _prepare(settings, sys.stdout)
    instance.claim(settings.base_url)  # (taken when another server runs on this folder: both serve)
    os.environ.update(export_environment(settings))
    print(f"Catalogue {settings.base_url}/  (API: {settings.base_url}/api/v2/, "
          f"docs: {settings.base_url}/api/v2/docs/)", flush=True)
    print(f"Data folder: {settings.data_dir}", flush=True)
    if getattr(args, "open_browser", False):
        _open_browser_when_up(settings.base_url)
    if getattr(sys, "frozen", False) and settings.workers == 1:
        return _serve_embedded(settings, args.access_log)
    from granian import Granian
    from granian.constants import Interfaces

    os.environ["CATALOGUE_SERVER_PID"] = str(os.getpid())  # its workers end when it does
    Granian(
        "catalogue_app.app:create_app_from_env",
        factory=True,
        address=settings.host,
        port=settings.port,
        interface=Interfaces.ASGI,
        workers=settings.workers,
        log_access=args.access_log,
    ).serve()
    return 0


def _serve_embedded(settings, access_log: bool) -> int:
    """One process serving in this one (the single executable): no worker process to start,
    hence no second unpacking or import of the application."""
    import asyncio
    import signal

    from granian.constants import Interfaces
    from granian.server.embed import Server

    from catalogue_app.app import create_app_from_env

    server = Server(create_app_from_env(), address=settings.host, port=settings.port,
                    interface=Interfaces.ASGI, log_access=access_log)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for name in ("SIGINT", "SIGTERM"):
            if hasattr(signal, name):
                try:
                    loop.add_signal_handler(getattr(signal, name), server.stop)
                except NotImplementedError:  # Windows: Ctrl+C still raises KeyboardInterrupt
                    pass
        await server.serve()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0


def _port_is_free(host: str, port: int) -> bool:
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # As the server binds: the connections a killed server left in TIME_WAIT do not hold
        # the port (without this, a restart right after a crash was refused for a minute);
        # a process listening there does. (Windows gives SO_REUSEADDR another meaning.)
        if os.name != "nt":
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _free_port(host: str, preferred: int) -> int:
    """``preferred`` when nobody listens there, else the next free one (then any free one)."""
    for port in range(preferred, preferred + 20):
        if _port_is_free(host, port):
            return port
    import socket

    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _open_browser_when_up(url: str) -> None:
    """Open the catalogue in the browser once it answers (from a background thread)."""
    if not desktop_available():
        return
    import threading
    import time
    import urllib.request
    import webbrowser

    def wait_and_open() -> None:
        for _ in range(200):
            try:
                with urllib.request.urlopen(f"{url}/api/v2/", timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        webbrowser.open(f"{url}/")

    threading.Thread(target=wait_and_open, daemon=True).start()


def _read_password(args: argparse.Namespace, prompt: str = "Password: ", preset: str = "") -> str:
    """The --password flag, else ``preset`` (CATALOGUE_ADMIN_PASSWORD, for createsuperuser),
    else a prompt, else a line of standard input."""
    if args.password:
        return args.password
    if preset:
        return preset
    if sys.stdin.isatty():
        first = getpass.getpass(prompt)
        if first != getpass.getpass("Password (again): "):
            raise SystemExit("The passwords do not match.")
        return first
    return sys.stdin.readline().rstrip("\n")


def createsuperuser(args: argparse.Namespace) -> int:
    from catalogue_app.passwords import check_strength, hash_password
    from catalogue_app.store import db, users

    settings = _settings(args)
    _prepare(settings)
    password = _read_password(args, preset=settings.admin_password)
    problems = check_strength(password, args.username)
    if problems:
        raise SystemExit(" ".join(problems))
    with db.transaction(settings.database_path) as conn:
        if users.by_username(conn, args.username):
            raise SystemExit(f"A user named {args.username!r} already exists.")
        users.create(conn, {"username": args.username, "email": args.email or "",
                            "password": hash_password(password), "is_superuser": 1, "is_staff": 1})
    print(f"Superuser {args.username} created.")
    return 0


def changepassword(args: argparse.Namespace) -> int:
    from catalogue_app.passwords import check_strength, hash_password
    from catalogue_app.store import db, users

    settings = _settings(args)
    _prepare(settings)
    password = _read_password(args, f"New password for {args.username}: ")
    problems = check_strength(password, args.username)
    if problems:
        raise SystemExit(" ".join(problems))
    with db.transaction(settings.database_path) as conn:
        row = users.by_username(conn, args.username)
        if row is None:
            raise SystemExit(f"No user named {args.username!r}.")
        users.update(conn, row["id"], {"password": hash_password(password)})
    print(f"Password changed for {args.username}.")
    return 0


def token(args: argparse.Namespace) -> int:
    from catalogue_app.store import db, tokens, users

    settings = _settings(args)
    _prepare(settings)
    with db.transaction(settings.database_path) as conn:
        row = users.by_username(conn, args.username)
        if row is None or not row["is_active"]:
            raise SystemExit(f"No active user named {args.username!r}.")
        issued = tokens.issue(conn, row["id"], int(args.days * 86400), kind="cli", label=args.label or "")
    print(issued)
    return 0


def seed(args: argparse.Namespace) -> int:
    import time

    from catalogue_app import files
    from catalogue_app.seeding.resources import seed as seed_catalogue

    settings = _settings(args)
    _prepare(settings)
    started = time.perf_counter()
    # a workspace for the text index built alongside; start-up removes it if this process dies
    scratch = files.claim_workspace(settings.tmp_dir / f"seed-{os.getpid()}")
    try:
        seed_catalogue(settings.database_path, args.resources, seed=args.seed, scratch=scratch)
    finally:
        files.remove(scratch)
    took = time.perf_counter() - started
    print(f"{args.resources} resources added in {took:.1f} s ({args.resources / max(took, 1e-9):,.0f}/s)")
    return 0


def remote(args: argparse.Namespace) -> int:
    """``remote add NAME URL [--token T]``, ``remote list``, ``remote remove NAME``."""
    from catalogue_app.services import publishing as publishing_service
    from catalogue_app.services.errors import Refused
    from catalogue_app.store import db, remotes

    settings = _settings(args)
    _prepare(settings)
    try:
        values = None
        if args.action == "add":  # checked against the remote first, outside the transaction
            values = publishing_service.remote_values({"name": args.name, "url": args.url, "token": args.token}, creating=True)
            publishing_service.check_new_remote(values)
        with db.transaction(settings.database_path) as conn:
            if values is not None:
                row = publishing_service.create_remote(conn, values)
                print(f"Remote {row['name']} added ({row['url']}, id {row['id']}"
                      f"{', with a token' if row['has_token'] else ', no token'}).")
            elif args.action == "remove":
                row = publishing_service.find_remote(conn, args.name)
                publishing_service.delete_remote(conn, row["id"])
                print(f"Remote {row['name']} removed.")
            else:
                rows = remotes.all_(conn)
                for row in rows:
                    print(f"{row['id']}\t{row['name']}\t{row['url']}\t{'token' if row['has_token'] else 'no token'}")
                if not rows:
                    print("No remotes.", file=sys.stderr)
    except Refused as exc:
        raise SystemExit(exc.message) from None
    return 0


def publish(args: argparse.Namespace) -> int:
    """Publish resources to a remote here and now (the steps of the publish job), one line each."""
    from catalogue_app import files
    from catalogue_app.jobs.thumbnails import folder as thumbs_folder
    from catalogue_app.publishing.publish import PublishError
    from catalogue_app.publishing.publish import publish as publish_one
    from catalogue_app.services import publishing as publishing_service
    from catalogue_app.services.errors import Refused
    from catalogue_app.store.db import Database

    settings = _settings(args)
    _prepare(settings)
    database = Database(settings.database_path)
    failed = 0
    try:
        for rid in args.ids:
            workspace = files.claim_workspace(settings.tmp_dir / f"publish-{os.getpid()}-{rid}")
            try:
                found = database.read_sync(publishing_service.publish_request, rid, args.remote)
                outcome = publish_one(database, found["remote_id"], rid, files_dir=settings.files_dir,
                                      thumbs_dir=thumbs_folder(settings.data_dir), workspace=workspace,
                                      site_url=settings.base_url)
                print(outcome.line(), flush=True)
            except (Refused, PublishError) as exc:
                failed += 1
                print(f"resource {rid}: {getattr(exc, 'message', None) or exc}", flush=True)
            finally:
                files.remove(workspace)
    finally:
        database.close()
    return 1 if failed else 0


def management(args: argparse.Namespace) -> int:
    """A management command run here and now, its output on the console (the same code as a job
    of ``/api/v2/management/``). Exit 2 for bad arguments, 1 when the command fails."""
    from catalogue_app.instance import Instance
    from catalogue_app.management import registry
    from catalogue_app.management.base import CommandContext, CommandError
    from catalogue_app.store.db import Database

    rest = list(args.arguments)
    if "--data-dir" in rest[:-1]:  # written after the command's own arguments
        at = rest.index("--data-dir")
        args.data_dir = rest[at + 1]
        del rest[at:at + 2]
    command = registry.command(args.command)
    if command is None:
        raise SystemExit(f"{args.command} is not available in this build.")
    if "--help" in rest or "-h" in rest:
        print(command.help_text())
        return 0
    try:
        options = command.parser().parse_args(rest)
    except CommandError as exc:
        print(exc, file=sys.stderr)
        return 2
    settings = _settings(args)
    if command.prepares_data:
        _prepare(settings)
    database = Database(settings.database_path) if command.prepares_data else None
    ctx = CommandContext(db=database, data_dir=settings.data_dir, files_dir=settings.files_dir,
                         tmp_dir=settings.tmp_dir, import_dir=settings.import_folder, out=sys.stdout,
                         server_running=Instance(settings.data_dir).held())
    try:
        command.run(ctx, options)
    except CommandError as exc:
        print(f"{args.command}: {exc}", file=sys.stderr)
        return 1
    finally:
        if database is not None:
            database.close()
    return 0


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def selfcheck(args: argparse.Namespace) -> int:
    from catalogue_app import selfcheck as checks

    return checks.run()


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="catalogue", description=__doc__)
    top.add_argument("--version", action="version", version=f"catalogue {__version__}")
    commands = top.add_subparsers(dest="command")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data-dir", help="data folder (default: CATALOGUE_DATA_DIR or the user data folder)")

    p = commands.add_parser("serve", help="run the HTTP server")
    common(p)
    p.add_argument("--host", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 8000)")
    p.add_argument("--workers", type=int, help="worker processes (default 1)")
    p.add_argument("--public-url", help="base URL that absolute links use")
    p.add_argument("--access-log", action="store_true", help="log every request")
    p.add_argument("--open", dest="open_browser", action="store_true",
                   help="open the web UI in the browser once the server answers (where there is a desktop)")
    p.set_defaults(run=serve)

    p = commands.add_parser("createsuperuser", help="create an administrator")
    common(p)
    p.add_argument("--username", required=True)
    p.add_argument("--email", default="")
    p.add_argument("--password", help="(default: CATALOGUE_ADMIN_PASSWORD, a prompt, or stdin)")
    p.set_defaults(run=createsuperuser)

    p = commands.add_parser("changepassword", help="set a user's password")
    common(p)
    p.add_argument("username")
    p.add_argument("--password", help="(default: a prompt, or stdin)")
    p.set_defaults(run=changepassword)

    p = commands.add_parser("token", help="print a new Bearer token for a user")
    common(p)
    p.add_argument("username")
    p.add_argument("--days", type=float, default=365, help="lifetime in days (default 365)")
    p.add_argument("--label", help="what the token is for (shown on the user's My tokens page)")
    p.set_defaults(run=token)

    p = commands.add_parser("seed", help="add made-up resources (tests, demos, benchmarks)")
    common(p)
    p.add_argument("--resources", type=_count, required=True, help="how many")
    p.add_argument("--seed", type=int, default=1, help="random seed")
    p.set_defaults(run=seed)

    p = commands.add_parser("remote", help="the remotes resources are published to (GeoNode API v2)")
    actions = p.add_subparsers(dest="action", required=True)
    q = actions.add_parser("add", help="add a remote")
    common(q)
    q.add_argument("name")
    q.add_argument("url", help="the remote's address (http://host:port)")
    q.add_argument("--token", help="a Bearer token of the remote's user who will own what is published"
                   " (--token=T when it starts with a dash)")
    q.set_defaults(run=remote)
    q = actions.add_parser("list", help="list the remotes")
    common(q)
    q.set_defaults(run=remote)
    q = actions.add_parser("remove", help="remove a remote (and the records of what was published there)")
    common(q)
    q.add_argument("name", help="its name or id")
    q.set_defaults(run=remote)

    p = commands.add_parser("publish", help="publish datasets or documents to a remote, or update them there")
    common(p)
    p.add_argument("--remote", required=True, help="the remote's name or id")
    p.add_argument("ids", nargs="+", type=_count, metavar="ID", help="resource ids")
    p.set_defaults(run=publish)

    p = commands.add_parser("selfcheck", help="check what this build can do: the tile grid and linked data")
    p.set_defaults(run=selfcheck)

    from catalogue_app.packages import cli as package_cli

    package_cli.add_parsers(commands, common)

    from catalogue_app.management.registry import COMMANDS

    for name in COMMANDS:
        p = commands.add_parser(name, help=f"a management command (catalogue {name} --help)", add_help=False)
        common(p)
        p.add_argument("arguments", nargs=argparse.REMAINDER, help="the command's own arguments")
        p.set_defaults(run=management)
    return top


def main(argv: list[str] | None = None) -> None:
    multiprocessing.freeze_support()
    if getattr(sys, "frozen", False):
        from catalogue_app.config import restore_library_path

        restore_library_path()
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        # Started with nothing (a double-click): serve from the user's data folder and open
        # the browser where there is a desktop.
        argv = ["serve"]
        opening = True
    else:
        opening = False
    top = parser()
    args, extra = top.parse_known_args(argv)
    if extra:  # a management command's own options; elsewhere an error
        if getattr(args, "run", None) is not management:
            top.error(f"unrecognized arguments: {' '.join(extra)}")
        args.arguments = [*extra, *args.arguments]
    if args.command is None:
        parser().print_help()
        raise SystemExit(2)
    args.open_browser = opening or getattr(args, "open_browser", False)
    args.bare = opening
    raise SystemExit(args.run(args))
