"""Distributed-training ops: the dataset strategy annotation (seed 004), the
per-rank slice that applies it, and the collectives between ranks.

A collective (``Collective`` trait) is an ordinary op of the step graph, so
the gradient all-reduce, the redistribution of a sliced input and the
synchronised BatchNorm statistics are visible in every dump and picture.  No
ONNX operator runs them: the runtime cuts the step where they are and runs
them on the collective engine (``irc.backends.collectives``) between the
pieces.  On one rank each is the identity, which is their reference
(``host_batch``) implementation here."""
from __future__ import annotations

import numpy as np

from ..ir.registry import PIPELINE, REQUIRED, TENSOR, Dialect
from ..ir.traits import Collective, Pure
from ..ir.types import TensorType

DIALECT = Dialect("parallel")
define = DIALECT.define

DATASET_STRATEGY = define(
    "parallel.dataset_strategy", kind=PIPELINE, family="parallel", operands=("*columns",), results=(),
    attrs={"strategy": REQUIRED, "mode": REQUIRED}, infer=lambda attrs, ins: [],
    doc="set_auto_parallel_context(dataset_strategy=...) applied to the pipeline's "
        "outputs (its operands, in order); checked by the dataset-strategy pass.")


def _infer_slice(attrs, ins):
    t = ins[0]
    axis, parts = attrs["axis"], attrs["parts"]
    if not 0 <= axis < t.rank:
        raise ValueError(f"axis {axis} is outside a rank-{t.rank} value")
    d = t.shape[axis]
    if isinstance(d, int):
        if d % parts:
            raise ValueError(f"dimension {axis} of size {d} does not split into {parts} equal parts")
        d = d // parts
    shape = list(t.shape)
    shape[axis] = d
    return [TensorType(t.dtype, tuple(shape))]


SLICE = define(
    "parallel.slice", kind=TENSOR, family="parallel", operands=("input",), traits=(Pure(),),
    attrs={"axis": REQUIRED, "parts": REQUIRED, "index": REQUIRED}, infer=_infer_slice,
    doc="Part `index` of `parts` equal parts along `axis`: this rank's slice of a batch.")


def _bounds(size: int, attrs) -> tuple[int, int]:
    step = size // attrs["parts"]
    return attrs["index"] * step, (attrs["index"] + 1) * step


@SLICE.host_batch
def _slice_host(inputs, attrs, draws):
    x = inputs[0]
    start, stop = _bounds(x.shape[attrs["axis"]], attrs)
    return [np.take(x, np.arange(start, stop), axis=attrs["axis"])]




# =============================================================================
# collectives
# =============================================================================

REDUCTIONS = ("sum", "mean", "max", "min")


def _infer_all_reduce(attrs, ins):
    if attrs["op"] not in REDUCTIONS:
        raise ValueError(f"parallel.all_reduce: op must be one of {', '.join(REDUCTIONS)}, "
                         f"got {attrs['op']!r}")
    if attrs["group"] < 1:
        raise ValueError(f"parallel.all_reduce: the group has {attrs['group']} rank(s)")
    return [ins[0]]


ALL_REDUCE = define(
    "parallel.all_reduce", kind=TENSOR, family="parallel", operands=("input",),
    traits=(Pure(), Collective()), attrs={"op": "sum", "group": REQUIRED},
    infer=_infer_all_reduce,
    doc="The sum (op = \"sum\"), mean (\"mean\"), maximum or minimum (\"max\", "
        "\"min\") of `input` over the `group` ranks; every rank gets the result.  "
        "Gradients of parameters (mean when gradients_mean; a DistributedGradReducer's "
        "sum), the statistics of a synchronised BatchNorm, a script's ops.AllReduce.")


def _infer_all_to_all(attrs, ins):
    t = ins[0]
    split, concat, group = attrs["split_axis"], attrs["concat_axis"], attrs["group"]
    for name, axis in (("split_axis", split), ("concat_axis", concat)):
        if not 0 <= axis < t.rank:
            raise ValueError(f"parallel.all_to_all: {name} {axis} is outside a rank-{t.rank} value")
    shape = list(t.shape)
    d = shape[split]
    if isinstance(d, int):
        if d % group:
            raise ValueError(f"parallel.all_to_all: dimension {split} of size {d} does not split "
                             f"into {group} equal parts")
        shape[split] = d // group
    elif split != concat:
        shape[split] = d      # symbolic (the batch N): the runtime checks divisibility
    if isinstance(shape[concat], int):
        shape[concat] = shape[concat] * group
    return [TensorType(t.dtype, tuple(shape))]


ALL_TO_ALL = define(
    "parallel.all_to_all", kind=TENSOR, family="parallel", operands=("input",),
    traits=(Pure(), Collective()),
    attrs={"split_axis": REQUIRED, "concat_axis": REQUIRED, "group": REQUIRED},
    infer=_infer_all_to_all,
    doc="Redistribution between layouts: `input` is split in `group` equal parts along "
        "`split_axis`, part r goes to rank r, and the parts a rank receives are joined "
        "along `concat_axis` in rank order.  From a W-sliced batch (seed 004) to a "
        "batch-sliced one of whole images: split_axis 0, concat_axis 3.")


@ALL_REDUCE.host_batch
def _all_reduce_one_rank(inputs, attrs, draws):
    return [np.asarray(inputs[0])]        # one rank: the sum and the mean are the value


@ALL_TO_ALL.host_batch
def _all_to_all_one_rank(inputs, attrs, draws):
    return [np.asarray(inputs[0])]        # one rank keeps its only part
