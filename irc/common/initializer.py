"""``mindspore.common.initializer``: how weights get their first values.

Random initializers draw from numpy's global generator, which
``irc.set_seed`` (like ``mindspore.set_seed``) and ``np.random.seed`` seed:
the same seed gives the same weights, run after run.

Fans follow MindSpore: for a weight ``[out, in, *kernel]`` fan_in is
``in * prod(kernel)`` and fan_out ``out * prod(kernel)``.
"""
from __future__ import annotations

import abc
import math
from typing import Optional

import numpy as np

from ..diagnostics import UserTypeError, UserValueError, missing_names, user_frame
from . import dtype as mstype


def _rng():
    return np.random   # its global generator, which np.random.seed seeds


def _fans(shape) -> tuple[int, int]:
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity: str, param: float) -> float:
    if nonlinearity in ("linear", "conv2d", "sigmoid", "conv1d", "conv3d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        return math.sqrt(2.0 / (1 + param ** 2))
    raise UserValueError(f"unknown nonlinearity {nonlinearity!r} for He initialisation",
                         where=user_frame(),
                         hint="use 'relu', 'leaky_relu', 'tanh', 'sigmoid' or 'linear'")


class Initializer(abc.ABC):
    """Base class: ``init(arr)`` fills a numpy array in place (as MindSpore's)."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def __call__(self, arr: np.ndarray) -> None:
        arr[...] = self._values(tuple(arr.shape))

    @abc.abstractmethod
    def _values(self, shape: tuple) -> np.ndarray:
        """The initial values for ``shape`` (float64; cast by the caller)."""

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


class Zero(Initializer):
    def _values(self, shape):
        return np.zeros(shape)


class One(Initializer):
    def _values(self, shape):
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _values(self, shape):
        return np.full(shape, self.value)


class Normal(Initializer):
    """N(mean, sigma)."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0):
        super().__init__(sigma=sigma, mean=mean)
        self.sigma, self.mean = sigma, mean

    def _values(self, shape):
        return _rng().normal(self.mean, self.sigma, shape)


class TruncatedNormal(Initializer):
    """N(mean, sigma) restricted to [a, b] (resampled until inside)."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0, a: float = -2.0, b: float = 2.0):
        super().__init__(sigma=sigma, mean=mean, a=a, b=b)
        if a >= b:
            raise UserValueError(f"TruncatedNormal: a ({a}) must be below b ({b})",
                                 where=user_frame())
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def _values(self, shape):
        out = _rng().normal(self.mean, self.sigma, shape)
        bad = (out < self.a) | (out > self.b)
        while bad.any():
            out[bad] = _rng().normal(self.mean, self.sigma, int(bad.sum()))
            bad = (out < self.a) | (out > self.b)
        return out


class Uniform(Initializer):
    """U(-scale, scale)."""

    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _values(self, shape):
        return _rng().uniform(-self.scale, self.scale, shape)


class XavierUniform(Initializer):
    """U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, gain: float = 1):
        super().__init__(gain=gain)
        self.gain = gain

    def _values(self, shape):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return _rng().uniform(-bound, bound, shape)


class XavierNormal(Initializer):
    """N(0, gain * sqrt(2 / (fan_in + fan_out)))."""

    def __init__(self, gain: float = 1):
        super().__init__(gain=gain)
        self.gain = gain

    def _values(self, shape):
        fan_in, fan_out = _fans(shape)
        return _rng().normal(0.0, self.gain * math.sqrt(2.0 / (fan_in + fan_out)), shape)


class _He(Initializer):
    def __init__(self, negative_slope: float = 0, mode: str = "fan_in",
                 nonlinearity: str = "leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        if mode not in ("fan_in", "fan_out"):
            raise UserValueError(f"{type(self).__name__}: mode must be 'fan_in' or 'fan_out', "
                                 f"got {mode!r}", where=user_frame())
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _std(self, shape) -> float:
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


class HeUniform(_He):
    """U(-b, b), b = gain * sqrt(3 / fan) (Kaiming uniform)."""

    def _values(self, shape):
        bound = math.sqrt(3.0) * self._std(shape)
        return _rng().uniform(-bound, bound, shape)


class HeNormal(_He):
    """N(0, gain / sqrt(fan)) (Kaiming normal)."""

    def _values(self, shape):
        return _rng().normal(0.0, self._std(shape), shape)


# MindSpore's string names (matched without case).
_ALIASES = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One,
    "normal": Normal, "truncatednormal": TruncatedNormal, "uniform": Uniform,
    "xavier_uniform": XavierUniform, "xavier_normal": XavierNormal,
    "he_uniform": HeUniform, "he_normal": HeNormal,
}


def _resolve(init) -> Initializer:
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str):
        cls = _ALIASES.get(init.lower())
        if cls is None:
            raise UserValueError(f"unknown initializer {init!r}", where=user_frame(),
                                 hint=f"use one of: {', '.join(sorted(_ALIASES))}, or an "
                                      f"Initializer")
        return cls()
    if isinstance(init, (bool, np.bool_)) or not isinstance(init, (int, float, np.number)):
        raise UserTypeError(f"initializer must be a name, an Initializer, a number or a Tensor; "
                            f"got {type(init).__name__}", where=user_frame())
    return Constant(init)


def initializer(init, shape=None, dtype=mstype.float32):
    """A Tensor of ``shape`` filled by ``init`` (a name, an Initializer, a
    number, or a Tensor/array whose shape must equal ``shape``)."""
    from .tensor import Tensor
    np_dtype = mstype.numpy_dtype(dtype)
    if isinstance(init, (Tensor, np.ndarray)):
        array = np.asarray(init)
        if shape is not None and tuple(array.shape) != _shape(shape):
            raise UserValueError(f"the initial value has shape {list(array.shape)}, expected "
                                 f"{list(_shape(shape))}", where=user_frame())
        t = Tensor(array.astype(np_dtype))
        t.init_desc = "tensor"
        return t
    init = _resolve(init)
    if shape is None:
        raise UserValueError("initializer(...) needs a shape", where=user_frame())
    shape = _shape(shape)
    array = np.asarray(init._values(shape), dtype=np.float64).astype(np_dtype)
    t = Tensor(array)
    t.init_desc = repr(init)
    return t


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        out = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise UserTypeError(f"a shape must be ints, got {shape!r}", where=user_frame()) from None
    if any(d < 0 for d in out):
        raise UserValueError(f"a shape cannot have negative dimensions, got {list(out)}",
                             where=user_frame())
    return out


def describe(init) -> Optional[str]:
    """A short text for the ``init`` attribute of a param node."""
    if init is None:
        return None
    if isinstance(init, str):
        return init
    return repr(init) if isinstance(init, Initializer) else type(init).__name__


__getattr__ = missing_names(__name__)
