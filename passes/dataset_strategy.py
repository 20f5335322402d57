"""dataset-strategy: check set_auto_parallel_context(dataset_strategy=...) and
apply it to this rank's device graph (seed 004).

Rules (seed 004, "Configuring Dataset Slicing Strategy"):

1. strategies apply only in semi-auto or auto parallel mode;
2. the tuple has one entry per pipeline output, each as long as that output's rank;
3. each input is sliced in at most one dimension;
4. the input with the most dimensions has the largest slice count;
5. ranks read slices round-robin (rank % slices), so the world size must be a
   multiple of the slice count for the ranks to cover the data evenly.

A broken rule is the user's error (exit 1) quoting the tuple and the line of
the ``set_auto_parallel_context`` call.

The network is written for one card (seed 004: "the network definition is
consistent with the single-card model"), so a valid strategy that slices an
input is followed by a redistribution to the layout the network needs, as
MindSpore's tensor redistribution does: whole samples, the batch split over
the ranks.  A patch the pipeline read on the host (SlicePatches + project, as
in the seed) goes through ``parallel.all_to_all``; a value every rank reads
whole (the labels) through this rank's ``parallel.slice`` of the batch.
``sync-batch-norm`` and ``allreduce-gradients`` then make the ranks' steps
one step of the whole batch.
"""
from __future__ import annotations

from typing import Optional

from irc.diagnostics import UserError
from irc.dialects.core import DATA, graph_inputs
from irc.ir.graph import DEVICE, Graph, Module, sibling_graph
from irc.ir.types import TensorType

from .manager import register
from .options import CompileOptions
from .pipeline_columns import returned_columns

_MODES = ("semi_auto_parallel", "auto_parallel")


def format_strategy(strategy) -> str:
    def one(entry):
        return "(" + ", ".join(map(str, entry)) + ("," if len(entry) == 1 else "") + ")"
    return "(" + ", ".join(one(e) for e in strategy) + ("," if len(strategy) == 1 else "") + ")"


def _fail(node, strategy, rule: str, hint: str) -> UserError:
    return UserError(f"dataset_strategy {format_strategy(strategy)} breaks the rule: {rule}",
                     where=str(node.loc) if node.loc else None, hint=hint)


def check(node, types, world_size: int) -> list[tuple[int, int]]:
    """Validate; returns (axis, parts) per input (axis -1 when not sliced)."""
    strategy = [list(e) for e in node.attrs["strategy"]]
    mode = node.attrs["mode"]
    if mode not in _MODES:
        raise _fail(node, strategy, "strategies apply only in semi-auto or auto parallel mode",
                    f"parallel_mode is {mode!r}; use ParallelMode.SEMI_AUTO_PARALLEL or AUTO_PARALLEL")
    if len(strategy) != len(types):
        raise _fail(node, strategy, f"one entry per pipeline output ({len(types)} outputs, "
                    f"{len(strategy)} entries)", "give one tuple per column the pipeline yields")
    for i, (entry, t) in enumerate(zip(strategy, types)):
        if len(entry) != t.rank:
            raise _fail(node, strategy, f"entry {i} has {len(entry)} dimensions but output {i} "
                        f"is {t} (rank {t.rank})", "one slice count per dimension of the batch")
        if any(d < 1 for d in entry):
            raise _fail(node, strategy, f"entry {i} has a slice count below 1", "counts start at 1")
    sliced = []
    for i, entry in enumerate(strategy):
        axes = [a for a, d in enumerate(entry) if d > 1]
        if len(axes) > 1:
            raise _fail(node, strategy, f"each input is sliced in at most one dimension "
                        f"(input {i} is sliced in dimensions {axes})",
                        "e.g. (1, 1, 1, 8) instead of (1, 1, 4, 2)")
        sliced.append((axes[0], entry[axes[0]]) if axes else (-1, 1))
    ranks = [t.rank for t in types]
    widest = ranks.index(max(ranks))
    for i, (_, parts) in enumerate(sliced):
        if parts > sliced[widest][1]:
            raise _fail(node, strategy, f"the input with the most dimensions (input {widest}) must "
                        f"have the largest slice count, but input {i} is sliced {parts} ways "
                        f"and input {widest} {sliced[widest][1]}",
                        "slice the highest-dimensional input at least as much as the others")
    most = max(p for _, p in sliced)
    if world_size % most:
        raise _fail(node, strategy, f"the world size must be a multiple of the slice count "
                    f"({world_size} rank(s), {most} slices)",
                    f"run with --world-size {most} (or a multiple of it)")
    return sliced


def _host_sliced(host: Graph, value) -> bool:
    """Whether the column comes from a SlicePatches (the rank's patch)."""
    seen, todo = set(), [value]
    while todo:
        v = todo.pop()
        if v.node in seen:
            continue
        seen.add(v.node)
        node = host.node(v.node)
        if node.op == "vision.SlicePatches":
            return True
        todo += host.operands(node)
    return False


@register("dataset-strategy", "check dataset_strategy (seed 004); redistribute the ranks' "
                              "slices to the layout the network was written for")
