"""Running lowered graphs with onnxruntime.

``Session(model)`` picks the execution provider from ``device_target``
(``irc.set_context(device_target=...)``): "GPU"/"Ascend" use CUDA when it
really works on this machine (the provider is listed AND its libraries load
and run a tiny model), otherwise the CPU, said once on stderr with the
reason.  Unset, the device_target is the machine's: CUDA where it works,
else the CPU, without a word (as MindSpore's default is the device its
package was built for).  Inputs are checked against the model's declared
types before ORT sees them, so a wrong feed is an error that names the input.

Data stays where ORT put it: ``Session.run`` binds inputs and outputs with
IOBinding; inputs given as :class:`DeviceArray` (``Session.upload``) are not
copied again, and results come back as DeviceArrays that copy to numpy only
when ``.numpy()`` is called.

Session options were chosen by measuring on the 2-core development machine
(``python benchmarks/infer.py --sweep``; batch 32, median ms, other jobs
sharing the machine at load average ~2, as a data pipeline would):

    graph optimisation   intra-op threads   LeNet5   ResNet-18 (32x32)
    ORT_ENABLE_ALL          1                0.53       20.1
    ORT_ENABLE_ALL          2, spinning      0.53       35.5
    ORT_ENABLE_ALL          2, no spinning   0.58       20.2
    ORT_ENABLE_EXTENDED     1                0.86       77.4
    ORT_ENABLE_BASIC        1                0.85       77.7
    ORT_DISABLE_ALL         1                0.85       78.2

ORT_ENABLE_ALL (its NCHWc convolution layouts) is 4x faster on ResNet; a
second intra-op thread buys nothing here once anything else (the host
pipeline) wants a core, and spin-waiting makes it much worse.  Training
steps agree (the ResNet-18 step of ``benchmarks/train.py --resnet``, 1 and
2 threads taking turns, load average ~2 from other jobs): 32x32 batch 32,
196 ms with 1 thread, 220 ms with 2; 224x224 batch 8, 1409 vs 1546 ms.
Defaults: ORT_ENABLE_ALL, half the cores for intra-op work (1 here), no
spin-waiting.

A training or evaluation step (``program_threads``) is another matter:
its convolutions and matrix products are large enough to share.  Measured
end to end (``irc run``, its pipeline running beside it, 2 cores, 1 vs 2
threads): the model zoo's PointNet step 1.8 s vs 1.05 s (MindSpore 2.10,
all cores: 1.05 s), samples/resnet50_train.py 6 steps 11.6-12.8 s vs
9.9-10.6 s, while LeNet's sunk training (samples/lenet_sink.py) took
15.0-15.5 s vs 16.3-16.7 s and its step alone the same either way (5.7 ms).
So a step of at least ``SHARED_STEP_MACS`` multiply-adds (its convolutions'
and matrix products', the batch counted once) gets every core this rank
has; a smaller one half of them.  ``set_context(runtime_num_threads=N)``
(MindSpore's setting) decides instead.
"""
from __future__ import annotations

import contextlib
import functools
import glob
import math
import os
import re
import sys
import tempfile
import time
import weakref
from typing import Mapping, Optional, Sequence, Union

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

from irc.diagnostics import UserError, UserRuntimeError, shorten, user_frame
from irc.ir.types import TensorType, from_numpy_dtype

from .onnx_emitter import LoweringOptions
from .reference import check_feed
from .settings import settings

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
# onnxruntime's default logger from the CUDA probe on: errors only.  Its
# warnings are kernels' notes, not the user's concern (under
# set_deterministic cuDNN's heuristic mode warns "running in Fallback mode.
# May be extremely slow" once per Conv: 160 lines for a ResNet-50); errors
# come as exceptions, which run_failure words
_ORT_DEFAULT_SEVERITY = 3


# -----------------------------------------------------------------------------
# choosing the provider

