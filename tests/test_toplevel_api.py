"""The lazy top-level package: MindSpore spellings resolve, ``import irc`` stays cheap."""
import subprocess
import sys

import numpy as np
import pytest

import irc
from irc.capture import mindspore_alias
from irc.diagnostics import UnsupportedAttribute, UserError


def test_mindspore_names_resolve_through_the_alias():
    with mindspore_alias():
        import mindspore as ms
        from mindspore import Tensor, context
        from mindspore import dtype as mstype

        assert ms is irc
        assert ms.float32 is mstype.float32 and ms.float32.numpy == np.float32
        assert ms.single is ms.float32 and ms.double is ms.float64 and ms.half is ms.float16
        assert ms.int32.ir == "i32" and ms.bool_.numpy == np.bool_
        assert (ms.GRAPH_MODE, ms.PYNATIVE_MODE) == (context.GRAPH_MODE, context.PYNATIVE_MODE)
        assert ms.set_context is context.set_context and ms.get_context is context.get_context
        assert Tensor is ms.Tensor and Tensor(np.ones(2, np.float32)).shape == (2,)
        assert ms.nn.Cell is not None and ms.dataset.GeneratorDataset is not None


def test_set_context_through_the_top_level():
    before = irc.get_context("mode")
    try:
        irc.set_context(mode=irc.PYNATIVE_MODE)
        assert irc.get_context("mode") == irc.context.get_context("mode") == irc.PYNATIVE_MODE
    finally:
        irc.set_context(mode=before)


def test_unknown_names_are_unsupported_attributes():
    assert not hasattr(irc, "nonexistent_thing")
    with pytest.raises(UnsupportedAttribute, match="mindspore.nonexistent_thing"):
        irc.nonexistent_thing  # noqa: B018
    assert {"float32", "set_context", "Model", "dtype", "nn"} <= set(dir(irc))


