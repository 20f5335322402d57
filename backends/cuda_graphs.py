"""Training calls replayed as CUDA graphs.

A training step (or an unrolled sink: ``loop-sink`` with ``unroll = S``
leaves no ``Loop``, which graph capture refuses) launches hundreds of small
kernels; onnxruntime's CUDA provider can record them once and replay the
recording (``enable_cuda_graph``), so a call costs one launch.  Measured on
an H100, LeNet5 batch 32: 2.0 ms a step with one launch per kernel, 0.34 ms
replayed.

A replay reads and writes the addresses it was recorded with, so every
input and output is bound once to a buffer of its own, and each call copies
its feeds into the input buffers.  The parameters cannot be updated in place
(a step still reads a weight after writing its update), so they live in two
sets of buffers: graph 1 reads set A and writes set B, graph 2 reads B and
writes A, and calls alternate between them (``gpu_graph_id``).

onnxruntime refuses to record a model with any node on the CPU, and a
kernel that waits for the device fails its recording (the first call of
each graph); either way the caller runs the session the ordinary way.  A
model with an output made of constants alone is not recorded at all
(``outputs_read_inputs``).
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx
from onnx import helper
import onnxruntime as ort

from irc.diagnostics import UserRuntimeError

from .runtime import CUDA, cuda_provider_options, inference_session, run_with_iobinding


def graph_session(model: onnx.ModelProto, options: ort.SessionOptions,
                  providers) -> Optional[ort.InferenceSession]:
    """A session that records CUDA graphs, or None where onnxruntime cannot
    (a node placed on the CPU)."""
    if not outputs_read_inputs(model):
        return None
    cuda = [(CUDA, {**cuda_provider_options(), "enable_cuda_graph": "1"})]
    try:
        return inference_session(model.SerializeToString(), options, cuda + list(providers[1:]))
    except Exception:   # noqa: BLE001 -- "not all nodes partitioned to CUDA": run it plainly
        return None


def outputs_read_inputs(model: onnx.ModelProto) -> bool:
    """Whether every output depends on an input.  onnxruntime folds an output
    made of constants alone (the gradient of a plain sum: a call then its
    gradient, in one jitted function) into an initializer and copies it into
    the output buffer at each run: a synchronous copy, which a recording
    refuses, and the failed recording leaves the stream capturing, so no
    CUDA call of the process works after it (measured on an H100)."""
    live = {i.name for i in model.graph.input}
    for node in model.graph.node:                  # in topological order
        if any(name in live for name in node.input):
            live.update(node.output)
    return all(o.name in live for o in model.graph.output)


class CaptureFailed(Exception):
    """A call could not be recorded; the session must run the ordinary way."""


class CudaGraphCalls:
    """Calls of one training session as alternating CUDA graph replays (the
    interface of ``Program.run`` for one input signature)."""

    def __init__(self, session: ort.InferenceSession, program, origins, device: str = "cuda"):
        self.session = session
        self.program = program
        self.origins = origins   # runtime.node_origins of the session's model: failures located
        self.device = device     # "cpu" in the tests of this bookkeeping (a CPU session ignores graph ids)
        self.output_names = [o.name for o in session.get_outputs()]
        self.inputs: dict[str, ort.OrtValue] = {}
        self.sets: list[dict[str, ort.OrtValue]] = []
        self.outputs: list[dict[str, ort.OrtValue]] = []
        self.bindings: list = []
        self.run_options: list[ort.RunOptions] = []
        self.current = 0                         # the set holding the parameters now
        self.recorded = [False, False]           # graph k recorded (its first call ran)

    def _bind(self, feeds: dict, state) -> None:
        """Buffers and bindings, from the first call's feeds and parameters."""
        prog = self.program
        for name, value in feeds.items():
            self.inputs[name] = ort.OrtValue.ortvalue_from_numpy(np.array(_host(value)), self.device, 0)
        # a parameter no call updates (an eval program's weights) has one buffer in both sets
        updated = set(prog.updates.values())
        first = {s.name: self._buffer(state.values[s.name]) for s in prog.params}
        self.sets = [first, {name: self._buffer(value) if name in updated else value
                             for name, value in first.items()}]
        for _ in range(2):
            self.outputs.append({
                o.name: ort.OrtValue.ortvalue_from_shape_and_type(
                    o.shape, _numpy_type(o.type), self.device, 0)
                for i, o in enumerate(self.session.get_outputs()) if i not in prog.updates})
        for k in range(2):
            b = self.session.io_binding()
            for name, value in self.inputs.items():
                b.bind_ortvalue_input(name, value)
            for s in prog.params:
                b.bind_ortvalue_input(s.name, self.sets[k][s.name])
            for i, name in enumerate(self.output_names):
                if i in prog.updates:
                    b.bind_ortvalue_output(name, self.sets[1 - k][prog.updates[i]])
                else:
                    b.bind_ortvalue_output(name, self.outputs[k][name])
            self.bindings.append(b)
            options = ort.RunOptions()
            options.log_severity_level = 4
            options.add_run_config_entry("gpu_graph_id", str(k + 1))
            self.run_options.append(options)
        for s in prog.params:
            state.values[s.name] = self.sets[0][s.name]

    def _buffer(self, value: ort.OrtValue) -> ort.OrtValue:
        """A buffer of its own holding ``value`` (``numpy()`` of a CPU value
        is a view of it, which a buffer made from it would share)."""
        return ort.OrtValue.ortvalue_from_numpy(np.array(value.numpy()), self.device, 0)

    def run(self, feeds: dict, state) -> dict:
        if not self.bindings:
            try:
                self._bind(feeds, state)
            except Exception as e:   # noqa: BLE001 -- an output of no static size or known type
                raise CaptureFailed(str(e)) from e
        else:
            for name, value in feeds.items():
                self.inputs[name].update_inplace(_host(value))
        k = self.current
        for s in self.program.params:   # parameters loaded since (a checkpoint): into the set
            if state.values[s.name] is not self.sets[k][s.name]:
                self.sets[k][s.name].update_inplace(state.values[s.name].numpy())
        try:
            run_with_iobinding(self.session, self.bindings[k], self.origins, self.run_options[k])
        except UserRuntimeError as e:
            if self.recorded[k]:
                raise
            # a kernel that cannot be recorded (one that waits for the device):
            # nothing was written to the parameters this call reads
            raise CaptureFailed(str(e)) from e
        self.recorded[k] = True
        self.current = 1 - k
        prog = self.program
        results = {}
        for i, name in enumerate(self.output_names):
            if i in prog.updates:
                state.values[prog.updates[i]] = self.sets[1 - k][prog.updates[i]]
            else:
                results[prog.result_names[i]] = self.outputs[k][name].numpy()
        return results


def _host(value) -> np.ndarray:
    if isinstance(value, ort.OrtValue):
        return value.numpy()
    return np.require(value, requirements="C")


def _numpy_type(ort_type: str):
    """numpy's dtype of an onnxruntime type string ("tensor(float)"), by
    onnx's own table (every element type, not a hand-picked few)."""
    return helper.tensor_dtype_to_np_dtype(onnx.TensorProto.DataType.Value(ort_type[len("tensor("):-1].upper()))
