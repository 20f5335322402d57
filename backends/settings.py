"""Process-wide execution settings the backends read.

The data seed, the pipeline's worker threads and prefetch depth, and the
device target are set through the MindSpore-shaped API
(``dataset.config.set_seed``, ``set_context(device_target=...)``), which
validates them; they are stored here, below that API, so that the engines
read them without importing the layer above.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Optional

DEFAULT_SEED = 5489   # std::mt19937's default: what MindSpore's get_seed reports unset


@dataclass
class ExecutionSettings:
    seed: int = DEFAULT_SEED
    num_parallel_workers: int = 2
    prefetch_size: int = 16
    # None until set_context(device_target=...) names one; while None, the
    # device this machine has (CUDA where it really works, else the CPU), as
    # MindSpore's default is the device its package was built for.
    device_target: Optional[str] = None
    # set_deterministic(True) / set_context(deterministic="ON"): the same
    # results, bit for bit, from run to run on CUDA too (slower kernels)
    deterministic: bool = False
    # An offloaded tail (map(offload=True), set_auto_offload) moves to the
    # accelerator.  With none (the CPU only) it stays on the host's kernels,
    # which are the CPU's faster form of it (onnxruntime's Cast/Sub/Div/
    # Transpose cost 1.5-2x the host's fused lookup-table Normalize); True
    # runs it through onnxruntime on the CPU anyway (tests of its lowering).
    offload_tail_on_cpu: bool = False

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, f.default)


settings = ExecutionSettings()