def test_importing_the_ir_loads_no_mindspore_api():
    probe = ("import sys, irc, irc.ir.text; "
             "loaded = sorted(m for m in sys.modules if m.startswith('irc')); "
             "print(' '.join(loaded))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    assert "irc.ir.text" in loaded
    assert not loaded & {"irc.common", "irc.common.dtype", "irc.context",
                         "irc.dialects", "irc.train", "irc.dataset"}


def test_the_submodules_and_names_scripts_reach_from_the_top():
    with mindspore_alias():
        import mindspore as ms
        import mindspore.numpy as mnp
        from mindspore import log, profiler
        from mindspore.common.tensor import Tensor
        from mindspore.communication.management import GlobalComm

        assert ms.log is log and ms.profiler is profiler and ms.numpy is mnp
        assert ms.Profiler is profiler.Profiler and ms.get_level is log.get_level
        assert ms.common.set_seed is ms.set_seed and ms.common.Tensor is Tensor
        assert ms.set_algo_parameters is ms.parallel.set_algo_parameters
        assert GlobalComm.WORLD_COMM_GROUP == "hccl_world_group"
        weights = ms.ParameterTuple([ms.Parameter(Tensor(np.ones(2, np.float32)), name="w")])
        moments = weights.clone("moments", init="zeros")
        assert moments[0].name == "moments.w" and moments[0].asnumpy().tolist() == [0, 0]


def test_missing_names_of_every_api_module_are_located_attribute_errors():
    import irc.common.initializer
    import irc.communication.management
    import irc.log
    import irc.numpy
    import irc.ops.operations
    import irc.parallel
    import irc.profiler
    for module in (irc, irc.nn, irc.ops, irc.ops.operations, irc.ops.functional, irc.common,
                   irc.common.dtype, irc.common.initializer, irc.communication,
                   irc.communication.management, irc.parallel, irc.context, irc.log,
                   irc.profiler, irc.numpy):
        name = module.__name__.replace("irc", "mindspore", 1)
        with pytest.raises(UnsupportedAttribute, match=f"not supported by irc yet: {name}.Nope"):
            module.Nope  # noqa: B018
        assert not hasattr(module, "Nope")
        with pytest.raises(AttributeError) as e:       # private names: Python's own error
            module._nope  # noqa: B018
        assert not isinstance(e.value, UnsupportedAttribute)


def test_tensors_print_as_mindspores():
    """MindSpore 2.10: str is the values, repr names shape and dtype."""
    assert repr(irc.Tensor(np.float32(2.5))) == "Tensor(shape=[], dtype=Float32, value= 2.5)"
    assert str(irc.Tensor(np.array([1, 2], np.int32))) == "[1 2]"
    assert str(irc.uint8) == "UInt8" and str(irc.float32) == "Float32" and str(irc.bool_) == "Bool"
    assert repr(irc.float32) == "mindspore.float32"


def test_a_new_script_starts_from_every_default_setting(tmp_path):
    """Scripts run one after another in a process (ranks compiled in turn, a
    project's tests under the plugin) each start as a new process would:
    the dataset config's workers and prefetch depth too, not only the seed
    and the context."""
    from irc.backends.settings import ExecutionSettings, settings
    from irc.capture import RUN, run_script
    first = tmp_path / "first.py"
    first.write_text("import mindspore as ms\nimport mindspore.dataset as ds\n"
                     "ds.config.set_num_parallel_workers(7)\nds.config.set_prefetch_size(3)\n"
                     "ds.config.set_seed(11)\nms.set_context(device_target='CPU')\n")
    second = tmp_path / "second.py"
    second.write_text("import mindspore.dataset as ds\n"
                      "print(ds.config.get_num_parallel_workers(), ds.config.get_prefetch_size())\n")
    run_script(str(first), mode=RUN)
    assert settings.num_parallel_workers == 7
    run_script(str(second), mode=RUN)
    assert settings == ExecutionSettings()


def test_mindspore_2x_top_level_names():
    """The names MindSpore 2.x's newer tutorials import from `mindspore`
    itself: short dtypes (float is float32, byte int8, as MindSpore 2.10's),
    metrics and callbacks, set_device, JitConfig, tensor/from_numpy,
    mutable, jit_class, manual_seed."""
    assert (irc.float, irc.int, irc.long, irc.short, irc.byte, irc.ubyte, irc.bool) == (
        irc.float32, irc.int32, irc.int64, irc.int16, irc.int8, irc.uint8, irc.bool_)
    assert irc.Accuracy is irc.train.Accuracy and irc.EarlyStopping is irc.train.EarlyStopping
    assert irc.tensor([1.5]).dtype == irc.float32
    assert irc.from_numpy(np.arange(3)).dtype == irc.int64 and irc.Tensor.from_numpy(np.ones(2)).dtype == irc.float64
    assert irc.is_tensor(irc.tensor(1)) and not irc.is_tensor(1)
    assert irc.mutable((1, 2)) == (1, 2) and irc.jit_class(dict) is dict
    assert irc.dtype_to_nptype(irc.float16) is np.float16
    from irc.capture import fresh_process_state
    try:
        irc.set_device("CPU")
        assert irc.get_context("device_target") == "CPU"
        irc.set_context(jit_config=irc.JitConfig(jit_level="O0"))
        irc.manual_seed(5)          # the random ops' generator: the global seed stays unset
        assert irc.get_seed() is None
        irc.set_seed(5)
        assert irc.get_seed() == 5
        with pytest.raises(UserError, match="device_target must be one of"):
            irc.set_device("TPU")
    finally:
        fresh_process_state()        # the settings a script would start from


def test_the_model_zoos_import_paths(capsys):
    """tests/mindspore_style/zoo_imports.py: classes imported from the
    modules MindSpore defines them in (``mindspore.nn.loss.loss.LossBase``,
    ``nn.optim.optimizer.Optimizer``, ``nn.dynamic_lr``, ``ops.operations.nn_ops``,
    ``ops.primitive.constexpr``, ``dataset.engine``) train as under MindSpore 2.10."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "zoo_imports.py", rel=1e-6)