@functools.lru_cache(maxsize=1)
def cuda_status() -> tuple[bool, str]:
    """(works, reason): whether CUDA runs a model here, and why not."""
    if CUDA not in ort.get_available_providers():
        return False, "this onnxruntime build has no CUDA provider"
    missing = _provider_library_error()
    if missing:
        return False, missing
    return _probe_cuda_session()


def _provider_library_error() -> str:
    """Why ORT's CUDA provider library cannot load (a missing CUDA/cuDNN
    library, usually), or '' when it loads."""
    import ctypes
    lib = os.path.join(os.path.dirname(ort.__file__), "capi", "libonnxruntime_providers_cuda.so")
    if not os.path.exists(lib):
        return ""   # another layout (Windows, a custom build): let the probe decide
    try:
        ctypes.CDLL(lib)
    except OSError as e:
        return f"its library does not load: {e}"
    return ""


def _probe_cuda_session() -> tuple[bool, str]:
    """Run a one-node model on CUDA with ORT's logging silenced."""
    error = ""
    with _quiet_stderr() as captured:
        ort.set_default_logger_severity(4)
        try:
            options = ort.SessionOptions()
            options.log_severity_level = 4
            sess = ort.InferenceSession(_tiny_model().SerializeToString(), options,
                                        providers=[CUDA])
            works = sess.get_providers()[:1] == [CUDA]
            if works:
                sess.run(None, {"x": np.ones(2, np.float32)})
        except Exception as e:  # noqa: BLE001 -- any failure means "no CUDA"
            works, error = False, str(e)
        finally:
            ort.set_default_logger_severity(_ORT_DEFAULT_SEVERITY)
    if works:
        return True, "CUDA works"
    return False, _last_line(error or captured()) or "the CUDA provider did not start (no GPU?)"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _tiny_model() -> onnx.ModelProto:
    from .onnx_emitter import IR_VERSION, OPSET
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "probe", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = IR_VERSION
    return m


