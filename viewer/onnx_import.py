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

from irc.diagnostics import UserError
from irc.ir.graph import DEVICE, GraphRef, Module, Value
from irc.ir.types import TensorType

# ONNX TensorProto element types irc can spell.
_DTYPES = {1: "f32", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "i32", 7: "i64", 8: "bytes",
           9: "bool", 10: "f16", 11: "f64", 12: "u32", 13: "u64"}
_RESERVED = ("op_type", "domain", "node_name", "onnx_types")
_SMALL_TENSOR = 16


def load_onnx(path) -> Module:
    """Read an ONNX file into a Module; a damaged file is a UserError saying what failed."""
    import onnx
    path = Path(path)
    if not path.is_file():
        raise UserError(f"no such file: {path}")
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as e:  # noqa: BLE001 - protobuf raises several types for a bad file
        raise UserError(f"cannot read {path} as an ONNX model: {type(e).__name__}: {e}".rstrip(": "),
                        where=str(path),
                        hint="the file is not a serialized onnx.ModelProto (truncated or another format?)"
                        ) from None
    if not model.HasField("graph"):
        raise UserError(f"{path} holds no graph (an empty or non-ONNX protobuf)", where=str(path))
    return import_model(model, name=path.stem, where=str(path))


def import_model(model, name: str = "model", where: str = "<onnx>") -> Module:
    import onnx
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - drawing works without the inferred types
        pass
    meta = {"source": where,
            "producer": f"{model.producer_name} {model.producer_version}".strip(),
            "opset": ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)}
    module = Module(_symbol(model.graph.name or name), meta={k: v for k, v in meta.items() if v})
    _Importer(module, where).graph(model.graph, "main", outer=None)
    return module


def type_text(type_proto) -> str:
    """An ONNX value type as text (``float[1,3,224,224]``)."""
    import onnx
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        tt = type_proto.tensor_type
        name = onnx.TensorProto.DataType.Name(tt.elem_type).lower() if tt.elem_type else "?"
        if not tt.HasField("shape"):
            return f"{name}[?]"
        dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?")
                for d in tt.shape.dim]
        return f"{name}[{','.join(dims)}]"
    return which or "?"


def _symbol(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", text) or "model"


def _dim(d) -> Any:
    if d.HasField("dim_value"):
        return int(d.dim_value)
    if d.dim_param and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", d.dim_param):
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
        types = {vi.name: vi.type for vi in list(gp.input) + list(gp.output) + list(gp.value_info)}
        values: dict[str, Value] = {}
        inits = {t.name: t for t in gp.initializer}
        index = 0
        for vi in gp.input:
            if vi.name in inits:
                continue
            values[vi.name] = self._add(g, "input", [], {"index": index}, [vi.name], [vi.type]).out()
            index += 1
        for t in gp.initializer:
            tp = _tensor_type(t)
            values[t.name] = self._add(g, "param", [], {"name": t.name, "trainable": False},
                                       [t.name], [tp]).out()
        for k, node in enumerate(gp.node):
            operands = []
            for slot, value in enumerate(node.input):
                if value == "":
                    continue  # an omitted optional input
                if value not in values:
                    if outer is not None and value in outer:
                        values[value] = self._add(g, "input", [], {"index": index}, [value],
                                                  [outer[value]]).out()
                        index += 1
                    else:
                        raise UserError(
                            f"{self.where}: node {k} ({node.op_type} {node.name!r}) of graph "
                            f"{gp.name!r}: input {slot} {value!r} is not a graph input, an "
                            f"initializer or an output of an earlier node",
                            hint="ONNX needs nodes in topological order; check the model with "
                                 "onnx.checker.check_model")
                operands.append(values[value])
            attrs = {"op_type": node.op_type, "domain": node.domain, "node_name": node.name}
            scope_types = {**(outer or {}), **types}
            for a in node.attribute:
                key = _symbol(a.name) if a.name not in _RESERVED else f"attr.{a.name}"
                attrs[key] = self._attr(a, node, name, scope_types)
            outs = list(node.output)
            created = self._add(g, "onnx.Node", operands, attrs,
                                [o or f"{node.op_type.lower()}_unused" for o in outs],
                                [types.get(o) for o in outs], scope=_scope_of(node.name))
            for i, o in enumerate(outs):
                if o:
                    values[o] = created.out(i)
        missing = [o.name for o in gp.output if o.name not in values]
        if missing:
            raise UserError(f"{self.where}: graph {gp.name!r} outputs {', '.join(missing)}, "
                            f"which no node produces")
        self._add(g, "return", [values[o.name] for o in gp.output],
                  {"names": [o.name for o in gp.output]}, [], [])
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
        if kind == onnx.AttributeProto.GRAPH:
            return GraphRef(self.graph(a.g, f"{parent}.{node.name or node.op_type}.{a.name}",
                                       scope_types))
        if kind == onnx.AttributeProto.GRAPHS:
            return [GraphRef(self.graph(sub, f"{parent}.{node.name or node.op_type}.{a.name}{i}",
                                        scope_types)) for i, sub in enumerate(a.graphs)]
        if kind == onnx.AttributeProto.TENSOR:
            return _tensor_summary(a.t, numpy_helper)
        if kind in (onnx.AttributeProto.SPARSE_TENSOR, onnx.AttributeProto.TYPE_PROTO,
                    onnx.AttributeProto.TENSORS, onnx.AttributeProto.SPARSE_TENSORS,
                    onnx.AttributeProto.TYPE_PROTOS):
            return f"<{onnx.AttributeProto.AttributeType.Name(kind).lower()}>"
        value = helper.get_attribute_value(a)
        return _plain(value)

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
    dtype = onnx.TensorProto.DataType.Name(t.data_type).lower()
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
