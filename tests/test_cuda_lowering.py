"""Lowering for CUDA, checked on any machine (ONNX means the same on the CPU),
and CUDA graph replay, checked where CUDA works."""
import numpy as np
import onnxruntime as ort
import pytest

import irc
from irc import nn
from irc.backends import runtime
from irc.backends.onnx_emitter import FOLD_LIMIT, Emitter, LoweringOptions
from irc.backends.onnx_lowering import lower_graph
from irc.backends.trainer import DeviceState, Program
from irc.capture import Job
from irc.compiler import compile_job
from irc.dataset import NumpySlicesDataset

SHAPE_OPS = {"Shape", "Size", "ConstantOfShape", "Range", "Compress", "Gather"}


class ConvBN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, pad_mode="same")     # asymmetric pads
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Dense(4 * 4 * 4, 3)
        self.flatten = nn.Flatten()

    def construct(self, x):
        return self.fc(self.flatten(nn.ReLU()(self.bn(self.conv(x)))))


def _training_module(batch=4, net=None, data=None):
    """A compiled one-step training job (ConvBN on 8x8 images by default)."""
    if data is None:
        rng = np.random.default_rng(0)
        data = NumpySlicesDataset({"image": rng.normal(size=(3 * batch, 3, 8, 8)).astype(np.float32),
                                   "label": rng.integers(0, 3, 3 * batch).astype(np.int32)},
                                  shuffle=False).batch(batch)
    np.random.seed(0)
    net = net or ConvBN()
    model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      nn.Momentum(net.trainable_params(), 0.01, 0.9))
    job = Job("train", model, data, {"epoch": 1, "callbacks": [], "dataset_sink_mode": False,
                                     "steps_per_epoch": 2}, None)
    module, _ = compile_job(job)
    return module, data


def _feeds(steps, batch=4):
    rng = np.random.default_rng(1)
    return [{"image": rng.normal(size=(batch, 3, 8, 8)).astype(np.float32),
             "label": rng.integers(0, 3, batch).astype(np.int32),
             "learning_rate": np.array(0.01, np.float32)} for _ in range(steps)]


def _ops(model):
    return [n.op_type for n in model.graph.node]


def test_a_batch_bound_to_a_number_leaves_no_shape_arithmetic():
    """IR with a symbolic batch N in; ONNX out: bound to 4, BatchNorm's counts
    and the loss's mean are constants (no node onnxruntime's CUDA provider
    would run on the CPU); left symbolic, they stay nodes (an export runs at
    any batch)."""
    module, _ = _training_module()
    symbolic = lower_graph(module, "device", params_as_inputs=True, options=LoweringOptions("cuda"))
    bound = lower_graph(module, "device", params_as_inputs=True, options=LoweringOptions("cuda", {"N": 4}))
    assert {"Shape", "Size"} <= set(_ops(symbolic))
    assert not SHAPE_OPS & set(_ops(bound)), sorted(SHAPE_OPS & set(_ops(bound)))
    assert "Col2Im" not in _ops(bound)
    dims = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim]
            for i in bound.graph.input}
    assert dims["image"] == [4, 3, 8, 8]


def test_a_folded_constant_does_not_follow_later_writes_to_its_operands():
    """Folds are cached across emitters by their operands' bytes: a caller
    reusing an array it made a constant of changes neither that constant
    nor another model's fold."""
    shape = np.array([2, 3], np.int64)
    first = Emitter()
    folded = first.op("Reshape", [first.const(shape), first.const(np.array([-1, 1], np.int64))])
    shape[0] = 99
    assert first.constants[folded].ravel().tolist() == [2, 3]
    second = Emitter()
    again = second.op("Reshape", [second.const(np.array([2, 3], np.int64)),
                                  second.const(np.array([-1, 1], np.int64))])
    assert second.constants[again].ravel().tolist() == [2, 3]


