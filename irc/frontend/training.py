"""The training IR of a Model job, built by the frontend.

:func:`append_training` finishes the traced network graph of a "train" job:
the loss (the loss Cell traced on the network's output and the label
column) and ``train.minimize(%loss) {optimizer, params, ...,
dataset_sink_mode, sink_size, unroll}``; its ``return`` becomes ``loss`` plus
the network's state updates (BatchNorm statistics, named by their
parameter).  :func:`mark_evaluation` gives an "eval" job's graph its
``train.config {mode = "eval"}``.  The ``autodiff`` pass and, in sink mode,
``loop-sink`` do the rest.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..capture import Job
from ..diagnostics import UnsupportedError, UserError
from ..dialects.core import DATA, LOSS, STATE, graph_inputs, graph_results, return_attrs
from ..dialects.train import EVAL, TrainConfig
from ..ir.graph import Graph, Loc, Module

__all__ = ["append_training", "mark_evaluation", "data_inputs", "DEFAULT_UNROLL"]

# Steps per Loop iteration in sink mode.  Measured on the 2-core CPU
# (benchmarks/train.py): ORT's Loop costs ~1 us per iteration, so unrolling
# buys nothing there and only makes the graph (and its compile) bigger.
DEFAULT_UNROLL = 1


def append_training(module: Module, graph: Graph, job: Job) -> None:
    """Add the loss and ``train.minimize`` to the traced network ``graph`` of a
    "train" job (idempotent: a graph that has its marker is left alone)."""
    if graph.find("train.minimize"):
        return
    model = job.model
    optimizer = getattr(model, "_optimizer", None)
    if optimizer is None:
        raise UserError("Model.train needs an optimizer: Model(network, loss_fn, optimizer)",
                        where=job.source, hint="e.g. nn.Momentum(network.trainable_params(), 0.01, 0.9)")
    results = graph_results(graph)
    outputs = [r.value for r in results if not r.updates]
    updates = [(r.name, r.value) for r in results if r.updates]
    loss_fn = getattr(model, "_loss_fn", None)
    if loss_fn is None:
        loss = _network_loss(graph, outputs, job)
    else:
        loss = _trace_loss(module, graph, outputs, loss_fn, job)
    loss, objective = _reported_and_minimized(graph, loss)
    graph.remove(graph.find("return")[0])
    graph.add("return", [loss, *[v for _, v in updates]],
              return_attrs([("loss", LOSS), *[(n, STATE) for n, _ in updates]]), scope="")
    _add_unread_params(module, graph, optimizer)
    attrs = optimizer.minimize_attrs(_param_names(module))
    kw = job.kwargs
    sink = bool(kw.get("dataset_sink_mode", True))
    attrs.update(dataset_sink_mode=sink, sink_size=int(kw.get("steps_per_sink") or 1),
                 unroll=int(kw.get("unroll") or DEFAULT_UNROLL), **_loss_scale(model, job))
    graph.add("train.minimize", [objective], attrs, loc=_loc(job.source), scope="")


def _reported_and_minimized(graph: Graph, loss):
    """A per-sample loss (MindSpore's default ``reduction='none'``) trains as
    MindSpore's TrainOneStepCell trains it: the backward pass starts from
    ones shaped like the loss (its ``sens``), i.e. the gradient of the sum,
    while LossMonitor reports the mean.  A scalar loss is both."""
    if graph.type_of(loss).rank == 0:
        return loss, loss
    whole = {"axes": None, "keepdims": 0}
    reported = graph.add("nn.ReduceMean", [loss], whole, scope="").out()
    return reported, graph.add("nn.ReduceSum", [loss], whole, scope="").out()


def mark_evaluation(module: Module, job: Job, graph: Graph) -> None:
    """Tell ``loop-sink`` how an "eval" job runs: a ``train.config {mode =
    "eval"}`` in its network ``graph`` (graph-sink carries it into the fused
    graph, which with dataset_sink_mode becomes a Loop over a queue of the
    sink's batches)."""
    if job.kind != "eval" or job.dataset is None or graph.find("train.config"):
        return
    config = TrainConfig(graph.name, mode=EVAL,
                         dataset_sink_mode=bool(job.kwargs.get("dataset_sink_mode", True)))
    graph.add("train.config", [], config.to_attrs(), loc=_loc(job.source), scope="")


def _loss_scale(model, job: Job) -> dict:
    """train.minimize's loss-scale attributes from a loss scale manager: the
    backward pass starts from its scale (MindSpore's sens); without
    drop_overflow_update the optimizer's loss_scale divides it out, with it
    the step does (TrainOneStepWithLossScaleCell) and skips the update of a
    step whose gradients are not all finite."""
    manager = getattr(model, "_loss_scale_manager", None)
    if manager is None:
        return {"sens": 1.0, "drop_overflow": False}
    if hasattr(manager, "scale_window"):
        # DynamicLossScaleManager.  irc trains in float32, where a power-of-two
        # scale cancels out exactly (every backward op is linear in its seed):
        # the step runs unscaled, and a step whose gradients are not finite is
        # dropped, as MindSpore's DynamicLossScaleUpdateCell drops it.  There
        # its scale then halves, to stop overflowing in float16; unscaled,
        # nothing here overflows that a smaller scale would have avoided.
        return {"sens": 1.0, "drop_overflow": True}
    if not hasattr(manager, "get_loss_scale"):
        raise UnsupportedError(f"irc does not support {type(manager).__name__}: it has no "
                               f"get_loss_scale", where=job.source,
                               hint="use FixedLossScaleManager(scale) or DynamicLossScaleManager()")
    drop = bool(getattr(manager, "get_drop_overflow_update", lambda: False)())
    return {"sens": float(manager.get_loss_scale()), "drop_overflow": drop}


def _loc(text: Optional[str]) -> Optional[Loc]:
    try:
        return Loc.parse(text) if text else None
    except ValueError:
        return None


def _add_unread_params(module: Module, graph: Graph, optimizer) -> None:
    """The optimizer's Parameters that ``construct`` never read (a head the
    network does not use, OCRNet-style): params of their own, which train on
    a zero gradient (weight decay and momentum still move them), as MindSpore's."""
    from .network import PARAMETERS, add_param
    known = {id(p) for p in module.objects.get(PARAMETERS, {}).values()}
    for p in getattr(optimizer, "param_list", ()):
        if id(p) not in known and getattr(p, "requires_grad", True):
            add_param(module, graph, p, p.name or f"param{len(known)}")


def _param_names(module: Module) -> dict[int, str]:
    from .network import PARAMETERS
    return {id(p): name for name, p in module.objects.get(PARAMETERS, {}).items()}


def _network_loss(graph: Graph, outputs, job: Job):
    """Without a loss_fn the network computes the loss itself (MindSpore)."""
    t = graph.type_of(outputs[0])
    if t.rank > 1:      # class scores, not a loss (a per-sample loss [N] trains as its sum)
        raise UserError(f"Model has no loss_fn, so the network's output must be the loss (a "
                        f"scalar or one per sample), but it is {t}", where=job.source,
                        hint="pass loss_fn to Model, e.g. nn.SoftmaxCrossEntropyWithLogits("
                             "sparse=True, reduction='mean')")
    return outputs[0]


def data_inputs(graph: Graph):
    return graph_inputs(graph, DATA)


def _trace_loss(module: Module, graph: Graph, outputs: list, loss_fn, job: Job):
    """Trace ``loss_fn(logits, label)`` into ``graph``; label = the second
    column, logits the network's output: a tuple where the network returns
    several (InceptionV3's logits and aux logits), as WithLossCell passes it."""
    from .network import SymbolicTensor, Tracer
    from ..nn.cell import Cell
    from ..ops import _dispatch
    if not isinstance(loss_fn, Cell):
        raise UserError(f"loss_fn must be a loss Cell, got {type(loss_fn).__name__}",
                        where=job.source)
    inputs = data_inputs(graph)
    if len(inputs) != 2:
        raise UserError(f"with a loss_fn the training dataset must give two columns (data, label), "
                        f"but it gives {len(inputs)}: "
                        f"{', '.join(repr(n.column or n.results[0]) for n in inputs)}",
                        where=job.source,
                        hint="project the dataset to (data, label), or compute the loss inside "
                             "the network and pass loss_fn=None")
    label = inputs[1]
    logits = outputs[0]
    _check_loss_operands(module, graph, logits, label, loss_fn, job)
    if getattr(loss_fn, "op", ""):
        return _emit_loss(graph, logits, label, loss_fn, job)
    before = {n.name for n in graph.nodes()}
    tracer = Tracer(module, graph, loss_fn)
    network_out = (tuple(SymbolicTensor(tracer, v) for v in outputs) if len(outputs) > 1
                   else SymbolicTensor(tracer, logits))
    with _dispatch.tracing(tracer):
        out = loss_fn(network_out, SymbolicTensor(tracer, label.out(0)))
    if not isinstance(out, SymbolicTensor):
        raise UserError(f"{type(loss_fn).__name__} returned {type(out).__name__}, not a tensor",
                        where=getattr(loss_fn, "source", None) or job.source)
    for name in {n.name for n in graph.nodes()} - before:
        graph.node(name).scope = "loss_fn"
    return out._value


class _Typed:
    """An operand as a loss Cell's op_attrs/operands may inspect it: its type."""
    _irc_symbolic = True

    def __init__(self, t):
        self.type = t


def _emit_loss(graph: Graph, logits, label, loss_fn, job: Job):
    """One of irc's loss Cells: its train op, named %loss, at the loss's line."""
    typed = (_Typed(graph.type_of(logits)), _Typed(label.out_types[0]))
    extra = []
    for w in loss_fn.operands(*typed)[2:]:      # BCE's weight / pos_weight tensors
        array = np.asarray(w.asnumpy() if hasattr(w, "asnumpy") else w, dtype=np.float32)
        extra.append(graph.add("const", [], {"value": array.tolist(), "dtype": "f32"},
                               names=["loss_weight"], scope="loss_fn").out(0))
    node = graph.add(loss_fn.op, [logits, label.out(0), *extra], loss_fn.op_attrs(*typed),
                     names=["loss"],
                     loc=_loc(getattr(loss_fn, "source", None)) or _loc(job.source), scope="loss_fn")
    return node.out(0)


def _column_line(module: Module, column: Optional[str]):
    """The pipeline line that last changed ``column`` (its last map, else its source)."""
    from .network import column_source
    for g in module.graphs.values():
        rets = g.find("return") if g.placement == "host" else []
        if not rets:
            continue
        names = list(rets[0].attrs.get("names") or [])
        if column in names:
            return column_source(g, g.operands(rets[0])[names.index(column)])
    return None


def _check_loss_operands(module: Module, graph: Graph, logits, label, loss_fn, job: Job) -> None:
    """A loss that cannot take the network's output and the labels is a
    compile error naming both lines: the loss's and the labels'."""
    from ..ir.registry import get as get_op
    op = getattr(loss_fn, "op", "")
    if not op:
        return
    opdef = get_op(op)
    lt, yt = graph.type_of(logits), label.out_types[0]
    attrs = opdef.normalize_attrs(loss_fn.op_attrs(_Typed(lt), _Typed(yt)))
    try:
        opdef.infer(attrs, [lt, yt])
    except (TypeError, ValueError) as e:
        logits_line = graph.node(logits.node).loc
        label_line = _column_line(module, label.column) or label.loc
        raise UserError(
            f"{type(loss_fn).__name__} does not fit the network's output and the labels: {e}",
            where=getattr(loss_fn, "source", None) or job.source,
            hint=f"the labels: column {label.column!r} ({yt})"
                 f"{f', made at {label_line}' if label_line else ''}; the network's output: "
                 f"{lt}{f', computed at {logits_line}' if logits_line else ''}") from None


