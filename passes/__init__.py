"""Compiler passes, one module each; importing this package registers them.

``DEFAULT``, ``ITERATE`` and ``EXPORT`` are the named pipelines the entry points run.
"""
from irc.dialects import load_all

from .manager import PassContext, PassFailed, PassManager, Pipeline, get, register, registered  # noqa: F401
from .options import CompileOptions  # noqa: F401,E402
from . import dataset_strategy, dce, graph_sink, hoist_hwc2chw, offload_legality, tail_extraction  # noqa: F401,E402,E501
from . import allreduce_gradients, autodiff, drop_unused_inputs, loop_sink, sync_batch_norm, whole_image  # noqa: F401,E402,E501
from . import maps_after_batch  # noqa: F401,E402

load_all()   # the passes query the ops of every dialect

# Named pipelines: every entry point compiles through one of these (see
# irc/compiler.py), so compile, run, iteration and export decide alike.
DEFAULT = Pipeline("default", (
    "offload-legality",
    "tail-extraction",
    "dataset-strategy",
    "maps-after-batch",
    "graph-sink",
    "hoist-hwc2chw",
    "sync-batch-norm",
    "autodiff",
    "allreduce-gradients",
    "loop-sink",
    "dce",
), "irc compile, irc run, Model.train/eval/predict, per-rank compiles")
ITERATE = Pipeline("iterate", (
    "offload-legality",
    "tail-extraction",
    "maps-after-batch",
    "hoist-hwc2chw",
), "a dataset's iterator: the offloaded tail runs through onnxruntime, the rest on the host")
ITERATE_ON_HOST = Pipeline("iterate-on-host", (
    "maps-after-batch",      # (no offload-legality: what it placed @device would stay per row)
    "hoist-hwc2chw",
), "a dataset's iterator with no accelerator to offload to: the whole pipeline on the host")
EXPORT = Pipeline("export", (
    "offload-legality",
    "tail-extraction",
    "graph-sink",
    "hoist-hwc2chw",
    "dce",
    "drop-unused-inputs",
), "irc export: one inference model, raw batches in, scores out")
PIPELINES = {p.name: p for p in (DEFAULT, ITERATE, ITERATE_ON_HOST, EXPORT)}
DEFAULT_PIPELINE = list(DEFAULT.passes)


def pipeline() -> list[str]:
    """The default pipeline's pass names."""
    return list(DEFAULT.passes)
