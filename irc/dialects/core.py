"""Builtin ops every graph uses: its inputs, parameters, constants and return."""
from __future__ import annotations

import numpy as np

from ..ir.registry import IO, REQUIRED, Dialect
from ..ir.traits import Pure
from ..ir.types import TensorType, to_numpy_dtype

DIALECT = Dialect("core")
define = DIALECT.define


def _const_type(attrs, ins):
    array = np.asarray(attrs["value"], dtype=to_numpy_dtype(attrs["dtype"]))
    return [TensorType(attrs["dtype"], array.shape)]


INPUT = define("input", kind=IO, family="io", operands=(),
               attrs={"index": REQUIRED, "draws_for": None},
               doc="A graph input; its type is given, not inferred.  'draws_for' "
                   "names the random op whose per-sample draws ([N, k] uniform "
                   "floats made on the host) this input carries.")
PARAM = define("param", kind=IO, family="param", operands=(), traits=(Pure(),),
               attrs={"name": REQUIRED, "init": None, "trainable": True},
               doc="A parameter (weight); its value lives in Module.weights[name].")
CONST = define("const", kind=IO, family="io", operands=(), traits=(Pure(),),
               attrs={"value": REQUIRED, "dtype": REQUIRED}, infer=_const_type,
               doc="A small constant written inline.")
RETURN = define("return", kind=IO, family="io", operands=("*values",), results=(),
                attrs={"names": None}, infer=lambda attrs, ins: [],
                doc="The graph's results; 'names' labels them (e.g. columns).")


@CONST.host_batch
def _const_host(inputs, attrs, draws):
    return [np.asarray(attrs["value"], dtype=to_numpy_dtype(attrs["dtype"]))]


@CONST.lower_onnx
def _const_onnx(emit, inputs, attrs, draws):
    return [emit.const(np.asarray(attrs["value"], dtype=to_numpy_dtype(attrs["dtype"])))]
