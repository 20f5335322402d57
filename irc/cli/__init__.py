"""The ``irc`` command.  The only place that ties irc, passes, backends and
viewer together.

Exit codes: 0 success, 1 user error (one clear message with file:line and a
hint; ``--traceback`` adds the stack), 2 usage error.
"""
from __future__ import annotations

import argparse
import sys
import traceback

from .. import __version__
from ..diagnostics import UserError, bounded
from .script_args import CommandParser, UsageParser, split_command_line

EXIT_OK, EXIT_USER, EXIT_USAGE = 0, 1, 1     # a usage error is bad input too


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--traceback", action="store_true",
                   help="show the Python stack of an error (for reporting irc bugs)")


def build_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="irc",
        description="Compile MindSpore-shaped data pipelines and networks into one "
                    "device graph (ONNX), and show every stage.")
    parser.add_argument("--version", action="version", version=f"irc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    parser.commands = {}   # name -> the command's CommandParser
    from . import compile_cmd, exec_cmd, export_cmd, opt_cmd, run_cmd, view_cmd
    for mod in (compile_cmd, opt_cmd, run_cmd, exec_cmd, view_cmd, export_cmd):
        p = mod.add_parser(sub)
        _add_common(p)
        p.set_defaults(handler=mod.main, uses_ir=getattr(mod, "uses_ir", None))
        parser.commands[p.prog.split()[-1]] = p
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    ours, script_args = split_command_line(parser.commands, argv)
    args = parser.parse_args(ours)
    if script_args is not None:
        args.script_args = script_args
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_USAGE
    if args.uses_ir is None or args.uses_ir(args):   # a launcher of ranks starts in 0.1 s, not 0.7
        from ..dialects import load_all
        load_all()
    return run_guarded(lambda: args.handler(args), args)


def run_guarded(fn, args) -> int:
    """Run a command's handler: user errors and irc's own as messages and
    exit codes, never a traceback (unless --traceback)."""
    try:
        return fn() or EXIT_OK
    except KeyboardInterrupt:
        print("irc: interrupted", file=sys.stderr)
        return 130
    except UserError as e:
        if args.traceback:
            traceback.print_exception(e.__cause__ or e)
        print(e.format(), file=sys.stderr)
        return EXIT_USER
    except Exception as e:  # noqa: BLE001
        from irc.passes import PassFailed
        if args.traceback:
            traceback.print_exc()
        if isinstance(e, PassFailed):
            hint = "" if args.traceback else "\n  hint: run with --traceback to see where the pass failed"
            print(bounded(f"error: {e}{hint}"), file=sys.stderr)
        else:
            # irc's own bug, not the user's input: still one bounded message
            print(bounded(f"irc: internal error: {type(e).__name__}: {e}\n"
                          f"  hint: this is a bug in irc; run with --traceback and report it"),
                  file=sys.stderr)
        return EXIT_USER


if __name__ == "__main__":
    sys.exit(main())
