"""Compiler passes, one module each; importing this package registers them.

``DEFAULT_PIPELINE`` is the order ``irc compile`` runs them in.
"""
from irc.dialects import load_all

from .manager import PassContext, PassFailed, PassManager, get, register, registered  # noqa: F401
from . import dataset_strategy, dce, graph_sink, hoist_hwc2chw, offload_legality, tail_extraction  # noqa: F401,E402,E501
from . import autodiff, loop_sink, whole_image  # noqa: F401,E402

load_all()   # the passes query the ops of every dialect

DEFAULT_PIPELINE: list[str] = [
    "offload-legality",
    "tail-extraction",
    "graph-sink",
    "hoist-hwc2chw",
    "dataset-strategy",
    "autodiff",
    "loop-sink",
    "dce",
]


def pipeline() -> list[str]:
    """The default pipeline, limited to passes that are registered."""
    known = registered()
    return [p for p in DEFAULT_PIPELINE if p in known]
