"""Process-wide execution settings the backends read.

The data seed, the pipeline's worker threads and prefetch depth, and the
device target are set through the MindSpore-shaped API
(``dataset.config.set_seed``, ``set_context(device_target=...)``), which
validates them; they are stored here, below that API, so that the engines
read them without importing the layer above.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Optional

DEFAULT_SEED = 5489   # std::mt19937's default: what MindSpore's get_seed reports unset


@dataclass
class ExecutionSettings:
    seed: int = DEFAULT_SEED
    # the engine's worker threads per map segment (an upper bound)
    num_parallel_workers: int = 2
    # set_num_parallel_workers's value: the workers MindSpore gives a map
    # without its own (None: MindSpore's default, 8 or fewer cores), which
    # decide MindSpore's random draws (irc.dialects.draws.Stream)
    map_workers: Optional[int] = None
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
    # 3x3 stride-1 convolutions of the programs irc runs on the CPU as
    # Winograd F(4x4, 3x3) where measured faster (1.4-1.9x on ResNet-18's
    # deeper layers; results within ~1e-5 of a direct convolution's); False
    # keeps onnxruntime's Conv everywhere (``IRC_WINOGRAD=0``)
    winograd: bool = field(default_factory=lambda: os.environ.get("IRC_WINOGRAD", "1") != "0")
    # set_context(runtime_num_threads=N): the intra-op threads of training and
    # evaluation steps (0 / None: chosen per step, backends.runtime.program_threads)
    runtime_num_threads: Optional[int] = None

    def reset(self) -> None:
        fresh = ExecutionSettings()
        for f in fields(self):
            setattr(self, f.name, getattr(fresh, f.name))


settings = ExecutionSettings()
