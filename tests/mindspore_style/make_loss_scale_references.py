"""Makes loss_scale_step, bert_step and tiny_gpt .mindspore.txt under
MindSpore 2.10 (CPU).  MindSpore's TrainOneStepWithLossScaleCell cannot
check for overflow on the CPU (FloatStatus and the NPU status registers have
no CPU kernel), so here its get_overflow_status is IsFinite's, the check
irc makes; the scripts are run as they are otherwise::

    /tmp/msv/bin/python tests/mindspore_style/make_loss_scale_references.py
"""
import contextlib
import io
import os
import runpy
import sys

import mindspore as ms
from mindspore import Tensor, nn, ops


def get_overflow_status(self, status, compute_output):
    flags = [ops.logical_not(ops.isfinite(g).all()).astype(ms.float32) for g in compute_output]
    return ops.less_equal(Tensor(1.0, ms.float32), ops.addn(flags))


nn.TrainOneStepWithLossScaleCell.get_overflow_status = get_overflow_status
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)   # the scripts import small_net
for name in ("loss_scale_step", "bert_step", "tiny_gpt"):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(os.path.join(HERE, name + ".py"), run_name="__main__")
    with open(os.path.join(HERE, name + ".mindspore.txt"), "w") as f:
        f.write(out.getvalue())
