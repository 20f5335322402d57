"""ONNX model -> irc Module, for drawing (``irc view model.onnx``).

Every ONNX node becomes one ``onnx.Node`` (irc/dialects/onnx_generic.py)
carrying its op_type, domain, node name and attributes; graph inputs become
``input``, initializers ``param``, graph outputs one ``return``.  A subgraph
attribute (If/Loop/Scan bodies) becomes a graph of its own, referred to as
``@name``; values a body takes from the enclosing graph become extra
``input``s of the body.  Types come from the model after ONNX shape
inference; where the model leaves a type unknown or irc has no such dtype
(bfloat16, complex ...) the node records the ONNX spelling in
``onnx_types`` and the IR type is ``bytes``.  A node named like a PyTorch
export (``/layer1/layer1.0/conv1/Conv``) gets the scope ``layer1/layer1.0/conv1``
so large models collapse by module.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

from irc.diagnostics import UserError, file_error, shorten
from irc.ir.graph import DEVICE, GraphRef, Module, Value
from irc.ir.types import TensorType

# ONNX TensorProto element types irc can spell.
_DTYPES = {1: "f32", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "i32", 7: "i64", 8: "bytes",
           9: "bool", 10: "f16", 11: "f64", 12: "u32", 13: "u64"}
_RESERVED = ("op_type", "domain", "node_name", "onnx_types")
_SMALL_TENSOR = 16
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
        dims = [str(d.dim_value) if d.HasField("dim_value") else (_text(d.dim_param) or "?")
                for d in tt.shape.dim]
        return f"{name}[{','.join(dims)}]"
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


def _dim(d) -> Any:
    if d.HasField("dim_value"):
        return int(d.dim_value)
    if isinstance(d.dim_param, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", d.dim_param):
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

    def graph(self, gp, name: str, outer: Optional[dict]) -> str:
        """Import one ONNX graph as the IR graph ``name``; returns its final name."""
        name = self._unique_graph(name)
        g = self.module.add_graph(name, DEVICE)
        types = {_text(vi.name): vi.type
                 for vi in list(gp.input) + list(gp.output) + list(gp.value_info)}
        values: dict[str, Value] = {}
        inits = {_text(t.name): t for t in gp.initializer}
        index = 0
        for vi in gp.input:
            if _text(vi.name) in inits:
                continue
            values[_text(vi.name)] = self._add(g, "input", [], {"index": index}, [_text(vi.name)],
                                               [vi.type]).out()
            index += 1
        for init_name, t in inits.items():
            values[init_name] = self._add(g, "param", [], {"name": init_name, "trainable": False},
                                          [init_name], [_tensor_type(t)]).out()
        for k, node in enumerate(gp.node):
            op_type, node_name = _text(node.op_type), _text(node.name)
            operands = []
            for slot, value in enumerate(map(_text, node.input)):
                if value == "":
                    continue  # an omitted optional input
                if value not in values:
                    if outer is not None and value in outer:
                        values[value] = self._add(g, "input", [], {"index": index}, [value],
                                                  [outer[value]]).out()
                        index += 1
                    else:
                        raise UserError(
                            f"node {k} ({shorten(op_type)} {shorten(node_name)!r}) of graph "
                            f"{shorten(_text(gp.name))!r}: input {slot} {shorten(value)!r} is not "
                            f"a graph input, an initializer or an output of an earlier node",
                            where=self.where,
                            hint="ONNX needs nodes in topological order; check the model with "
                                 "onnx.checker.check_model")
                operands.append(values[value])
            attrs = {"op_type": op_type, "domain": _text(node.domain), "node_name": node_name}
            scope_types = {**(outer or {}), **types}
            for a in node.attribute:
                attrs[_attr_key(a.name)] = self._attr(a, node, name, scope_types)
            outs = [_text(o) for o in node.output]
            created = self._add(g, "onnx.Node", operands, attrs,
                                [o or f"{op_type.lower()}_unused" for o in outs],
                                [types.get(o) for o in outs], scope=_scope_of(node_name))
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

    def _add(self, g, op, operands, attrs, names, type_protos, scope=None):
        types, notes = [], []
        for tp in type_protos:
            t, note = _ir_type(tp)
            types.append(t)
            notes.append(note or "")
        if any(notes):
            attrs = {**attrs, "onnx_types": notes} if op == "onnx.Node" else attrs
        return g.add(op, operands, attrs, out_types=types, names=names, scope=scope)

    def _attr(self, a, node, parent: str, scope_types: dict):
        import onnx
        from onnx import helper, numpy_helper
        kind = a.type
        prefix = f"{parent}.{_text(node.name) or _text(node.op_type)}.{_text(a.name)}"
        if kind == onnx.AttributeProto.GRAPH:
            return GraphRef(self.graph(a.g, prefix, scope_types))
        if kind == onnx.AttributeProto.GRAPHS:
            return [GraphRef(self.graph(sub, f"{prefix}{i}", scope_types))
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


def _scope_of(node_name: str) -> Optional[str]:
    """``/layer1/layer1.0/conv1/Conv`` -> ``layer1/layer1.0/conv1``."""
    parts = [p for p in node_name.split("/") if p]
    if len(parts) < 2:
        return None
    return "/".join(parts[:-1])
