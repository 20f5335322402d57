"""autodiff: reverse-mode differentiation of a training graph, and the
optimiser's updates, as ordinary IR.

For each ``train.minimize(%loss) {optimizer, params, ...}`` (put on the
network by ``Model.train``; after graph-sink it sits in ``@device``):

1. the values between the listed trainable ``param`` nodes and ``%loss``
   are found; walking them in reverse topological order, each op's gradient
   rule (``@OP.grad``; every rule lives in ``irc/dialects/nn_grad.py``)
   turns the gradients of its results into
   gradients of its operands, emitting backward ops; contributions to one
   value are summed with ``nn.Add``;
2. per parameter, the optimiser's update op is emitted
   (``train.MomentumUpdate``/``SGDUpdate``/``AdamUpdate``), its state as
   non-trainable ``param`` nodes under MindSpore's names (``moments.conv1.weight``;
   ``init`` says how the runtime fills a state that has no saved value), the
   learning rate as a new graph ``input {role = "learning_rate"}`` (``f32[]``:
   one value per step, so schedules work);
3. the graph's ``return`` gets the updated parameters and state after its
   own results, each named by the parameter it replaces (roles "parameter" /
   "state"), and the marker makes way for ``train.config``: the settings the
   runtime and loop-sink read (:func:`irc.dialects.train.training_config`).

The result is one training step as a pure function: (batch, learning rate,
parameters, state) -> (loss, parameters', state').
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from irc.diagnostics import UserError
from irc.dialects.core import LEARNING_RATE, LOSS, PARAMETER, STATE, graph_results, return_attrs
from irc.dialects.train import (OPTIMIZER_SPECS, TrainConfig, optimizer_state,
                                state_fill, update_attrs)
from irc.ir.graph import Graph, Module, Node, Value
from irc.ir.registry import get as get_op
from irc.ir.types import TensorType, to_numpy_dtype

from .manager import register

PROV = "autodiff"


@register("autodiff", "differentiate train.minimize's loss and emit the optimiser updates")
def run(module: Module, ctx) -> bool:
    changed = False
    for graph in list(module.graphs.values()):
        for node in graph.find("train.grad"):
            expand_grad(graph, node, ctx)
            changed = True
        markers = graph.find("train.minimize")
        if not markers:
            continue
        if len(markers) > 1:
            raise UserError(f"@{graph.name} has {len(markers)} train.minimize ops; one loss is "
                            f"trained per graph", where=_loc(markers[1]))
        Trainer(module, graph, markers[0], ctx).run()
        changed = True
    return changed


def _loc(node: Node) -> Optional[str]:
    return str(node.loc) if node.loc else None


def _infer(op: str, attrs: dict, in_types: list[TensorType]) -> list[TensorType]:
    opdef = get_op(op)
    return opdef.infer_types(opdef.normalize_attrs(attrs), in_types)


class GradContext:
    """What a gradient rule sees: the forward node, its operands and results,
    which operands need a gradient, and builders for backward ops."""

    def __init__(self, graph: Graph, node: Node, needs: list[bool], backward: set[str]):
        self.graph, self.node, self._needs = graph, node, needs
        self.backward = backward          # every backward node made, by name
        self.replaced: Optional[Node] = None

    # -- the forward node ---------------------------------------------------------
    def operands(self) -> list[Value]:
        return self.graph.operands(self.node)

    def operand(self, i: int) -> Value:
        return self.operands()[i]

    def result(self, i: int) -> Value:
        return (self.replaced or self.node).out(i)

    def type(self, value: Value) -> TensorType:
        return self.graph.type_of(value)

    def needs(self, i: int) -> bool:
        return i < len(self._needs) and self._needs[i]

    # -- building -------------------------------------------------------------------
    def add_node(self, op: str, inputs: list[Value], attrs: Optional[dict] = None) -> Node:
        n = self.node
        hint = f"d.{n.results[0] if n.results else n.op.rsplit('.', 1)[-1].lower()}"
        out_types = _infer(op, attrs or {}, [self.type(v) for v in inputs])
        node = self.graph.add(op, inputs, attrs or {}, out_types=out_types,
                              names=[hint] * len(out_types), loc=n.loc, scope=n.scope,
                              placement=self.graph.placement, prov=[f"{PROV}:grad of %{n.name}"])
        self.backward.add(node.name)
        return node

    def add(self, op: str, inputs: list[Value], attrs: Optional[dict] = None) -> Value:
        return self.add_node(op, inputs, attrs).out(0)

    def const(self, value, *, like: Value) -> Value:
        """A constant of ``like``'s dtype: a number, or an array (nested lists)."""
        dtype = self.type(like).dtype
        value = np.asarray(value).tolist() if np.ndim(value) else float(value)
        node = self.graph.add("const", [], {"value": value, "dtype": dtype},
                              names=["c"], placement=self.graph.placement,
                              prov=[f"{PROV}:grad of %{self.node.name}"])
        self.backward.add(node.name)
        return node.out(0)

    def replace_forward(self, op: str, attrs: dict, extra_names: list[str]) -> Node:
        """Put ``op`` (with more results, e.g. MaxPool's indices, named
        ``<result>.<extra name>``) in place of the forward node: its first
        results take over every use."""
        n = self.node
        operands = self.operands()
        out_types = _infer(op, attrs, [self.type(v) for v in operands])
        names = list(n.results) + [f"{n.results[0]}.{e}" for e in extra_names]
        new = self.graph.add(op, operands, attrs, out_types=out_types, loc=n.loc, scope=n.scope,
                             placement=n.placement, column=n.column, names=names,
                             prov=[*n.prov, f"{PROV}:replaced %{n.name}"])
        for i in range(len(n.results)):
            self.graph.replace_uses(n.out(i), new.out(i))
        self.replaced = new
        return new

    def fail(self, message: str) -> None:
        raise UserError(message, where=_loc(self.node),
                        hint="this network cannot be trained by irc as written")


