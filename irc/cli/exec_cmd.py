"""``irc exec SCRIPT [ARGS]``, ``irc exec -m MODULE [ARGS]``: run Python code
as ``python`` runs it, with ``import mindspore`` resolving to irc.

Unlike ``irc run`` there is no capture and no summary: the code runs as in
a plain Python process (``Model.train`` trains, ``Model.eval`` evaluates),
its exit status is the command's, and an error in it prints Python's
traceback.  ``irc exec -m pytest tests/`` runs a MindSpore project's test
suite against irc (so does ``pytest -p irc.pytest_plugin``).
"""
from __future__ import annotations

import os
import runpy
import sys
import traceback

from ..diagnostics import UserError


def add_parser(sub):
    p = sub.add_parser("exec", help="run a script or module as python does, with mindspore = irc",
                       description="Run SCRIPT (or -m MODULE) as python would, with every "
                                   "`import mindspore` resolving to irc: no capture, no summary; "
                                   "the exit status is the code's own.  irc's options come before "
                                   "the script; everything after it is the script's.")
    p.add_script_option("-m", dest="module", metavar="MODULE",
                        help="run a module as `python -m MODULE` does (e.g. -m pytest tests/)")
    p.add_script("script", help="a Python file", required=False, options_after=False)
    return p


def main(args) -> int:
    from ..capture import check_script, unsupported_api_name
    from ..importhook import install
    if bool(args.module) == bool(args.script):
        raise UserError("irc exec: give either a script or -m MODULE",
                        hint="irc exec train.py ARGS, or irc exec -m pytest tests/")
    if args.script:
        check_script(args.script, hint="give the path of a Python file, or -m MODULE")
    install()
    saved_argv, saved_path = sys.argv[:], sys.path[:]   # for an in-process caller
    try:
        if args.module:
            sys.argv = [args.module, *args.script_args]   # runpy puts the module's path first
            sys.path[0] = os.getcwd()                       # as `python -m` does
            runpy.run_module(args.module, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [args.script, *args.script_args]
            sys.path[0] = os.path.dirname(os.path.abspath(args.script))
            # __file__ absolute, as python has made a script's since 3.9
            runpy.run_path(os.path.abspath(args.script), run_name="__main__")
    except SystemExit as e:
        return exit_status(e)
    except UserError:
        raise   # irc's located message (run_guarded)
    except Exception as e:  # noqa: BLE001 -- the code's own error, reported as python does
        missing = unsupported_api_name(e)    # `from mindspore import X` that irc lacks
        if missing is not None:
            raise missing from e
        traceback.print_exception(type(e), e, _from_the_code(e.__traceback__))
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0


def exit_status(e: SystemExit) -> int:
    """The status ``sys.exit(code)`` gives a process (a message prints, status 1)."""
    if e.code is None or isinstance(e.code, int):
        return e.code or 0
    print(e.code, file=sys.stderr)
    return 1


def _from_the_code(tb):
    """The traceback without irc's and runpy's frames above the code."""
    def ours(filename: str) -> bool:
        return filename in (__file__, runpy.__file__) or filename == "<frozen runpy>"
    while tb is not None and ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb
