"""ONNX model -> irc Module, for drawing (``irc view model.onnx``).

Every ONNX node becomes one ``onnx.Node`` (irc/dialects/onnx_generic.py)
carrying its op_type, domain, node name and attributes; graph inputs become
``input``, initializers ``param``, ``Constant`` nodes ``const`` (small) or
``param`` (large), so the picture folds them into their consumers as it
does irc's own; graph outputs become one ``return``.  A subgraph attribute
(If/Loop/Scan bodies) becomes a graph of its own, referred to as ``@name``;
values a body takes from the enclosing graph become extra ``input``s of the
body.

Types come from the model after ONNX shape inference; a dimension it could
not name (its ``unk__N``) is ``?``.  Where the model leaves a type unknown or
irc has no such dtype (bfloat16, complex ...) the node records the ONNX
spelling in ``onnx_types`` and the IR type is ``bytes``.

Where the node came from: a node irc lowered carries ``irc.*`` metadata
(backends/onnx_lowering.py): ``irc.source`` becomes the node's ``loc`` (the
viewer shows the line), ``irc.scope`` its scope, the rest (``irc.op``,
``irc.node``, and any other metadata_props) attributes.  Other nodes take
their scope from a ``/``-path name, as PyTorch and irc write them
(``/layer1/layer1.0/conv1/Conv`` -> ``layer1/layer1.0/conv1``), so large
models collapse by module.  The model's metadata_props go into the Module's
``meta``.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from irc.diagnostics import UserError, file_error, shorten
from irc.dialects.core import DATA, ITERATION, STATE
from irc.ir.graph import DEVICE, GraphRef, Loc, Module, Value
from irc.ir.types import TensorType

# ONNX TensorProto element types irc can spell.
_DTYPES = {1: "f32", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "i32", 7: "i64", 8: "bytes",
           9: "bool", 10: "f16", 11: "f64", 12: "u32", 13: "u64"}
_RESERVED = ("op_type", "domain", "node_name", "onnx_types")
_SMALL_TENSOR = 16        # elements: a tensor attribute shows its values, a Constant is a const
# ONNX shape inference's name for a dimension it cannot compute (onnx/defs/shape_inference.h)
_INFERENCE_DIM = re.compile(r"unk__\d+")
_IRC_SOURCE, _IRC_SCOPE, _IRC_NODE = "irc.source", "irc.scope", "irc.node"
# AttributeProto types read as Python values (FLOAT, INT, STRING, FLOATS, INTS, STRINGS)
_PLAIN_ATTRIBUTES = (1, 2, 3, 6, 7, 8)


NOT_A_MODEL_HINT = ("the file is not a serialized onnx.ModelProto (truncated, or another "
                    "format?); check it with onnx.checker.check_model")


def load_onnx(path) -> Module:
    """Read an ONNX file into a Module; a damaged file is a UserError saying what failed."""
    import onnx
    from google.protobuf.message import DecodeError
    path = Path(path)
    where = str(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise file_error(path, e) from None
    try:
        model = onnx.load_model_from_string(data)
    except DecodeError as e:   # what protobuf raises for bytes that are no message
        raise UserError(f"cannot read {where} as an ONNX model: "
                        f"{shorten(str(e) or 'not a protobuf', 200)}",
                        where=where, hint=NOT_A_MODEL_HINT) from None
    if not model.HasField("graph"):
        raise UserError("not an ONNX model: no graph (an empty or other protobuf)", where=where,
                        hint=NOT_A_MODEL_HINT)
    return import_model(model, name=path.stem, where=where)


def import_model(model, name: str = "model", where: str = "<onnx>") -> Module:
    import onnx
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - drawing works without the inferred types
        pass
    meta = {"source": where,
            "producer": _text(f"{_text(model.producer_name)} {_text(model.producer_version)}".strip()),
            "opset": ", ".join(f"{_text(o.domain) or 'ai.onnx'} {o.version}"
                               for o in model.opset_import)}
    for prop in model.metadata_props:   # irc writes irc.module and irc.graph
        meta.setdefault(_one_line(_text(prop.key)), _one_line(_text(prop.value)))
    module = Module(_symbol(_text(model.graph.name) or name),
                    meta={k: v for k, v in meta.items() if v})
    _Importer(module, where).graph(model.graph, "main", outer=None)
    return module


def type_text(type_proto) -> str:
    """An ONNX value type as text (``float[1,3,224,224]``)."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        tt = type_proto.tensor_type
        name = _elem_type_name(tt.elem_type) if tt.elem_type else "?"
        if not tt.HasField("shape"):
            return f"{name}[?]"
        return f"{name}[{','.join(str(_dim(d)) for d in tt.shape.dim)}]"
    return which or "?"


def _elem_type_name(elem_type: int) -> str:
    """ONNX's name of a tensor element type (``float``), or the number of one
    ONNX does not define (a damaged or future model)."""
    import onnx
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"elem_type_{elem_type}"


def _text(value) -> str:
    """A string field of the model.  ONNX's protobuf is proto2, whose strings
    are not checked: one that is not UTF-8 comes back as bytes, and is shown
    with replacement characters."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _attr_key(name) -> str:
    """An ONNX attribute's name as an IR attribute key (an identifier); one
    that is not an identifier, or that the importer uses itself, gets 'attr.'."""
    key = re.sub(r"[^A-Za-z0-9_.]", "_", _text(name))
    if key in _RESERVED or not re.match(r"[A-Za-z_]", key):
        key = f"attr.{key}"
    return key


def _symbol(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", _text(text)) or "model"


def _one_line(text: str, limit: int = 200) -> str:
    """A metadata value as one header line of the IR text."""
    return shorten(" ".join(text.split()), limit)


def _dim(d) -> Any:
    """A dimension: its size, the model's symbol (``batch``), or ``?`` (none,
    one that is no identifier, or one that shape inference made up)."""
    if d.HasField("dim_value"):
        return int(d.dim_value)
    if (isinstance(d.dim_param, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", d.dim_param)
            and not _INFERENCE_DIM.fullmatch(d.dim_param)):
        return d.dim_param
    return "?"


def _ir_type(type_proto) -> tuple[TensorType, Optional[str]]:
    """The IR type, and the ONNX spelling when the IR type only approximates it."""
    if type_proto is None or type_proto.WhichOneof("value") != "tensor_type":
        text = type_text(type_proto) if type_proto is not None else "unknown"
        return TensorType("bytes", ("?",)), text
    tt = type_proto.tensor_type
    shape = tuple(_dim(d) for d in tt.shape.dim) if tt.HasField("shape") else ("?",)
    dtype = _DTYPES.get(tt.elem_type)
    if dtype is None or not tt.HasField("shape"):
        return TensorType(dtype or "bytes", shape), type_text(type_proto)
    return TensorType(dtype, shape), None


class _Importer:
    def __init__(self, module: Module, where: str):
        self.module, self.where = module, where

    def graph(self, gp, name: str, outer: Optional[dict], roles: tuple[str, ...] = ()) -> str:
        """Import one ONNX graph as the IR graph ``name``; returns its final name.
        ``outer``: the types of the values an enclosing graph defines;
        ``roles``: what its inputs carry, in order (the rest: data)."""
        name = self._unique_graph(name)
        g = self.module.add_graph(name, DEVICE)
        types = {_text(vi.name): vi.type
                 for vi in list(gp.input) + list(gp.output) + list(gp.value_info)}
        visible = {**(outer or {}), **types}   # what this graph's subgraphs may use
        values: dict[str, Value] = {}
        inits = {_text(t.name): t for t in gp.initializer}
        index = itertools.count()
        for position, vi in enumerate(gp.input):
            if _text(vi.name) not in inits:
                role = roles[position] if position < len(roles) else DATA
                values[_text(vi.name)] = self._add(g, "input", [], {"index": next(index),
                                                                    "role": role},
                                                   [_text(vi.name)], [vi.type]).out()
        for init_name, t in inits.items():
            values[init_name] = self._param(g, init_name, t).out()
        for k, node in enumerate(gp.node):
            operands = []
            for slot, value in enumerate(map(_text, node.input)):
                if value == "":
                    continue  # an omitted optional input
                if value not in values:
                    if outer is None or value not in outer:
                        raise self._dangling(gp, k, node, slot, value)
                    values[value] = self._add(g, "input", [], {"index": next(index)}, [value],
                                              [outer[value]]).out()
                operands.append(values[value])
            outs = [_text(o) for o in node.output]
            created = self._constant(g, node, types) or self._node(g, node, operands, types, name,
                                                                   visible)
            for i, o in enumerate(outs):
                if o:
                    values[o] = created.out(i)
        outputs = [_text(o.name) for o in gp.output]
        missing = [o for o in outputs if o not in values]
        if missing:
            raise UserError(f"graph {shorten(_text(gp.name))!r} outputs "
                            f"{shorten(', '.join(missing))}, which no node produces",
                            where=self.where,
                            hint="an output must be a graph input, an initializer or a node's "
                                 "output; check the model with onnx.checker.check_model")
        self._add(g, "return", [values[o] for o in outputs], {"names": outputs}, [], [])
        return name

    def _dangling(self, gp, k: int, node, slot: int, value: str) -> UserError:
        return UserError(
            f"node {k} ({shorten(_text(node.op_type))} {shorten(_text(node.name))!r}) of graph "
            f"{shorten(_text(gp.name))!r}: input {slot} {shorten(value)!r} is not "
            f"a graph input, an initializer or an output of an earlier node",
            where=self.where,
            hint="ONNX needs nodes in topological order; check the model with "
                 "onnx.checker.check_model")

    def _node(self, g, node, operands, types: dict, parent: str, visible: dict):
        """An ONNX node as ``onnx.Node``: its attributes, then its metadata."""
        op_type, node_name = _text(node.op_type), _text(node.name)
        attrs = {"op_type": op_type, "domain": _text(node.domain), "node_name": node_name}
        for a in node.attribute:
            attrs[_attr_key(a.name)] = self._attr(a, node, parent, visible)
        origin = _origin(node)
        for key, value in origin.attrs.items():
            key = _attr_key(key)
            attrs[f"meta.{key}" if key in attrs else key] = value
        outs = [_text(o) for o in node.output]
        return self._add(g, "onnx.Node", operands, attrs,
                         [o or f"{op_type.lower()}_unused" for o in outs],
                         [types.get(o) for o in outs], scope=origin.scope, loc=origin.loc)

    def _constant(self, g, node, types: dict):
        """A ``Constant`` node as the IR's own constant: ``const`` holding its
        values when small, else a ``param`` (the viewer folds both into their
        consumers); None for one that is neither (sparse, strings)."""
        if _text(node.op_type) != "Constant" or _text(node.domain) not in ("", "ai.onnx"):
            return None
        t = _constant_tensor(node)
        if t is None:
            return None
        out, origin = _text(node.output[0]), _origin(node)
        values = _small_values(t)
        if values is None:
            return self._param(g, out, t, scope=origin.scope, loc=origin.loc)
        return g.add("const", [], {"value": values, "dtype": _DTYPES[t.data_type]}, names=[out],
                     scope=origin.scope, loc=origin.loc)

    def _param(self, g, name: str, t, scope=None, loc=None):
        return self._add(g, "param", [], {"name": name, "trainable": False}, [name],
                         [_tensor_type(t)], scope=scope, loc=loc)

    def _add(self, g, op, operands, attrs, names, type_protos, scope=None, loc=None):
        types, notes = [], []
        for tp in type_protos:
            t, note = _ir_type(tp)
            types.append(t)
            notes.append(note or "")
        if any(notes):
            attrs = {**attrs, "onnx_types": notes} if op == "onnx.Node" else attrs
        return g.add(op, operands, attrs, out_types=types, names=names, scope=scope, loc=loc)

    def _attr(self, a, node, parent: str, visible: dict):
        import onnx
        from onnx import helper, numpy_helper
        kind = a.type
        # the node's own name, its scope path left out (``/layer1/If`` -> ``If``)
        owner = _text(node.name).rstrip("/").rsplit("/", 1)[-1] or _text(node.op_type)
        prefix = f"{parent}.{owner}.{_text(a.name)}"
        if kind == onnx.AttributeProto.GRAPH:
            return GraphRef(self.graph(a.g, prefix, visible, _body_roles(node, a)))
        if kind == onnx.AttributeProto.GRAPHS:
            return [GraphRef(self.graph(sub, f"{prefix}{i}", visible))
                    for i, sub in enumerate(a.graphs)]
        if kind == onnx.AttributeProto.TENSOR:
            return _tensor_summary(a.t, numpy_helper)
        if kind in (onnx.AttributeProto.SPARSE_TENSOR, onnx.AttributeProto.TYPE_PROTO,
                    onnx.AttributeProto.TENSORS, onnx.AttributeProto.SPARSE_TENSORS,
                    onnx.AttributeProto.TYPE_PROTOS):
            return f"<{onnx.AttributeProto.AttributeType.Name(kind).lower()}>"
        if kind not in _PLAIN_ATTRIBUTES:
            return f"<attribute of undefined type {kind}>"   # drawn, as the rest of the model
        return _plain(helper.get_attribute_value(a))

    def _unique_graph(self, name: str) -> str:
        name = _symbol(name)
        base, i = name, 1
        while name in self.module.graphs:
            name = f"{base}.{i}"
            i += 1
        return name


def _plain(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _tensor_type(t) -> Any:
    from onnx import TypeProto
    tp = TypeProto()
    tp.tensor_type.elem_type = t.data_type
    for d in t.dims:
        tp.tensor_type.shape.dim.add().dim_value = d
    if not t.dims:
        tp.tensor_type.shape.SetInParent()
    return tp


def _tensor_summary(t, numpy_helper) -> Any:
    """A small tensor attribute's values; a large one's type."""
    import onnx
    dtype = _elem_type_name(t.data_type)
    shape = ",".join(str(d) for d in t.dims)
    numel = 1
    for d in t.dims:
        numel *= d
    if numel <= _SMALL_TENSOR and t.data_location != onnx.TensorProto.EXTERNAL:
        try:
            values = numpy_helper.to_array(t).reshape(-1).tolist()
            return {"dtype": dtype, "shape": list(t.dims), "values": [_plain(v) for v in values]}
        except Exception:  # noqa: BLE001 - fall back to the type
            pass
    return f"tensor {dtype}[{shape}]"


def _body_roles(node, a) -> tuple[str, ...]:
    """A Loop body's inputs: the iteration number, the condition, then the
    values carried from step to step (in irc's training loop, the weights
    and optimiser state), drawn folded into the ops that read them as irc's
    own pictures draw parameters and state."""
    if _text(node.op_type) == "Loop" and _text(a.name) == "body":
        return (ITERATION, DATA) + (STATE,) * max(0, len(a.g.input) - 2)
    return ()


@dataclass
class _Origin:
    loc: Optional[Loc] = None
    scope: Optional[str] = None
    attrs: dict[str, str] = field(default_factory=dict)   # the other metadata


def _origin(node) -> _Origin:
    """Where a node came from.  One irc lowered names its IR node, Cell scope
    and source line in metadata (exact, and what its name was made from);
    another gets the scope of its ``/``-path name."""
    props = {_text(p.key): _text(p.value) for p in node.metadata_props}
    origin = _Origin(attrs=props)
    loc = _loc(props.get(_IRC_SOURCE, ""))
    if loc is not None:
        origin.loc = loc
        del props[_IRC_SOURCE]
    doc = _text(node.doc_string)
    if doc and doc != str(loc):     # irc writes the source line there too
        props.setdefault("doc_string", doc)
    if _IRC_NODE in props or _IRC_SCOPE in props:
        origin.scope = props.pop(_IRC_SCOPE, None) or None
    else:
        origin.scope = _scope_of(_text(node.name))
    return origin


def _loc(text: str) -> Optional[Loc]:
    """``FILE:LINE`` as a Loc; None for anything else."""
    file, _, line = text.rpartition(":")
    return Loc(file, int(line)) if file and line.isascii() and line.isdigit() else None


def _constant_tensor(node):
    """The tensor a Constant node holds (``value_float`` etc. made one);
    None for a sparse or string constant, or a malformed node."""
    import onnx
    from onnx import helper, numpy_helper
    if len(node.attribute) != 1 or len(node.output) != 1 or node.input:
        return None
    a = node.attribute[0]
    name = _text(a.name)
    if name == "value" and a.type == onnx.AttributeProto.TENSOR:
        return a.t
    kinds = {"value_float": "float32", "value_floats": "float32", "value_int": "int64",
             "value_ints": "int64"}
    if name in kinds and a.type in _PLAIN_ATTRIBUTES:
        import numpy as np
        return numpy_helper.from_array(np.asarray(helper.get_attribute_value(a), kinds[name]))
    return None


def _small_values(t) -> Optional[Any]:
    """A small tensor's values as (nested) Python lists, for ``const``; None
    for a large one, or one irc has no dtype for."""
    import onnx
    from onnx import numpy_helper
    numel = 1
    for d in t.dims:
        numel *= d
    if (numel > _SMALL_TENSOR or t.data_location == onnx.TensorProto.EXTERNAL
            or _DTYPES.get(t.data_type, "bytes") == "bytes"):
        return None
    try:
        return numpy_helper.to_array(t).tolist()
    except Exception:  # noqa: BLE001 - a damaged tensor: drawn as a param
        return None


def _scope_of(node_name: str) -> Optional[str]:
    """``/layer1/layer1.0/conv1/Conv`` -> ``layer1/layer1.0/conv1``."""
    parts = [p for p in node_name.split("/") if p]
    if len(parts) < 2:
        return None
    return "/".join(parts[:-1])