class ReverseSweep:
    """Reverse mode over one graph: the gradient of the scalar ``loss`` with
    respect to chosen values, as backward ops added to the graph."""

    def __init__(self, graph: Graph, loss: Value, sens: float):
        self.graph, self.loss, self.sens = graph, loss, sens
        self.grads: dict[Value, Value] = {}
        self.dead: list[Node] = []
        self.backward: set[str] = set()   # nodes the gradient rules made

    def run(self, sources: list[Value]) -> None:
        """Fill ``grads`` for every value on a path from ``sources`` to the loss."""
        down = self.graph.reachable_from(v.node for v in sources)
        up = self.graph.ancestors(self.loss.node) | {self.loss.node}
        self._backward(down & up, set(v.node for v in sources))

    def gradient(self, values: list[Value]) -> Optional[Value]:
        """The summed gradient of ``values`` (one parameter read at several
        places), or None when the loss does not depend on them."""
        grads = [self.grads[v] for v in values if v in self.grads]
        if not grads:
            return None
        total = grads[0]
        for g in grads[1:]:
            total = self.graph.add("nn.Add", [total, g],
                                   names=[f"d.{self.graph.value_name(values[0])}"],
                                   placement=self.graph.placement,
                                   prov=[f"{PROV}:sum of gradients"]).out(0)
        return total

    def _backward(self, relevant: set[str], sources: set[str]) -> None:
        seed = self.graph.add("const", [], {"value": float(self.sens),
                                            "dtype": self.graph.type_of(self.loss).dtype},
                              names=["d.loss"], placement=self.graph.placement,
                              prov=[f"{PROV}:seed"])
        self.grads[self.loss] = seed.out(0)
        order = [n for n in self.graph.topo_order()
                 if n.name in relevant and n.name not in sources and n.op not in ("param", "input")]
        for node in reversed(order):
            douts = [self.grads.get(v) for v in node.outs]
            if all(d is None for d in douts):
                continue
            self._apply_rule(node, douts, relevant)
        for node in self.dead:
            if not self.graph.is_used(node):
                self.graph.remove(node)

    def drop_unused(self) -> None:
        """Backward ops a later rule superseded (peepholes) and nothing uses."""
        changed = True
        while changed:
            changed = False
            for node in list(self.graph.nodes()):
                if node.name in self.backward and node.name in self.graph and \
                        not self.graph.is_used(node):
                    self.graph.remove(node)
                    self.backward.discard(node.name)
                    changed = True

    def _apply_rule(self, node: Node, douts: list, relevant: set[str]) -> None:
        opdef = get_op(node.op)
        if opdef.grad_fn is None:
            raise UserError(f"cannot train through {node.op}: it has no gradient rule",
                            where=_loc(node),
                            hint="irc differentiates the nn ops (see irc/dialects/nn_grad.py); "
                                 "keep other ops out of the path from the parameters to the loss")
        operands = self.graph.operands(node)
        needs = [v.node in relevant for v in operands]
        gctx = GradContext(self.graph, node, needs, self.backward)
        grads = opdef.grad_fn(gctx, node, douts)
        if gctx.replaced is not None:
            self.dead.append(node)
        if len(grads) != len(operands):
            raise ValueError(f"gradient rule of {node.op} gave {len(grads)} values for "
                             f"{len(operands)} operands")
        for value, grad, need in zip(operands, grads, needs):
            if need and grad is not None:
                self._accumulate(value, grad, node)

    def _accumulate(self, value: Value, grad: Value, node: Node) -> None:
        have = self.grads.get(value)
        if have is None:
            self.grads[value] = grad
            return
        total = self.graph.add("nn.Add", [have, grad], loc=node.loc, scope=node.scope,
                               names=[f"d.{self.graph.value_name(value)}"],
                               placement=self.graph.placement,
                               prov=[f"{PROV}:sum of gradients of %{self.graph.value_name(value)}"])
        self.grads[value] = total.out(0)


