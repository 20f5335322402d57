"""Distributed-training ops (seed 004): the dataset strategy annotation and
the per-rank slice that applies it."""
from __future__ import annotations

import numpy as np

from ..ir.registry import PIPELINE, REQUIRED, TENSOR, Dialect
from ..ir.traits import Pure
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


