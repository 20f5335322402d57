"""``nn.Dense``, ``nn.Flatten``, ``nn.Dropout``, ``nn.Identity``."""
from __future__ import annotations

import math

from .. import ops
from ..common.initializer import HeUniform, Uniform, initializer
from ..common.tensor import Parameter
from ..diagnostics import UnsupportedError, UserTypeError, UserValueError, user_frame
from .activation import get_activation
from .cell import Cell


def _positive_int(value, what: str, cls: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserTypeError(f"{cls}: {what} must be an int, got {type(value).__name__} "
                            f"{value!r}", where=user_frame())
    if value <= 0:
        raise UserValueError(f"{cls}: {what} must be positive, got {value}", where=user_frame())
    return value


def default_weight_init(init):
    """MindSpore 2's default for a weight: HeUniform(sqrt(5)), i.e. U(-b, b)
    with b = 1 / sqrt(fan_in)."""
    return HeUniform(math.sqrt(5)) if init is None else init


def default_bias_init(init, fan_in: int):
    """MindSpore 2's default for a bias: U(-1 / sqrt(fan_in), 1 / sqrt(fan_in));
    fan_in is positive (the layers check their channels and kernel first)."""
    return Uniform(1 / math.sqrt(fan_in)) if init is None else init


def make_param(init, shape, name: str, requires_grad: bool = True) -> Parameter:
    """A float32 Parameter of ``shape`` filled by ``init`` (name, Initializer,
    number or Tensor)."""
    return Parameter(initializer(init, shape), name=name, requires_grad=requires_grad)


class Dense(Cell):
    """``y = activation(x @ weight^T + bias)``; weight [out, in], bias [out]."""

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None,
                 has_bias: bool = True, activation=None):
        super().__init__()
        self.in_channels = _positive_int(in_channels, "in_channels", "Dense")
        self.out_channels = _positive_int(out_channels, "out_channels", "Dense")
        self.has_bias = bool(has_bias)
        self.weight = make_param(default_weight_init(weight_init), (out_channels, in_channels),
                                 "weight")
        self.bias = make_param(default_bias_init(bias_init, in_channels), (out_channels,),
                               "bias") if has_bias else None
        self.activation = get_activation(activation)
        self.activation_flag = self.activation is not None

    def construct(self, x):
        y = ops.dense(x, self.weight, self.bias)
        return self.activation(y) if self.activation_flag else y

    def extend_repr(self) -> str:
        s = f"input_channels={self.in_channels}, output_channels={self.out_channels}, " \
            f"has_bias={self.has_bias}"
        if self.activation_flag:
            s += f", activation={type(self.activation).__name__}"
        return s


class Embedding(Cell):
    """``Embedding(vocab_size, embedding_size, use_one_hot=False,
    embedding_table="normal", dtype=mstype.float32, padding_idx=None)``:
    each id's row of ``embedding_table`` [vocab, size], as MindSpore's (a
    Gather, or a one-hot MatMul with ``use_one_hot``; the rows are the same
    bits).  ``padding_idx``'s row starts as zeros."""

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal",
                 dtype=None, padding_idx=None):
        super().__init__()
        self.vocab_size = _positive_int(vocab_size, "vocab_size", "Embedding")
        self.embedding_size = _positive_int(embedding_size, "embedding_size", "Embedding")
        if not isinstance(use_one_hot, bool):
            raise UserTypeError(f"Embedding: use_one_hot must be a bool, got {use_one_hot!r}",
                                where=user_frame())
        self.use_one_hot = use_one_hot
        table = initializer(embedding_table, (vocab_size, embedding_size))
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, int) \
                    or not 0 <= padding_idx < vocab_size:
                raise UserValueError(f"Embedding: padding_idx must be an int in [0, {vocab_size}), "
                                     f"got {padding_idx!r}", where=user_frame())
            values = table.asnumpy().copy()
            values[padding_idx] = 0
            table = type(table)(values)
        self.padding_idx = padding_idx
        self.embedding_table = Parameter(table, name="embedding_table")

    def construct(self, ids):
        # ids of any shape index the table directly (a flatten and reshape
        # back would move the run-time batch off its axis)
        if self.use_one_hot:
            return ops.matmul(ops.one_hot(ids, self.vocab_size, 1.0, 0.0), self.embedding_table)
        return ops.gather(self.embedding_table, ids, 0)

    def extend_repr(self) -> str:
        return f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, " \
               f"use_one_hot={self.use_one_hot}, padding_idx={self.padding_idx}"


class Flatten(Cell):
    """Merge the axes start_dim..end_dim (by default [N, ...] -> [N, prod(...)])."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, x):
        return ops.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)


class Identity(Cell):
    def construct(self, x):
        return x


class Dropout(Cell):
    """Training: zero each element with probability ``p`` (= 1 - keep_prob)
    and scale the rest by 1 / (1 - p); evaluation: the identity."""

    def __init__(self, keep_prob=None, p=None, dtype=None):
        super().__init__()
        if p is None:
            p = 0.5 if keep_prob is None else 1.0 - float(keep_prob)
        elif keep_prob is not None:
            raise UserValueError("Dropout: give keep_prob or p, not both", where=user_frame())
        if isinstance(p, bool) or not isinstance(p, (int, float)):
            raise UserTypeError(f"Dropout: the drop probability must be a number, got {p!r}",
                                where=user_frame())
        if not 0.0 <= float(p) < 1.0:
            raise UserValueError(f"Dropout: the drop probability must be in [0, 1), got {p}",
                                 where=user_frame(), hint="keep_prob must be in (0, 1]")
        self.p = float(p)
        self.keep_prob = 1.0 - self.p

    def construct(self, x):
        if not self.training or self.p == 0.0:
            return x
        return ops.dropout(x, self.p, True)

    def extend_repr(self) -> str:
        return f"p={self.p}"


class EmbeddingLookup(Cell):
    """``EmbeddingLookup(vocab_size, embedding_size, param_init='normal',
    target='CPU', ...)``: each index's row of ``embedding_table`` (a Gather;
    the host/device placement and sharding options have no effect in irc)."""

    def __init__(self, vocab_size, embedding_size, param_init="normal", target="CPU",
                 slice_mode="batch_slice", manual_shapes=None, max_norm=None, sparse=True,
                 dtype=None):      # no vocab_cache_size: MindSpore 2.10 refuses it
        super().__init__()
        self.vocab_size = _positive_int(vocab_size, "vocab_size", "EmbeddingLookup")
        self.embedding_size = _positive_int(embedding_size, "embedding_size", "EmbeddingLookup")
        if max_norm is not None:
            raise UnsupportedError("EmbeddingLookup: max_norm is not supported by irc", where=user_frame())
        self.embedding_table = Parameter(initializer(param_init, (vocab_size, embedding_size)),
                                         name="embedding_table")

    def construct(self, indices):
        return ops.gather(self.embedding_table, indices, 0)


class Upsample(Cell):
    """``ops.interpolate`` as a layer ('nearest' or 'bilinear', NCHW)."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def construct(self, x):
        return ops.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                               self.recompute_scale_factor)
