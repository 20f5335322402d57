"""The compile driver: every entry point compiles through here.

``irc compile``, ``irc run`` / ``Model.train``/``eval``/``predict``, a
dataset's iterator with offload, ``irc export`` and per-rank compiles all do
the same three things, in one place: the frontend builds the module of what
the script asked for, the compile's typed options go into the module header
(:class:`~irc.passes.options.CompileOptions`, which is what the passes read),
and a named pipeline of passes (:data:`irc.passes.DEFAULT`, ``ITERATE``,
``EXPORT``) runs over it.  So a script decides the same way whichever door
it came in through: same stages, same remarks, same refusals.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Sequence

from . import __version__, communication, parallel
from .capture import Job, current
from .diagnostics import Remark, display_path
from .frontend import build_module, module_name
from .ir.graph import Module
from .passes import DEFAULT, EXPORT, ITERATE, ITERATE_ON_HOST, PIPELINES, CompileOptions, PassContext, PassManager, Pipeline  # noqa: F401,E501
from .passes.options import script_defaults

StageFn = Callable[[int, str, Module], None]

__all__ = ["compile", "compile_job", "compile_dataset", "session_options", "observe", "Compilation",
           "DEFAULT", "ITERATE", "ITERATE_ON_HOST", "EXPORT", "PIPELINES"]


@dataclass
class Compilation:
    """What one compile made: the module after its pipeline, the remarks the
    passes wrote, and each pass's record (changed, wall time)."""
    module: Module
    pipeline: Pipeline
    options: CompileOptions
    remarks: list[Remark] = field(default_factory=list)
    records: list = field(default_factory=list)


_observers: list[Callable[[Compilation], None]] = []


@contextmanager
def observe() -> Iterator[list[Compilation]]:
    """Collect every compile made inside the block, whichever entry point
    made it (tests, tools)."""
    seen: list[Compilation] = []
    _observers.append(seen.append)
    try:
        yield seen
    finally:
        _observers.remove(seen.append)


def session_options(**overrides) -> CompileOptions:
    """The options the running script asks for: ``set_auto_offload``, under
    ``irc run`` the ``--unroll`` flag, and the rank a distributed launcher
    gave this process (``RANK_ID``/``RANK_SIZE``, as MindSpore reads them)."""
    cap = current()
    unroll = cap.options.get("unroll") if cap is not None else None
    values = {"auto_offload": script_defaults.auto_offload, "unroll": unroll,
              "parallel_mode": str(parallel.get_auto_parallel_context("parallel_mode")),
              "gradients_mean": bool(parallel.get_auto_parallel_context("gradients_mean"))}
    launched = communication.launched_rank()
    if launched is not None:
        values.update(rank=launched[0], world_size=launched[1])
    values.update(overrides)
    return CompileOptions(**values)


def compile(jobs: Sequence[Job], pipeline: Pipeline = DEFAULT, *, script: str,
            datasets: Sequence = (), options: Optional[CompileOptions] = None,
            on_stage: Optional[StageFn] = None, stop_after: Optional[str] = None,
            on_records: Optional[Callable[[PassManager], None]] = None,
            functions: Sequence = ()) -> Compilation:
    """Build the module of ``jobs`` (and of the further ``datasets`` the
    script built, and the ``functions`` it compiled) and run ``pipeline`` over it.  ``on_stage(index, pass,
    module)`` sees the captured module (index 0) and every stage a pass
    changed; ``on_records`` sees the pass manager when the run ends, failed
    or not (the CLI's --timing)."""
    options = options if options is not None else session_options()
    module = build_module(jobs, datasets, script=script, functions=functions)
    module.meta = {"irc": __version__, "source": display_path(script), "stage": "capture",
                   **module.meta}
    options.record(module)
    return run_pipeline(module, pipeline, options, on_stage=on_stage, stop_after=stop_after,
                        on_records=on_records)


def run_pipeline(module: Module, pipeline: Pipeline, options: CompileOptions, *,
                 on_stage: Optional[StageFn] = None, stop_after: Optional[str] = None,
                 on_records: Optional[Callable[[PassManager], None]] = None) -> Compilation:
    ctx = PassContext()
    manager = PassManager(list(pipeline.passes), ctx, on_stage=on_stage, stop_after=stop_after)
    if on_stage is not None:
        on_stage(0, "capture", module)
    try:
        manager.run(module)
    finally:
        if on_records is not None:
            on_records(manager)
    result = Compilation(module, pipeline, options, ctx.remarks, manager.records)
    for observer in list(_observers):
        observer(result)
    return result


def script_name() -> str:
    """The running script (under irc), else __main__'s file."""
    cap = current()
    if cap is not None:
        return cap.script
    main = sys.modules.get("__main__")
    return getattr(main, "__file__", None) or "model"


def compile_job(job: Job, *, keep_step: bool = False) -> tuple[Module, Optional[Module]]:
    """A Model job as ``irc run`` (or plain Python) executes it: the module
    after the default pipeline and, with ``keep_step``, a copy of it after
    autodiff (the single-step program)."""
    snapshots: dict = {}
    cap = current()
    user_stage = cap.options.get("on_stage") if cap is not None else None

    def on_stage(index, name, mod):
        if keep_step and name == "autodiff":
            snapshots["step"] = mod.copy()
        if user_stage is not None:
            user_stage(index, name, mod)
    result = compile([job], DEFAULT, script=script_name(), on_stage=on_stage)
    return result.module, snapshots.get("step")


def compile_dataset(dataset, pipeline: Pipeline = ITERATE,
                    options: Optional[CompileOptions] = None) -> Compilation:
    """A dataset's pipeline alone (graph @host), through ``pipeline``: what
    its iterator runs."""
    from .frontend.pipeline import lower_pipeline
    options = options if options is not None else session_options()
    module = Module(module_name(script_name()))
    lower_pipeline(module, dataset, "host")
    options.record(module)
    return run_pipeline(module, pipeline, options)
