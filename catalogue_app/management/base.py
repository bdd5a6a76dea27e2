"""What a command is: a name, a help text, an argument parser, and ``run``.

A command writes what it does to ``ctx.out`` (a text stream: on the command line the console,
in a job its ``output_message``, kept as it grows) and calls ``ctx.check()`` between steps:
when the job is asked to stop, ``check`` raises Stopped, and a command that stops there must
leave nothing half-written (each step is one transaction, or writes its files atomically).
A command refuses bad arguments with CommandError (its message is what the operator reads).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NoReturn, TextIO

from catalogue_app.jobs.folders import Folders
from catalogue_app.store.db import Database


class CommandError(Exception):
    """The command cannot do what was asked: the message says why, for the operator."""


class Stopped(Exception):
    """The job was asked to stop; raised by ``ctx.check()`` between two steps."""


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises CommandError instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise CommandError(f"{self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise CommandError(message or f"{self.prog}: stopped")


@dataclass
class CommandContext:
    """What a command may use: the database (through its writer and readers), the folders, the
    user who asked (a users row id, or None on the command line), its output, and the stop check."""

    db: Database | None               # None for a command that does not prepare the data folder
    data_dir: Path
    files_dir: Path
    tmp_dir: Path
    import_dir: Path
    out: TextIO
    user_id: int | None = None
    server_running: bool = True      # False on the command line with no server on the data folder
    stop_requested: Any = None       # a callable answering whether the job is to stop
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def folders(self) -> Folders:
        """The folders, as the jobs and harvesting are given them (an import run by a command)."""
        return Folders(self.data_dir, self.files_dir, self.tmp_dir, self.import_dir)

    def check(self) -> None:
        if self.stop_requested is not None and self.stop_requested():
            raise Stopped()

    def say(self, text: str) -> None:
        self.out.write(text + "\n")


class Command:
    """One command. Subclasses set ``name``, ``help``, ``app_name`` and may add arguments."""

    name: ClassVar[str]
    help: ClassVar[str]
    app_name: ClassVar[str] = "catalogue"
    over_http: ClassVar[bool] = True  # False: command line only (restore)
    prepares_data: ClassVar[bool] = True  # False: the command line leaves the data folder as it is
                                          # (restore fills an empty one)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        pass

    def parser(self) -> argparse.ArgumentParser:
        parser = _Parser(prog=self.name, description=self.help, add_help=False)
        self.add_arguments(parser)
        return parser

    def help_text(self) -> str:
        return self.parser().format_help()

    def run(self, ctx: CommandContext, options: argparse.Namespace) -> None:
        raise NotImplementedError


def argv(args: list[Any], kwargs: dict[str, Any]) -> list[str]:
    """GeoNode's ``call_command(cmd, *args, **kwargs)`` as an argument list: args as they are;
    a kwarg ``x_y=v`` as ``--x-y v`` (True: the flag alone; False or None: left out; a list:
    the option once with all its values)."""
    out = [str(a) for a in args]
    for key, value in kwargs.items():
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            out.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, list):
            out += [flag, *(str(v) for v in value)]
        else:
            out += [flag, str(value)]
    return out
