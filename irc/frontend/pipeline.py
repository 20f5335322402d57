"""Capture of ``irc.dataset`` pipelines into the pipeline IR (TEAM.md, PIPELINE IR).

A Dataset object (``irc.dataset.engine_api``) is a lazy tree node: ``op``
(the IR op name of a source or pipeline operator, or ``"map"``),
``params``, ``children`` and the user's ``source`` line.
:func:`lower_pipeline` walks the tree child first and emits one node per
source / pipeline operator and one node per operator of each ``map`` (with
``Compose`` flattened and Python callables as ``dataset.PyFunc``), chaining
the values of the mapped columns.  The list of current columns is a
lowering-time state: maps replace columns in place, or put their outputs
first when the column count changes (MindSpore's rule).

A ``dataset.PyFunc`` gets its result types by running the function once on
the first row that reaches it (the upstream pipeline runs on the host engine
for that row), because nothing else says what a Python function returns.
"""
from __future__ import annotations

import contextlib
import random
from typing import Optional

import numpy as np

from ..diagnostics import UserError, UserRuntimeError, UserValueError, raised_at
from ..dialects.dataset import callable_name, probe_copy
from ..dialects.draws import mindspore_workers
from ..ir.graph import HOST, Graph, Loc, Module, Value
from ..ir.registry import SOURCE, get
from ..ir.traits import RowSource
from ..ir.types import TensorType

MAP = "map"


# =============================================================================
# column bookkeeping shared by the API (checks at construction) and lowering
# =============================================================================

def _fmt(names) -> str:
    return "[" + ", ".join(repr(n) for n in names) + "]"


def check_columns(what: str, wanted: list[str], available: list[str], where: Optional[str]) -> None:
    """Raise at ``where`` if a wanted column is missing or repeated."""
    for name in wanted:
        if name not in available:
            raise UserRuntimeError(f"{what}: no column {name!r}; the dataset has {_fmt(available)}",
                                   where=where, hint="column names are case-sensitive; "
                                                     "get_col_names() lists them")
    dup = sorted({n for n in wanted if wanted.count(n) > 1})
    if dup:
        raise UserRuntimeError(f"{what}: column {dup[0]!r} is named twice in {_fmt(wanted)}",
                               where=where)


def _check_unique(what: str, names: list[str], where: Optional[str]) -> None:
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UserRuntimeError(f"{what}: the result would have two columns named {dup[0]!r} "
                               f"({_fmt(names)})", where=where,
                               hint="choose distinct output_columns or rename first")


def map_columns(ds, names: list[str]) -> tuple[list[str], list[str]]:
    """(input_columns, output_columns) of a map over columns ``names``."""
    p = ds.params
    ins = list(p["input_columns"]) if p["input_columns"] else names[:1]
    check_columns("map input_columns", ins, names, ds.source)
    outs = list(p["output_columns"]) if p["output_columns"] else list(ins)
    return ins, outs


def map_layout(names: list[str], ins: list[str], outs: list[str]) -> list[tuple[str, object]]:
    """The columns after a map, as (name, slot): slot is the index of the
    input column kept, or ("out", j) for output j.  Same count: outputs
    replace the inputs in place; else outputs first, then the untouched
    columns in order (MindSpore's MapOp)."""
    if len(ins) == len(outs):
        pos = {name: j for j, name in enumerate(ins)}
        return [(outs[pos[n]], ("out", pos[n])) if n in pos else (n, i) for i, n in enumerate(names)]
    rest = [(n, i) for i, n in enumerate(names) if n not in ins]
    return [(o, ("out", j)) for j, o in enumerate(outs)] + rest


