"""``irc opt IN.ir -p P1,P2 [-o OUT.ir]``: run passes on a text IR file, like mlir-opt."""
from __future__ import annotations

import sys
from pathlib import Path

from ..output import check_output_file, write_file_atomically
from .compile_cmd import add_force_option, add_pipeline_options, pass_names, run_pipeline


def add_parser(sub):
    p = sub.add_parser("opt", help="run passes on a text IR file",
                       description="Parse IN.ir, verify it, run the given passes and print the "
                                   "result.  With no -p it re-prints the file unchanged.")
    p.add_argument("input", nargs="?", help="an .ir file (as irc compile writes)")
    p.add_argument("-o", "--output", metavar="OUT.ir", help="write here instead of stdout")
    p.add_argument("--list-passes", action="store_true", help="list the known passes and exit")
    add_force_option(p)
    add_pipeline_options(p)
    return p


def check_flags(args) -> None:
    """Pipeline flags that would be ignored without -p are refused."""
    from ..diagnostics import UserError
    if args.passes is not None:
        return
    given = [flag for flag, value in (("--stop-after", args.stop_after),
                                      ("--print-ir-after", args.print_ir_after),
                                      ("--timing", args.timing)) if value]
    if given:
        raise UserError(f"{given[0]} needs -p: with no -p, irc opt runs no passes",
                        hint="name the passes, e.g. irc opt IN.ir -p offload-legality,"
                             "tail-extraction " + given[0] + " ... (irc opt --list-passes)")


def main(args) -> int:
    from irc import passes
    if args.list_passes:
        for name, info in sorted(passes.registered().items()):
            print(f"{name:<22} {info.description}")
        return 0
    if args.input is None:   # a usage error, as the parsers report them (exit 1)
        print("irc opt: error: the following arguments are required: input\n"
              "  hint: irc opt IN.ir -p PASS (irc opt --list-passes lists the passes)", file=sys.stderr)
        return 1
    from ..ir.text import is_printed_by_irc, parse_file, print_module
    from ..ir.verifier import verify
    check_flags(args)
    if args.output:
        check_output_file(Path(args.output), force=args.force, ours=is_printed_by_irc, suffix=".ir")
    module = parse_file(args.input)   # unreadable, binary or malformed: a located UserError
    verify(module)
    names = pass_names(args) if args.passes is not None else []
    if names:
        result = run_pipeline(module, args, names)
        last = [r.name for r in result.records if r.changed]
        if last:
            module.meta["stage"] = f"after {last[-1]}"
    text = print_module(module)
    if args.output:
        write_file_atomically(args.output, text)
    else:
        sys.stdout.write(text)
    return 0
