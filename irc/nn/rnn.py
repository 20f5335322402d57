"""MindSpore's recurrent layers: ``nn.LSTM``, ``nn.GRU``, ``nn.RNN`` (stacked,
bidirectional, ``batch_first``, initial states) and the one-step cells
``nn.LSTMCell``, ``nn.GRUCell``, ``nn.RNNCell``.

Parameters are MindSpore's: named ``weight_ih_l{k}[_reverse]``, ``weight_hh_...``,
``bias_ih_...``, ``bias_hh_...`` (all input weights first, as its tuples
list them) and drawn as MindSpore draws them (the layers from numpy's
global generator, U(-1/sqrt(H), 1/sqrt(H)); the cells through its Uniform
initializer after advancing that generator), so a script seeded for
MindSpore starts on MindSpore's weights.  Per layer and direction, the input
projection over all steps is one dense and the recurrence one ``nn.LSTM`` /
``nn.GRU`` / ``nn.RNN`` op (a Scan in ONNX); the cells are plain ops, as
MindSpore's are.
"""
from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..common import dtype as mstype
from ..common.initializer import Uniform, initializer
from ..common.tensor import Parameter, Tensor
from ..dialects.nn import RECURRENT_CELLS
from ..diagnostics import UnsupportedError, UserTypeError, UserValueError, user_frame
from ..ops import _dispatch
from .basic import Dropout, _positive_int
from .cell import Cell

def _float_dtype(dtype, layer: str) -> None:
    if dtype not in (None, mstype.float32):
        raise UnsupportedError(f"{layer}: irc keeps recurrent parameters in float32, got dtype={dtype}",
                               where=user_frame(), hint="leave dtype at its default")


class _RNNBase(Cell):
    _mode = "RNN_TANH"

    def __init__(self, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False,
                 dropout=0., bidirectional=False, dtype=mstype.float32):
        super().__init__()
        layer = type(self).__name__
        self.input_size = _positive_int(input_size, "input_size", layer)
        self.hidden_size = _positive_int(hidden_size, "hidden_size", layer)
        self.num_layers = _positive_int(num_layers, "num_layers", layer)
        for name, value in (("has_bias", has_bias), ("batch_first", batch_first),
                            ("bidirectional", bidirectional)):
            if not isinstance(value, bool):
                raise UserTypeError(f"{layer}: {name} must be a bool, got {value!r}", where=user_frame())
        if not isinstance(dropout, float) or not 0 <= dropout < 1:
            raise UserValueError(f"{layer}: dropout must be a float in [0, 1), got {dropout!r}",
                                 where=user_frame())
        _float_dtype(dtype, layer)
        self.has_bias, self.batch_first, self.bidirectional = has_bias, batch_first, bidirectional
        self.dropout = dropout
        self.dropout_op = Dropout(p=dropout)
        self.is_lstm = self._mode == "LSTM"
        gates = RECURRENT_CELLS[self._mode.lower()] * hidden_size
        stdv = 1 / math.sqrt(hidden_size)
        directions = 2 if bidirectional else 1
        made = {"weight_ih": [], "weight_hh": [], "bias_ih": [], "bias_hh": []}
        for k in range(num_layers):
            for d in range(directions):
                suffix = f"_l{k}" + ("_reverse" if d else "")
                n_in = input_size if k == 0 else hidden_size * directions
                # drawn in MindSpore's order: each layer and direction's four in turn
                for kind, shape in (("weight_ih", (gates, n_in)), ("weight_hh", (gates, hidden_size)),
                                    ("bias_ih", (gates,)), ("bias_hh", (gates,))):
                    if kind.startswith("bias") and not has_bias:
                        continue
                    values = np.random.uniform(-stdv, stdv, shape).astype(np.float32)
                    made[kind].append(Parameter(Tensor(values), name=kind + suffix))
        for params in made.values():        # registered as MindSpore lists them
            for p in params:
                setattr(self, p.name, p)
        self.w_ih_list, self.w_hh_list = tuple(made["weight_ih"]), tuple(made["weight_hh"])
        self.b_ih_list, self.b_hh_list = tuple(made["bias_ih"]), tuple(made["bias_hh"])

    def construct(self, x, hx=None, seq_length=None):
        if self.batch_first:
            x = ops.transpose(x, (1, 0, 2))
        directions = 2 if self.bidirectional else 1
        if hx is None:
            zeros = ops.zeros((self.num_layers * directions, x.shape[1], self.hidden_size), x.dtype)
            hx = (zeros, zeros) if self.is_lstm else zeros
        lengths = _WholeSequences() if seq_length is None else \
            _SequenceLengths(seq_length, x, type(self).__name__)
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outputs = []
            for d in range(directions):
                k = layer * directions + d
                h0 = hx[0][k] if self.is_lstm else hx[k]
                c0 = hx[1][k] if self.is_lstm else None
                y, c = self._sweep(k, lengths.reverse(x) if d else x, h0, c0)
                h_n.append(lengths.last(y, h0))
                if c is not None:
                    c_n.append(lengths.last(c, c0))
                y = lengths.mask(y)
                outputs.append(lengths.reverse(y) if d else y)
            x = outputs[0] if directions == 1 else ops.concat(outputs, 2)
            if self.dropout and layer < self.num_layers - 1:
                x = self.dropout_op(x)
        if self.batch_first:
            x = ops.transpose(x, (1, 0, 2))
        if self.is_lstm:
            return x, (ops.stack(h_n, 0), ops.stack(c_n, 0))
        return x, ops.stack(h_n, 0)

    def _sweep(self, k: int, x, h0, c0):
        """One layer and direction over the whole sequence: (y, c or None)."""
        bias = b_hh = None
        if self.has_bias:
            bias, b_hh = self.b_ih_list[k], self.b_hh_list[k]
            if self._mode != "GRU":       # GRU's b_hn sits inside the reset gate's product
                bias = bias + b_hh
        projected = ops.dense(x, self.w_ih_list[k], bias)
        w_hh = self.w_hh_list[k]
        if self.is_lstm:
            y, c = _dispatch.apply("nn.LSTM", [projected, w_hh, h0, c0])
            return y, c
        if self._mode == "GRU":
            return _dispatch.apply("nn.GRU", [projected, w_hh, h0, *([b_hh] if self.has_bias else [])])[0], None
        activation = "relu" if self._mode == "RNN_RELU" else "tanh"
        return _dispatch.apply("nn.RNN", [projected, w_hh, h0], {"activation": activation})[0], None

    def extend_repr(self) -> str:
        return (f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}, "
                f"batch_first={self.batch_first}, bidirectional={self.bidirectional}")


