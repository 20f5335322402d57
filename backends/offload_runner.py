"""Iterating a pipeline whose tail was offloaded (seed 000: MindSpore applies
offloaded ops in its iterator).

The host engine runs ``@host`` and forms batches; every batch then goes
through ``@offload`` on onnxruntime.  A random offloaded op gets the same
per-sample draws it would have had on the host: draws are a function of
(seed, op name, epoch, the sample's position in the op's input stream), and
the engine carries each sample's position through shuffle and batch, so
offload on and off yield the same data.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from irc.dialects import draws as draws_mod
from irc.dialects.core import DRAWS
from irc.ir.graph import Module
from irc.passes.pipeline_columns import skip_pipeline_ops

from .host_engine import DONE, EPOCH_END, Engine, HostEngine, mindspore_stream
from .host_stream import col_row, pos_key
from .onnx_lowering import lower_graph
from .runtime import CUDA, Session, lowering_options, providers_for
from .settings import settings


@dataclass
class OffloadedMap:
    """The operators of one ``map()`` that run on the device, as MindSpore's
    ``iterator.offload_model.transform_list`` lists them."""
    column: str
    col_idxs: list[int]     # the column's index among the host pipeline's outputs
    me_ops: list[str]       # the operators (IR op names), in order


def offloaded_maps(module: Module, offload: str, names: list[str]) -> list[OffloadedMap]:
    """The maps of graph ``offload``, in pipeline order (``names``: the
    columns the host pipeline returns)."""
    groups: dict[tuple, list[str]] = {}
    for node in module.graph(offload).topo_order():
        if node.op in ("input", "return"):
            continue
        groups.setdefault((node.attrs.get("map", -1), node.column), []).append(node.op)
    return [OffloadedMap(column, [names.index(column)], ops)
            for (_, column), ops in sorted(groups.items(), key=lambda kv: kv[0][0])]


def tail_stays_on_host(device_target: Optional[str] = None) -> bool:
    """Whether an offloaded tail runs on the host's kernels: with no
    accelerator to offload to, unless settings.offload_tail_on_cpu asks for
    onnxruntime on the CPU."""
    return CUDA not in providers_for(device_target) and not settings.offload_tail_on_cpu


class TailOnHostEngine(HostEngine):
    """A pipeline with an offloaded tail, run where there is no accelerator:
    all of it on the host (``on_host``: compiled without tail extraction),
    its iterator still listing the maps ``offloaded`` (the module whose tail
    was extracted into ``@offload``) moved, as MindSpore's does."""

    def __init__(self, on_host: Module, offloaded: Module):
        super().__init__(on_host, "host")
        self.maps = offloaded_maps(offloaded, "offload", self.names)


class OffloadEngine(Engine):
    """Same interface as :class:`HostEngine` (run, rows, first_row, size)."""

    def __init__(self, module: Module, host: str = "host", offload: str = "offload",
                 device_target: Optional[str] = None):
        self.module = module
        self.host = HostEngine(module, host, keep_positions=True)
        self.names = self.host.names
        self.maps = offloaded_maps(module, offload, self.names)
        graph = module.graph(offload)
        providers = providers_for(device_target)
        self.session = Session(lower_graph(module, offload, options=lowering_options(providers)),
                               providers=providers)
        ret = graph.find("return")[0]
        self.out_names = list(ret.attrs.get("names") or [])
        host_graph = module.graph(host)
        host_ret = host_graph.find("return")[0]
        returned = host_graph.operands(host_ret)
        self.inputs = []   # (onnx name, column index) or (onnx name, (op, stream, k, MindSpore's))
        for node in sorted((n for n in graph.nodes() if n.op == "input"),
                           key=lambda n: n.attrs["index"]):
            name = node.results[0]
            op = node.attrs["draws_for"]
            if node.attrs["role"] != DRAWS:
                self.inputs.append((name, self.names.index(node.column)))
            else:
                column = self.names.index(node.column)
                stream = self.host.plan.stream_of(skip_pipeline_ops(host_graph, returned[column]))
                ms = mindspore_stream(module, host_graph, op, stream.name)
                self.inputs.append((name, (op, pos_key(stream.name), node.out_types[0].shape[-1], ms)))

    def run(self, num_epochs: int = 1, *, seed: Optional[int] = None, prefetch=None):
        seed = settings.seed if seed is None else seed
        return OffloadRun(self, self.host.run(num_epochs, seed=seed, prefetch=prefetch), seed)

    def size(self):
        return self.host.size()


class OffloadRun:
    def __init__(self, engine: OffloadEngine, host_run, seed: int):
        self.engine, self.host_run, self.seed = engine, host_run, seed
        self.epoch = 0
        self._chunk = None
        self._i = 0

    def _device_step(self, chunk, i: int) -> dict:
        eng = self.engine
        feeds = {}
        for name, source in eng.inputs:
            if isinstance(source, int):
                feeds[name] = np.ascontiguousarray(col_row(chunk.cols[source], i))
            else:
                op, pos, k, ms = source
                positions = col_row(chunk.extra[pos], i)
                feeds[name] = draws_mod.draws(self.seed, op, self.epoch, positions, k, ms).astype(np.float32)
        outs = eng.session.run_numpy(feeds)
        row = {name: col_row(c, i) for name, c in zip(eng.names, chunk.cols)}
        row.update(zip(eng.out_names, outs))
        return row

    def next_row(self) -> dict:
        while self._chunk is None or self._i >= self._chunk.n:
            item = self.host_run.next_chunk()
            if item is EPOCH_END:
                self.epoch += 1
                self._chunk = None
                raise StopIteration
            if item is DONE:
                self._chunk = None
                raise StopIteration
            self._chunk, self._i = item, 0
        row = self._device_step(self._chunk, self._i)
        self._i += 1
        return row

    def close(self) -> None:
        self.host_run.close()