def column_names(ds) -> list[str]:
    """The output columns of a Dataset tree, from names alone (no IR)."""
    op = ds.op
    if op == MAP:
        names = column_names(ds.children[0])
        ins, outs = map_columns(ds, names)
        layout = [n for n, _ in map_layout(names, ins, outs)]
        _check_unique("map", layout, ds.source)
        order = ds.params.get("column_order")
        if order:
            check_columns("map column_order", list(order), layout, ds.source)
            return list(order)
        return layout
    if get(op).kind == SOURCE:
        return list(ds.params["columns"])
    children = [column_names(c) for c in ds.children]
    if op == "dataset.project":
        check_columns("project", list(ds.params["columns"]), children[0], ds.source)
        return list(ds.params["columns"])
    if op == "dataset.rename":
        return _renamed(ds, children[0])
    if op == "dataset.batch_map":
        return _batch_map_columns(ds, children[0])
    if op == "dataset.concat":
        _check_concat(ds, children)
        return children[0]
    if op == "dataset.zip":
        names = [n for c in children for n in c]
        for n in names:
            if names.count(n) > 1:
                raise UserRuntimeError(f"zip: column {n!r} is in more than one of the zipped "
                                       f"datasets", where=ds.source,
                                       hint="rename or project the columns apart first")
        return names
    return children[0]


def _renamed(ds, names: list[str]) -> list[str]:
    ins, outs = list(ds.params["input_columns"]), list(ds.params["output_columns"])
    check_columns("rename", ins, names, ds.source)
    if len(ins) != len(outs):
        raise UserValueError(f"rename: {len(ins)} input_columns but {len(outs)} output_columns",
                             where=ds.source)
    mapping = dict(zip(ins, outs))
    new = [mapping.get(n, n) for n in names]
    _check_unique("rename", new, ds.source)
    return new


def _batch_map_columns(ds, names: list[str]) -> list[str]:
    from ..dialects.dataset import batch_map_columns
    p = ds.params
    if p["input_columns"]:
        check_columns("batch input_columns", list(p["input_columns"]), names, ds.source)
    new = batch_map_columns(names, p["input_columns"], p["output_columns"])
    _check_unique("batch", new, ds.source)
    return new


def _pads(what: str, pad_info: dict, names: list[str], where) -> list:
    """A pad per column (None: stacked as it is); an empty ``pad_info`` pads
    every column to the batch's longest row with 0, as MindSpore 2.10 does."""
    if not pad_info:
        return [{"shape": None, "value": 0} for _ in names]
    check_columns(f"{what} pad_info", list(pad_info), names, where)
    return [pad_info.get(n) for n in names]


def _check_concat(ds, children: list[list[str]]) -> None:
    for other in children[1:]:
        if other != children[0]:
            raise UserRuntimeError(f"concat: the datasets have different columns: "
                                   f"{_fmt(children[0])} and {_fmt(other)}", where=ds.source,
                                   hint="concat needs the same column names in the same order "
                                        "(use project/rename first)")


# =============================================================================
# lowering
# =============================================================================

def lower_pipeline(module: Module, dataset, graph_name: str) -> Graph:
    """Build the pipeline graph ``graph_name`` of ``module`` for ``dataset``."""
    graph = module.add_graph(graph_name, HOST)
    cols = _Lowering(module, graph).lower(dataset)
    graph.add("return", [v for _, v in cols], {"names": [n for n, _ in cols]})
    return graph


def _loc(ds) -> Optional[Loc]:
    src = getattr(ds, "source", None)
    if not src:
        return None
    try:
        return Loc.parse(src)
    except ValueError:
        return None


def _shuffle_after(ds, attrs: dict) -> Optional[int]:
    """The buffer of the shuffle MindSpore adds after source ``ds`` (a
    globally shuffled text-file source), or None."""
    reader = get(ds.op).trait(RowSource).reader
    if not (isinstance(reader, type) and hasattr(reader, "shuffle_size")) or attrs.get("shuffle") != "global":
        return None
    try:
        return reader(attrs).shuffle_size(attrs)
    except UserError as e:
        raise UserRuntimeError(e.message, where=ds.source, hint=e.hint) from None