def test_the_static_shape_of_a_reshape_keeps_zeros_with_allowzero():
    """Reshape's 0 copies the input's dimension, unless allowzero says it is a 0."""
    emit = Emitter()
    emit.static["x"] = ((2, 0, 3), np.dtype(np.float32))
    for allowzero, want in ((0, [2, 0, 3]), (1, [0, 0, 0])):
        y = emit.op("Reshape", ["x", emit.const(np.zeros(3, np.int64))], allowzero=allowzero)
        assert emit.constants[emit.op("Shape", [y])].tolist() == want


def test_a_large_range_is_left_to_run():
    """Shape arithmetic whose result would outgrow FOLD_LIMIT stays a node."""
    emit = Emitter()
    big = emit.op("Range", [emit.const(np.int64(0)), emit.const(np.int64(FOLD_LIMIT + 1)),
                            emit.const(np.int64(1))])
    assert big not in emit.constants and emit.nodes[-1].op_type == "Range"


def test_the_cuda_lowering_trains_as_the_cpu_one():
    """The CUDA-target model, run here on the CPU, gives the CPU model's
    losses and weights step by step."""
    module, _ = _training_module()
    feeds = _feeds(3)
    results = []
    for model in (lower_graph(module, "device", params_as_inputs=True),
                  lower_graph(module, "device", params_as_inputs=True, options=LoweringOptions("cuda", {"N": 4}))):
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        prog = Program(module, "device", device_target="CPU")
        state = {s.name: s.initial(module.weights) for s in prog.params}
        losses = []
        for f in feeds:
            outs = sess.run(None, {**f, **state})
            for i, name in prog.updates.items():
                state[name] = outs[i]
            losses.append(float(np.asarray(outs[prog.loss_index]).mean()))
        results.append((losses, state))
    (cpu_losses, cpu_state), (cuda_losses, cuda_state) = results
    np.testing.assert_allclose(cuda_losses, cpu_losses, rtol=1e-5)
    for name in cpu_state:
        np.testing.assert_allclose(cuda_state[name], cpu_state[name], rtol=1e-4, atol=1e-6)