def run(module: Module, ctx) -> bool:
    options = CompileOptions.of(module)
    rank, world = (options.rank, options.world_size) if options.rank is not None else (0, 1)
    changed = False
    for host in list(module.graphs.values()):
        nodes = host.find("parallel.dataset_strategy")
        if not nodes:
            continue
        node = nodes[0]
        operands = host.operands(node)
        types = [host.type_of(v) for v in operands]
        sliced = check(node, types, world)
        source = str(node.loc) if node.loc else None
        columns = dict((v, c) for c, v in returned_columns(host))
        # the graph the pipeline feeds: the network before graph-sink, @device after it
        device = module.graphs.get(sibling_graph(host.name, "device")) or \
            module.graphs.get(sibling_graph(host.name, "network"))
        most = max(parts for _, parts in sliced)
        if most > 1 and world != most:
            raise _fail(node, node.attrs["strategy"], f"irc redistributes a sliced input when the "
                        f"world size equals the slice count ({world} rank(s), {most} slices)",
                        f"run with --world-size {most}")
        for i, (v, (axis, parts)) in enumerate(zip(operands, sliced)):
            column = columns.get(v, host.value_name(v))
            if most == 1 or device is None:
                continue
            on_host = parts > 1 and _host_sliced(host, v)
            if on_host:
                ctx.remark("analysis", "dataset_strategy",
                           f"rank {rank} of {world}: column '{column}' is its patch {rank % parts} "
                           f"of {parts}, sliced on the host (SlicePatches)",
                           reason="the pipeline delivers this rank's slice", column=column,
                           source=source)
            changed |= _to_batch_layout(device, column, types[i], axis, parts, on_host, rank, most,
                                        ctx, source)
        ctx.remark("passed", "dataset_strategy",
                   f"dataset_strategy {format_strategy(node.attrs['strategy'])} is valid",
                   reason="seed 004's rules hold", source=source)
    return changed


def whole_sample_type(t: TensorType, axis: int, parts: int, on_host: bool) -> TensorType:
    """The type the network is traced on for a column the strategy slices:
    whole samples (a patch read on the host, joined back along its axis)."""
    if not on_host or axis <= 0 or parts == 1 or not isinstance(t.shape[axis], int):
        return t
    shape = list(t.shape)
    shape[axis] *= parts
    return TensorType(t.dtype, tuple(shape))


def network_input_types(host: Graph, strategy, parallel_mode: str,
                        types: list[TensorType]) -> list[TensorType]:
    """What the network of a pipeline sees under ``strategy``: the frontend
    traces it on these (seed 004: it is written for one card)."""
    if parallel_mode not in _MODES or not isinstance(strategy, (list, tuple)):
        return list(types)
    rets = host.find("return")
    if not rets or len(strategy) != len(types):
        return list(types)
    out = []
    for entry, value, t in zip(strategy, host.operands(rets[0]), types):
        axes = [a for a, d in enumerate(entry) if d > 1]
        if len(axes) == 1 and len(entry) == t.rank:
            t = whole_sample_type(t, axes[0], entry[axes[0]], _host_sliced(host, value))
        out.append(t)
    return out


def _to_batch_layout(device: Graph, column: str, patch: TensorType, axis: int, parts: int,
                     on_host: bool, rank: int, world: int, ctx, source) -> bool:
    """Give the network whole samples, the batch split over the ranks (what
    MindSpore's tensor redistribution makes of the dataset layout for a
    network written for one card): a patch read on the host is exchanged
    with the other ranks' patches (all-to-all: batch part r to rank r, the
    patches joined along the sliced axis); a value every rank reads whole,
    or one sliced along the batch already, is this rank's batch part."""
    if on_host and axis != 0:
        how = (f"all-to-all: batch part r to rank r, patches joined along dimension {axis}",
               "parallel.all_to_all", {"split_axis": 0, "concat_axis": axis, "group": parts})
    else:
        how = (f"this rank's part {rank} of {world} of the batch", "parallel.slice",
               {"axis": 0, "parts": world, "index": rank})
    text, op, attrs = how
    if not _insert_after_input(device, column, op, attrs, patch if on_host else None):
        return False
    ctx.remark("passed", "dataset_strategy",
               f"column '{column}' redistributed to whole samples, the batch split over "
               f"{world} ranks: {text}", reason="the network is written for one card's layout",
               column=column, source=source)
    return True


def _insert_after_input(device: Graph, column: str, op: str, attrs: dict,
                        read: Optional[TensorType]) -> bool:
    """Put ``op`` between the column's input and its users; ``read``: the
    type the input really has (a patch; the network was traced on whole
    samples)."""
    inputs = [n for n in graph_inputs(device, DATA) if n.column == column]
    if not inputs:
        return False
    src = inputs[0].out(0)
    users = device.users(src)
    if any(u.op.startswith("parallel.") for u, _ in users):
        return False
    traced = device.type_of(src)
    if read is not None:
        inputs[0].out_types = [read]
    piece = device.add(op, [src], attrs, column=column, loc=inputs[0].loc,
                       names=[f"{column}.rank"], placement=DEVICE,
                       prov=["dataset-strategy:created"])
    if piece.out_types[0] != traced:
        raise UserError(f"@{device.name}: column '{column}' redistributed by {op} is "
                        f"{piece.out_types[0]}, but the network was traced on {traced}",
                        where=str(inputs[0].loc) if inputs[0].loc else None,
                        hint="the network must take whole samples (seed 004)")
    for user, i in users:
        device.set_operand(user, i, piece.out(0))
    for node in device.topo_order():
        if node.op != "input":
            device.refresh_types(node)
    return True