def expand_grad(graph: Graph, node: Node, ctx) -> None:
    """``train.grad(%loss, %x...)`` -> the backward ops; each result's uses
    take the gradient (zeros where the loss does not depend on the value)."""
    loss, *wrt = graph.operands(node)
    sweep = ReverseSweep(graph, loss, float(node.attrs["sens"]))
    sweep.run(wrt)
    for i, value in enumerate(wrt):
        grad = sweep.gradient([value])
        if grad is None:
            ctx.remark("analysis", "grad", f"%{graph.value_name(loss)} does not depend on "
                       f"%{graph.value_name(value)}: its gradient is zeros",
                       reason="no path to the differentiated value", source=_loc(node))
            grad = _zeros_like(graph, value, node)
        graph.replace_uses(node.out(i), grad)
    graph.remove(node)
    sweep.drop_unused()


def _zeros_like(graph: Graph, value: Value, at: Node) -> Value:
    zero = graph.add("const", [], {"value": 0.0, "dtype": graph.type_of(value).dtype},
                     names=["zero"], placement=graph.placement, prov=[f"{PROV}:zero gradient"])
    return graph.add("nn.Mul", [value, zero.out(0)], names=[f"d.{graph.value_name(value)}"],
                     loc=at.loc, scope=at.scope, placement=graph.placement,
                     prov=[f"{PROV}:zero gradient"]).out(0)


class Trainer:
    """The autodiff and optimiser emission for one graph's train.minimize."""

    def __init__(self, module: Module, graph: Graph, marker: Node, ctx):
        self.module, self.graph, self.marker, self.ctx = module, graph, marker, ctx
        self.attrs = marker.attrs
        self.loss = graph.operands(marker)[0]

    # -- driver ---------------------------------------------------------------------
    def run(self) -> None:
        params = self._params()
        trainable = {name: nodes for name, nodes in params.items()
                     if all(n.attrs.get("trainable", True) for n in nodes)}
        if not trainable:
            raise UserError("the optimizer has no trainable parameter of this network",
                            where=_loc(self.marker),
                            hint="pass network.trainable_params() to the optimizer")
        sweep = ReverseSweep(self.graph, self.loss, float(self.attrs["sens"]))
        sweep.run([n.out(0) for nodes in trainable.values() for n in nodes])
        grads = {name: sweep.gradient([n.out(0) for n in nodes])
                 for name, nodes in trainable.items()}
        missing = [n for n, g in grads.items() if g is None]
        if len(missing) == len(grads):
            raise UserError("the loss does not depend on any trainable parameter",
                            where=_loc(self.marker),
                            hint="check that the network's output feeds the loss")
        for name in missing:
            # MindSpore's optimizer updates it all the same: weight decay and
            # momentum move it on a zero gradient
            self.ctx.remark("analysis", "minimize", f"parameter {name} does not affect the loss: "
                            f"it trains on a zero gradient", reason="no path from the parameter to "
                            "the loss", source=_loc(self.marker))
            first = trainable[name][0]
            grads[name] = _zeros_like(self.graph, first.out(0), self.marker)
        updates = OptimizerEmitter(self.module, self.graph, self.marker).emit(grads, trainable)
        self._finish(updates, trainable)
        sweep.drop_unused()
        self.ctx.remark("passed", "minimize",
                        f"{len(grads)} parameters trained with "
                        f"{self.attrs['optimizer']}: backward pass and updates emitted",
                        reason="train.minimize", source=_loc(self.marker))

    def _params(self) -> dict[str, list[Node]]:
        wanted = list(self.attrs["params"])
        found: dict[str, list[Node]] = {}
        for node in self.graph.nodes():
            if node.op == "param" and node.attrs["name"] in wanted:
                found.setdefault(node.attrs["name"], []).append(node)
        for name in wanted:
            if name not in found:
                self.ctx.remark("analysis", "minimize", f"optimizer parameter {name} is not used "
                                f"by the network: it is not updated", reason="not in the graph",
                                source=_loc(self.marker))
        return {name: found[name] for name in wanted if name in found}

    # -- results ------------------------------------------------------------------------
    def _finish(self, updates: list[tuple[str, Value]], trainable: dict) -> None:
        """The step's results: its own (the loss as 'loss'), then the next
        parameters and state; the marker gives way to the step's config."""
        g = self.graph
        results = [(r.name, LOSS if r.value == self.loss else r.role, r.value)
                   for r in graph_results(g)] or [("loss", LOSS, self.loss)]
        for ret in g.find("return"):
            g.remove(ret)
        results += [(name, PARAMETER if name in trainable else STATE, v) for name, v in updates]
        g.add("return", [v for _, _, v in results],
              return_attrs([(name, role) for name, role, _ in results]),
              placement=g.placement, prov=[f"{PROV}:updates"])
        config = TrainConfig.from_minimize(g.name, self.marker.attrs)
        g.add("train.config", [], config.to_attrs(), loc=self.marker.loc, placement=g.placement,
              prov=[f"{PROV}:replaced %{self.marker.name}"])
        g.remove(self.marker)