@pytest.mark.skipif(not runtime.cuda_status()[0], reason="needs CUDA (onnxruntime-gpu with a GPU)")
def test_cuda_graph_replay_trains_as_plain_calls():
    """On a GPU: calls replayed as CUDA graphs (parameters alternating
    between two buffer sets) give the plain calls' losses and weights, and
    a checkpoint loaded between calls is read by the next replay."""
    module, _ = _training_module()
    feeds = _feeds(5)
    runs = []
    for graphs in (False, True):
        prog = Program(module, "device", cuda_graphs=graphs)
        state = DeviceState(prog, module.weights)
        losses = [float(np.mean(prog.run(f, state)[prog.result_names[prog.loss_index]]))
                  for f in feeds[:3]]
        saved = state.numpy()
        losses += [float(np.mean(prog.run(f, state)[prog.result_names[prog.loss_index]]))
                   for f in feeds[3:]]
        state.load(saved)                     # back to step 3, as a resume would
        again = float(np.mean(prog.run(feeds[3], state)[prog.result_names[prog.loss_index]]))
        runs.append((losses, again, state.numpy()))
    (plain, plain_again, plain_w), (graphed, graphed_again, graphed_w) = runs
    np.testing.assert_allclose(graphed, plain, rtol=1e-5)
    assert graphed_again == pytest.approx(graphed[3], rel=1e-6)
    for name in plain_w:
        np.testing.assert_allclose(graphed_w[name], plain_w[name], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("sink", [False, True])
def test_labels_outside_the_classes_are_caught_before_a_cuda_call(sink):
    """onnxruntime's CUDA kernels do not check indices: the labels a sparse
    loss reads are checked on the host, and a bad one is the same located
    error the CPU run gives (checked here by giving a CPU program the CUDA
    program's checks)."""
    from irc.backends.label_checks import label_bounds
    from irc.backends.trainer import stack_sink
    from irc.diagnostics import UserRuntimeError
    data = NumpySlicesDataset({"x": np.ones((8, 4), np.float32), "y": np.full(8, 2, np.int32)},
                              shuffle=False).batch(4)
    net = nn.Dense(4, 5)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    line = __import__("inspect").currentframe().f_lineno - 1
    model = irc.Model(net, loss, nn.Momentum(net.trainable_params(), 0.01, 0.9))
    options = {"epoch": 1, "callbacks": [], "dataset_sink_mode": sink, "steps_per_epoch": 2}
    if sink:
        options.update(sink_size=2, steps_per_sink=2)
    module, _ = compile_job(Job("train", model, data, options, None))
    prog = Program(module, "device", device_target="CPU")
    prog.label_checks = label_bounds(module, prog.graph)
    assert [(name, classes) for name, classes, _ in prog.label_checks] == [("y", 5)]
    state = DeviceState(prog, module.weights)
    steps = [{"x": np.ones((4, 4), np.float32), "y": np.array([0, 4, 7, 1], np.int32)}] * 2
    with pytest.raises(UserRuntimeError) as info:     # a sink's queue is checked as it is stacked
        feeds = stack_sink(prog, steps, np.full(2, 0.01)) if sink else \
            {**steps[0], "learning_rate": np.array(0.01, np.float32)}
        prog.run(feeds, state)
    text = info.value.format()
    assert info.value.where.endswith(f"test_cuda_lowering.py:{line}"), text
    assert "lowered from %loss = train.SoftmaxCrossEntropyWithLogits" in text
    assert "Out of range label 7" in text and "label outside [0, number of classes)" in text


class ShiftedLabels(nn.Cell):
    """A network fed labels 1..5 that shifts them itself."""
    def __init__(self):
        super().__init__()
        self.net = nn.Dense(4, 5)
        self.loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def construct(self, x, y):
        return self.loss(self.net(x), y - 1)


def test_labels_the_network_computes_are_not_checked_as_fed():
    """Only labels that reach the loss unchanged (a cast, a queue's slice)
    are checked: the column of a network that shifts its labels may hold 5
    for 5 classes."""
    from irc.backends.label_checks import label_bounds
    data = NumpySlicesDataset({"x": np.ones((8, 4), np.float32), "y": np.full(8, 5, np.int32)},
                              shuffle=False).batch(4)
    net = ShiftedLabels()
    model = irc.Model(net, optimizer=nn.Momentum(net.trainable_params(), 0.01, 0.9))
    options = {"epoch": 1, "callbacks": [], "dataset_sink_mode": False, "steps_per_epoch": 2}
    module, _ = compile_job(Job("train", model, data, options, None))
    prog = Program(module, "device", device_target="CPU")
    assert label_bounds(module, prog.graph) == []


def test_set_deterministic_asks_cuda_for_reproducible_kernels():
    """MindSpore's set_deterministic / set_context(deterministic=...): on CUDA,
    cuDNN's default (deterministic) algorithms instead of the fastest measured
    ones, onnxruntime's deterministic compute, and max-pool gradients without
    atomic adds (the CPU's kernels are deterministic already)."""
    from irc.diagnostics import UserValueError
    assert irc.get_context("deterministic") == "OFF"
    assert "cudnn_conv_algo_search" not in runtime.cuda_provider_options()
    assert not runtime.default_options().use_deterministic_compute
    irc.set_deterministic(True)
    assert irc.get_context("deterministic") == "ON"
    assert runtime.cuda_provider_options()["cudnn_conv_algo_search"] == "DEFAULT"
    assert runtime.default_options().use_deterministic_compute
    module, _ = _training_module()
    assert Program(module, "device", device_target="CPU").lowering.deterministic
    irc.set_context(deterministic="OFF")
    assert irc.get_context("deterministic") == "OFF"
    with pytest.raises(UserValueError, match="'ON' or 'OFF'"):
        irc.set_context(deterministic=True)
    with pytest.raises(UserValueError, match="True or False"):
        irc.set_deterministic("ON")


class OverlappingPool(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, pad_mode="same")
        self.pool = nn.MaxPool2d(3, 2)                  # windows overlap
        self.fc = nn.Dense(2 * 3 * 3, 3)
        self.flatten = nn.Flatten()

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.conv(x))))