@contextlib.contextmanager
def _quiet_stderr():
    """Capture what native code writes to fd 2 (ORT's loader errors)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        text: list[str] = []
        try:
            yield lambda: "".join(text)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text.append(tmp.read().decode("utf-8", "replace"))


_warned: set[str] = set()


ACCELERATORS = ("GPU", "Ascend")   # the device targets irc runs on CUDA


def providers_for(device_target: Optional[str] = None) -> list[str]:
    """Execution providers for a MindSpore device_target (default: the
    context's).  Unset, CUDA where it works, else the CPU, silently; an
    accelerator the user asked for that cannot be had says so, once."""
    requested = settings.device_target if device_target is None else device_target
    if requested is not None and requested not in ACCELERATORS:
        return [CPU]
    works, reason = cuda_status()
    if works:
        return [CUDA, CPU]
    if requested is not None and reason not in _warned:
        _warned.add(reason)
        print(f"irc: device_target={requested}: CUDA is not usable, running on the CPU "
              f"({reason})", file=sys.stderr)
    return [CPU]


def cuda_provider_options() -> dict[str, str]:
    """onnxruntime's CUDA options: full fp32; deterministic cuDNN algorithms
    where asked (its fastest ones differ run to run)."""
    options = {"use_tf32": "0"}
    if settings.deterministic:
        options["cudnn_conv_algo_search"] = "DEFAULT"
    return options


def lowering_options(providers: Sequence[str]) -> LoweringOptions:
    """What a model run on ``providers`` is lowered for: their target, and
    the context's determinism."""
    target = target_of(providers)
    return LoweringOptions(target, deterministic=settings.deterministic,
                           winograd=target == "cpu" and settings.winograd)


def target_of(providers: Sequence[str]) -> str:
    """The lowering target ("cuda" or "cpu") of a session on these providers."""
    return "cuda" if providers and providers[0] == CUDA else "cpu"


def device_target_in_use(device_target: Optional[str] = None) -> str:
    """The device_target sessions run on (what ``get_context`` reports): the
    one asked for (default: the context's), "CPU" where an accelerator
    cannot be had, and unset, "GPU" or "CPU" by what this machine has."""
    requested = settings.device_target if device_target is None else device_target
    if requested is not None and requested not in ACCELERATORS:
        return requested
    if cuda_status()[0]:
        return requested or "GPU"
    return "CPU"


def default_options(threads: Optional[int] = None,
                    level: "ort.GraphOptimizationLevel" = ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
                    spinning: bool = False) -> ort.SessionOptions:
    """The measured defaults (see the module docstring); ``threads`` is the
    intra-op thread count (default: half the cores, at least 1)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.intra_op_num_threads = threads or max(1, (os.cpu_count() or 1) // 2)
    options.inter_op_num_threads = 1
    # errors are raised as exceptions (run_failure words them), not logged in red too
    options.log_severity_level = 4
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    options.use_deterministic_compute = settings.deterministic
    return options


# LeNet's training step is 7e6 (forward and backward, batch once), ResNet-18's
# at 32x32 1.1e8, PointNet's 4e9: the measured line falls between
SHARED_STEP_MACS = 2e7


def program_threads(module) -> int:
    """Intra-op threads for a training or evaluation program of ``module``
    (see the module docstring)."""
    if settings.runtime_num_threads:
        return settings.runtime_num_threads
    cores = max(1, (os.cpu_count() or 1) // ranks_on_this_machine())
    return cores if step_macs(module) >= SHARED_STEP_MACS else max(1, cores // 2)


def ranks_on_this_machine(environ=os.environ) -> int:
    """How many ranks share this machine's cores (irc starts all of a job's
    ranks on one machine: Open MPI's local size, torch's world size)."""
    for name in ("OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE", "WORLD_SIZE"):
        value = environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return 1


def step_macs(module) -> float:
    """Multiply-adds of the convolutions and matrix products in ``module``'s
    graphs, a symbolic dimension (the batch) counted as 1."""
    total = 0.0
    for graph in module.graphs.values():
        for node in graph.nodes():
            rule = _MACS.get(node.op)
            if rule is not None:
                shapes = [_sizes(graph.type_of(v)) for v in graph.operands(node)]
                total += rule(shapes, _sizes(node.out_types[0]), node.attrs)
    return total


def _sizes(t) -> list[int]:
    return [d if isinstance(d, int) and d > 0 else 1 for d in t.shape]


_MACS = {
    # out [N, Cout, ...] x weight [Cout, Cin/g, k...]: each output sums Cin/g * k... products
    "nn.Conv": lambda ins, out, attrs: math.prod(out) * math.prod(ins[1][1:]),
    # each input value is spread over weight [Cin, Cout/g, k...]'s Cout/g * k... outputs
    "nn.ConvTranspose": lambda ins, out, attrs: math.prod(ins[0]) * math.prod(ins[1][1:]),
    "nn.Gemm": lambda ins, out, attrs: math.prod(out) * ins[0][0 if attrs.get("transA") else -1],
    "nn.MatMul": lambda ins, out, attrs: math.prod(out) * ins[0][-1],
}


# -----------------------------------------------------------------------------
# profiling: mindspore.profiler.Profiler turns it on for the sessions made
# while it is active; onnxruntime writes each one's Chrome-trace events.

# sessions: (file prefix, start ns, weak ref) of this profile; made: every
# session profiled in this process (a prefix is never reused); calls: irc's
# calls into onnxruntime by calling function, timed here because cProfile on
# Python 3.12 and later loses every frame on the stack across such a call
_profiling: dict = {"directory": None, "sessions": [], "made": 0, "calls": None}


def start_profiling(directory: str) -> None:
    """Profile every session made from now on, into ``directory``."""
    os.makedirs(directory, exist_ok=True)
    _profiling.update(directory=directory, sessions=[], calls={})


def device_calls() -> dict:
    """(file, line, function) -> [calls, seconds] of irc's functions that
    called onnxruntime while profiling was on."""
    return dict(_profiling["calls"] or {})


def _timed_call(started: Optional[float], depth: int) -> None:
    """Count a call into onnxruntime that began at ``started`` (None: not
    profiling) against the function ``depth`` frames up."""
    if started is None:
        return
    code = sys._getframe(depth).f_code
    entry = _profiling["calls"].setdefault((code.co_filename, code.co_firstlineno, code.co_name), [0, 0.0])
    entry[0] += 1
    entry[1] += time.perf_counter() - started


def stop_profiling() -> list[tuple[str, int]]:
    """Stop profiling; (trace file, profiling start in ns since the epoch) of
    every session profiled.  A live session ends its profile now; one already
    gone wrote its file when onnxruntime destroyed it."""
    found = []
    for prefix, start_ns, ref in _profiling["sessions"]:
        session = ref()
        if session is not None:
            found.append((session.end_profiling(), start_ns))
        else:
            found += [(path, start_ns) for path in sorted(glob.glob(prefix + "_*.json"))]
    _profiling.update(directory=None, sessions=[], calls=None)
    return [(path, start) for path, start in found if path and os.path.exists(path)]


# onnxruntime's graph optimizations that irc's graphs cannot have:
# ConstantSharing makes equal constants one tensor, and its common-
# subexpression pass then merges the nodes that read them; a training-mode
# BatchNormalization writes its batch moments into its running-stat inputs,
# so two calls of one layer (fresh zeros from the same parameters and equal
# constants) would share one buffer the later call overwrites.
UNSAFE_OPTIMIZERS = ["ConstantSharing"]


def inference_session(model: bytes, options: ort.SessionOptions,
                      providers: Sequence[str]) -> ort.InferenceSession:
    """An onnxruntime session (every one irc makes comes from here), profiled
    while profiling is on."""
    directory = _profiling["directory"]
    if directory is not None:
        prefix = os.path.join(directory, f"session{_profiling['made']}")
        _profiling["made"] += 1
        options.enable_profiling = True
        options.profile_file_prefix = prefix
    session = ort.InferenceSession(model, options, providers=[
        (p, cuda_provider_options()) if p == CUDA else p for p in providers],
        disabled_optimizers=UNSAFE_OPTIMIZERS)
    if directory is not None:
        start_ns = session.get_profiling_start_time_ns() or time.time_ns()
        _profiling["sessions"].append((prefix, start_ns, weakref.ref(session)))
    return session


# -----------------------------------------------------------------------------
# onnxruntime's failures, in the user's terms: the node that failed, the IR
# op and the user's line it was lowered from (the irc.* metadata of
# onnx_lowering), and what the likely cause is

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_FAILED_NODE = re.compile(r"running (\w+) node\. Name:'([^']*)'")
# ORT's C++ source location and function before its message ("/ort/x.cc:150 void f(...) [with ...] ")
_CXX_PREFIX = re.compile(r"^\S+\.(?:cc|cpp|h):\d+ .*?\)(?: \[with [^\]]*\])? ")
_CAUSES = (
    (re.compile(r"out of range|out of bounds|indices element|index .* is out", re.IGNORECASE),
     ("an index is outside its range; for a classification loss, a label outside "
      "[0, number of classes): check the dataset's labels against the size of the "
      "network's last layer")),
    (re.compile(r"shape|dimension|broadcast", re.IGNORECASE),
     ("a tensor's shape differs from the one the graph was compiled for (the data's "
      "shape, or a reshape that fixes the batch size)")),
)


def node_origins(model: onnx.ModelProto) -> dict[str, dict[str, str]]:
    """ONNX node name -> its irc.* metadata, for every node (subgraphs too)."""
    origins: dict[str, dict[str, str]] = {}
    graphs = [model.graph]
    while graphs:
        graph = graphs.pop()
        for node in graph.node:
            origins[node.name] = {p.key: p.value for p in node.metadata_props}
            for a in node.attribute:
                graphs += [a.g] if a.HasField("g") else list(a.graphs)
    return origins


def run_failure(exc: BaseException, origins: Mapping[str, Mapping[str, str]]) -> UserRuntimeError:
    """The error for a failed onnxruntime run: located at the user's line of
    the IR op whose lowering failed, ORT's message without its colours and
    C++ source location, and a hint at the likely cause.  A RuntimeError,
    as MindSpore's engine raises."""
    text = _ANSI.sub("", str(exc)).strip()
    failed = _FAILED_NODE.findall(text)    # a Loop's, then its body's node: the last is the cause
    reason = text.rsplit("Status Message:", 1)[-1].strip() if failed else text
    reason = _CXX_PREFIX.sub("", reason).strip()
    if not failed:
        return located_failure("onnxruntime failed", reason, {})
    op_type, name = failed[-1]
    return located_failure(f"onnxruntime failed in {op_type} node {name!r}", reason,
                           origins.get(name, {}))


