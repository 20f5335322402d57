"""mindspore.nn Cells a script builds, each on fixed inputs (the random ones
seeded): run under MindSpore 2.10 it writes nn_cells.mindspore.json;
tests/test_functional_ops.py runs the same CASES under irc."""
import sys

import numpy as np
import mindspore as ms
import mindspore.nn as nn

from case_inputs import dump_cases

rng = np.random.default_rng(0)
X = ms.Tensor(rng.standard_normal((2, 8, 3, 4)).astype(np.float32))
A = ms.Tensor(rng.standard_normal((3, 4)).astype(np.float32))
B = ms.Tensor(rng.standard_normal((3, 4)).astype(np.float32))
P = ms.Tensor(rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32))
Y = ms.Tensor(np.sign(rng.standard_normal((3, 4))).astype(np.float32))
T = ms.Tensor(np.array([1, -1, 1], np.float32))
W = ms.Tensor(rng.standard_normal(3).astype(np.float32))
L = ms.Tensor(np.array([0, 2, 1], np.int32))
Q = ms.Tensor(rng.standard_normal((4, 4)).astype(np.float32))
S = ms.Tensor(rng.standard_normal((2, 3, 5)).astype(np.float32))


def linear():
    np.random.seed(3)
    layer = nn.Linear(4, 2)
    return [layer(A), layer.weight, layer.bias]


CASES = {
    "CELU": lambda: nn.CELU(0.7)(A), "GLU": lambda: nn.GLU()(A), "HShrink": lambda: nn.HShrink(0.6)(A),
    "SoftShrink": lambda: nn.SoftShrink(0.4)(A), "Softmin": lambda: nn.Softmin(0)(A),
    "Softmax2d": lambda: nn.Softmax2d()(X), "Softsign": lambda: nn.Softsign()(A), "SeLU": lambda: nn.SeLU()(A),
    "Tanhshrink": lambda: nn.Tanhshrink()(A), "Threshold": lambda: nn.Threshold(0.1, 20.0)(A),
    "HuberLoss": lambda: nn.HuberLoss(delta=0.5)(A, B), "HuberLoss_sum": lambda: nn.HuberLoss("sum")(A, B),
    "MarginRankingLoss": lambda: nn.MarginRankingLoss(0.1)(W, W * 0.5, T),
    "CosineEmbeddingLoss": lambda: nn.CosineEmbeddingLoss(0.2)(A, B, T),
    "HingeEmbeddingLoss": lambda: nn.HingeEmbeddingLoss(0.5)(A, Y),
    "MultiLabelSoftMarginLoss": lambda: nn.MultiLabelSoftMarginLoss()(A, (Y + 1) / 2),
    "GaussianNLLLoss": lambda: nn.GaussianNLLLoss()(A, B, P),
    "RMSELoss": lambda: nn.RMSELoss()(A, B), "MAELoss": lambda: nn.MAELoss()(A, B),
    "MAELoss_none": lambda: nn.MAELoss("none")(A, B),
    "PixelShuffle": lambda: nn.PixelShuffle(2)(X), "PixelUnshuffle": lambda: nn.PixelUnshuffle(2)(
        ms.Tensor(rng.standard_normal((2, 3, 4, 6)).astype(np.float32))),
    "ChannelShuffle": lambda: nn.ChannelShuffle(4)(X), "Unflatten": lambda: nn.Unflatten(1, (2, 4))(X),
    "Tril": lambda: nn.Tril()(Q, 1), "Triu": lambda: nn.Triu()(Q),
    "ZeroPad2d": lambda: nn.ZeroPad2d((1, 2, 0, 1))(X), "ConstantPad1d": lambda: nn.ConstantPad1d(2, 0.5)(A),
    "ConstantPad2d": lambda: nn.ConstantPad2d((1, 0, 2, 1), -1.0)(X),
    "ConstantPad3d": lambda: nn.ConstantPad3d(1, 3.0)(S),
    "ReflectionPad1d": lambda: nn.ReflectionPad1d((2, 1))(S), "ReflectionPad2d": lambda: nn.ReflectionPad2d(1)(X),
    "ReplicationPad1d": lambda: nn.ReplicationPad1d((2, 1))(S),
    "ReplicationPad2d": lambda: nn.ReplicationPad2d((1, 2, 2, 0))(X),
    "Norm": lambda: nn.Norm(1)(A), "Norm_all": lambda: nn.Norm()(A), "Norm_keep": lambda: nn.Norm(0, True)(A),
    "OneHot": lambda: nn.OneHot(depth=4)(L), "MatMul": lambda: nn.MatMul(False, True)(A, B),
    "Range": lambda: nn.Range(1, 9, 2)(), "Linear": linear,
    "Dropout2d_eval": lambda: nn.Dropout2d(0.5).set_train(False)(X),
    "CentralCrop": lambda: nn.CentralCrop(0.6)(X), "CentralCrop_3d": lambda: nn.CentralCrop(0.35)(X[0]),
    "CentralCrop_whole": lambda: nn.CentralCrop(1.0)(S),
    "CentralCrop_half": lambda: nn.CentralCrop(0.5)(ms.Tensor(np.arange(126, dtype=np.float32).reshape(1, 2, 7, 9))),
}


if __name__ == "__main__":
    dump_cases(CASES, sys.stdout)