class _Lowering:
    def __init__(self, module: Module, graph: Graph):
        self.module, self.graph = module, graph
        self.memo: dict[int, list[tuple[str, Value]]] = {}
        self.next_map = 0
        self.next_object = 0

    def lower(self, ds) -> list[tuple[str, Value]]:
        key = id(ds)
        if key not in self.memo:
            if ds.op == MAP:
                cols = self.map(ds)
            elif get(ds.op).kind == SOURCE:
                cols = self.source(ds)
            else:
                cols = self.pipeline(ds)
            self.memo[key] = cols
        return self.memo[key]

    def object_key(self, kind: str) -> str:
        key = f"{self.graph.name}.{kind}{self.next_object}"
        self.next_object += 1
        return key

    def keep_objects(self, opdef, attrs: dict, kind: str) -> dict:
        """``attrs`` with each object attribute (a source's data, a Lookup's
        vocabulary) kept in ``module.objects`` and named by its key."""
        for name in opdef.object_attrs:
            key = self.object_key(kind)
            self.module.objects[key] = attrs[name]
            attrs[name] = key
        return attrs

    # -- sources ------------------------------------------------------------------
    def source(self, ds) -> list[tuple[str, Value]]:
        attrs = self.keep_objects(get(ds.op), dict(ds.params),
                                  ds.op.rsplit(".", 1)[-1].replace("Dataset", "").lower())
        sampler = attrs.get("sampler")
        if isinstance(sampler, dict) and sampler.get("kind") == "IterableSampler":
            # the user's sampler object lives in module.objects; the IR names it by key
            key = self.object_key("sampler")
            self.module.objects[key] = sampler["sampler"]
            attrs["sampler"] = {**sampler, "sampler": key}
        names = list(attrs["columns"])
        node = self.graph.add(ds.op, [], attrs, names=names, loc=_loc(ds))
        cols = list(zip(names, node.outs))
        buffer = _shuffle_after(ds, attrs)
        if buffer:
            # MindSpore's global shuffle of a text-file source: its files, then its rows
            # through a shuffle op it adds after the source (TFRecordNode::Build ...)
            cols = self.add(ds, "dataset.shuffle", [v for _, v in cols],
                            {"buffer_size": buffer, "reshuffle_each_epoch": True}, names)
        return cols

    # -- pipeline operators ---------------------------------------------------------
    def pipeline(self, ds) -> list[tuple[str, Value]]:
        op, p, where = ds.op, ds.params, ds.source
        children = [self.lower(c) for c in ds.children]
        cols = children[0]
        names = [n for n, _ in cols]
        if op == "dataset.project":
            keep = list(p["columns"])
            check_columns("project", keep, names, where)
            values = [dict(cols)[n] for n in keep]
            return self.add(ds, op, values, {"columns": keep}, keep)
        if op == "dataset.rename":
            new = _renamed(ds, names)
            return self.add(ds, op, [v for _, v in cols],
                            {"input_columns": list(p["input_columns"]),
                             "output_columns": list(p["output_columns"])}, new)
        if op == "dataset.concat":
            _check_concat(ds, [[n for n, _ in c] for c in children])
            values = [v for c in children for _, v in c]
            attrs = {"columns": names}
            if p.get("shards"):
                attrs["shards"] = p["shards"]
            return self.add(ds, op, values, attrs, names)
        if op == "dataset.zip":
            all_names = column_names(ds)
            values = [v for c in children for _, v in c]
            return self.add(ds, op, values, {"columns": all_names}, all_names)
        if op == "dataset.batch_map":
            return self.batch_map(ds, cols)
        if op == "dataset.padded_batch":
            pad = _pads("padded_batch", p["pad_info"], names, where)
            return self.add(ds, op, [v for _, v in cols], {"batch_size": p["batch_size"],
                            "drop_remainder": p["drop_remainder"], "pad": pad}, names)
        if op == "dataset.bucket_batch":
            check_columns("bucket_batch_by_length column_names", p["length_columns"], names, where)
            key = None
            if p["length_fn"] is not None:
                key = self.object_key("bucket_length")
                self.module.objects[key] = p["length_fn"]
            pad = None if p["pad_info"] is None else \
                _pads("bucket_batch_by_length", p["pad_info"], names, where)
            return self.add(ds, op, [v for _, v in cols], {
                "boundaries": p["boundaries"], "batch_sizes": p["batch_sizes"], "length_fn": key,
                "length_columns": p["length_columns"], "pad": pad,
                "pad_to_boundary": p["pad_to_boundary"], "drop_remainder": p["drop_remainder"]},
                names)
        if op == "dataset.filter":
            ins = list(p["input_columns"]) if p["input_columns"] else None
            if ins:
                check_columns("filter input_columns", ins, names, where)
            key = self.object_key("filter")
            self.module.objects[key] = p["predicate"]
            return self.add(ds, op, [v for _, v in cols], {"predicate": key, "input_columns": ins}, names)
        return self.add(ds, op, [v for _, v in cols], dict(p), names)

    def batch_map(self, ds, cols: list[tuple[str, Value]]) -> list[tuple[str, Value]]:
        """``batch(per_batch_map=fn)``: the function's result types from the
        first batch it is given (as a map's Python function's, from its first row)."""
        p, names = ds.params, [n for n, _ in cols]
        new = _batch_map_columns(ds, names)
        ins = list(p["input_columns"] or names)
        outs = list(p["output_columns"] or ins)
        env = dict(cols)
        batched = {n: self.graph.type_of(v).batched("N") for n, v in cols}
        in_types = [self.graph.type_of(env[n]) for n in ins]
        probed = probe_batch_map(ds, ins, outs, in_types)
        out_types = dict(zip(outs, probed if probed is not None else
                             [batched[ins[min(j, len(ins) - 1)]] for j in range(len(outs))]))
        key = self.object_key("batch_map")
        self.module.objects[key] = p["per_batch_map"]
        # MindSpore runs it in worker processes (their own numpy streams)
        processes = (p.get("num_parallel_workers") or mindspore_workers()) if p.get("python_multiprocessing") else None
        attrs = {"batch_size": p["batch_size"], "drop_remainder": p["drop_remainder"], "fn": key,
                 "name": callable_name(p["per_batch_map"]), "input_columns": ins,
                 "output_columns": outs,
                 "out_types": [str(out_types.get(n) or batched[n]) for n in new], "processes": processes}
        return self.add(ds, ds.op, [v for _, v in cols], attrs, new)

    def add(self, ds, op: str, values: list[Value], attrs: dict, names: list[str]):
        try:
            node = self.graph.add(op, values, attrs, names=names, loc=_loc(ds))
        except (TypeError, ValueError) as e:
            raise UserRuntimeError(f"{op.split('.', 1)[1]}: {e}", where=ds.source) from None
        return list(zip(names, node.outs))

    # -- map ----------------------------------------------------------------------------
    def map(self, ds) -> list[tuple[str, Value]]:
        p, where = ds.params, ds.source
        cols = self.lower(ds.children[0])
        names = [n for n, _ in cols]
        ins, outs = map_columns(ds, names)
        env = dict(cols)
        values = [env[n] for n in ins]
        current = list(ins)
        map_id = self.next_map
        self.next_map += 1
        map_attrs = {"map": map_id, "offload": p.get("offload"), "workers": p.get("num_parallel_workers")}
        ops = map_operations(ds)   # never empty: Dataset.map refuses that
        for i, op in enumerate(ops):
            last = i == len(ops) - 1
            if _is_tensor_op(op):
                node, current = self.tensor_op(ds, op, values, current, outs if last else None,
                                               map_attrs)
            else:
                node, current = self.pyfunc(ds, i, op, values, current, outs if last else None,
                                            map_attrs)
            values = node.outs
        if len(values) != len(outs):
            raise UserRuntimeError(f"map: the operations produce {len(values)} column(s) but "
                                   f"output_columns names {len(outs)}: {_fmt(outs)}", where=where,
                                   hint="give one output column per result of the last operation")
        layout = map_layout(names, ins, outs)
        new_names = [n for n, _ in layout]
        _check_unique("map", new_names, where)
        new = [(n, values[slot[1]] if isinstance(slot, tuple) else cols[slot][1]) for n, slot in layout]
        order = p.get("column_order")
        if order and list(order) != new_names:
            check_columns("map column_order", list(order), new_names, where)
            env = dict(new)
            return self.add(ds, "dataset.project", [env[n] for n in order], {"columns": list(order)},
                            list(order))
        return new

    def _result_names(self, count: int, current: list[str], outs: Optional[list[str]], ins0: str):
        if outs is not None and len(outs) == count:
            return list(outs)
        if len(current) == count:
            return list(current)
        return [f"{ins0}_{j}" for j in range(count)]

    def _add_map_node(self, ds, op_name, values, attrs, current, outs):
        where = ds.source
        opdef = get(op_name)
        short = op_name.split(".", 1)[1]
        if opdef.num_inputs is not None and len(values) != opdef.num_inputs:
            raise UserRuntimeError(f"map: {short} takes {opdef.num_inputs} column(s), it is given "
                                   f"{len(values)}: {_fmt(current)}", where=where,
                                   hint="map this operation over one input column at a time")
        in_types = [self.graph.type_of(v) for v in values]
        try:
            out_types = list(opdef.infer(opdef.normalize_attrs(attrs), in_types))
        except (TypeError, ValueError, KeyError) as e:
            shown = ", ".join(str(t) for t in in_types)
            raise UserRuntimeError(f"map: {short} cannot take column(s) {_fmt(current)} of type "
                                   f"{shown}: {e}", where=where) from None
        names = self._result_names(len(out_types), current, outs, current[0] if current else "column")
        node = self.graph.add(op_name, values, attrs, out_types=out_types, names=names,
                              column=names[0] if len(names) == 1 else None, loc=_loc(ds))
        return node, names

    def tensor_op(self, ds, op, values, current, outs, map_attrs):
        attrs = self.keep_objects(op.opdef, {**op.attrs, **map_attrs},
                                  op.op_name.rsplit(".", 1)[-1].lower())
        return self._add_map_node(ds, op.op_name, values, attrs, current, outs)

    def pyfunc(self, ds, index, fn, values, current, outs, map_attrs):
        if not callable(fn):
            raise UserRuntimeError(f"map: operation {index} ({fn!r}) is neither a transform nor a "
                                   f"callable", where=ds.source)
        key = f"{self.graph.name}.map{map_attrs['map']}.{index}"
        self.module.objects[key] = fn
        in_types = [self.graph.type_of(v) for v in values]
        types = probe_pyfunc(ds, index, in_types)
        if types is None:  # no row reaches the function: assume it keeps its inputs' types
            count = len(outs) if outs is not None else len(values)
            types = [in_types[min(j, len(in_types) - 1)] for j in range(count)]
        names = self._result_names(len(types), current, outs, current[0] if current else "column")
        workers = ds.params.get("num_parallel_workers") or 1
        # MindSpore runs such a map in worker processes, one worker too (a
        # GeneratorDataset source only with two or more)
        processes = workers if ds.params.get("python_multiprocessing") else None
        attrs = {"fn": key, "name": callable_name(fn), "input_columns": list(current),
                 "output_columns": names, "out_types": [str(t) for t in types],
                 "processes": processes, **map_attrs}
        node = self.graph.add("dataset.PyFunc", values, attrs, names=names,
                              column=names[0] if len(names) == 1 else None, loc=_loc(ds))
        return node, names


