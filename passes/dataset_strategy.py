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
the ``set_auto_parallel_context`` call.  A valid strategy gives a remark, and
each sliced input of ``@device`` gets a ``parallel.slice`` for this rank
unless the pipeline already delivers the rank's slice (SlicePatches +
project, as in the seed), which the remark says.
"""
from __future__ import annotations

from irc.diagnostics import UserError
from irc.dialects.core import DATA, graph_inputs
from irc.ir.graph import DEVICE, Graph, Module, sibling_graph

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


@register("dataset-strategy", "check dataset_strategy (seed 004) and slice each rank's inputs")
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
        columns = dict((v, c) for c, v in returned_columns(host))
        device = module.graphs.get(sibling_graph(host.name, "device"))
        for i, (v, (axis, parts)) in enumerate(zip(operands, sliced)):
            column = columns.get(v, host.value_name(v))
            if parts == 1:
                continue
            if _host_sliced(host, v):
                ctx.remark("analysis", "dataset_strategy",
                           f"rank {rank} of {world}: column '{column}' is its patch {rank % parts} of "
                           f"{parts}, sliced on the host (SlicePatches)",
                           reason="the pipeline delivers this rank's slice", column=column,
                           source=str(node.loc) if node.loc else None)
                continue
            if device is None:
                continue
            changed |= _slice_device_input(device, column, axis, parts, rank % parts)
            ctx.remark("passed", "dataset_strategy",
                       f"rank {rank} of {world}: column '{column}' sliced {parts} ways along "
                       f"dimension {axis}, this rank takes part {rank % parts}",
                       reason="dataset_strategy", column=column,
                       source=str(node.loc) if node.loc else None)
        ctx.remark("passed", "dataset_strategy",
                   f"dataset_strategy {format_strategy(node.attrs['strategy'])} is valid",
                   reason="seed 004's rules hold", source=str(node.loc) if node.loc else None)
    return changed


def _slice_device_input(device: Graph, column: str, axis: int, parts: int, index: int) -> bool:
    inputs = [n for n in graph_inputs(device, DATA) if n.column == column]
    if not inputs:
        return False
    src = inputs[0].out(0)
    users = device.users(src)
    if any(u.op == "parallel.slice" for u, _ in users):
        return False
    piece = device.add("parallel.slice", [src], {"axis": axis, "parts": parts, "index": index},
                       column=column, loc=inputs[0].loc, names=[f"{column}.rank"],
                       placement=DEVICE, prov=["dataset-strategy:created"])
    for user, i in users:
        device.set_operand(user, i, piece.out(0))
    for node in device.topo_order():
        if node.op != "input":
            device.refresh_types(node)
    return True
