"""``mindspore.export(net, *inputs, file_name, file_format)``: the network
in inference mode, compiled as ``Model.predict`` compiles it, written as
ONNX (``file_name`` + ``.onnx``, whole or not at all), for the example
inputs' shapes, as MindSpore's is (``irc export`` writes a script's model
with a symbolic batch).  MindSpore's own formats (MINDIR, AIR) are refused
with a hint; under ``irc compile`` nothing is written."""
from __future__ import annotations

import numpy as np

from ..capture import Job, current
from ..common.tensor import Tensor
from ..diagnostics import UnsupportedError, UserTypeError, UserValueError, user_frame

__all__ = ["export"]


def export(net, *inputs, file_name, file_format="AIR", **kwargs) -> None:
    from ..nn.cell import Cell
    source = user_frame()
    if not isinstance(net, Cell):
        raise UserTypeError(f"export: net must be a network (nn.Cell), got {type(net).__name__}",
                            where=source)
    if not isinstance(file_name, str) or not file_name:
        raise UserValueError(f"export: file_name must be a non-empty str, got {file_name!r}",
                             where=source)
    if file_format != "ONNX":
        raise UnsupportedError(f"export: file_format={file_format!r} is MindSpore's own format",
                               where=source, hint="file_format='ONNX' (onnxruntime runs it)")
    if not inputs:
        raise UserValueError("export: give an example input (its shape and dtype)", where=source)
    examples = {}
    for name, x in zip(_input_names(net, len(inputs)), inputs):
        if not isinstance(x, (Tensor, np.ndarray)):
            raise UserTypeError(f"export: inputs must be Tensors, got {type(x).__name__}", where=source)
        examples[name] = x if isinstance(x, Tensor) else Tensor(x)
    cap = current()
    if cap is not None and not cap.executes:
        return      # irc compile: nothing is run or written
    from irc.backends.onnx_lowering import lower_graph

    from ..output import write_file_atomically
    from .evaluation import compiled
    from .model import Model
    module = compiled(Job("predict", Model(net), None, examples, source))
    graph = "network" if "network" in module.graphs else "device"
    path = file_name if file_name.endswith(".onnx") else file_name + ".onnx"
    write_file_atomically(path, lower_graph(module, graph, model_name=module.name).SerializeToString())


def _input_names(net, count: int) -> list[str]:
    """The model's input names: ``construct``'s parameters, as MindSpore's
    ONNX export names them (Wide&Deep's ``batch_ids``, ``batch_wts``); x0,
    x1 ... where they are not plain named parameters."""
    import inspect
    try:
        params = list(inspect.signature(net.construct).parameters.values())
    except (TypeError, ValueError):
        params = []
    named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    weights = {p.name for p in net.get_parameters()}
    if len(named) < count or weights & set(named[:count]):
        return [f"x{i}" for i in range(count)]
    return named[:count]
