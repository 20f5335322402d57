"""Named passes and the manager that runs them in order.

A pass is a function ``(module, ctx) -> bool`` registered under a name; it
edits the module in place and says whether it changed anything.  The manager
verifies the module after the first pass and after every pass that changed it
(a pass that leaves a verified module untouched cannot break it), times each
one, and hands every changed stage to an ``on_stage`` callback (the CLI dumps
it as ``NN_<pass>.ir``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from irc.diagnostics import Remark, UserError
from irc.ir.graph import Module, gc_paused
from irc.ir.verifier import VerifyError, verify

PassFn = Callable[[Module, "PassContext"], bool]


@dataclass
class PassInfo:
    name: str
    fn: PassFn
    description: str


_PASSES: dict[str, PassInfo] = {}


def register(name: str, description: str = ""):
    """Decorator: ``@register("tail-extraction", "...")`` on ``def run(module, ctx)``."""
    def wrap(fn: PassFn) -> PassFn:
        if name in _PASSES:
            raise ValueError(f"pass {name} is registered twice")
        _PASSES[name] = PassInfo(name, fn, description or (fn.__doc__ or "").strip().split("\n")[0])
        return fn
    return wrap


def get(name: str) -> PassInfo:
    try:
        return _PASSES[name]
    except KeyError:
        raise UserError(f"unknown pass {name!r}",
                        hint=f"known passes: {', '.join(sorted(_PASSES))}") from None


def registered() -> dict[str, PassInfo]:
    return dict(_PASSES)


@dataclass(frozen=True)
class Pipeline:
    """A named sequence of passes (in the spirit of onnx-ir's Sequential and
    xDSL's PassPipeline): what an entry point runs."""
    name: str
    passes: tuple[str, ...]
    purpose: str = ""

    def up_to(self, last: str) -> "Pipeline":
        """The prefix of this pipeline that ends with ``last``."""
        if last not in self.passes:
            raise UserError(f"--stop-after {last}: no such pass in the pipeline",
                            hint=f"the pipeline is: {', '.join(self.passes)}")
        return Pipeline(self.name, self.passes[: self.passes.index(last) + 1], self.purpose)


@dataclass
class PassContext:
    """What passes share while a pipeline runs: the remarks they make.  (A
    compile's options are in the module: passes.options.CompileOptions.)"""
    remarks: list[Remark] = field(default_factory=list)
    current_pass: str = ""

    def remark(self, kind: str, op: str, message: str, *, reason: str = "",
               column: Optional[str] = None, source: Optional[str] = None) -> Remark:
        r = Remark(self.current_pass, kind, op, column, source, reason, message)
        self.remarks.append(r)
        return r


@dataclass
class PassRecord:
    index: int          # 1-based position in the pipeline
    name: str
    changed: bool
    seconds: float


class PassFailed(Exception):
    def __init__(self, name: str, done: list[str], reason: str, cause: BaseException):
        after = f" (after {', '.join(done)})" if done else " (first pass)"
        super().__init__(f"pass {name} failed{after}: {reason}")
        self.pass_name, self.done, self.reason, self.cause = name, done, reason, cause


class PassManager:
    def __init__(self, names: list[str], ctx: Optional[PassContext] = None, *,
                 verify_each: bool = True,
                 on_stage: Optional[Callable[[int, str, Module], None]] = None,
                 stop_after: Optional[str] = None):
        self.passes = [get(n) for n in names]
        if stop_after is not None:
            Pipeline("", tuple(names)).up_to(stop_after)   # refuses a pass not in the list
        self.ctx = ctx or PassContext()
        self.verify_each = verify_each
        self.on_stage = on_stage
        self.stop_after = stop_after
        self.records: list[PassRecord] = []

    def run(self, module: Module) -> Module:
        done: list[str] = []
        verified = None     # module.edits() when it was last verified; None: not yet
        for index, info in enumerate(self.passes, 1):
            self.ctx.current_pass = info.name
            start = time.perf_counter()
            try:
                with gc_paused():
                    changed = bool(info.fn(module, self.ctx))
            except UserError:
                raise
            except Exception as e:
                raise PassFailed(info.name, done, f"{type(e).__name__}: {e}", e) from e
            seconds = time.perf_counter() - start
            # A pass that says it changed nothing but edited a graph is verified too.
            if self.verify_each and (changed or verified != module.edits()):
                try:
                    with gc_paused():
                        verify(module)
                except VerifyError as e:
                    raise PassFailed(info.name, done, str(e), e) from e
                verified = module.edits()
            self.records.append(PassRecord(index, info.name, changed, seconds))
            done.append(info.name)
            if changed and self.on_stage:
                self.on_stage(index, info.name, module)
            if info.name == self.stop_after:
                break
        self.ctx.current_pass = ""
        return module

    def timing_table(self) -> str:
        rows = [f"{'#':>3}  {'pass':<24} {'changed':<8} {'ms':>9}"]
        for r in self.records:
            rows.append(f"{r.index:>3}  {r.name:<24} {'yes' if r.changed else 'no':<8} "
                        f"{r.seconds * 1e3:>9.3f}")
        total = sum(r.seconds for r in self.records)
        rows.append(f"{'':>3}  {'total':<24} {'':<8} {total * 1e3:>9.3f}")
        return "\n".join(rows)