def test_the_pieces_of_a_staged_program_are_lowered_deterministically_where_asked():
    """A data-parallel program's pieces (staged.lower_pieces) get the
    deterministic max-pool gradient (no ScatterElements' atomic add) as a
    one-session program does."""
    from irc.backends.pieces import lower_pieces
    data = NumpySlicesDataset({"x": np.ones((8, 1, 8, 8), np.float32),
                               "y": np.zeros(8, np.int32)}, shuffle=False).batch(4)
    module, _ = _training_module(net=OverlappingPool(), data=data)
    for deterministic in (False, True):
        pieces, _ = lower_pieces(module, "device", params_as_inputs=True,
                                 options=LoweringOptions("cuda", deterministic=deterministic))
        scatters = ["ScatterElements" in _ops(p.model) for p in pieces]
        assert scatters == [not deterministic], (deterministic, scatters)


def test_cuda_graph_bookkeeping_trains_as_plain_calls():
    """CudaGraphCalls' bookkeeping, run on a CPU session (which ignores the
    graph ids): parameters alternating between two buffer sets, the weights
    no call updates in one buffer, and a checkpoint loaded between calls
    copied into the set the next call reads; bit for bit the plain calls'."""
    from irc.backends.cuda_graphs import CudaGraphCalls
    module, _ = _training_module()
    feeds = _feeds(5)
    prog = Program(module, "device", device_target="CPU")
    plain, graphed = DeviceState(prog, module.weights), DeviceState(prog, module.weights)
    session, origins, _ = prog.sessions[()]
    calls = CudaGraphCalls(session, prog, origins, device="cpu")
    loss = prog.result_names[prog.loss_index]
    for f in feeds[:3]:
        assert np.array_equal(calls.run(f, graphed)[loss], prog.run(f, plain)[loss])
    saved = plain.numpy()
    for f in feeds[3:]:
        calls.run(f, graphed), prog.run(f, plain)
    plain.load(saved)
    graphed.load(saved)                      # back to step 3, as a resume would
    for f in feeds[3:]:
        assert np.array_equal(calls.run(f, graphed)[loss], prog.run(f, plain)[loss])
    for name, value in plain.numpy().items():
        assert np.array_equal(graphed.numpy()[name], value), name
    updated = set(prog.updates.values())
    assert all((calls.sets[0][n] is calls.sets[1][n]) == (n not in updated) for n in calls.sets[0])


def test_a_failing_replay_is_a_located_error():
    """A call that fails after its graph was recorded is the plain call's
    located error, not onnxruntime's own exception (which is no
    RuntimeError): here a label outside the classes, which the CPU kernel
    checks, fed to replays on a CPU session with the host checks off."""
    from irc.backends.cuda_graphs import CudaGraphCalls
    from irc.diagnostics import UserRuntimeError
    module, _ = _training_module()
    prog = Program(module, "device", device_target="CPU")
    session, origins, _ = prog.sessions[()]
    prog.sessions[()] = (session, origins, CudaGraphCalls(session, prog, origins, device="cpu"))
    state = DeviceState(prog, module.weights)
    good, bad = _feeds(2)
    prog.run(good, state), prog.run(good, state)          # both graphs recorded
    with pytest.raises(UserRuntimeError) as info:
        prog.run({**bad, "label": np.array([0, 1, 9, 2], np.int32)}, state)
    assert "lowered from %loss = train.SoftmaxCrossEntropyWithLogits" in info.value.format()