def _is_tensor_op(op) -> bool:
    from ..dialects.dataset import is_transform
    return is_transform(op)


def map_operations(ds) -> list:
    """Map ``ds``'s operations as the pipeline runs them: consecutive Python
    callables as one chain (irc.dialects.dataset.python_runs), made once."""
    from ..dialects.dataset import python_runs
    ops = ds.__dict__.get("_irc_operations")
    if ops is None:
        ops = ds.__dict__["_irc_operations"] = python_runs(list(ds.params["operations"]))
    return ops


# =============================================================================
# PyFunc result types: run the map's operations on the first row
# =============================================================================

def probe_pyfunc(ds, index: int, in_types: list[TensorType]) -> Optional[list[TensorType]]:
    """Result types of operation ``index`` of map ``ds`` (a Python callable),
    from one real row; None when the child dataset has no rows.

    A result that is one of the function's arguments passed through keeps
    that argument's type.  Otherwise the row's type is used as it is when
    the inputs have static types; when they do not (encoded bytes, images
    of any size), the row's dimensions are data-dependent and become ``?``.
    """
    cache = ds.__dict__.setdefault("_probed", {})
    if index in cache:
        return cache[index]
    with random_state_kept():
        cache[index] = _probe(ds, index, in_types)
    return cache[index]


