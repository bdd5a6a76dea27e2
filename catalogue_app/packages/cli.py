"""The command line of field packages: ``catalogue package export``, ``catalogue package
import FILE`` and ``catalogue key`` (this catalogue's signing key's fingerprint)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


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
    parser.set_defaults(run=run_export)


def add_import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults(run=run_import)


def run_export(args: argparse.Namespace) -> int:
    raise SystemExit("catalogue package export: not there yet")


def run_import(args: argparse.Namespace) -> int:
    raise SystemExit("catalogue package import: not there yet")


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