class _WholeSequences:
    """No ``seq_length``: every sequence runs the whole time axis."""

    def mask(self, y):
        return y

    def last(self, y, initial):
        return y[-1]

    def reverse(self, x):
        return ops.flip(x, (0,))


class _SequenceLengths(_WholeSequences):
    """``seq_length`` of a padded, time-major batch [T, B, ...], as MindSpore
    reads it: the outputs past a sequence's length are zeros, its last state
    is the one at its length (the initial state for length 0), and the
    reverse direction reads each sequence backwards from its own end (the
    padding stays where it is: ``ReverseSequence``).

    A recurrence is causal, so the steps before a sequence's end do not see
    its padding: the whole batch runs as one sweep, then masks, picks and
    per-sequence reversals select what MindSpore's step-by-step ``Select``
    computes (products with 0/1 matrices: exact)."""

    def __init__(self, seq_length, x, layer: str):
        from ..ir.types import is_integer
        if not _dispatch.is_tensor(seq_length):
            raise UserTypeError(f"{layer}: seq_length must be a Tensor, got "
                                f"{type(seq_length).__name__}", where=user_frame())
        t = _dispatch.type_of(seq_length)
        if not is_integer(t.dtype) or t.rank != 1:
            raise UserTypeError(f"{layer}: seq_length must be a 1-D int32 or int64 Tensor, got "
                                f"{t}", where=user_frame())
        steps, batch = x.shape[0], x.shape[1]
        if isinstance(batch, int) and isinstance(t.shape[0], int) and t.shape[0] != batch:
            raise UserValueError(f"{layer}: batch size of x and seq_length must be equal, got "
                                 f"{batch} of x and {t.shape[0]} of seq_length",
                                 where=user_frame())
        lengths = ops.unsqueeze(ops.cast(seq_length, mstype.int32), 0)          # [1, B]
        t_steps = ops.unsqueeze(ops.arange(0, steps, 1, dtype=mstype.int32), 1)  # [T, 1]
        valid = ops.cast(ops.less(t_steps, lengths), mstype.int32)             # [T, B]
        dtype = x.dtype
        self.keep = ops.unsqueeze(ops.cast(valid, dtype), 2)                   # [T, B, 1]
        # the step each step reads backwards: lengths - 1 - t inside, t in the padding
        source = valid * (lengths - 1 - t_steps) + (1 - valid) * t_steps
        self.permutation = ops.transpose(ops.one_hot(source, steps), (1, 0, 2))   # [B, T, S]
        last = ops.maximum(lengths - 1, 0)                                     # [1, B]
        self.at_last = ops.unsqueeze(ops.cast(ops.equal(t_steps, last), dtype), 2)
        self.started = ops.unsqueeze(ops.cast(ops.less(0, lengths[0]), dtype), 1)   # [B, 1]

    def mask(self, y):
        return y * self.keep

    def last(self, y, initial):
        picked = ops.sum(y * self.at_last, 0)
        return picked * self.started + initial * (1 - self.started)

    def reverse(self, x):
        by_sequence = ops.transpose(x, (1, 0, 2))
        return ops.transpose(ops.bmm(self.permutation, by_sequence), (1, 0, 2))


