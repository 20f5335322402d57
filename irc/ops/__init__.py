"""``mindspore.ops``: primitives (``ops.Reshape()``) and functions
(``ops.reshape``) usable in a Cell's ``construct``; they run eagerly on
Tensors and become ``nn.*`` graph nodes while a network is traced."""
from __future__ import annotations

from ..diagnostics import missing_names
from . import functional, operations  # noqa: F401
from .functional import (  # noqa: F401
    abs, adaptive_avg_pool2d, add, amax, amin, argmax, assign, avg_pool2d, batch_norm, bias_add, broadcast_to,
    cast, cat, clamp, clip, clip_by_global_norm, concat, conv2d, dense, depend, div, dropout, equal, erf, exp,
    expand_dims, fill, flatten, gather, gelu, greater, hardsigmoid, hardswish, identity, leaky_relu, less,
    log, log_softmax, matmul, max_pool2d, maximum, mean, minimum, mul, neg, one_hot, ones,
    ones_like, pad, permute, pow, rank, reciprocal, reduce_mean, reduce_sum, relu, relu6, reshape,
    shape, sigmoid, softmax, sqrt, square, squeeze, stack, sub, sum, tanh, tile, transpose, unbind,
    unsqueeze, unstack, zeros, zeros_like,
)
from .operations import (  # noqa: F401
    Abs, AdaptiveAvgPool2D, Add, Argmax, Assign, AvgPool, BatchMatMul, BiasAdd, BroadcastTo, Cast, Concat,
    Conv2D, Div, Equal, Erf, Exp, ExpandDims, Flatten, Gather, GeLU, Greater, HSigmoid, HSwish, Identity,
    Less, Log, LogSoftmax, MatMul, Maximum, MaxPool, Minimum, MirrorPad, Mul, Neg, OneHot, Pad, Pow,
    Primitive, PrimitiveWithInfer, RealDiv, Reciprocal, ReduceMax, ReduceMean, ReduceMin, ReduceSum,
    ReLU, ReLU6, Reshape, Shape, Sigmoid, Softmax, Sqrt, Square, Squeeze, Stack, Sub, Tanh,
    Tile, Transpose, Unstack,
)

# Gradients and jit trace whole functions: they live in the frontend
# (irc/train/functional.py), loaded on first use.
COMPOSITE = ("value_and_grad", "grad", "GradOperation", "jit")


def composite_getattr(module: str):
    """A module ``__getattr__`` (mindspore.ops, mindspore.ops.composite): the
    COMPOSITE names from irc/train/functional.py, any other name missing."""
    missing = missing_names(module)

    def __getattr__(name: str):
        if name in COMPOSITE:
            from ..train import functional
            return getattr(functional, name)
        return missing(name)
    return __getattr__


__getattr__ = composite_getattr(__name__)