def test_a_cuda_program_specialises_its_sessions_to_the_batch(monkeypatch):
    """Program's CUDA path, run on CPU sessions (the lowering target forced
    to "cuda"): one session per fed batch size, made at its first call, a
    short last batch with its own; losses and weights those of the CPU
    program fed the same batches."""
    import irc.backends.runtime as rt
    module, _ = _training_module()
    feeds = _feeds(2) + _feeds(1, batch=2) + _feeds(1)
    cpu = Program(module, "device", device_target="CPU")
    monkeypatch.setattr(rt, "target_of", lambda providers: "cuda")
    cuda = Program(module, "device", device_target="CPU", cuda_graphs=False)
    assert cuda.target == "cuda" and not cuda.sessions          # made at the first call
    cuda.device = "cpu"                                         # its values live where its sessions run
    states = DeviceState(cpu, module.weights), DeviceState(cuda, module.weights)
    loss = cpu.result_names[cpu.loss_index]
    for f in feeds:
        want, got = cpu.run(f, states[0])[loss], cuda.run(f, states[1])[loss]
        np.testing.assert_allclose(got, want, rtol=1e-5)
    assert sorted(cuda.sessions) == [(("N", 2),), (("N", 4),)]
    for name, value in states[0].numpy().items():
        np.testing.assert_allclose(states[1].numpy()[name], value, rtol=1e-4, atol=1e-6)


def test_a_loop_sunk_program_on_cuda_is_not_recorded(monkeypatch):
    """onnxruntime records no Loop: on CUDA a loop-sunk program neither tries
    CUDA graphs nor keeps its queue on the host for them (an unrolled sink,
    which has no Loop, does)."""
    import irc.backends.runtime as rt
    monkeypatch.setattr(rt, "target_of", lambda providers: "cuda")
    for unroll, graphed in ((1, False), (2, True)):
        data = NumpySlicesDataset({"x": np.ones((8, 4), np.float32), "y": np.zeros(8, np.int32)},
                                  shuffle=False).batch(4)
        net = nn.Dense(4, 3)
        model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                          nn.Momentum(net.trainable_params(), 0.01, 0.9))
        module, _ = compile_job(Job("train", model, data, {
            "epoch": 1, "callbacks": [], "dataset_sink_mode": True, "sink_size": 2,
            "steps_per_epoch": 2, "steps_per_sink": 2, "unroll": unroll}, None))
        assert Program(module, "device", device_target="CPU").cuda_graphs == graphed, unroll


def test_a_loop_sunk_sink_can_run_as_its_steps(monkeypatch):
    """On CUDA a loop-sunk sink runs as its steps, each one a replay of the
    recorded step graph (onnxruntime records no Loop).  The mechanism, run
    here on the CPU: the Loop's losses and weights, one device call per
    step, callbacks still once per sink."""
    from irc.backends import trainer
    from irc.train.callback import LambdaCallback
    init, run = trainer.TrainRun.__init__, trainer.Program.run

    def train(as_steps):

        def forced(self, *args, **kwargs):
            init(self, *args, **kwargs)
            self.sink_as_steps = as_steps
        monkeypatch.setattr(trainer.TrainRun, "__init__", forced)
        calls = []
        monkeypatch.setattr(trainer.Program, "run", lambda self, feeds, state:
                            calls.append(self.sunk) or run(self, feeds, state))
        rng = np.random.default_rng(0)
        data = NumpySlicesDataset({"x": rng.normal(size=(16, 4)).astype(np.float32),
                                   "y": rng.integers(0, 3, 16).astype(np.int32)}, shuffle=False).batch(4)
        irc.set_seed(1)
        net = nn.Dense(4, 3)
        model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                          nn.Momentum(net.trainable_params(), 0.1, 0.9))
        losses = []
        model.train(2, data, callbacks=[LambdaCallback(
            on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs.asnumpy())))],
            dataset_sink_mode=True, sink_size=2)
        return losses, calls, net.weight.asnumpy()

    (loop_losses, loop_calls, loop_w), (step_losses, step_calls, step_w) = train(False), train(True)
    assert loop_calls == [True] * 2 and step_calls == [False] * 4      # 2 sinks of 2 steps
    assert len(step_losses) == len(loop_losses) == 2                   # once per sink
    np.testing.assert_allclose(step_losses, loop_losses, rtol=1e-6)
    np.testing.assert_allclose(step_w, loop_w, rtol=1e-6, atol=1e-7)