class LSTM(_RNNBase):
    _mode = "LSTM"


class GRU(_RNNBase):
    _mode = "GRU"


class RNN(_RNNBase):
    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if nonlinearity not in ("tanh", "relu"):
            raise UserValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}",
                                 where=user_frame())
        self._mode = "RNN_" + nonlinearity.upper()
        super().__init__(*args, **kwargs)


class RNNCellBase(Cell):
    """One step; parameters weight_ih, weight_hh (bias_ih, bias_hh)."""

    def __init__(self, input_size: int, hidden_size: int, has_bias: bool, num_chunks: int,
                 dtype=mstype.float32):
        super().__init__()
        layer = type(self).__name__
        self.input_size = _positive_int(input_size, "input_size", layer)
        self.hidden_size = _positive_int(hidden_size, "hidden_size", layer)
        if not isinstance(has_bias, bool):
            raise UserTypeError(f"{layer}: has_bias must be a bool, got {has_bias!r}", where=user_frame())
        _float_dtype(dtype, layer)
        self.has_bias = has_bias
        shapes = {"weight_ih": (num_chunks * hidden_size, input_size),
                  "weight_hh": (num_chunks * hidden_size, hidden_size)}
        if has_bias:
            shapes.update(bias_ih=(num_chunks * hidden_size,), bias_hh=(num_chunks * hidden_size,))
        stdv = 1 / math.sqrt(hidden_size)
        for name, shape in shapes.items():
            np.random.randn(*shape)     # MindSpore fills them so first: numpy's generator moves on
        for name, shape in shapes.items():
            setattr(self, name, Parameter(initializer(Uniform(stdv), shape), name=name))
        if not has_bias:
            self.bias_ih = self.bias_hh = None

    def _gates(self, x, h):
        """(x W_ih^T + b_ih, h W_hh^T + b_hh)."""
        return ops.dense(x, self.weight_ih, self.bias_ih), ops.dense(h, self.weight_hh, self.bias_hh)


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, has_bias: bool = True, nonlinearity: str = "tanh",
                 dtype=mstype.float32):
        super().__init__(input_size, hidden_size, has_bias, 1, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise UserValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}",
                                 where=user_frame())
        self.nonlinearity = nonlinearity

    def construct(self, x, hx):
        i, h = self._gates(x, hx)
        return ops.tanh(i + h) if self.nonlinearity == "tanh" else ops.relu(i + h)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, has_bias: bool = True, dtype=mstype.float32):
        super().__init__(input_size, hidden_size, has_bias, 4, dtype)

    def construct(self, x, hx):
        h, c = hx
        i, hh = self._gates(x, h)
        i, f, g, o = ops.split(i + hh, self.hidden_size, 1)
        c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
        return ops.sigmoid(o) * ops.tanh(c), c


class GRUCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, has_bias: bool = True, dtype=mstype.float32):
        super().__init__(input_size, hidden_size, has_bias, 3, dtype)

    def construct(self, x, hx):
        gi, gh = self._gates(x, hx)
        i_r, i_z, i_n = ops.split(gi, self.hidden_size, 1)
        h_r, h_z, h_n = ops.split(gh, self.hidden_size, 1)
        r, z = ops.sigmoid(i_r + h_r), ops.sigmoid(i_z + h_z)
        n = ops.tanh(i_n + r * h_n)
        return n + z * (hx - n)
