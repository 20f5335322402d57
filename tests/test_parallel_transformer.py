"""``mindspore.parallel._transformer`` (the model zoo's GPT), the Ascend
float-status ops its train cell holds, ``F.tensor_pow``: beside MindSpore
2.10 (with the package as MindSpore last shipped it)."""
import numpy as np
import pytest

import irc as ms
from irc import ops
from irc.capture import RUN, run_script
from irc.diagnostics import UserError


def test_encoder_mask_and_loss_print_as_mindspore(capsys):
    """tests/mindspore_style/gpt_parallel_transformer.py: AttentionMask, a
    pre- and a post-norm TransformerEncoder, CrossEntropyLoss and their
    gradients (MindSpore's encoder computes in float16: 2e-3)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "gpt_parallel_transformer.py", rel=2e-3, abs=2e-3)


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


def _run(tmp_path, source: str) -> str:
    script = tmp_path / "script.py"
    script.write_text(source)
    with pytest.raises(UserError) as info:
        run_script(str(script), mode=RUN, argv=[])
    return info.value.format()


def test_what_irc_does_not_build_is_refused_at_the_users_line(tmp_path):
    text = _run(tmp_path, "from mindspore.parallel._transformer import TransformerDecoder\n")
    assert "not supported by irc yet: mindspore.parallel._transformer.TransformerDecoder" in text
    assert "script.py:1" in text
    text = _run(tmp_path, "from mindspore.parallel._transformer import TransformerEncoder\n"
                          "TransformerEncoder(2, 1, 8, 16, 4, 2, use_past=True)\n")
    assert "use_past" in text and "script.py:2" in text


def test_cross_entropy_loss_masks_and_refuses_int64_labels():
    from irc.nn.parallel_transformer import CrossEntropyLoss
    logits = ms.Tensor(np.array([[3, 5, 6, 9], [1, 2, 3, 4.5]], np.float32))
    loss = CrossEntropyLoss()(logits, ms.Tensor(np.array([1, 3], np.int32)), ms.Tensor(np.array([1, 0], np.float32)))
    shifted = np.array([3, 5, 6, 9.0]) - 9
    # the second row masked out; MindSpore's denominator: the mask's sum + 1e-5
    want = -(shifted[1] - np.log(np.exp(shifted).sum())) / (1 + 1e-5)
    assert loss.shape == (1,) and loss.asnumpy()[0] == pytest.approx(want)
    with pytest.raises(UserError, match="label must be Int32"):
        CrossEntropyLoss()(logits, ms.Tensor(np.array([1, 3], np.int64)), ms.Tensor(np.ones(2, np.float32)))


def test_an_eager_index_out_of_range_is_one_located_line(tmp_path, capsys):
    """GPT's eval.py fed rows longer than seq_length: the compiled network's
    shapes do not broadcast, its eager run then gathers position 16 of 16
    rows.  Under irc exec that is irc's located line, not a traceback ending
    in irc's kernel."""
    from irc import importhook
    from irc.cli import main
    script = tmp_path / "script.py"
    script.write_text("import numpy as np\nfrom mindspore import Tensor, nn\n"
                      "emb = nn.Embedding(4, 3)\n"
                      "emb(Tensor(np.array([[0, 5]], np.int32)))\n")
    was_on = importhook.installed()
    try:
        assert main(["exec", str(script)]) == 1
    finally:
        if not was_on:      # the alias exec turned on, off again
            importhook.uninstall()
    err = capsys.readouterr().err
    assert "Traceback" not in err and "script.py:4: error:" in err and "index 5 is outside [-4, 4)" in err
