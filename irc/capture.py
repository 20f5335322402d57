"""Running a user's script in capture mode.

``irc compile script.py`` runs the script as ``__main__`` (its own folder on
``sys.path``, ``sys.argv`` set as if run directly) while a :class:`Capture`
is active.  The frontends record into it: every dataset the script builds,
every job it asks for (``Model.train``/``eval``/``predict``), and the context
it sets.  In ``compile`` mode jobs are recorded and not executed; in ``run``
mode they execute as well.

Imports of ``mindspore...`` resolve to irc's modules while the script runs
(:class:`MindSporeAlias`); irc never imports MindSpore itself.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import re
import runpy
import sys
import types
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Optional

from . import _API_MODULES
from .diagnostics import (
    UnsupportedImport, UnsupportedModule, UserError, api_name, display_path, is_user_code,
    unsupported_api, user_frame_of,
)

COMPILE = "compile"
RUN = "run"


@dataclass
class Job:
    """A ``Model.train/eval/predict`` call the script made."""
    kind: str                    # "train" | "eval" | "predict"
    model: Any
    dataset: Any
    kwargs: dict
    source: Optional[str]        # FILE:LINE of the call


@dataclass
class Capture:
    script: str
    mode: str = COMPILE
    datasets: list = field(default_factory=list)   # in creation order
    # Functions the script compiled (mindspore.jit, value_and_grad called
    # eagerly): (name, the module of its first trace, before the passes).
    functions: list = field(default_factory=list)
    # The optimizers it made: their parameters are what it trained (the
    # ranks' run.json digests them, whatever style the step is written in).
    optimizers: list = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    context: dict = field(default_factory=dict)    # set_context(...) keywords
    save_graphs: bool = False
    options: dict = field(default_factory=dict)    # from the command line
    # What running it produced (irc.train.summary's RunSummary), kept on the
    # capture itself: a table keyed by id() handed a new capture the summary
    # of a collected one that had the same id
    summary: Optional[object] = None

    @property
    def executes(self) -> bool:
        return self.mode == RUN

    def terminal_datasets(self) -> list:
        """Datasets no other dataset was built on: the pipelines' ends."""
        children = {id(c) for ds in self.datasets for c in getattr(ds, "children", ())}
        return [ds for ds in self.datasets if id(ds) not in children]


_current: Optional[Capture] = None


def current() -> Optional[Capture]:
    """The active capture, or None when the script runs on its own."""
    return _current


# -----------------------------------------------------------------------------
# mindspore -> irc import aliasing

# MindSpore module paths whose irc module has another name.
_RENAMES = {
    "mindspore": "irc",
    "mindspore.context": "irc",   # MindSpore's context module also holds the parallel settings
    # the model zoo imports these from where MindSpore defines them
    "mindspore.nn.wrap.grad_reducer": "irc.nn.wrap",
    "mindspore.nn.wrap.cell_wrapper": "irc.nn.wrap",
    "mindspore.nn.wrap.loss_scale": "irc.nn.loss_scale",
    "mindspore.ops.operations.comm_ops": "irc.ops.operations",
    "mindspore.nn.dynamic_lr": "irc.nn.learning_rate_schedule",
    "mindspore.nn.layer": "irc.nn",
    "mindspore.ops.primitive": "irc.ops.operations",
    "mindspore.common.api": "irc.train.functional",   # jit, ms_function, jit_class (the model zoo's BERT)
    # MindInsight's summaries (irc.train.summary is irc's own run summary)
    "mindspore.train.summary": "irc.train.summary_record",
    "mindspore.train.summary.summary_record": "irc.train.summary_record",
    "mindspore.dataset.engine": "irc.dataset",    # older scripts: import mindspore.dataset.engine as de
    "mindspore.parallel._utils": "irc.parallel_utils",  # the model zoo's _get_device_num ...
    "mindspore.parallel._auto_parallel_context": "irc.parallel_utils",
    "mindspore.parallel._cost_model_context": "irc.parallel",
    # the transformer layers the model zoo's GPT and PanGu build on
    "mindspore.parallel._transformer": "irc.nn.parallel_transformer",
    "mindspore.common.seed": "irc.seed",      # from mindspore.common.seed import _get_graph_seed
    "mindspore.ops.function": "irc.ops",
}

# MindSpore packages whose submodules (where MindSpore defines each class:
# ``from mindspore.nn.loss.loss import LossBase``, ``from
# mindspore.nn.optim.optimizer import Optimizer``) are one irc module.
_PACKAGE_RENAMES = {
    "mindspore.nn.loss": "irc.nn.loss",
    "mindspore.nn.optim": "irc.nn.optim",
    "mindspore.nn.layer": "irc.nn",
    "mindspore.ops.operations": "irc.ops.operations",
    "mindspore.dataset.engine": "irc.dataset",
    "mindspore.profiler": "irc.profiler",     # from mindspore.profiler.profiling import Profiler
    "mindspore.parallel._transformer": "irc.nn.parallel_transformer",    # .transformer, .loss, .layers
    # where MindSpore defines its functions: from mindspore.ops.function.nn_func import conv1d
    "mindspore.ops.function": "irc.ops",
}


def irc_module_for(fullname: str) -> str:
    if fullname in _RENAMES:
        return _RENAMES[fullname]
    for package, target in _PACKAGE_RENAMES.items():
        if fullname.startswith(package + "."):
            return target
    return "irc" + fullname[len("mindspore"):]


