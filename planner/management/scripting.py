"""How the commands that scripts call (napkin, plan, simulate, drill) refuse bad input.

One contract for all of them, so a script handles every refusal the same way: exit status 2
(argparse's status for a usage error, which these commands share), and with --json one JSON
object {"error": "..."} on stdout and nothing else; without --json, the sentence on stderr,
one line, no traceback. A refusal names the command's option at fault (`--mem-util`), not the
engine's argument (`mem_util`): the engines also serve the web pages, which have their own
field labels, so the commands translate.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

USAGE_ERROR = 2


def write_error(stream: Any, message: str) -> None:
    """The --json refusal: one JSON object on `stream` (stdout)."""
    stream.write(json.dumps({"error": message}, ensure_ascii=False) + "\n")


class _Parser(CommandParser):
    """Django's parser, except that a usage error (an unknown option, a value of the wrong type,
    a missing option) with --json among the arguments is the JSON refusal too."""

    as_json = False

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.as_json = "--json" in (sys.argv[1:] if args is None else args)
        return super().parse_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        if self.as_json:
            # The command's own streams are not in place yet: this is before it runs.
            write_error(sys.stdout, message)
            sys.exit(USAGE_ERROR)
        # Django's: from the shell argparse's usage and status 2; in call_command a CommandError.
        super().error(message)


class ScriptedCommand(BaseCommand):
    """A command with a --json option whose bad input is a CommandError raised anywhere in
    handle(); this class reports it as the module says."""

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        # BaseCommand builds a CommandParser with no hook for another class; _Parser needs no
        # setup of its own, so the parser it built is made one.
        parser.__class__ = _Parser
        return parser

    def execute(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute(*args, **options)
        except CommandError as error:
            if options.get("traceback"):
                raise
            self.refuse(str(error), options.get("json", False))

    def refuse(self, message: str, as_json: bool) -> NoReturn:
        if as_json:
            write_error(self.stdout, message)
        else:
            self.stderr.write(message)
        sys.exit(USAGE_ERROR)


def naming_option(message: str, option: str, name: str | None = None) -> str:
    """`message`, an engine's refusal of one input, as the command says it: the engine's `name`
    for the input swapped for the `option` where the sentence starts with it ("mem_util must
    be ..." -> "--mem-util must be ..."), else the option put in front ("--context: ...")."""
    if name and message.startswith(f"{name} "):
        return option + message[len(name) :]
    return f"{option}: {message}"
