"""The command line of field packages: ``catalogue package export``, ``catalogue package
import FILE`` and ``catalogue key`` (this catalogue's signing key's fingerprint)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def add_parsers(commands: argparse._SubParsersAction, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``package`` (with its ``export`` and ``import`` actions) and ``key`` to the command line."""
    p = commands.add_parser("package", help="field packages: take resources offline and bring the changes back")
    actions = p.add_subparsers(dest="action", required=True)
    q = actions.add_parser("export", help="write the resources a search selects into one package file")
    common(q)
    add_export_arguments(q)
    q = actions.add_parser("import", help="read a package file into this catalogue")
    common(q)
    add_import_arguments(q)
    p = commands.add_parser("key", help="this catalogue's signing key: its fingerprint, for the other side to trust")
    common(p)
    p.set_defaults(run=run_key)


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    """``catalogue package export``: the search (as the web UI's), the area, since a package, -o FILE."""
    parser.add_argument("--search", metavar="Q", help="text to search for in titles and abstracts")
    parser.add_argument("--bbox", metavar="W,S,E,N", help="the area, in longitude/latitude: west,south,east,north (--bbox=-5,41,10,51 when it starts with a minus)")
    parser.add_argument("--type", dest="types", action="append", metavar="T",
                        help="a resource type (dataset, document, map...); may repeat")
    parser.add_argument("--keyword", dest="keywords", action="append", metavar="K", help="a keyword; may repeat")
    parser.add_argument("--ids", metavar="1,2", help="resource ids, comma-separated")
    parser.add_argument("--query", metavar="QUERY", help="a query string as /api/v2/resources takes it")
    parser.add_argument("--since", metavar="PACKAGE", help="only what changed since this package (its id)")
    parser.add_argument("--clip", action="store_true", help="clip the data to the --bbox area")
    parser.add_argument("--user", metavar="NAME", help="export as this user (default: the first superuser)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="the package file to write")
    parser.set_defaults(run=run_export)


def add_import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE", help="the package file (.zip)")
    parser.add_argument("--dry-run", action="store_true", help="print what importing it would do, and change nothing")
    parser.add_argument("--user", metavar="NAME", help="the user who imports it (default: the first superuser)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(run=run_import)


def run_export(args: argparse.Namespace) -> int:
    """Write the package here and now (the export job's steps) to ``-o FILE``, and record it, so
    that a later ``--since`` export can follow it. Exit 2 for bad arguments, 1 when it fails."""
    import os
    import sys
    from pathlib import Path

    from catalogue_app import files
    from catalogue_app.cli import _prepare, _settings
    from catalogue_app.packages import export
    from catalogue_app.services import package_exports as service
    from catalogue_app.services.errors import Refused
    from catalogue_app.store import users
    from catalogue_app.store.db import Database

    settings = _settings(args)
    _prepare(settings)
    output = Path(args.output).expanduser().resolve()
    if output.is_dir() or not output.parent.is_dir():
        print(f"catalogue package export: {output} is no file in an existing folder", file=sys.stderr)
        return 2
    body = {"q": args.search, "types": args.types or [], "keywords": args.keywords or [], "bbox": args.bbox,
            "ids": args.ids, "clip": args.clip, "since": args.since, "query": args.query}
    database = Database(settings.database_path)
    workspace = output.parent / f".{output.name}.part-{os.getpid()}"
    try:
        if args.user:
            user = database.read_sync(users.by_username, args.user)
        else:
            first = database.read_sync(users.principal_superuser)
            user = database.read_sync(users.get, first) if first is not None else None
        if user is None or not user["is_active"]:
            print(f"catalogue package export: no active user {args.user or '(superuser)'}", file=sys.stderr)
            return 2
        try:
            cut = database.read_sync(service.export_request, user["id"], body)
        except Refused as exc:
            print(f"catalogue package export: {exc.message}", file=sys.stderr)
            return 2
        workspace.mkdir(parents=True, exist_ok=True)
        try:
            built = export.build(database, user_id=user["id"], cut=cut, base_url=settings.base_url,
                                 data_dir=settings.data_dir, files_dir=settings.files_dir, target=output,
                                 workspace=workspace, sign=settings.sign_packages)
        except Refused as exc:
            print(f"catalogue package export: {exc.message}", file=sys.stderr)
            return 1
        database.write_sync(export.record, built, user["id"], None)
    finally:
        files.remove(workspace)
        database.close()
    report = built.report
    print(f"package {built.package_id}: {report['resources']} resource(s), {export.size_text(built.size)},"
          f" written to {output}")
    if built.manifest["base"]:
        print(f"since package {built.manifest['base']}; {report['deleted']} deletion(s)")
    for item in report["left_out"]:
        print(f"left out: {item['title']} ({item['uuid']}): {item['reason']}")
    if report["signed_by"]:
        print(f"signed by {report['signed_by']}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    """Import the package here and now, as the job of ``POST /api/v2/packages/imports`` does
    (with or without a server on the data folder: the database's own locks serve both); print
    the report. Exit 1 when the package is refused outright (nothing is then written)."""
    import json
    import os
    import sys
    import uuid

    from catalogue_app import cli as main_cli
    from catalogue_app import files
    from catalogue_app.jobs.folders import Folders
    from catalogue_app.jobs.package_import import ImportPackage, place_upload
    from catalogue_app.jobs.runner import JobContext
    from catalogue_app.services import package_imports
    from catalogue_app.services.errors import Refused
    from catalogue_app.store.db import Database

    settings = main_cli._settings(args)
    main_cli._prepare(settings)
    if not args.file.is_file():
        print(f"Refused: {args.file} is not a file.", file=sys.stderr)
        return 1
    database = Database(settings.database_path)
    workspace = files.claim_workspace(settings.tmp_dir / f"package-import-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        viewer = database.read_sync(package_imports.importer_of, args.user)
        params = package_imports.params(viewer, place_upload(workspace, args.file), name=args.file.name,
                                        dry_run=args.dry_run, trusted_keys=tuple(settings.trusted_keys),
                                        reserve_bytes=settings.package_reserve_mb * 1024 * 1024)
        job = ImportPackage()
        ctx = JobContext(f"cli-{uuid.uuid4()}", workspace, Folders.of(settings), database, reports=False)
        staged = job.stage(params, ctx)
        output = database.write_sync(lambda conn: job.commit(conn, params, staged, ctx))
        job.after(params, staged, ctx)
    except Refused as exc:
        print(f"Refused: {exc.message}", file=sys.stderr)
        return 1
    except ValueError as exc:  # the package itself: archive.PackageError, importer.ImportRefused
        print(f"Refused: {exc}", file=sys.stderr)
        return 1
    finally:
        files.remove(workspace)
        database.close()
    report = output["report"]
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else report_text(report))
    return 0


def report_text(report: dict) -> str:
    """The import's report for people: what was done with each resource, and the notes."""
    lines = [f"Package {report.get('package')} from catalogue {report.get('maker')}"
             f" ({'signed by ' + report['signed_by'] if report.get('signed_by') else 'not signed'})"
             f"{' (dry run: nothing was changed)' if report.get('dry_run') else ''}"]
    if report.get("base"):
        lines.append(f"The changes since package {report['base']}.")
    for key in ("created", "updated", "unchanged", "conflicts", "deleted", "kept", "left_out", "refused", "failed"):
        items = report.get(key) or []
        if not items:
            continue
        lines.append(f"{key.replace('_', ' ')}: {len(items)}")
        for item in items:
            pk = f" (pk {item['pk']})" if item.get("pk") is not None else ""
            note = f": {item.get('message') or item.get('reason')}" if item.get("message") or item.get("reason") else ""
            lines.append(f"  {item.get('resource_type') or ''} {item.get('uuid')} {item.get('title') or ''!r}{pk}{note}")
    for note in report.get("notes") or []:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def run_key(args: argparse.Namespace) -> int:
    """Print this catalogue's signing key: its fingerprint (first line), then its public key (PEM).
    The key is made on first use; no server is needed."""
    import sys

    from catalogue_app.config import load_settings
    from catalogue_app.packages import keys

    settings = load_settings(data_dir=getattr(args, "data_dir", None))
    try:
        signer = keys.signer(settings.data_dir)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"catalogue key: {exc}") from None
    print(signer.fingerprint)
    print(signer.public_pem, end="")
    trusted = ", ".join(settings.trusted_keys) or "any signer, and unsigned packages"
    print(f"This catalogue's signing key ({keys.key_path(settings.data_dir)}); exports are "
          f"{'signed' if settings.sign_packages else 'NOT signed (CATALOGUE_SIGN_PACKAGES)'}. Give the fingerprint to "
          f"the catalogues that import its packages (their CATALOGUE_TRUSTED_KEYS). Imports here accept: {trusted}.",
          file=sys.stderr)
    return 0
