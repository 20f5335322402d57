"""The compile's artifact: ``OUT/bundle/``, runnable without the user's script.

=====================  ==========================================================
``module.ir``          the final IR (the canonical form ``irc run`` reloads)
``<graph>.onnx``       each device graph, lowered (weights as initializers)
``pipeline.json``      each host pipeline as data: operators and parameters
``weights.safetensors`` the parameters, by name (``conv1.weight``)
``job.json``           what the script asked for (train/eval/predict and its
                       arguments), format version, irc version, file digests
=====================  ==========================================================

No pickle and no code: a pipeline with Python callables is written, but
marked as needing the script to run.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from irc.diagnostics import UserError
from irc.ir.graph import DEVICE, HOST, Module
from irc.ir.text import parse_module, print_module
from irc.ir.registry import lookup

FORMAT_VERSION = 1
JOB_FILE = "job.json"


def _jsonable(value: Any):
    """Job arguments as JSON: numbers, strings, lists; objects by name."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return {"object": type(value).__name__}


def pipeline_json(module: Module, graph) -> dict:
    nodes = []
    for node in graph.topo_order():
        nodes.append({
            "name": node.name, "op": node.op, "attrs": _jsonable(node.attrs),
            "inputs": [graph.value_name(v) for v in graph.operands(node)],
            "outputs": list(node.results), "types": [str(t) for t in node.out_types],
            "column": node.column, "source": str(node.loc) if node.loc else None,
        })
    python = sorted({n["attrs"][k] for n in nodes for k in lookup(n["op"]).object_attrs
                     if k in n["attrs"]})
    return {"graph": graph.name, "nodes": nodes, "python_objects": python}


def write_bundle(out, prefix: str, module: Module, job=None) -> list[str]:
    """Write the bundle under ``out`` (an OutputDir) at ``prefix + "bundle/"``."""
    from safetensors.numpy import save

    base = prefix + "bundle/"
    files: dict[str, bytes] = {}
    files["module.ir"] = print_module(module).encode()
    weights = {k: np.ascontiguousarray(v) for k, v in module.weights.items()}
    files["weights.safetensors"] = save(weights)
    onnx_files = []
    for graph in module.graphs.values():
        if graph.placement == DEVICE and graph.find("return") and not _is_nested(module, graph.name):
            for name, model in _device_models(module, graph):
                point_at_safetensors(model, files["weights.safetensors"], "weights.safetensors")
                files[name] = model.SerializeToString()
                onnx_files.append(name)
    pipelines = {g.name: pipeline_json(module, g) for g in module.graphs.values()
                 if g.placement == HOST}
    files["pipeline.json"] = (json.dumps(pipelines, indent=1) + "\n").encode()
    needs_script = sorted({o for p in pipelines.values() for o in p["python_objects"]})
    job_info = {
        "format_version": FORMAT_VERSION,
        "irc_version": module.meta.get("irc"),
        "source": module.meta.get("source"),
        "job": None if job is None else {"kind": job.kind, "arguments": _jsonable(job.kwargs),
                                         "source": job.source},
        "needs_script": bool(needs_script),
        "python_objects": needs_script,
        "onnx": onnx_files,
        "sha256": {name: hashlib.sha256(data).hexdigest() for name, data in files.items()},
    }
    for name, data in files.items():
        out.write_bytes(base + name, data, share=True)
    out.write_text(base + JOB_FILE, json.dumps(job_info, indent=1) + "\n")
    return [base + n for n in onnx_files]


def _device_models(module: Module, graph):
    """(file name, ONNX model) of a device graph: one model, or one per piece
    of a step that communicates between ranks (cut at its collectives)."""
    from .onnx_lowering import lower_graph
    from .staged import communicates, lower_pieces
    if not communicates(graph):
        return [(f"{graph.name}.onnx", lower_graph(module, graph.name))]
    pieces, _ = lower_pieces(module, graph.name)
    return [(f"{piece.graph.name}.onnx", piece.model) for piece in pieces]


def point_at_safetensors(model, blob: bytes, location: str) -> None:
    """Make the model's weight initializers ONNX external data that points
    into the bundle's safetensors file, so the weights are stored once.

    A safetensors file is an 8-byte little-endian header length, a JSON
    header with each tensor's byte range, then the raw little-endian data:
    exactly what ONNX external data (location, offset, length) describes."""
    from onnx import TensorProto
    n = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + n])
    start = 8 + n
    for tensor in model.graph.initializer:
        entry = header.get(tensor.name)
        if entry is None or tensor.data_type not in (TensorProto.FLOAT, TensorProto.INT64,
                                                     TensorProto.INT32, TensorProto.FLOAT16):
            continue
        begin, end = entry["data_offsets"]
        if end - begin != len(tensor.raw_data):
            continue   # not the same tensor (a lowering-made constant of that name)
        del tensor.external_data[:]
        for key, value in (("location", location), ("offset", str(start + begin)),
                           ("length", str(end - begin))):
            kv = tensor.external_data.add()
            kv.key, kv.value = key, value
        tensor.data_location = TensorProto.EXTERNAL
        tensor.ClearField("raw_data")


def _is_nested(module: Module, name: str) -> bool:
    """Graphs referenced from an attribute (loop bodies) are lowered inside their parent."""
    from irc.ir.graph import GraphRef
    for graph in module.graphs.values():
        for node in graph.nodes():
            if any(isinstance(v, GraphRef) and v.name == name for v in node.attrs.values()):
                return True
    return False


def load_bundle(path) -> tuple[Module, dict]:
    """The module (with weights) and job.json of a bundle; refuses damaged
    bundles and ones from a newer irc."""
    from safetensors.numpy import load
    path = Path(path)
    job_path = path / JOB_FILE
    if not job_path.is_file():
        raise UserError(f"{path} is not an irc bundle (no {JOB_FILE})",
                        hint="give the bundle folder irc compile wrote (OUT/bundle)")
    try:
        info = json.loads(job_path.read_text())
        version = int(info["format_version"])
        digests = dict(info["sha256"])
    except (ValueError, KeyError, TypeError) as e:
        raise UserError(f"{job_path} is damaged: {e}", hint="compile the script again") from None
    if version > FORMAT_VERSION:
        raise UserError(f"{path} was written by a newer irc ({info.get('irc_version')}, bundle "
                        f"format {version}; this irc reads format {FORMAT_VERSION})",
                        hint="upgrade irc, or compile the script with this one")
    for name, digest in digests.items():
        f = path / name
        if not f.is_file():
            raise UserError(f"{path} is damaged: {name} is missing", hint="compile the script again")
        if hashlib.sha256(f.read_bytes()).hexdigest() != digest:
            raise UserError(f"{path} is damaged: {name} does not match its digest in {JOB_FILE}",
                            hint="compile the script again")
    module = parse_module((path / "module.ir").read_text(), str(path / "module.ir"))
    module.weights = dict(load((path / "weights.safetensors").read_bytes()))
    return module, info
