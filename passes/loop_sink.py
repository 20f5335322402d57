"""loop-sink: one device call runs a whole sink of training steps (seeds 002/003).

After ``autodiff`` the training graph (the one holding ``train.config``,
see :func:`irc.dialects.train.training_config`) is one step: (batch, draws,
learning rate, parameters, state) -> (loss, parameters', state'), each input
and result marked by its role.  With ``dataset_sink_mode = true`` this pass
rewrites it so that one call runs ``sink_size`` steps (``S``):

* every step input becomes a queue with a leading axis of ``S`` (the
  epoch's raw batches, draws and learning rates, uploaded once: data sink);
* the step is copied ``u`` times (the config's ``unroll``, or the ``unroll``
  option) into a body graph ``@<graph>.body`` whose copy ``j`` reads queue
  entry ``iteration * u + j`` (``train.QueueGet``), each copy taking the
  parameters the previous one produced;
* ``train.Loop {body, trip_count = S // u, carried}`` runs the body with the
  updated parameters and state loop-carried; the ``S % u`` remaining steps
  follow the Loop as inline copies; with ``S // u < 2`` every step is inline
  and there is no Loop at all (what CUDA graph capture needs);
* per-step results (the loss) come out stacked: ``f32[S]``.

Parameters stay ``param`` nodes of the sunk graph: the runtime binds them as
inputs and keeps their values on the device between calls.

Evaluation (``train.config {mode = "eval", dataset_sink_mode = true}``) is
the inference half: the forward graph has no carried parameters, so every
parameter is a loop invariant and each step's network outputs come out of
the Loop stacked along a new leading axis.  MindSpore evaluates the whole
dataset in one sink, whose length the runtime knows only when it runs, so
the queue's leading axis is ``?`` and ``train.Loop {trip_count = none}``
iterates over it (no unrolling): one graph serves any number of batches per
call, a short last batch included (a queue of one).
"""
from __future__ import annotations

from typing import Optional

from irc.diagnostics import UserError
from irc.dialects.core import ITERATION, PARAMETER, STATE, graph_inputs, graph_results, return_attrs
from irc.dialects.train import evaluation_configs, training_config
from irc.ir.graph import DEVICE, Graph, GraphRef, Module, Node, Value
from irc.ir.registry import get as get_op
from irc.ir.traits import Collective
from irc.ir.types import TensorType

from .manager import register
from .options import CompileOptions

PROV = "loop-sink"
DYNAMIC = "?"      # a queue length known at run time only (evaluation)


def sink_config(module: Module) -> Optional[tuple[str, int, int]]:
    """(graph, steps per sink, unroll) when the module trains in sink mode."""
    config = training_config(module)
    if config is None or not config.dataset_sink_mode:
        return None
    steps = config.sink_size
    unroll = CompileOptions.of(module).unroll or config.unroll
    if steps < 1:
        raise UserError(f"sink_size must be a positive number of steps, got {steps}")
    if unroll < 1:
        raise UserError(f"the unroll factor must be at least 1, got {unroll}")
    return config.graph, steps, min(unroll, steps)


def _communicates(graph: Graph, ctx, instead: str) -> bool:
    """Whether the graph has collectives (no device Loop can hold them: the
    runtime cuts the graph there); says so in a remark."""
    collectives = [n for n in graph.topo_order() if get_op(n.op).has_trait(Collective)]
    if collectives:
        ctx.remark("missed", "loop-sink", f"@{graph.name}: communicates between ranks "
                   f"({len(collectives)} collective(s)), so no device Loop can hold it: {instead}",
                   reason="onnxruntime has no collective operators",
                   source=str(collectives[0].loc) if collectives[0].loc else None)
    return bool(collectives)


def eval_sink_graphs(module: Module) -> list[str]:
    """The evaluation graphs to sink: those evaluated in sink mode."""
    return [c.graph for c in evaluation_configs(module) if c.dataset_sink_mode]


@register("loop-sink", "run a sink of training or evaluation steps in one device call (Loop + unrolling)")
def run(module: Module, ctx) -> bool:
    changed = False
    for name in eval_sink_graphs(module):
        changed = _sink_evaluation(module, name, ctx) or changed
    return _sink_training(module, ctx) or changed


