"""The reference interpreter: runs an IR graph with numpy, node by node.

Each node runs its op's ``host_batch`` rule (the numpy meaning declared next
to the op in ``irc/dialects/*``); offloaded data ops (MAP ops on the device)
get their second operand as their ``draws``.  It is the oracle the ONNX
lowering is tested against, and it runs graphs ORT cannot (no ONNX rule yet).

Graphs of tensors only: dataset sources and pipeline ops (shuffle, batch ...)
belong to the dataset engine, not to this interpreter.
"""
from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence, Union

import numpy as np

from irc.diagnostics import UserError, user_frame
from irc.ir.graph import Graph, Module, Node, Value
from irc.ir.registry import IO, MAP, TENSOR, get as get_op
from irc.ir.types import UNKNOWN, TensorType, from_numpy_dtype, to_numpy_dtype

Feeds = Union[Mapping[str, np.ndarray], Sequence[np.ndarray]]


class InterpreterError(Exception):
    """A node the interpreter cannot run, or whose rule failed."""


# -----------------------------------------------------------------------------
# checking inputs (shared with backends/runtime.py)

def describe(dtype: str, shape) -> str:
    return f"{dtype}[{','.join(str(d) for d in shape)}]"


def check_feed(name: str, array: np.ndarray, want: TensorType, bound: dict,
               where: Optional[str] = None) -> None:
    """Raise a UserError naming the input when ``array`` does not fit ``want``.
    ``bound`` maps symbolic dimensions (N) to the sizes seen so far, so that
    all inputs agree on them."""
    have = describe(_ir_dtype(array), array.shape)
    if _ir_dtype(array) != want.dtype:
        raise UserError(f"input {name!r} must be {want}, got an array of {have} (wrong dtype)",
                        where=where,
                        hint=f"convert it first, e.g. x.astype(np.{to_numpy_dtype(want.dtype)})")
    if array.ndim != want.rank:
        raise UserError(f"input {name!r} must be {want}, got {have} (rank {array.ndim}, "
                        f"expected {want.rank})", where=where)
    for axis, (d, n) in enumerate(zip(want.shape, array.shape)):
        if isinstance(d, int) and d != n:
            raise UserError(f"input {name!r} must be {want}, got {have} "
                            f"(dimension {axis} is {n}, expected {d})", where=where)
        if isinstance(d, str) and d != UNKNOWN:
            seen = bound.setdefault(d, (n, name))
            if seen[0] != n:
                raise UserError(f"input {name!r} has {d} = {n} (dimension {axis}) but input "
                                f"{seen[1]!r} has {d} = {seen[0]}", where=where,
                                hint=f"every input must agree on the size of {d}")


def _ir_dtype(array: np.ndarray) -> str:
    try:
        return from_numpy_dtype(array.dtype)
    except ValueError:
        return str(array.dtype)


# -----------------------------------------------------------------------------
# the interpreter

def graph_inputs(graph: Graph) -> list[Node]:
    """The graph's ``input`` nodes in index order."""
    return sorted(graph.find("input"), key=lambda n: int(n.attrs["index"]))


def return_names(graph: Graph) -> list[str]:
    ret = graph.find("return")
    if not ret:
        return []
    operands = graph.operands(ret[0])
    return list(ret[0].attrs.get("names") or [graph.value_name(v) for v in operands])


def run_graph(module: Module, graph_name: str = "device", feeds: Feeds = (), *,
              weights: Optional[Mapping[str, np.ndarray]] = None,
              on_node: Optional[Callable[[Node, list[np.ndarray]], None]] = None
              ) -> list[np.ndarray]:
    """Run one graph; returns the values of its ``return`` in order.

    ``feeds``: arrays by input value name (``image``), by column (``col``)
    or as a list in input-index order.  ``weights`` overrides
    ``module.weights``.  ``on_node(node, results)`` is called after each
    node (to inspect intermediate values).
    """
    graph = module.graph(graph_name)
    env: dict[Value, np.ndarray] = {}
    _bind_inputs(graph, feeds, env)
    params = {**module.weights, **(weights or {})}
    outputs: list[np.ndarray] = []
    for node in graph.topo_order():
        if node.op == "input":
            continue
        args = [env[v] for v in graph.operands(node)]
        if node.op == "return":
            outputs = args
            continue
        results = _run_node(graph, node, args, params)
        for i, r in enumerate(results):
            env[node.out(i)] = r
        if on_node is not None:
            on_node(node, results)
    return outputs