@contextlib.contextmanager
def random_state_kept():
    """numpy's and Python's global generators as they were: a function that
    draws from them (a GAN's latent codes) draws, when the rows are read,
    what it draws in MindSpore, which never runs it to learn its types."""
    saved = np.random.get_state(), random.getstate()
    try:
        yield
    finally:
        np.random.set_state(saved[0])
        random.setstate(saved[1])


def _probe(ds, index: int, in_types: list[TensorType]) -> Optional[list[TensorType]]:
    from ..dialects.dataset import to_user, type_of_value
    row = ds.children[0].first_row()
    if row is None:
        return None
    names = column_names(ds.children[0])
    ins, _ = map_columns(ds, names)
    values = [row[n] for n in ins]
    ops = map_operations(ds)
    for op in ops[:index]:
        values = _located(ds, op, _apply_eagerly, op, values)
    args = [to_user(v) for v in values]
    outs = _located(ds, ops[index], _call_python, probe_copy(ops[index]), args)
    static = all(t.is_static and t.dtype != "bytes" for t in in_types)
    types = []
    for out in outs:
        passed = [t for a, t in zip(args, in_types) if out is a]
        if passed:
            types.append(passed[0])
            continue
        t = type_of_value(to_user(out))
        types.append(t if static else t.with_shape(["?"] * t.rank))
    return types


