"""ONNX lowering of the recurrences (``nn.LSTM``, ``nn.GRU``, ``nn.RNN``) and
of their gradients (``grad.LSTM`` ...): each is one ``Scan`` over the steps.

ONNX's own LSTM/GRU/RNN ops have no gradients, and a sequence unrolled
into per-step ops grows the graph (and its compile) with its length; a Scan
body is one step whatever the length.  The forward body computes only
``h W_hh^T`` and the gates (the input projection is one MatMul outside,
in the IR); in training the forward also keeps every step's gates
(``grad.LSTMWithGates``), the backward body runs the steps in reverse from
them and emits the gates' gradients, and ``dW_hh`` is one Gemm of those
against the previous states after the sweep.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np
from onnx import helper

from irc.dialects.nn import GRU, LSTM, RNN
from irc.dialects.nn_grad import GRU_GRAD, GRU_WITH_GATES, LSTM_GRAD, LSTM_WITH_GATES, RNN_GRAD
from irc.ir.types import to_numpy_dtype

from .table import lowering


# Every value a body reads or makes is one step of the batch: [batch, features].
# Declared, so onnxruntime knows each output's rank even where the outer
# shapes are symbolic (a Model.train step's batch N), which a Scan requires.
_STEP = [None, None]


class _ScanBody:
    """A Scan body under construction: its inputs (carried states, then one
    step of each scanned sequence), nodes and outputs (the next states, then
    one step of each produced sequence).  Its values are prefixed so the
    subgraph never reuses an outer name; it reads outer values (W_hh,
    constants) by name, as ONNX allows."""

    def __init__(self, emit, hint: str):
        self.emit = emit
        self.dtype = to_numpy_dtype(emit.in_types[0].dtype)
        self.elem = helper.np_dtype_to_tensor_dtype(self.dtype)
        self.prefix = emit.fresh(hint) + "/"
        self.nodes, self.inputs, self.outputs = [], [], []
        self._named: set[str] = set()       # the body's inputs and outputs so far
        self._ids = itertools.count()

    @functools.cached_property
    def one(self) -> str:
        """1 in the body's dtype (an outer constant, made when a body needs it)."""
        return self.emit.const(np.array(1, self.dtype), name_hint="one")

    def input(self, hint: str) -> str:
        name = self.prefix + hint
        self.inputs.append(helper.make_tensor_value_info(name, self.elem, _STEP))
        self._named.add(name)
        return name

    def op(self, op_type: str, inputs, *, outputs: int = 1, **attrs):
        outs = [f"{self.prefix}{op_type.lower()}_{next(self._ids)}" for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=self.emit.node_name(op_type),
                                           **attrs))
        return outs[0] if outputs == 1 else outs

    def output(self, value: str, hint: str) -> None:
        """The next body output; a value that is already one (h: the next
        state and this step's output) or an input gets an Identity, since a
        graph names each output once (a node per step saved elsewhere)."""
        if value in self._named:
            name = f"{self.prefix}{hint}.out"
            self.nodes.append(helper.make_node("Identity", [value], [name], name=self.emit.node_name("Identity")))
            value = name
        self._named.add(value)
        self.outputs.append(helper.make_tensor_value_info(value, self.elem, _STEP))

    def one_minus(self, v: str) -> str:
        return self.op("Sub", [self.one, v])

    def scan(self, states: list[str], sequences: list[str], *, reverse: bool = False) -> list[str]:
        """The Scan node: final states, then the produced sequences (in
        forward time order either way)."""
        graph = helper.make_graph(self.nodes, self.prefix + "step", self.inputs, self.outputs)
        produced = len(self.outputs) - len(states)
        direction = int(reverse)
        return self.emit.op("Scan", [*states, *sequences], outputs=len(self.outputs), body=graph,
                            num_scan_inputs=len(sequences),
                            scan_input_directions=[direction] * len(sequences),
                            scan_output_directions=[direction] * produced)


def _transposed(emit, w: str) -> str:
    return emit.op("Transpose", [w], perm=[1, 0])


def _zeros_like(emit, body: _ScanBody, v: str) -> str:
    return emit.op("ConstantOfShape", [emit.op("Shape", [v])],
                   value=helper.make_tensor("zero", body.elem, [1], [0]))


def _previous(emit, h0: str, y: str) -> str:
    """The state each step started from: h0, then every step's but the last."""
    head = emit.op("Unsqueeze", [h0, emit.const(np.array([0], np.int64))])
    rest = emit.op("Slice", [y, emit.const(np.array([0], np.int64)), emit.const(np.array([-1], np.int64)),
                             emit.const(np.array([0], np.int64))])
    return emit.op("Concat", [head, rest], axis=0)


