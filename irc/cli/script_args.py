"""The script's own arguments on irc's command line.

``irc run SCRIPT [ARGS]`` runs SCRIPT as ``python SCRIPT ARGS`` would: the
script sees ``sys.argv == [SCRIPT, *ARGS]``.  irc's own options may stand
before or after the script; the script's arguments start at ``--``, or at
the first argument after the script that is not one of irc's options, and
run to the end.  So ``irc run train.py -o out --epochs 3`` gives ``-o out``
to irc and ``--epochs 3`` to the script, and ``irc compile train.py --
--output x`` hands an option irc also has (``--output``) to the script.

argparse cannot split this way by itself (``nargs=REMAINDER`` after the
script would also swallow irc's options there), so each command's parser
records which of its options take a value and the split is done before
argparse parses irc's part.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional


class UsageParser(argparse.ArgumentParser):
    """argparse's parser, a usage error exiting 1 (bad input, as every
    other irc error) with a hint to the command's help."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n  hint: {self.prog} --help lists its options\n")


class CommandParser(UsageParser):
    """A command's parser that knows its options' arities, and which
    positional (if any) names a script that takes arguments."""

    def __init__(self, *args, **kwargs):
        self.takes_value: dict[str, bool] = {}   # option string -> whether it takes a value
        self.script_dest: Optional[str] = None
        self.names_script: set[str] = set()      # options whose value is the script (exec -m)
        self.options_after_script = True
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        for option in action.option_strings:
            self.takes_value[option] = action.nargs != 0
        return action

    def add_script(self, dest: str, help: str, *, required: bool = True,
                   options_after: bool = True) -> None:
        """The script positional, then the script's arguments (shown in the
        usage; filled by :func:`split_command_line`).  ``options_after``:
        whether irc's options may follow the script (``python``'s own may not)."""
        self.add_argument(dest, help=help, **({} if required else {"nargs": "?"}))
        self.add_argument("script_args", nargs="*", metavar="ARGS",
                          help="the script's own arguments (its sys.argv[1:]): everything after "
                               "the script" + (" that is not an irc option, or everything after --"
                                               if options_after else ""))
        self.script_dest = dest
        self.options_after_script = options_after

    def add_script_option(self, *flags: str, **kwargs) -> None:
        """An option whose value stands for the script (``-m MODULE``)."""
        self.add_argument(*flags, **kwargs)
        self.names_script.update(flags)

    def option_arity(self, arg: str) -> Optional[int]:
        """How many of the following arguments irc's option ``arg`` takes
        (0 when its value is attached: ``--output=DIR``, ``-oDIR``), or None
        when ``arg`` is not one of irc's options."""
        if arg in self.takes_value:
            return int(self.takes_value[arg])
        if arg.startswith("--") and "=" in arg:
            return 0 if self.takes_value.get(arg.split("=", 1)[0]) else None
        if not arg.startswith("--") and self.takes_value.get(arg[:2]):
            return 0
        return None

    def names_the_script(self, arg: str) -> bool:
        return arg in self.names_script or \
            (not arg.startswith("--") and arg[:2] in self.names_script)


def split_script_args(parser: CommandParser, argv: list[str]) -> tuple[list[str], list[str]]:
    """(irc's arguments, the script's arguments) of one command's argv."""
    seen_script = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if seen_script and not parser.options_after_script:
            return argv[:i], argv[i:]
        if arg == "--":
            if seen_script:
                return argv[:i], argv[i + 1:]
            return argv[:i + 2], argv[i + 2:]    # `-- SCRIPT ARGS`: a script named like an option
        if arg.startswith("-") and arg != "-":
            arity = parser.option_arity(arg)
            if arity is None:
                if seen_script:
                    return argv[:i], argv[i:]
                arity = 0                        # before the script: argparse refuses it
            seen_script = seen_script or parser.names_the_script(arg)
            i += 1 + arity
            continue
        if seen_script:
            return argv[:i], argv[i:]
        seen_script = True
        i += 1
    return argv, []


def split_command_line(commands: dict[str, CommandParser], argv: list[str]) \
        -> tuple[list[str], Optional[list[str]]]:
    """Split the whole command line (``commands``: each command's parser):
    (what argparse parses, the script's arguments, or None for a command
    that runs no script)."""
    command_at = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    command = commands.get(argv[command_at]) if command_at is not None else None
    if command is None or command.script_dest is None:
        return argv, None
    ours, script_args = split_script_args(command, argv[command_at + 1:])
    return argv[:command_at + 1] + ours, script_args