def _sink_evaluation(module: Module, name: str, ctx) -> bool:
    graph = module.graphs.get(name)
    if graph is None or not graph.find("return") or not graph.find("input") or \
            graph.find("train.Loop"):
        return False
    if _communicates(graph, ctx, "the host runs its batches one call each"):
        return False
    training = training_config(module)
    if training is not None and training.graph == name:
        raise UserError(f"@{name} is both the training and the evaluation graph")
    module.graphs[name] = LoopSink(module, graph, DYNAMIC, 1).build()
    ctx.remark("passed", "loop-sink", f"@{name}: the evaluation's batches per device call as a "
               f"Loop over a queue whose length is given at run time",
               reason="eval with dataset_sink_mode: the whole dataset is one sink")
    return True


def _sink_training(module: Module, ctx) -> bool:
    config = sink_config(module)
    if config is None:
        return False
    name, steps, unroll = config
    step = module.graphs.get(name)
    if step is None or not step.find("return") or step.find("train.Loop"):
        return False
    if _communicates(step, ctx, f"the host runs the sink's {steps} steps, still one "
                                 f"LossMonitor report per sink"):
        return False
    sinker = LoopSink(module, step, steps, unroll)
    module.graphs[name] = sinker.build()
    trip = steps // unroll
    how = (f"a Loop of {trip} iterations of {unroll} step(s)" +
           (f" and {steps - trip * unroll} inline step(s)" if steps - trip * unroll else "")
           if trip >= 2 else f"{steps} inline steps, no Loop")
    ctx.remark("passed", "loop-sink", f"@{name}: {steps} training steps per device call as {how}",
               reason=f"dataset_sink_mode with sink_size {steps}, unroll {unroll}")
    return True


class Interface:
    """The step graph's inputs, parameters and results, by role."""

    def __init__(self, step: Graph):
        self.step = step
        self.inputs = graph_inputs(step)
        self.params = [n for n in step.topo_order() if n.op == "param"]
        self.results = graph_results(step)
        self.names = [r.name for r in self.results]
        # a 'parameter' / 'state' result is the next value of the parameter it names
        self.updated = {r.name: r.value for r in self.results if r.updates}
        self.carried = self._unique([n for n in self.params if n.attrs["name"] in self.updated])
        self.frozen = self._unique([n for n in self.params if n.attrs["name"] not in self.updated])
        self.per_step = [(r.name, r.value) for r in self.results if not r.updates]
        self.configs = step.find("train.config")

    def role_of_result(self, name: str) -> str:
        return next(r.role for r in self.results if r.name == name)

    @staticmethod
    def _unique(nodes: list[Node]) -> list[Node]:
        seen, out = set(), []
        for n in nodes:
            if n.attrs["name"] not in seen:
                seen.add(n.attrs["name"])
                out.append(n)
        return out


def _param_role(node: Node) -> str:
    """A Loop body input carrying a parameter's value: trainable or state."""
    return PARAMETER if node.attrs.get("trainable", True) else STATE


