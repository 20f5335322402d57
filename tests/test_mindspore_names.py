"""The MindSpore names real scripts import (log, profiler, common.set_seed,
set_algo_parameters, GlobalComm, train_thor ...), the one located answer
for every name irc lacks however it is imported, and exceptions that are
the builtin MindSpore raises in the same case (checked with MindSpore 2.10)."""
from __future__ import annotations

import csv
import json
import os
import re

import numpy as np
import pytest

import irc
from irc.capture import run_script
from irc.cli import main
from irc.diagnostics import UnsupportedError, UserError, display_path


def _script(tmp_path, text: str, name: str = "script.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# -----------------------------------------------------------------------------
# the names

LOGGING = """\
from mindspore import log as logger
logger.debug("debug %d", 0)
logger.info("info %d", 1)
logger.warning("warning %d", 2)
logger.error("error %d", 3)
print("level", logger.get_level())
"""


@pytest.mark.parametrize("glog_v,shown", [(None, ["WARNING", "ERROR"]),
                                          ("1", ["INFO", "WARNING", "ERROR"]),
                                          ("3", ["ERROR"])])
def test_log_is_mindspores_logger_and_reads_glog_v(tmp_path, capfd, glog_v, shown):
    env = {} if glog_v is None else {"GLOG_v": glog_v}
    saved = os.environ.pop("GLOG_v", None)
    try:
        run_script(_script(tmp_path, LOGGING), env=env)
    finally:
        if saved is not None:
            os.environ["GLOG_v"] = saved
    out, err = capfd.readouterr()
    records = re.findall(r"^\[(\w+)\] ME\(\d+:\d+,MainProcess\):"
                         r"\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3} \[(.+):(\d+)\] (.*)$",
                         err, re.M)
    assert [r[0] for r in records] == shown
    levels = {"DEBUG": 2, "INFO": 3, "WARNING": 4, "ERROR": 5}
    for level, path, line, message in records:   # the caller's line, not the logger's
        assert path.endswith("script.py") and int(line) == levels[level]
        assert message == f"{level.lower()} {levels[level] - 2}"
    assert f"level {glog_v or '2'}" in out


def test_log_to_files_under_glog_log_dir(tmp_path, capfd):
    env = {"GLOG_logtostderr": "0", "GLOG_log_dir": str(tmp_path / "logs"), "GLOG_v": "1",
           "GLOG_stderrthreshold": "3", "RANK_ID": "0"}
    run_script(_script(tmp_path, LOGGING + "import mindspore as ms\nprint(ms.get_log_config())\n"),
               env=env)
    out, err = capfd.readouterr()
    (log_file,) = (tmp_path / "logs" / "rank_0" / "logs").iterdir()
    text = log_file.read_text()
    assert "info 1" in text and "warning 2" in text and "debug 0" not in text
    assert "error 3" in err and "warning 2" not in err      # stderr from level 3 up
    assert "'GLOG_logtostderr': '0'" in out and "'GLOG_stderrthreshold': '3'" in out


def test_bad_glog_v_is_a_located_value_error(tmp_path):
    with pytest.raises(ValueError, match="GLOG_v='9' is not a log level"):
        run_script(_script(tmp_path, LOGGING), env={"GLOG_v": "9"})


def test_common_set_seed_is_mindspore_set_seed(tmp_path):
    cap_text = """\
import numpy as np
import mindspore
from mindspore.common import set_seed
assert set_seed is mindspore.set_seed
set_seed(3)
a = np.random.rand()
mindspore.common.set_seed(3)
assert np.random.rand() == a
"""
    run_script(_script(tmp_path, cap_text))


def test_where_mindspore_defines_jit_add_flags_and_dtype_helpers(tmp_path):
    """The model zoo's BERT imports these from where MindSpore 2.10 defines them."""
    text = """\
import numpy as np
import mindspore
from mindspore.common.api import jit, ms_function, jit_class
from mindspore.common.dtype import dtype_to_nptype, dtype_to_pytype
from mindspore.common import JitConfig          # the model zoo's LSTM
import mindspore.ops.composite as C
from mindspore.ops.function.nn_func import conv1d        # where MindSpore 2.x defines its functions
from mindspore.ops.function.math_func import cumsum
assert conv1d is mindspore.ops.conv1d and cumsum is mindspore.ops.cumsum
assert JitConfig is mindspore.JitConfig
assert jit is mindspore.jit and ms_function is mindspore.jit and jit_class is mindspore.jit_class
assert dtype_to_nptype(mindspore.float16) is np.float16 and dtype_to_nptype(mindspore.int32) is np.int32
assert mindspore.dtype_to_nptype is dtype_to_nptype
assert dtype_to_pytype(mindspore.float32) is float and dtype_to_pytype(mindspore.bool_) is bool


@C.add_flags(has_effect=True)
def f(x):
    return x + 1


assert f(1) == 2 and f._func_graph_flags == {"has_effect": True}
"""
    run_script(_script(tmp_path, text))


def test_profiler_records_onnxruntime_sessions_and_host(tmp_path):
    """Sessions made while a Profiler is active are profiled by onnxruntime;
    analyse() writes one Chrome trace and the per-operator tables."""
    from irc.backends.onnx_lowering import lower_graph
    from irc.backends.runtime import Session
    from irc.frontend.network import trace_cell
    from irc.ir.graph import Module
    from irc.ir.types import TensorType
    from irc.profiler import Profiler

    net = irc.nn.SequentialCell([irc.nn.Conv2d(3, 4, 3), irc.nn.ReLU(), irc.nn.Flatten(),
                                 irc.nn.Dense(4 * 8 * 8, 2)])
    module = Module("m")
    trace_cell(module, net, [TensorType("f32", ("N", 3, 8, 8))], "device")
    model = lower_graph(module, "device")
    outside = Session(model, device_target="CPU")        # made before: not profiled
    profiler = Profiler(output_path=str(tmp_path / "data"))
    session = Session(model, device_target="CPU")
    for _ in range(3):
        session.run_numpy({"x0": np.ones((2, 3, 8, 8), np.float32)})
    profiler.analyse()
    outside.run_numpy({"x0": np.ones((1, 3, 8, 8), np.float32)})
    folder = tmp_path / "data" / "profiler"
    events = json.loads((folder / "trace_view.json").read_text())
    runs = [e for e in events if e.get("name") == "model_run"]
    assert len(runs) == 3 and all(e["pid"] == 1 for e in runs)
    kernels = [e for e in events if e.get("cat") == "Node"]
    assert "Gemm" in {e["args"]["op_name"] for e in kernels}
    assert all(e["ts"] >= 0 for e in events if "ts" in e)     # one timeline from start()
    rows = {r["op_type"]: r for r in csv.DictReader((folder / "op_statistic.csv").open())}
    assert int(rows["Gemm"]["calls"]) == 3
    assert abs(sum(float(r["share_percent"]) for r in rows.values()) - 100) < 0.1
    host = list(csv.DictReader((folder / "host_statistic.csv").open()))
    assert any("runtime.py" in r["function"] and r["function"].endswith(("(run)", "(run_numpy)"))
               for r in host)
    assert json.loads(profiler.op_analyse("Gemm"))[0]["calls"] == 3


def test_strategy_search_settings_keep_mindspores_names_defaults_and_checks(tmp_path):
    """set_algo_parameters, and the cost model ArcFace's train.py imports
    from MindSpore's private module at its top: recorded with MindSpore
    2.10's names, defaults and checks; the next script starts from the defaults."""
    run_script(_script(tmp_path, """\
import mindspore as ms
from mindspore.parallel import set_algo_parameters, get_algo_parameters
from mindspore.parallel import _cost_model_context as cost_model_context
import mindspore.parallel._cost_model_context as same
assert get_algo_parameters("tensor_slice_align_size") == 16
assert same.get_cost_model_context("costmodel_beta") == 400.0
set_algo_parameters(elementwise_op_strategy_follow=True, fully_use_devices=True)
assert ms.get_algo_parameters("fully_use_devices") is True
cost_model_context.set_cost_model_context(device_memory_capacity=32.0 * 1024 ** 3, costmodel_beta=280.0)
assert same.get_cost_model_context("costmodel_beta") == 280.0
for setter, bad, kind in ((set_algo_parameters, dict(fully_use_devices=1), TypeError),
                          (set_algo_parameters, dict(foo=1), ValueError),
                          (set_algo_parameters, dict(tensor_slice_align_size=0), ValueError),
                          (cost_model_context.set_cost_model_context, dict(costmodel_alpha=2), TypeError),
                          (cost_model_context.set_cost_model_context, dict(nope=2.0), ValueError)):
    try:
        setter(**bad)
    except kind:
        pass
    else:
        raise AssertionError(bad)
"""))
    run_script(_script(tmp_path, "import mindspore as ms\n"
                                 "import mindspore.parallel._cost_model_context as c\n"
                                 "assert ms.get_algo_parameters('fully_use_devices') is False\n"
                                 "assert c.get_cost_model_context('costmodel_beta') == 400.0\n"))


def test_the_dataset_engine_package_as_older_scripts_import_it(tmp_path):
    """``from mindspore.dataset import engine as de`` (OCRNet's eval.py) and
    ``import mindspore.dataset.engine as de``: the dataset API either way."""
    run_script(_script(tmp_path, """\
import numpy as np
from mindspore.dataset import engine as de
import mindspore.dataset.engine as same
d = de.GeneratorDataset([(np.ones(2, np.float32),)] * 3, column_names=["x"], shuffle=False)
assert d.get_dataset_size() == 3 and same.GeneratorDataset is de.GeneratorDataset
"""))


def test_global_comm_follows_init():
    from irc.communication.management import GlobalComm, init, release
    assert (GlobalComm.INITED, GlobalComm.BACKEND, GlobalComm.WORLD_COMM_GROUP) == \
        (False, "hccl", "hccl_world_group")
    try:
        init("nccl")
        assert (GlobalComm.INITED, GlobalComm.BACKEND, GlobalComm.WORLD_COMM_GROUP) == \
            (True, "nccl", "nccl_world_group")
        with pytest.raises(RuntimeError, match="backend_name must be one of hccl, nccl, mccl"):
            init("gloo")
    finally:
        release()
    assert GlobalComm.INITED is False


def test_train_thor_imports_and_refuses_where_used(tmp_path):
    script = _script(tmp_path, """\
from mindspore.train.train_thor import ConvertModelUtils
import mindspore.nn as nn
net = nn.Dense(2, 2)
model = ConvertModelUtils.convert_to_thor_model(None, net)
""")
    with pytest.raises(UnsupportedError) as e:
        run_script(script)
    assert e.value.where.endswith("script.py:4")
    assert "train_thor.ConvertModelUtils.convert_to_thor_model" in e.value.message


def test_numpy_array_creation_has_mindspores_dtypes():
    import irc.numpy as mnp
    assert mnp.array([1, 2]).dtype == irc.int32 and mnp.arange(3).dtype == irc.int32
    assert mnp.zeros((2,)).dtype == irc.float32 and mnp.full((2,), 3.5).dtype == irc.float32
    assert mnp.ones(2, dtype="int32").asnumpy().tolist() == [1, 1]
    assert mnp.linspace(0, 1, 5).asnumpy().tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    # a Tensor keeps its dtype, Python's lists are 32-bit (MindSpore 2.10 alike)
    f64 = irc.Tensor(np.array([1.0]))
    assert mnp.array(f64).dtype == irc.float64 and mnp.ones_like(f64).dtype == irc.float64
    assert mnp.ones_like([1.0]).dtype == irc.float32 and mnp.zeros_like([1, 2]).dtype == irc.int32
    assert mnp.full_like([1, 2], 2.5).asnumpy().tolist() == [2, 2]
    assert mnp.full_like([1, 2], 2.5).dtype == irc.int32


# -----------------------------------------------------------------------------
# every missing name: one located answer, the builtin kind kept

FORMS = {
    "import_module": ("import mindspore.foo", ModuleNotFoundError, "mindspore.foo"),
    "import_internal": ("import mindspore.passes", ModuleNotFoundError, "mindspore.passes"),
    "import_own_module": ("import mindspore.importhook", ModuleNotFoundError,
                          "mindspore.importhook"),
    "from_top": ("from mindspore import foo", ImportError, "mindspore.foo"),
    "from_nn": ("from mindspore.nn import Foo", ImportError, "mindspore.nn.Foo"),
    "from_plain_module": ("from mindspore.dataset.vision.c_transforms import Foo", ImportError,
                          "mindspore.dataset.vision.c_transforms.Foo"),
    "from_common": ("from mindspore.common.initializer import Foo", ImportError,
                    "mindspore.common.initializer.Foo"),
    "from_missing_submodule": ("from mindspore.ops import composite_foo", ImportError,
                               "mindspore.ops.composite_foo"),
    "nn_attribute": ("import mindspore.nn as nn\nnn.Foo(3)", AttributeError, "mindspore.nn.Foo"),
    "ops_attribute": ("import mindspore as ms\nms.ops.foo(1)", AttributeError,
                      "mindspore.ops.foo"),
    "plain_module_attribute": ("import mindspore.dataset.vision as vision\nvision.Foo()",
                               AttributeError, "mindspore.dataset.vision.Foo"),
    "primitive": ("from mindspore.ops import operations as P\nP.FooBar()", AttributeError,
                  "mindspore.ops.operations.FooBar"),
}


def _form_script(tmp_path, code: str) -> str:
    return _script(tmp_path, "import numpy as np\n\n" + code + "\n")   # the use: line 3 on


@pytest.mark.parametrize("form", list(FORMS))
def test_missing_names_are_located_and_keep_their_kind(tmp_path, form):
    code, kind, name = FORMS[form]
    script = _form_script(tmp_path, code)
    with pytest.raises(UnsupportedError) as e:
        run_script(script)
    assert isinstance(e.value, kind)
    assert e.value.message == f"not supported by irc yet: {name}"
    line = 3 + code.count("\n")
    assert e.value.where == f"{display_path(script)}:{line}" and e.value.hint


@pytest.mark.parametrize("form", ["from_top", "from_plain_module", "nn_attribute"])
def test_missing_names_through_the_cli(tmp_path, capsys, form):
    code, _, name = FORMS[form]
    script = _form_script(tmp_path, code)
    assert main(["compile", script, "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    line = 3 + code.count("\n")
    assert f"{display_path(script)}:{line}: error: not supported by irc yet: {name}" in err
    assert "Traceback" not in err and "irc/" not in err.split("hint:")[0]


def test_a_name_irc_itself_lacks_is_not_called_unsupported():
    """The translation is for the user's own import lines: the same failure
    inside irc's code is irc's bug and keeps Python's report."""
    from irc.capture import unsupported_api_name
    inside_irc = os.path.join(os.path.dirname(irc.__file__), "nn", "layer.py")
    for code, kind in (("from irc.nn import Nope", ImportError),
                       ("irc.nn.cell.Nope", AttributeError)):
        try:
            exec(compile(code, inside_irc, "exec"), {"irc": irc})
        except Exception as e:  # noqa: BLE001
            assert type(e) is kind and unsupported_api_name(e) is None
        else:
            raise AssertionError(code)


def test_scripts_can_still_catch_missing_names(tmp_path, capsys):
    run_script(_script(tmp_path, """\
import mindspore.nn as nn
try:
    from mindspore import foo
except ImportError:
    print("no foo")
try:
    import mindspore.bar
except ImportError:
    print("no bar")
print(hasattr(nn, "Foo"), hasattr(nn, "Dense"))
"""))
    assert capsys.readouterr().out.split("\n")[:3] == ["no foo", "no bar", "False True"]


# -----------------------------------------------------------------------------
# exceptions: the builtin MindSpore 2.10 raises in the same case (each call run
# there: /tmp/msv, mindspore 2.10.0 CPU), still a located UserError here

F32 = np.float32


def _x23():
    return irc.Tensor(np.ones((2, 3), F32))


# name -> (the call, the builtin MindSpore raises)
EXCEPTIONS = {
    "conv_kernel_0": (lambda: irc.nn.Conv2d(3, 8, kernel_size=0), ValueError),
    "conv_kernel_float": (lambda: irc.nn.Conv2d(3, 8, 1.5), TypeError),
    "conv_pad_mode_foo": (lambda: irc.nn.Conv2d(3, 8, 3, pad_mode="foo"), ValueError),
    "conv_padding_without_pad_mode": (lambda: irc.nn.Conv2d(3, 8, 3, padding=1), ValueError),
    "conv_group_mismatch": (lambda: irc.nn.Conv2d(3, 8, 3, group=2), ValueError),
    "conv_input_rank_3": (lambda: irc.nn.Conv2d(3, 8, 3)(irc.Tensor(np.ones((3, 8, 8), F32))),
                          ValueError),
    "dense_float_channels": (lambda: irc.nn.Dense(3.5, 2), TypeError),
    "dense_zero_channels": (lambda: irc.nn.Dense(0, 2), ValueError),
    "dense_input_mismatch": (lambda: irc.nn.Dense(3, 2)(irc.Tensor(np.ones((2, 4), F32))),
                             ValueError),
    "dense_activation_foo": (lambda: irc.nn.Dense(3, 2, activation="foo"), KeyError),
    "dropout_keep_prob_1.5": (lambda: irc.nn.Dropout(keep_prob=1.5), ValueError),
    "dropout_p_1": (lambda: irc.nn.Dropout(p=1.0), ValueError),
    "batchnorm_0_features": (lambda: irc.nn.BatchNorm2d(0), ValueError),
    "batchnorm_momentum_1.5": (lambda: irc.nn.BatchNorm2d(4, momentum=1.5), ValueError),
    "batchnorm_input_rank_2": (lambda: irc.nn.BatchNorm2d(3)(_x23()), ValueError),
    "maxpool_kernel_0": (lambda: irc.nn.MaxPool2d(kernel_size=0), ValueError),
    "maxpool_stride_0": (lambda: irc.nn.MaxPool2d(kernel_size=2, stride=0), ValueError),
    "avgpool_pad_mode_foo": (lambda: irc.nn.AvgPool2d(kernel_size=3, pad_mode="foo"), ValueError),
    "pad_paddings_list": (lambda: irc.nn.Pad(paddings=[[1, 1]]), TypeError),
    "pad_mode_foo": (lambda: irc.nn.Pad(((1, 1),), mode="foo"), ValueError),
    "pad_triple": (lambda: irc.nn.Pad(((1, 1, 1),)), ValueError),
    "adaptive_pool_three_sizes": (lambda: irc.nn.AdaptiveAvgPool2d((1, 2, 3)), ValueError),
    "softmax_axis_float": (lambda: irc.nn.Softmax(axis=1.5), TypeError),
    "sequential_of_ints": (lambda: irc.nn.SequentialCell([1, 2]), TypeError),
    "cell_list_append_int": (lambda: irc.nn.CellList().append(3), TypeError),
    "insert_child_not_cell": (lambda: irc.nn.Cell().insert_child_to_cell("a", 3), TypeError),
    "cell_without_construct": (lambda: irc.nn.Cell()(_x23()), AttributeError),
    "cell_list_called": (lambda: irc.nn.CellList([irc.nn.ReLU()])(_x23()), NotImplementedError),
    "tensor_of_strings": (lambda: irc.Tensor(["a", "b"]), TypeError),
    "parameter_name_int": (lambda: irc.Parameter(_x23(), name=3), ValueError),
    "index_out_of_range": (lambda: _x23()[5], IndexError),
    "slice_step_zero": (lambda: _x23()[::0], ValueError),
    "reshape_bad_shape": (lambda: irc.ops.reshape(_x23(), (4, 2)), ValueError),
    "add_broadcast_mismatch": (lambda: irc.ops.add(irc.Tensor(np.ones(2, F32)),
                                                   irc.Tensor(np.ones(3, F32))), ValueError),
    "concat_mismatch": (lambda: irc.ops.concat([_x23(), irc.Tensor(np.ones((2, 4), F32))]),
                        ValueError),
    "transpose_bad_perm": (lambda: irc.ops.transpose(_x23(), (0,)), ValueError),
    "cast_to_foo": (lambda: irc.ops.cast(_x23(), "foo"), TypeError),
    "argmax_bad_axis": (lambda: irc.ops.argmax(_x23(), 5), ValueError),
    "reduce_mean_bad_axis": (lambda: irc.ops.ReduceMean()(_x23(), 5), ValueError),
    "flatten_start_after_end": (lambda: irc.ops.flatten(irc.Tensor(np.ones((2, 3, 4), F32)),
                                                        start_dim=2, end_dim=1), ValueError),
    "initializer_foo": (lambda: irc.common.initializer.initializer("foo", (2, 2)), ValueError),
    "initializer_dtype_foo": (lambda: irc.common.initializer.initializer("zeros", (2,), "foo"),
                              TypeError),
    "set_seed_negative": (lambda: irc.set_seed(-1), ValueError),
    "set_seed_float": (lambda: irc.set_seed(1.5), TypeError),
    "device_target_tpu": (lambda: irc.set_context(device_target="TPU"), ValueError),
    "auto_parallel_unknown_key": (lambda: irc.set_auto_parallel_context(foo=1), ValueError),
    "metric_set_indexes_str": (lambda: irc.nn.Accuracy().set_indexes("a"), ValueError),
    "accuracy_eval_type_foo": (lambda: irc.nn.Accuracy("foo"), TypeError),
}


@pytest.mark.parametrize("name", sorted(EXCEPTIONS))
def test_exceptions_are_mindspores_builtins(name):
    call, builtin = EXCEPTIONS[name]
    with pytest.raises(builtin) as e:
        call()
    assert isinstance(e.value, UserError), type(e.value)
    assert re.search(r"test_mindspore_names\.py:\d+$", e.value.where or ""), e.value.where
