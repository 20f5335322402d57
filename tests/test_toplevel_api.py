"""The lazy top-level package: MindSpore spellings resolve, ``import irc`` stays cheap."""
import subprocess
import sys

import numpy as np
import pytest

import irc
from irc.capture import mindspore_alias
from irc.diagnostics import UnsupportedAttribute


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