def located_failure(what: str, reason: str, origin: Mapping[str, str]) -> UserRuntimeError:
    """A failure of the IR op ``origin`` names (its ``irc.*`` metadata): at
    the user's line of that op, with a hint at the likely cause."""
    where = origin.get("irc.source") or user_frame()
    if origin.get("irc.node"):
        scope = f" (Cell {origin['irc.scope']})" if origin.get("irc.scope") else ""
        what += f", lowered from %{origin['irc.node']} = {origin.get('irc.op', '?')}{scope}"
    hint = next((h for pattern, h in _CAUSES if pattern.search(reason)),
                "run with --traceback to see where irc called onnxruntime")
    return UserRuntimeError(f"{what}: {shorten(reason, 600)}", where=where, hint=hint)


def run_with_iobinding(session: ort.InferenceSession, binding, origins,
                       options: ort.RunOptions | None = None) -> None:
    """``session.run_with_iobinding``, a failure raised as :func:`run_failure`
    (``origins``: :func:`node_origins` of the session's model)."""
    started = time.perf_counter() if _profiling["calls"] is not None else None
    try:
        session.run_with_iobinding(binding, options)
    except Exception as e:  # onnxruntime's pybind errors share no base but Exception
        raise run_failure(e, origins) from e
    _timed_call(started, 2)