def run_graph_named(module: Module, graph_name: str = "device", feeds: Feeds = (),
                    **kwargs) -> dict[str, np.ndarray]:
    """:func:`run_graph` with the results keyed by the return's names."""
    outs = run_graph(module, graph_name, feeds, **kwargs)
    return dict(zip(return_names(module.graph(graph_name)), outs))


def _bind_inputs(graph: Graph, feeds: Feeds, env: dict) -> None:
    inputs = graph_inputs(graph)
    if isinstance(feeds, Mapping):
        arrays = []
        for node in inputs:
            key = node.results[0] if node.results[0] in feeds else node.column
            if key not in feeds:
                known = ", ".join(n.results[0] for n in inputs)
                raise UserError(f"@{graph.name}: no value given for input {node.results[0]!r}",
                                where=user_frame(), hint=f"the graph's inputs are: {known}")
            arrays.append(feeds[key])
    else:
        arrays = list(feeds)
        if len(arrays) != len(inputs):
            raise UserError(f"@{graph.name} takes {len(inputs)} inputs, {len(arrays)} given",
                            where=user_frame())
    bound: dict = {}
    for node, array in zip(inputs, arrays):
        array = np.asarray(array)
        check_feed(node.results[0], array, node.out_types[0], bound, where=user_frame())
        env[node.out(0)] = array


def _run_node(graph: Graph, node: Node, args: list[np.ndarray], params) -> list[np.ndarray]:
    if node.op == "param":
        return [_param_value(node, params)]
    opdef = get_op(node.op)
    where = f"@{graph.name}: %{node.name} = {node.op}" + (f" ({node.loc})" if node.loc else "")
    if opdef.kind not in (IO, TENSOR, MAP):
        raise InterpreterError(f"{where}: a {opdef.kind} op; the reference interpreter runs "
                               f"tensor graphs (the dataset engine runs pipelines)")
    draws = None
    if opdef.kind == MAP:
        if opdef.host_batch_fn is None:
            raise InterpreterError(f"{where}: the op has no batch implementation")
        if len(args) == 2:
            args, draws = args[:1], np.asarray(args[1], dtype=np.float64)
        fn = opdef.host_batch_fn
    else:
        fn = opdef.host_batch_fn or opdef.host_sample_fn
        if fn is None:
            raise InterpreterError(f"{where}: the op has no numpy implementation")
    results = [np.asarray(r) for r in fn(args, node.attrs, draws)]
    _check_results(where, node, results)
    return results


def _param_value(node: Node, params) -> np.ndarray:
    name = node.attrs["name"]
    if name not in params:
        raise InterpreterError(f"parameter {name!r} has no value")
    return np.asarray(params[name], dtype=to_numpy_dtype(node.out_types[0].dtype))


def _check_results(where: str, node: Node, results: list[np.ndarray]) -> None:
    """A rule whose result disagrees with the IR types is a bug in that rule."""
    if len(results) != len(node.out_types):
        raise InterpreterError(f"{where}: gave {len(results)} results for {len(node.out_types)}")
    for r, t in zip(results, node.out_types):
        ok = _ir_dtype(r) == t.dtype and r.ndim == t.rank and all(
            not isinstance(d, int) or d == n for d, n in zip(t.shape, r.shape))
        if not ok:
            raise InterpreterError(f"{where}: computed {describe(_ir_dtype(r), r.shape)} but the "
                                   f"IR says {t}")