def _weight_grad(emit, dgates: str, previous: str) -> str:
    """sum over steps and rows of dgates^T h_prev: [G, H], one Gemm."""
    gates, hidden = (int(d) for d in emit.in_types[1].shape)     # w_hh, always static
    rows = emit.op("Reshape", [dgates, emit.const(np.array([-1, gates], np.int64))])
    states = emit.op("Reshape", [previous, emit.const(np.array([-1, hidden], np.int64))])
    return emit.op("Gemm", [rows, states], transA=1)


# -- LSTM ---------------------------------------------------------------------

def _lstm_scan(emit, inputs, keep_gates: bool) -> list[str]:
    x, w, h0, c0 = inputs
    body = _ScanBody(emit, "lstm")
    h, c, x_t = body.input("h"), body.input("c"), body.input("x")
    i, f, g, o = body.op("Split", [body.op("Add", [x_t, body.op("MatMul", [h, _transposed(emit, w)])])],
                         outputs=4, axis=-1, num_outputs=4)
    i, f, g, o = body.op("Sigmoid", [i]), body.op("Sigmoid", [f]), body.op("Tanh", [g]), body.op("Sigmoid", [o])
    c_next = body.op("Add", [body.op("Mul", [f, c]), body.op("Mul", [i, g])])
    h_next = body.op("Mul", [o, body.op("Tanh", [c_next])])
    for value, hint in ((h_next, "h"), (c_next, "c"), (h_next, "y"), (c_next, "cs")):
        body.output(value, hint)
    if keep_gates:
        body.output(body.op("Concat", [i, f, g, o], axis=-1), "gates")
    return body.scan([h0, c0], [x])[2:]


@lowering(LSTM_GRAD)
def _lstm_grad_onnx(emit, inputs, attrs, draws):
    dy, w, h0, c0, y, c, gates = inputs[:7]
    dc_out = inputs[7] if len(inputs) > 7 else None
    h_prev, c_prev = _previous(emit, h0, y), _previous(emit, c0, c)
    body = _ScanBody(emit, "lstm_grad")
    dh_in, dc_in = body.input("dh"), body.input("dc")
    dy_t, gates_t, cp, c_t = (body.input(n) for n in ("dy", "gates", "c_prev", "c"))
    i, f, g, o = body.op("Split", [gates_t], outputs=4, axis=-1, num_outputs=4)
    dh = body.op("Add", [dh_in, dy_t])
    tc = body.op("Tanh", [c_t])
    dc = body.op("Add", [dc_in, body.op("Mul", [body.op("Mul", [dh, o]),
                                                body.one_minus(body.op("Mul", [tc, tc]))])])
    if dc_out is not None:
        dc = body.op("Add", [dc, body.input("dc_out")])

    def gate(grad, v, derivative):
        return body.op("Mul", [body.op("Mul", [grad, v]), derivative])
    dgates = body.op("Concat", [
        gate(dc, g, body.op("Mul", [i, body.one_minus(i)])),
        gate(dc, cp, body.op("Mul", [f, body.one_minus(f)])),
        gate(dc, i, body.one_minus(body.op("Mul", [g, g]))),
        gate(dh, tc, body.op("Mul", [o, body.one_minus(o)]))], axis=-1)
    body.output(body.op("MatMul", [dgates, w]), "dh")
    body.output(body.op("Mul", [dc, f]), "dc")
    body.output(dgates, "dgates")
    sequences = [dy, gates, c_prev, c, *([dc_out] if dc_out is not None else [])]
    dh0, dc0, dx = body.scan([_zeros_like(emit, body, h0), _zeros_like(emit, body, c0)], sequences,
                             reverse=True)
    return [dx, _weight_grad(emit, dx, h_prev), dh0, dc0]


# -- GRU ----------------------------------------------------------------------

