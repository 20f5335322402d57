"""``mindspore``'s small top-level helpers: ``tensor``, ``from_numpy``,
``is_tensor``, ``mutable``, ``jit_class``, ``dtype_to_nptype`` (``manual_seed``:
``irc.dataset.config``, beside ``set_seed``)."""
from __future__ import annotations

import numpy as np

from . import dtype as mstype
from .dtype import dtype_to_nptype  # noqa: F401 -- also a top-level name
from .tensor import Tensor

__all__ = ["tensor", "from_numpy", "is_tensor", "mutable", "jit_class", "dtype_to_nptype"]


def tensor(input_data=None, dtype=None, shape=None, init=None, const_arg=False, device=None):
    """``mindspore.tensor(data, dtype=None)``: a Tensor (floats as float32, as ``Tensor``)."""
    if input_data is None and shape is not None:
        return Tensor(np.zeros(tuple(shape), mstype.numpy_dtype(dtype or mstype.float32)))
    return Tensor(input_data, dtype=dtype)


def from_numpy(array) -> Tensor:
    """A Tensor of the array (its dtype kept)."""
    return Tensor.from_numpy(array)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def mutable(input_data, dynamic_len=False):
    """``mindspore.mutable``: marks a value MindSpore's graph mode must not
    fold into the graph.  irc traces a jitted function per input signature,
    so the value is returned as it is."""
    return input_data


def jit_class(cls):
    """``@mindspore.jit_class``: a class whose objects a jitted function may
    use (irc's tracing reads any Python object): the class itself."""
    return cls