# -----------------------------------------------------------------------------
# device arrays

class DeviceArray:
    """An ORT value kept where ORT holds it; ``numpy()`` copies it out."""

    def __init__(self, value: ort.OrtValue):
        self.value = value

    @property
    def shape(self) -> tuple:
        return tuple(self.value.shape())

    @property
    def device(self) -> str:
        return self.value.device_name()

    def numpy(self) -> np.ndarray:
        return self.value.numpy()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self) -> str:
        return f"DeviceArray(shape={list(self.shape)}, device={self.device})"


Feed = Union[np.ndarray, DeviceArray]


# -----------------------------------------------------------------------------
# sessions

def _input_type(vi: onnx.ValueInfoProto) -> TensorType:
    t = vi.type.tensor_type
    dtype = from_numpy_dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
    dims = []
    for i, d in enumerate(t.shape.dim):
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        else:
            dims.append(d.dim_param or "?")
    return TensorType(dtype, dims)


class Session:
    """An onnxruntime session over one lowered graph.

    ``model``: an ``onnx.ModelProto`` (or its bytes).  ``device_target``:
    "GPU"/"Ascend"/"CPU" (default: the context's, ``settings.device_target``;
    unset, the machine's).
    ``providers`` overrides the choice.  ``threads``: intra-op threads
    (default: half the cores); ``options`` replaces the session options.
    """

    def __init__(self, model, *, device_target: Optional[str] = None,
                 providers: Optional[Sequence[str]] = None, threads: Optional[int] = None,
                 options: Optional[ort.SessionOptions] = None):
        if isinstance(model, onnx.ModelProto):
            self.model = model
            data = model.SerializeToString()
        else:
            data = bytes(model)
            self.model = onnx.load_from_string(data)
        self.providers = list(providers or providers_for(device_target))
        self.session = inference_session(data, options or default_options(threads),
                                         self.providers)
        self.device = "cuda" if self.session.get_providers()[0] == CUDA else "cpu"
        init_names = {i.name for i in self.model.graph.initializer}
        self.input_types = {vi.name: _input_type(vi) for vi in self.model.graph.input
                            if vi.name not in init_names}
        self.output_names = [o.name for o in self.model.graph.output]
        self.origins = node_origins(self.model)
        self._checked: set = set()      # feed signatures that passed check()

    @property
    def input_names(self) -> list[str]:
        return list(self.input_types)

    def upload(self, array: np.ndarray) -> DeviceArray:
        """Copy an array to the session's device once, to feed it many times."""
        array = np.ascontiguousarray(array)
        return DeviceArray(ort.OrtValue.ortvalue_from_numpy(array, self.device, 0))

    def check(self, feeds: Mapping[str, Feed]) -> None:
        """Raise a UserError naming the input whose dtype or shape is wrong.
        A signature (dtypes and shapes) that passed once is not checked
        again, and the user's line is looked up only for the message."""
        key = _signature(feeds)
        if key is not None and key in self._checked:
            return
        try:
            self._check(feeds)
        except UserError as e:
            if e.where is None:
                e.where = user_frame()
            raise
        if key is not None:
            self._checked.add(key)

    def _check(self, feeds: Mapping[str, Feed]) -> None:
        missing = [n for n in self.input_types if n not in feeds]
        if missing:
            raise UserError(f"no value given for input {missing[0]!r}",
                            hint=f"the model's inputs are: {', '.join(self.input_types)}")
        extra = [n for n in feeds if n not in self.input_types]
        if extra:
            raise UserError(f"the model has no input {extra[0]!r}",
                            hint=f"the model's inputs are: {', '.join(self.input_types)}")
        bound: dict = {}
        for name, want in self.input_types.items():
            check_feed(name, _probe(feeds[name]), want, bound)

    def run(self, feeds: Mapping[str, Feed], *, check: bool = True) -> list[DeviceArray]:
        """Run once; the results stay on the device (``.numpy()`` to read)."""
        if check:
            self.check(feeds)
        binding = self.session.io_binding()
        for name in self.input_types:
            value = feeds[name]
            if isinstance(value, DeviceArray):
                binding.bind_ortvalue_input(name, value.value)
            else:
                binding.bind_cpu_input(name, np.ascontiguousarray(value))
        for name in self.output_names:
            binding.bind_output(name, self.device)
        run_with_iobinding(self.session, binding, self.origins)
        return [DeviceArray(v) for v in binding.get_outputs()]

    def run_numpy(self, feeds: Mapping[str, Feed], *, check: bool = True) -> list[np.ndarray]:
        if check:
            self.check(feeds)
        if self.device == "cpu" and not any(isinstance(v, DeviceArray) for v in feeds.values()):
            # numpy in, numpy out: onnxruntime's own run is the shortest path
            started = time.perf_counter() if _profiling["calls"] is not None else None
            try:
                outs = self.session.run(self.output_names, dict(feeds))
            except Exception as e:  # noqa: BLE001 -- onnxruntime's errors share no base
                raise run_failure(e, self.origins) from e
            _timed_call(started, 1)
            return outs
        return [o.numpy() for o in self.run(feeds, check=False)]


def _signature(feeds: Mapping[str, Feed]):
    """The feeds' names, dtypes and shapes, when cheap to read (arrays)."""
    key = []
    for name, value in feeds.items():
        if isinstance(value, np.ndarray):
            key.append((name, value.dtype, value.shape))
        elif isinstance(value, DeviceArray):
            key.append((name, value.value.element_type(), value.shape))
        else:
            return None
    return tuple(key)


class _Shape:
    """dtype/shape of a DeviceArray, enough for check_feed."""

    def __init__(self, dtype, shape):
        self.dtype, self.shape, self.ndim = np.dtype(dtype), tuple(shape), len(shape)


def _probe(value: Feed):
    if isinstance(value, DeviceArray):
        return _Shape(helper.tensor_dtype_to_np_dtype(value.value.element_type()), value.shape)
    return np.asarray(value)