class OptimizerEmitter:
    """One update op per parameter, with the optimiser's state as parameters."""

    def __init__(self, module: Module, graph: Graph, marker: Node):
        self.module, self.graph, self.marker, self.attrs = module, graph, marker, marker.attrs
        self.prov = [f"{PROV}:optimizer {self.attrs['optimizer']}"]
        self._rate_columns: dict[int, Value] = {}     # column -> its Gather from the fed row

    def emit(self, grads: dict[str, Value], params: dict[str, list[Node]]) -> list[tuple[str, Value]]:
        lr = self._learning_rate(params)
        kind = self.attrs["optimizer"]
        if self.attrs["drop_overflow"]:
            grads = self._unscaled(grads)
        updates: list[tuple[str, Value]] = []
        state_updates: list[tuple[str, Value]] = []
        powers = self._powers(OPTIMIZER_SPECS[kind].powers, state_updates)
        keys = self.attrs.get("state_keys") or {}     # names when the optimizer was made
        for name, grad in grads.items():
            pnode = params[name][0]
            kept = optimizer_state(kind, self.attrs)
            key = keys.get(name, name)
            state = [self._state(f"{prefix}.{key}", init, pnode)
                     for prefix, init in kept]
            node = self._update(kind, name, pnode, grad, state, lr, powers)
            updates.append((name, node.out(0)))
            for i, (prefix, _) in enumerate(kept):
                state_updates.append((f"{prefix}.{key}", node.out(1 + i)))
        if self.attrs["drop_overflow"]:
            return self._kept_on_overflow(list(grads.values()), updates + state_updates)
        return updates + state_updates

    def _unscaled(self, grads: dict[str, Value]) -> dict[str, Value]:
        """The gradients divided by the loss scale they started from, as
        MindSpore's TrainOneStepWithLossScaleCell does it: times the float32
        reciprocal of the scale."""
        g = self.graph
        inverse = float(np.float32(1.0) / np.float32(self.attrs["sens"]))
        scales: dict[str, Value] = {}     # one constant per gradient dtype
        out = {}
        for name, grad in grads.items():
            dtype = g.type_of(grad).dtype
            if dtype not in scales:
                scales[dtype] = g.add("const", [], {"value": inverse, "dtype": dtype},
                                      names=["loss_scale.inverse"], placement=g.placement,
                                      prov=self.prov).out(0)
            out[name] = g.add("nn.Mul", [grad, scales[dtype]], loc=self.marker.loc, prov=self.prov,
                              names=[f"{name}.grad.unscaled"]).out(0)
        return out

    def _kept_on_overflow(self, grads: list[Value], updates: list[tuple[str, Value]]) -> list[tuple[str, Value]]:
        """Each updated value, or the value it replaces when a gradient is not
        finite (the step is dropped, MindSpore's drop_overflow_update)."""
        g = self.graph
        finite = g.add("train.AllFinite", grads, loc=self.marker.loc, prov=self.prov,
                       names=["grads.finite"]).out(0)
        old = {n.attrs["name"]: n.out(0) for n in g.nodes() if n.op == "param"}
        return [(name, g.add("nn.Where", [finite, new, old[name]], loc=self.marker.loc,
                             prov=self.prov, names=[f"{name}.kept"]).out(0))
                for name, new in updates]

    def _learning_rate(self, params) -> Value:
        inputs = self.graph.find("input")
        index = 1 + max((int(n.attrs["index"]) for n in inputs), default=-1)
        dtype = next(iter(params.values()))[0].out_types[0].dtype
        columns = self.attrs["lr_columns"]
        attrs = {"index": index, "role": LEARNING_RATE, **({"columns": int(columns)} if columns else {})}
        return self.graph.add("input", [], attrs,
                              out_types=[TensorType(dtype, (int(columns),) if columns else ())],
                              names=["learning_rate"], loc=self.marker.loc,
                              prov=self.prov).out(0)

    def _rate_column(self, lr: Value, column: int) -> Value:
        """Column ``column`` of a row of fed rates, made once."""
        cache = self._rate_columns
        if column not in cache:
            g = self.graph
            at = g.add("const", [], {"value": int(column), "dtype": "i64"}, names=[f"learning_rate.{column}.at"],
                       placement=g.placement, prov=self.prov).out(0)
            cache[column] = g.add("nn.Gather", [lr, at], {"axis": 0}, names=[f"learning_rate.{column}"],
                                  loc=self.marker.loc, prov=self.prov).out(0)
        return cache[column]

    def _state(self, name: str, init: str, like: Node, scalar: bool = False) -> Value:
        t = like.out_types[0]
        t = TensorType(t.dtype, ()) if scalar else t
        weights = self.module.weights
        if like.attrs["name"] in weights and name not in weights and t.is_static:
            # a module that carries its weights (not IR text) gets the state's
            # first value too, so it lowers and runs as it is
            weights[name] = np.full(t.shape, state_fill(init), dtype=to_numpy_dtype(t.dtype))
        return self.graph.add("param", [], {"name": name, "init": init, "trainable": False},
                              out_types=[t], names=[name], loc=self.marker.loc,
                              prov=self.prov).out(0)

    def _powers(self, betas: tuple[str, ...], state_updates: list) -> list[Value]:
        """The optimizer's bias-correction powers (Adam's beta1_power and
        beta2_power, AdaMax's beta1_power), advanced for this step."""
        if not betas:
            return []
        ref = next(n for n in self.graph.nodes() if n.op == "param")
        old = [self._state(f"{beta}_power", "ones", ref, scalar=True) for beta in betas]
        names = [f"{beta}_power.new" for beta in betas]
        if len(betas) == 2:
            new = self.graph.add("train.AdamPowers", old, {beta: self.attrs[beta] for beta in betas},
                                 names=names, loc=self.marker.loc, prov=self.prov).outs
        else:
            beta = self.graph.add("const", [], {"value": float(self.attrs[betas[0]]),
                                                "dtype": self.graph.type_of(old[0]).dtype},
                                  names=[f"{betas[0]}"], loc=self.marker.loc, prov=self.prov).out(0)
            new = [self.graph.add("nn.Mul", [old[0], beta], names=names, loc=self.marker.loc,
                                  prov=self.prov).out(0)]
        state_updates += [(f"{beta}_power", v) for beta, v in zip(betas, new)]
        return new

    def _weight_decay(self, name: str) -> float:
        if self.attrs["param_decays"] is not None:
            return float(self.attrs["param_decays"].get(name, 0.0))
        decay = self.attrs["decay_params"]
        if decay is not None and name not in decay:
            return 0.0
        return float(self.attrs["weight_decay"])

    def _update(self, kind: str, name: str, pnode: Node, grad: Value, state: list[Value],
                lr: Value, powers) -> Node:
        attrs = update_attrs(kind, self.attrs, self._weight_decay(name), self.attrs["loss_scale"])
        extra = list(powers)
        if self.attrs["lr_columns"]:     # the parameter's group's column of the fed rates
            lr = self._rate_column(lr, (self.attrs["param_lr_columns"] or {}).get(name, 0))
        own = (self.attrs["param_lrs"] or {}).get(name)
        if own is not None:       # the parameter's group has its own constant rate
            lr = self.graph.add("const", [], {"value": float(own), "dtype": self.graph.type_of(lr).dtype},
                                names=[f"{name}.learning_rate"], loc=self.marker.loc, prov=self.prov).out(0)
        names = [f"{name}.new"] + [f"{prefix}.{name}.new" for prefix, _ in OPTIMIZER_SPECS[kind].state]
        return self.graph.add(OPTIMIZER_SPECS[kind].update_op, [pnode.out(0), grad, *state, lr, *extra], attrs,
                              loc=self.marker.loc, scope=pnode.scope, names=names, prov=self.prov)