class LoopSink:
    def __init__(self, module: Module, step: Graph, steps: int, unroll: int):
        self.module, self.step = module, step
        self.steps, self.unroll = steps, unroll
        self.iface = Interface(step)

    # -- the sunk graph -------------------------------------------------------------------
    def build(self) -> Graph:
        it = self.iface
        outer = Graph(self.step.name, DEVICE)
        queues = [self._queue_input(outer, n) for n in it.inputs]
        carried = [self._param(outer, n) for n in it.carried]
        frozen = [self._param(outer, n) for n in it.frozen]
        dynamic = self.steps == DYNAMIC
        trip = None if dynamic else self.steps // self.unroll
        per_step: list[list[Value]] = [[] for _ in it.per_step]
        inline: range = range(0) if dynamic else range(self.steps)
        if dynamic or trip >= 2:
            body = self._body(queues, frozen)
            self.module.graphs[body.name] = body
            loop = self._loop(outer, body, carried, frozen + queues, trip)
            carried = [loop.out(i) for i in range(len(carried))]
            for k in range(len(it.per_step)):
                per_step[k].append(self._flatten(outer, loop.out(len(carried) + k)))
            if not dynamic:
                inline = range(trip * self.unroll, self.steps)
        for s in inline:
            env = self._bind(outer, queues, carried, frozen, offset=s, iteration=None,
                             prefix=f"s{s}.")
            carried, outs = self._copy_step(outer, env, prefix=f"s{s}.",
                                            prov=f"{PROV}:inline step {s}")
            for k, v in enumerate(outs):
                per_step[k].append(self._unsqueeze(outer, v))
        stacked = {name: self._concat(outer, parts, name)
                   for (name, _), parts in zip(it.per_step, per_step)}
        finals = {n.attrs["name"]: v for n, v in zip(it.carried, carried)}
        outer.add("return", [finals.get(n, stacked.get(n)) for n in it.names],
                  return_attrs([(r.name, r.role) for r in it.results]), prov=[f"{PROV}:created"])
        for config in it.configs:
            outer.add("train.config", [], dict(config.attrs), loc=config.loc, prov=list(config.prov))
        return outer

    def _queue_input(self, g: Graph, node: Node) -> Value:
        t = node.out_types[0]
        return g.add("input", [], dict(node.attrs), out_types=[TensorType(t.dtype, (self.steps, *t.shape))],
                     names=[node.results[0]], column=node.column, loc=node.loc,
                     prov=[*node.prov, f"{PROV}:" + ("queue of the sink's steps" if self.steps == DYNAMIC
                                                      else f"queue of {self.steps} steps")]).out(0)

    def _param(self, g: Graph, node: Node) -> Value:
        return g.add("param", [], dict(node.attrs), out_types=list(node.out_types),
                     names=[node.results[0]], loc=node.loc, scope=node.scope,
                     prov=list(node.prov)).out(0)

    def _loop(self, outer: Graph, body: Graph, carried: list[Value], invariants: list[Value],
              trip: Optional[int]) -> Node:
        """``trip`` None: as many iterations as the queues have entries."""
        ret = body.find("return")[0]
        out_types = [outer.type_of(v) for v in carried]
        out_types += [TensorType(t.dtype, (DYNAMIC if trip is None else trip, *t.shape))
                      for t in ret.in_types[len(carried):]]
        names = [f"{n.attrs['name']}.final" for n in self.iface.carried] + \
                [f"{name}.steps" for name, _ in self.iface.per_step]
        return outer.add("train.Loop", [*carried, *invariants],
                         {"body": GraphRef(body.name), "trip_count": trip, "carried": len(carried)},
                         out_types=out_types, names=names, prov=[f"{PROV}:created"])

    # -- the body ----------------------------------------------------------------------------
    def _body(self, queues: list[Value], frozen: list[Value]) -> Graph:
        it = self.iface
        body = Graph(self._body_name(), DEVICE)
        iteration = body.add("input", [], {"index": 0, "role": ITERATION},
                             out_types=[TensorType("i64", ())],
                             names=["iteration"], prov=[f"{PROV}:created"]).out(0)
        index = 1
        carried = []
        for n in it.carried:
            carried.append(body.add("input", [], {"index": index, "role": _param_role(n)},
                                    out_types=list(n.out_types),
                                    names=[n.results[0]], loc=n.loc, prov=[f"{PROV}:loop-carried"]).out(0))
            index += 1
        inv_frozen = []
        for n in it.frozen:
            inv_frozen.append(body.add("input", [], {"index": index, "role": _param_role(n)},
                                       out_types=list(n.out_types),
                                       names=[n.results[0]], loc=n.loc,
                                       prov=[f"{PROV}:loop invariant"]).out(0))
            index += 1
        inv_queues = []
        for n in it.inputs:
            t = n.out_types[0]
            inv_queues.append(body.add("input", [], {**n.attrs, "index": index},
                                       out_types=[TensorType(t.dtype, (self.steps, *t.shape))],
                                       names=[n.results[0]], column=n.column, loc=n.loc,
                                       prov=[f"{PROV}:queue"]).out(0))
            index += 1
        per_step: list[list[Value]] = [[] for _ in it.per_step]
        for j in range(self.unroll):
            prefix = f"u{j}." if self.unroll > 1 else ""
            env = self._bind(body, inv_queues, carried, inv_frozen, offset=j, iteration=iteration,
                             prefix=prefix)
            carried, outs = self._copy_step(body, env, prefix=prefix,
                                            prov=f"{PROV}:step {j} of {self.unroll} per iteration")
            for k, v in enumerate(outs):
                per_step[k].append(v)
        scans = [parts[0] if self.unroll == 1 else
                 self._concat(body, [self._unsqueeze(body, v) for v in parts], name)
                 for (name, _), parts in zip(it.per_step, per_step)]
        # ".next": names of their own, so the lowering needs no copies to keep
        # the body's outputs apart from its inputs
        body.add("return", [*carried, *scans],
                 return_attrs([(f"{n.attrs['name']}.next", it.role_of_result(n.attrs["name"]))
                               for n in it.carried] +
                              [(name, it.role_of_result(name)) for name, _ in it.per_step]),
                 prov=[f"{PROV}:created"])
        return body

    def _body_name(self) -> str:
        name, i = f"{self.step.name}.body", 1
        while name in self.module.graphs:
            name, i = f"{self.step.name}.body{i}", i + 1
        return name

    # -- copying the step -----------------------------------------------------------------
    def _bind(self, g: Graph, queues: list[Value], carried: list[Value], frozen: list[Value], *,
              offset: int, iteration: Optional[Value], prefix: str) -> dict:
        """Step values -> this copy's values: queue entries, current parameters."""
        it = self.iface
        env: dict[Value, Value] = {}
        stride = self.unroll if iteration is not None else 1
        for node, q in zip(it.inputs, queues):
            operands = [q] if iteration is None else [q, iteration]
            get = g.add("train.QueueGet", operands, {"offset": offset, "stride": stride},
                        names=[prefix + node.results[0]], column=node.column, loc=node.loc,
                        prov=[f"{PROV}:dequeue"])
            env[node.out(0)] = get.out(0)
        by_name = {n.attrs["name"]: v for n, v in zip(it.carried, carried)}
        by_name.update({n.attrs["name"]: v for n, v in zip(it.frozen, frozen)})
        for node in it.params:
            env[node.out(0)] = by_name[node.attrs["name"]]
        return env

    def _copy_step(self, g: Graph, env: dict, *, prefix: str, prov: str
                   ) -> tuple[list[Value], list[Value]]:
        """Copy the step's computation; returns (next carried, per-step outputs)."""
        for node in self.step.topo_order():
            if node.op in ("input", "param", "return", "train.config"):
                continue
            new = g.add(node.op, [env[v] for v in self.step.operands(node)], node.attrs,
                        out_types=list(node.out_types), names=[prefix + r for r in node.results],
                        placement=node.placement, column=node.column, loc=node.loc,
                        scope=node.scope, prov=[*node.prov, prov])
            for old, fresh in zip(node.outs, new.outs):
                env[old] = fresh
        it = self.iface
        carried = [env[it.updated[n.attrs["name"]]] for n in it.carried]
        outs = [env[v] for _, v in it.per_step]
        return carried, outs

    # -- stacking per-step values ----------------------------------------------------------
    def _unsqueeze(self, g: Graph, v: Value) -> Value:
        return g.add("nn.Unsqueeze", [v], {"axes": [0]}, names=[f"{g.value_name(v)}.1"],
                     prov=[f"{PROV}:stack"]).out(0)

    def _flatten(self, g: Graph, v: Value) -> Value:
        """[trip, u, ...] scan output -> [trip * u, ...]."""
        t = g.type_of(v)
        if self.unroll == 1:
            return v
        shape = [t.shape[0] * t.shape[1], *t.shape[2:]]
        return g.add("nn.Reshape", [v], {"shape": shape}, names=[g.value_name(v)],
                     prov=[f"{PROV}:stack"]).out(0)

    def _concat(self, g: Graph, parts: list[Value], name: str) -> Value:
        if len(parts) == 1:
            return parts[0]
        return g.add("nn.Concat", parts, {"axis": 0}, names=[name], prov=[f"{PROV}:stack"]).out(0)