def probe_batch_map(ds, ins: list[str], outs: list[str],
                    in_types: list[TensorType]) -> Optional[list[TensorType]]:
    """The batched types of ``per_batch_map``'s results (``outs``) on the
    first batch; None when the child has no rows.  Static as the first
    batch gives them when the input columns' types are static, else of
    data-dependent size (``?``), as a map's Python function's."""
    from ..dialects.dataset import call_per_batch_map, to_user
    cache = ds.__dict__.setdefault("_probed", {})
    if "batch" not in cache:
        with random_state_kept():
            rows = ds.children[0].first_rows(int(ds.params["batch_size"]))
            cache["batch"] = None
            if rows:
                lists = [[to_user(r[n]) for r in rows] for n in ins]
                results = call_per_batch_map(probe_copy(ds.params["per_batch_map"]), lists, 0, 0,
                                             len(outs), ds.source)
                static = all(t.is_static and t.dtype != "bytes" for t in in_types)
                types = []
                for column in results:
                    t = type_of_batch(column)
                    types.append(t if static else t.with_shape(["N", *["?"] * (t.rank - 1)]))
                cache["batch"] = types
    return cache["batch"]


def type_of_batch(column: np.ndarray) -> TensorType:
    from ..dialects.dataset import type_of_value
    t = type_of_value(column[0]) if len(column) else type_of_value(column)
    return t.batched("N")


def _located(ds, op, fn, *args):
    """Run one operation of map ``ds`` on the probe row; errors at the map's line."""
    from ..dialects.dataset import PyFuncError
    try:
        return fn(*args)
    except (PyFuncError, UserError) as e:
        raise UserRuntimeError(e.message, where=ds.source, hint=e.hint) from None
    except Exception as e:
        what = op.op_name if _is_tensor_op(op) else f"the Python function {callable_name(op)}"
        raise UserRuntimeError(f"map: {what} raised {type(e).__name__} on the first row: {e}{raised_at(e)}",
                               where=ds.source) from None


def _apply_eagerly(op, values: list) -> list:
    if _is_tensor_op(op):
        opdef = get(op.op_name)
        k = int(opdef.num_draws(op.attrs))
        draws = np.full(k, 0.5) if k else None
        return list(opdef.host_sample_fn(values, opdef.normalize_attrs(op.attrs), draws))
    from ..dialects.dataset import to_user
    return _call_python(probe_copy(op), [to_user(v) for v in values])


def _call_python(fn, args: list) -> list:
    from ..dialects.dataset import call_python
    out = call_python(fn, args, " on the first row")
    return list(out) if isinstance(out, tuple) else [out]