def _gru_scan(emit, inputs, keep_gates: bool) -> list[str]:
    x, w, h0 = inputs[:3]
    b = inputs[3] if len(inputs) > 3 else None
    body = _ScanBody(emit, "gru")
    h, x_t = body.input("h"), body.input("x")
    hg = body.op("MatMul", [h, _transposed(emit, w)])
    if b is not None:
        hg = body.op("Add", [hg, b])
    xr, xz, xn = body.op("Split", [x_t], outputs=3, axis=-1, num_outputs=3)
    hr, hz, hn = body.op("Split", [hg], outputs=3, axis=-1, num_outputs=3)
    r = body.op("Sigmoid", [body.op("Add", [xr, hr])])
    z = body.op("Sigmoid", [body.op("Add", [xz, hz])])
    n = body.op("Tanh", [body.op("Add", [xn, body.op("Mul", [r, hn])])])
    h_next = body.op("Add", [n, body.op("Mul", [z, body.op("Sub", [h, n])])])
    body.output(h_next, "h")
    body.output(h_next, "y")
    if keep_gates:
        body.output(body.op("Concat", [r, z, n, hn], axis=-1), "gates")
    return body.scan([h0], [x])[1:]


def _forward_rule(scan, keep_gates: bool):
    def lower(emit, inputs, attrs, draws):
        return scan(emit, inputs, keep_gates)
    return lower


# the forward ops and their training twins, which also keep the gates
for _op, _scan, _keep in ((LSTM, _lstm_scan, False), (LSTM_WITH_GATES, _lstm_scan, True),
                          (GRU, _gru_scan, False), (GRU_WITH_GATES, _gru_scan, True)):
    lowering(_op)(_forward_rule(_scan, _keep))


@lowering(GRU_GRAD)
def _gru_grad_onnx(emit, inputs, attrs, draws):
    dy, w, h0, y, gates = inputs
    h_prev = _previous(emit, h0, y)
    body = _ScanBody(emit, "gru_grad")
    dh_in, dy_t, gates_t, hp = (body.input(n) for n in ("dh", "dy", "gates", "h_prev"))
    r, z, n, hn = body.op("Split", [gates_t], outputs=4, axis=-1, num_outputs=4)
    dh = body.op("Add", [dh_in, dy_t])
    dan = body.op("Mul", [body.op("Mul", [dh, body.one_minus(z)]), body.one_minus(body.op("Mul", [n, n]))])
    dar = body.op("Mul", [body.op("Mul", [dan, hn]), body.op("Mul", [r, body.one_minus(r)])])
    daz = body.op("Mul", [body.op("Mul", [dh, body.op("Sub", [hp, n])]), body.op("Mul", [z, body.one_minus(z)])])
    dhg = body.op("Concat", [dar, daz, body.op("Mul", [dan, r])], axis=-1)
    body.output(body.op("Add", [body.op("Mul", [dh, z]), body.op("MatMul", [dhg, w])]), "dh")
    body.output(body.op("Concat", [dar, daz, dan], axis=-1), "dx")
    body.output(dhg, "dhg")
    dh0, dx, dhgs = body.scan([_zeros_like(emit, body, h0)], [dy, gates, h_prev], reverse=True)
    db = emit.op("ReduceSum", [dhgs, emit.const(np.array([0, 1], np.int64))], keepdims=0)
    return [dx, _weight_grad(emit, dhgs, h_prev), dh0, db]


# -- RNN ----------------------------------------------------------------------

@lowering(RNN)
def _rnn_onnx(emit, inputs, attrs, draws):
    x, w, h0 = inputs
    body = _ScanBody(emit, "rnn")
    h, x_t = body.input("h"), body.input("x")
    a = body.op("Add", [x_t, body.op("MatMul", [h, _transposed(emit, w)])])
    h_next = body.op("Tanh" if attrs["activation"] == "tanh" else "Relu", [a])
    body.output(h_next, "h")
    body.output(h_next, "y")
    _, y = body.scan([h0], [x])
    return [y]


@lowering(RNN_GRAD)
def _rnn_grad_onnx(emit, inputs, attrs, draws):
    dy, w, h0, y = inputs
    body = _ScanBody(emit, "rnn_grad")
    dh_in, dy_t, y_t = body.input("dh"), body.input("dy"), body.input("y")
    dh = body.op("Add", [dh_in, dy_t])
    if attrs["activation"] == "tanh":
        derivative = body.one_minus(body.op("Mul", [y_t, y_t]))
    else:
        zero = emit.const(np.array(0, body.dtype), name_hint="zero")
        derivative = body.op("Cast", [body.op("Greater", [y_t, zero])], to=body.elem)
    da = body.op("Mul", [dh, derivative])
    body.output(body.op("MatMul", [da, w]), "dh")
    body.output(da, "da")
    dh0, dx = body.scan([_zeros_like(emit, body, h0)], [dy, y], reverse=True)
    return [dx, _weight_grad(emit, dx, _previous(emit, h0, y)), dh0]
