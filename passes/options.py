"""The options of one compile, typed, and the one place passes read them.

A compile's options are recorded in the module header (``module.meta``) by
:meth:`CompileOptions.record`, so a dump re-run through ``irc opt`` decides
as the compile did; passes read them back with :meth:`CompileOptions.of`.
Nothing else carries them: no pass looks at the process's settings, and
every entry point (compile, run, dataset iteration, export, per-rank
compiles) hands its options to the driver the same way.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from irc.diagnostics import UserError
from irc.ir.graph import Module


@dataclass(frozen=True)
class CompileOptions:
    # Offload every map whose `offload` argument is None
    # (dataset.config.set_auto_offload; seeds 000/001).
    auto_offload: bool = False
    # Training steps per Loop iteration in sink mode; None: the job's own
    # (Model.train's `unroll`, else the default).
    unroll: Optional[int] = None
    # This process's rank and the world size (seed 004); None: one process.
    rank: Optional[int] = None
    world_size: Optional[int] = None
    # set_auto_parallel_context: how the ranks train one model together
    # (stand_alone: each rank on its own) and whether gradients are averaged.
    parallel_mode: str = "stand_alone"
    gradients_mean: bool = False
    # irc export: one inference model, so every map ONNX can express goes
    # inside it, offload flags aside, and random augmentation is left out.
    export: bool = False

    def __post_init__(self):
        if self.unroll is not None and self.unroll < 1:
            raise UserError(f"the unroll factor must be at least 1, got {self.unroll}")
        if (self.rank is None) != (self.world_size is None):
            raise ValueError("rank and world_size go together")
        if self.rank is not None and not 0 <= self.rank < self.world_size:
            raise UserError(f"rank {self.rank} is not in 0..{self.world_size - 1}")

    def record(self, module: Module) -> None:
        """Write the options into the module header (only those set)."""
        if self.auto_offload:
            module.meta["auto_offload"] = "true"
        if self.unroll is not None:
            module.meta["unroll"] = str(self.unroll)
        if self.rank is not None:
            module.meta.update(rank=str(self.rank), world_size=str(self.world_size))
        if self.parallel_mode != "stand_alone":
            module.meta["parallel_mode"] = self.parallel_mode
        if self.gradients_mean:
            module.meta["gradients_mean"] = "true"
        if self.export:
            module.meta["export"] = "true"

    @classmethod
    def of(cls, module: Module) -> "CompileOptions":
        """The options a module was compiled with (its header)."""
        meta = module.meta
        try:
            unroll = int(meta["unroll"]) if "unroll" in meta else None
            rank = int(meta["rank"]) if "rank" in meta else None
            world = int(meta["world_size"]) if "world_size" in meta else None
        except ValueError as e:
            raise UserError(f"module header: {e}",
                            hint="unroll, rank and world_size are whole numbers") from None
        return cls(auto_offload=meta.get("auto_offload") == "true", unroll=unroll,
                   rank=rank, world_size=world,
                   parallel_mode=meta.get("parallel_mode", "stand_alone"),
                   gradients_mean=meta.get("gradients_mean") == "true",
                   export=meta.get("export") == "true")

    @property
    def ranks(self) -> int:
        """The number of ranks training together (1: one process)."""
        return self.world_size or 1

    @property
    def distributed(self) -> bool:
        """Whether the ranks train one model and must communicate (MindSpore's
        parallel modes other than stand-alone, with more than one rank)."""
        return self.ranks > 1 and self.parallel_mode != "stand_alone"

    @property
    def auto_parallel(self) -> bool:
        """Semi-auto or auto parallel: tensor layouts are redistributed and
        BatchNorm over the split batch is synchronised."""
        return self.distributed and self.parallel_mode in ("semi_auto_parallel", "auto_parallel")


@dataclass
class ScriptDefaults:
    """What the running script asked for with ``dataset.config`` (the API
    sets it, the compile driver reads it into each compile's options)."""
    auto_offload: bool = False


script_defaults = ScriptDefaults()