def is_api_module(name: str) -> bool:
    """Whether an irc module is part of the MindSpore-shaped API (what
    ``mindspore.X`` may resolve to), not one of irc's own: ``import
    mindspore.passes`` is not MindSpore's."""
    parts = name.split(".")
    return parts[0] == "irc" and (len(parts) == 1 or parts[1] in _API_MODULES)


class MindSporeAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``import mindspore.X`` to ``irc.X`` while a script is captured."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "mindspore" and not fullname.startswith("mindspore."):
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        target = irc_module_for(spec.name)
        if not is_api_module(target) and spec.name not in _RENAMES:
            raise unsupported_api(spec.name, kind=UnsupportedModule)
        try:
            return importlib.import_module(target)
        except ModuleNotFoundError as e:
            if e.name and (target == e.name or target.startswith(e.name + ".")):
                raise unsupported_api(spec.name, kind=UnsupportedModule) from None
            raise

    def exec_module(self, module):
        pass  # the irc module is already executed


@contextmanager
def mindspore_alias():
    finder = MindSporeAlias()
    saved = {k: v for k, v in sys.modules.items() if k == "mindspore" or k.startswith("mindspore.")}
    for k in saved:
        del sys.modules[k]
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if k == "mindspore" or k.startswith("mindspore.")]:
            del sys.modules[k]
        sys.modules.update(saved)


# -----------------------------------------------------------------------------
# running the script

def _script_error(exc: BaseException, script: str) -> UserError:
    """Turn an exception from the user's script into a located UserError."""
    if isinstance(exc, UserError):
        return exc
    missing = unsupported_api_name(exc)
    if missing is not None:
        return missing
    if isinstance(exc, SyntaxError):
        where = f"{display_path(exc.filename or script)}:{exc.lineno or 0}"
        return UserError(f"syntax error: {exc.msg}", where=where,
                         hint="the script must run under plain Python first")
    return UserError(f"the script raised {type(exc).__name__}: {exc}",
                     where=user_frame_of(exc.__traceback__),
                     hint="run with --traceback to see the whole stack")


_CANNOT_IMPORT = re.compile(r"cannot import name '([^']+)' from '([^']+)'")


def unsupported_api_name(exc: BaseException) -> Optional[UserError]:
    """The located "not supported" error for a name an irc API module lacks,
    when Python reported it in its own words: ``from mindspore.X import Y``
    (IMPORT_FROM turns the module's AttributeError into a bare ImportError)
    and ``X.Y`` on a module without a ``__getattr__`` of its own.  The error
    stays an ImportError / AttributeError.  None for any other exception."""
    if not _raised_by_user_code(exc):
        return None     # a name irc's own code lacks is irc's bug, not the user's request
    where = user_frame_of(exc.__traceback__)
    if type(exc) is ImportError:
        found = _CANNOT_IMPORT.match(str(exc))
        if found and found[2] == exc.name and is_api_module(exc.name):
            return unsupported_api(f"{api_name(exc.name)}.{found[1]}", where, UnsupportedImport)
    if type(exc) is AttributeError and isinstance(getattr(exc, "obj", None), types.ModuleType):
        module = exc.obj.__name__
        if is_api_module(module) and exc.name:
            return unsupported_api(f"{api_name(module)}.{exc.name}", where)
    return None


def _raised_by_user_code(exc: BaseException) -> bool:
    """Whether the innermost frame of the exception's traceback is the user's
    (the import statement or attribute access that failed)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and is_user_code(tb.tb_frame.f_code.co_filename)


# How each module with process-wide settings (context, dataset config,
# parallel context, communication) restores its defaults.  A module registers
# when it is first imported; one never imported still has its defaults.  So
# the session layer resets them without importing the API above it.
_STATE_RESETS: list = []


def register_process_state(reset):
    """Decorator/function: ``reset()`` restores a module's settings to what a
    new Python process has."""
    if reset not in _STATE_RESETS:
        _STATE_RESETS.append(reset)
    return reset


def fresh_process_state() -> None:
    """Reset irc's global settings, as a new Python process would have them,
    so that scripts run one after another (ranks, tests) do not leak state."""
    for reset in _STATE_RESETS:
        reset()


SCRIPT_HINT = "give the path of a Python file, e.g. samples/lenet_sink.py"


def check_script(script: str, hint: str = SCRIPT_HINT) -> None:
    """Refuse a script that is not there, before anything runs or is written."""
    if not os.path.isfile(script):
        raise UserError(f"no such script: {script}", hint=hint)


def run_script(script: str, *, mode: str = COMPILE, argv: Optional[list[str]] = None,
               options: Optional[dict] = None, env: Optional[dict] = None) -> Capture:
    """Run ``script`` under a fresh capture and return what it recorded.
    ``env`` sets environment variables for the run (e.g. RANK_ID/RANK_SIZE)."""
    global _current
    check_script(script)
    cap = Capture(script=script, mode=mode, options=dict(options or {}))
    fresh_process_state()
    saved_env = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update({k: str(v) for k, v in (env or {}).items()})
    previous, _current = _current, cap
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [script, *(argv or [])]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        with mindspore_alias():
            runpy.run_path(os.path.abspath(script), run_name="__main__")   # __file__ absolute, as python's
    except SystemExit as e:
        if e.code not in (None, 0):
            raise UserError(f"the script exited with status {e.code}",
                            where=display_path(script)) from None
    except KeyboardInterrupt as e:
        e.capture = cap     # what ran so far, for irc run's run.json
        raise
    except BaseException as e:  # noqa: BLE001 -- reported as the user's error
        err = _script_error(e, script)
        err.__cause__ = e
        raise err from e
    finally:
        _current = previous
        sys.argv, sys.path[:] = saved_argv, saved_path
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return cap