@pytest.mark.skipif(not runtime.cuda_status()[0], reason="needs CUDA (onnxruntime-gpu with a GPU)")
def test_a_loop_sunk_sink_on_cuda_replays_its_steps(monkeypatch):
    """On a GPU: Model.train in sink mode (an ONNX Loop, which onnxruntime
    cannot record) runs each sink as replays of the recorded step graph."""
    from irc.backends import trainer
    made, init = [], trainer.TrainRun.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)
    monkeypatch.setattr(trainer.TrainRun, "__init__", spy)
    data = NumpySlicesDataset({"x": np.ones((16, 4), np.float32), "y": np.zeros(16, np.int32)},
                              shuffle=False).batch(4)
    net = nn.Dense(4, 3)
    model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      nn.Momentum(net.trainable_params(), 0.01, 0.9))
    model.train(2, data, dataset_sink_mode=True, sink_size=2)
    run = made[0]
    assert run.sink_as_steps and run.step_program.cuda_graphs
    graphs = [calls for _, _, calls in run.step_program.sessions.values()]
    assert graphs and all(g is not None and all(g.recorded) for g in graphs)


def test_a_model_with_an_output_of_constants_alone_is_not_recorded():
    """onnxruntime copies such an output (folded to an initializer) into its
    buffer at every run, which a CUDA graph recording refuses, leaving the
    stream capturing: a jitted call-then-gradient's ones-gradient."""
    from onnx import TensorProto, helper
    from irc.backends.cuda_graphs import graph_session, outputs_read_inputs

    def model(second_output_reads_x):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
        ys = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("y", "z")]
        ones = helper.make_node("Constant", [], ["ones"], value=helper.make_tensor("o", TensorProto.FLOAT, [2], [1, 1]))
        nodes = [ones, helper.make_node("Relu", ["x"], ["y"]),
                 helper.make_node("Add", ["y" if second_output_reads_x else "ones", "ones"], ["z"])]
        return helper.make_model(helper.make_graph(nodes, "g", [x], ys))

    assert outputs_read_inputs(model(True)) and not outputs_read_inputs(model(False))
    assert graph_session(model(False), ort.SessionOptions(), [runtime.CUDA]) is None


def test_labels_outside_the_classes_of_a_one_hot_loss_are_not_refused():
    """MindSpore's sparse 'none' and 'sum' losses one-hot their labels (a
    label outside the classes counts as no class: loss -0.0, gradient the
    softmax), as the model zoo's CTPN relies on; only 'mean' (its sparse
    kernel) refuses one, so only its labels are checked before a CUDA call."""
    from irc.backends.label_checks import label_bounds
    data = NumpySlicesDataset({"x": np.ones((8, 4), np.float32), "y": np.full(8, 2, np.int32)},
                              shuffle=False).batch(4)
    net = nn.Dense(4, 5)
    model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum"),
                      nn.Momentum(net.trainable_params(), 0.01, 0.9))
    options = {"epoch": 1, "callbacks": [], "dataset_sink_mode": False, "steps_per_epoch": 2}
    module, _ = compile_job(Job("train", model, data, options, None))
    prog = Program(module, "device", device_target="CPU")
    assert label_bounds(module, prog.graph) == []
    state = DeviceState(prog, module.weights)
    prog.run({"x": np.ones((4, 4), np.float32), "y": np.array([0, 4, 7, -1], np.int32),
              "learning_rate": np.array(0.01, np.float32)}, state)
