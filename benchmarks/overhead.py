"""irc's cost per device call, beside onnxruntime called directly (issue 16: < 20 µs).

The same ONNX model runs through ``irc.backends.runtime.Session`` (feeds
checked once per signature, errors located only on failure) and through a
bare ``onnxruntime.InferenceSession``, taking turns, many calls each:

* ``tiny``: one Add of two [1, 8] floats (nothing but call overhead);
* ``lenet``: seed 002's LeNet5 inference on a batch of 32 images.

Both paths are timed for numpy in / numpy out (``run_numpy`` vs
``InferenceSession.run``) and for results left on the device (``run`` vs
an IOBinding).  "irc overhead" is the difference of the medians.

    python benchmarks/overhead.py [--calls 2000] [--repeat 7]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from irc.backends.runtime import Session, default_options  # noqa: E402
from peers import taking_turns  # noqa: E402


def tiny_model() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 8])
    graph = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"])], "tiny", [x, y], [z])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def lenet_model() -> onnx.ModelProto:
    """Seed 002's LeNet5 inference (batch 32), lowered by irc as benchmarks/infer.py does."""
    from infer import compile_lenet, load_samples
    lenet_sink, _ = load_samples()
    np.random.seed(0)
    _, bare = compile_lenet(lenet_sink)
    return bare


def random_feeds(model: onnx.ModelProto, rng, batch: int = 32) -> dict:
    """A value for every graph input (a symbolic dimension gets ``batch``)."""
    feeds = {}
    for vi in model.graph.input:
        t = vi.type.tensor_type
        shape = [d.dim_value or batch for d in t.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(t.elem_type)
        feeds[vi.name] = (rng.integers(0, 10, shape) if dtype.kind in "iu"
                          else rng.normal(size=shape)).astype(dtype)
    return feeds


def calls_of(fn, calls: int):
    """A runner making ``calls`` calls of ``fn``."""
    def run():
        for _ in range(calls):
            fn()
    return run


def compare(model: onnx.ModelProto, feeds: dict, calls: int, repeat: int) -> list[tuple]:
    irc_session = Session(model, device_target="CPU", threads=1)
    bare = ort.InferenceSession(model.SerializeToString(), default_options(1),
                                providers=["CPUExecutionProvider"])
    outputs = [o.name for o in bare.get_outputs()]

    def bare_bound():
        binding = bare.io_binding()
        for name, value in feeds.items():
            binding.bind_cpu_input(name, value)
        for name in outputs:
            binding.bind_output(name, "cpu")
        bare.run_with_iobinding(binding)
        return binding.get_outputs()

    pairs = {"numpy in/out": (lambda: irc_session.run_numpy(feeds),
                              lambda: bare.run(outputs, feeds)),
             "results on device": (lambda: irc_session.run(feeds), bare_bound)}
    rows = []
    for label, (irc_call, bare_call) in pairs.items():
        # the warm-up round checks irc's feed signature once
        times = taking_turns({"irc": calls_of(irc_call, calls), "bare": calls_of(bare_call, calls)},
                             repeat)
        irc_us, bare_us = (times[name] / calls * 1e6 for name in ("irc", "bare"))
        rows.append((label, irc_us, bare_us, irc_us - bare_us))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    cases = [("tiny", tiny_model(), {"x": rng.normal(size=(1, 8)).astype(np.float32),
                                     "y": rng.normal(size=(1, 8)).astype(np.float32)})]
    lenet = lenet_model()
    cases.append(("lenet b32", lenet, random_feeds(lenet, rng)))
    print(f"{'model':<10} {'path':<18} {'irc µs':>8} {'onnxruntime µs':>15} {'irc overhead µs':>16}")
    for name, model, feeds in cases:
        for label, irc_us, bare_us, extra in compare(model, feeds, args.calls, args.repeat):
            print(f"{name:<10} {label:<18} {irc_us:>8.1f} {bare_us:>15.1f} {extra:>16.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
