"""``mindspore.parallel._transformer`` (the model zoo's GPT), the Ascend
float-status ops its train cell holds, ``F.tensor_pow``: beside MindSpore
2.10 (with the package as MindSpore last shipped it)."""
import pytest

from irc import ops
from irc.diagnostics import UserError


def test_float_status_ops_are_built_and_refused_when_called():
    """MindSpore 2.10 has no CPU or GPU kernel for them: the model zoo's GPT
    train cell builds three in __init__; a call is refused at the user's line."""
    status = ops.NPUAllocFloatStatus()
    ops.NPUGetFloatStatus(), ops.NPUClearFloatStatus()
    with pytest.raises(UserError) as info:
        status()
    text = info.value.format()
    assert "NPUAllocFloatStatus runs only on Ascend" in text and "isfinite" in text
    assert "test_parallel_transformer.py:" in text
