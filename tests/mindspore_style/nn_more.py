"""More mindspore.nn layers and nn-style mindspore.ops functions, each on
fixed inputs (the random ones seeded), and the gradients of a few: run
under MindSpore 2.10 it writes nn_more.mindspore.json; tests/test_nn_more.py
runs the same CASES under irc (eagerly and inside ms.jit)."""
import sys

import numpy as np
import mindspore as ms
import mindspore.nn as nn
import mindspore.ops as ops

from case_inputs import dump_cases

rng = np.random.default_rng(7)


def f32(*shape, low=None, high=None):
    if low is not None:
        return ms.Tensor(rng.uniform(low, high, shape).astype(np.float32))
    return ms.Tensor(rng.standard_normal(shape).astype(np.float32))


X = f32(2, 4, 5, 6)
S = f32(2, 4, 8)
A = f32(3, 4)
B = f32(3, 4)
P = f32(3, 4, low=0.1, high=0.9)
W4 = f32(4, 2, 3)
COLS = f32(2, 16, 12)
THETA = f32(2, 2, 3)
IMG1 = f32(2, 3, 16, 16, low=0.0, high=1.0)
IMG2 = f32(2, 3, 16, 16, low=0.0, high=1.0)
BIG1 = f32(1, 2, 48, 48, low=0.0, high=1.0)
BIG2 = f32(1, 2, 48, 48, low=0.0, high=1.0)
LABELS = ms.Tensor(np.array([0, 3, 1], np.int64))
ONE_HOT = ms.Tensor(np.eye(4, dtype=np.float32)[[1, 0, 3]])
SEG = f32(2, 3, 4, 4)
SEG_LABEL = ms.Tensor(np.eye(3, dtype=np.float32)[rng.integers(0, 3, (2, 4, 4))].transpose(0, 3, 1, 2).copy())
COUNTS = ms.Tensor(rng.integers(0, 5, (3, 4)).astype(np.float32))
# drawn here, not in the cases: a test runs them in any order
A3, W3, COLS2, G4, B4, THETA3 = f32(3, 3), f32(3, 4, 3), f32(1, 8, 20), f32(4), f32(4), f32(1, 3, 4)
T1, T2 = f32(2, 3, 4), f32(2, 3, 3)


def seeded(make):
    np.random.seed(5)
    ms.set_seed(5)
    return make()


def bidense():
    layer = seeded(lambda: nn.BiDense(4, 3, 2))
    return [layer(A, A3), layer.weight, layer.bias]


def bidense_3d():
    layer = seeded(lambda: nn.BiDense(4, 3, 5, has_bias=False))
    return layer(T1, T2)


def time_distributed(reshape_with_axis):
    dense = seeded(lambda: nn.Dense(4, 3))
    return nn.TimeDistributed(dense, time_axis=1, reshape_with_axis=reshape_with_axis)(S.transpose(0, 2, 1))


def celldict():
    cells = seeded(lambda: nn.CellDict({"dense": nn.Dense(4, 2), "relu": nn.ReLU()}))
    cells["tanh"] = nn.Tanh()
    names = sorted(p.name for p in cells.get_parameters())
    assert names == ["dense.bias", "dense.weight"], names
    assert list(cells.keys()) == ["dense", "relu", "tanh"] and "relu" in cells and len(cells) == 3
    return cells["tanh"](cells["relu"](cells["dense"](A)))


def graph(cell, *inputs):
    """MindSpore 2.10's PSNR / SSIM / MSSSIM run in graph mode only (PyNative
    refuses their ScalarCast of max_val)."""
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        return cell(*inputs)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def grad(fn, *inputs):
    """d sum(fn(inputs) ** 2) / d inputs[0]."""
    def loss(*args):
        y = fn(*args)
        return ops.sum(y * y)
    return ms.grad(loss)(*inputs)


class SSIMLoss(nn.Cell):
    def __init__(self):
        super().__init__()
        self.ssim = nn.SSIM(filter_size=5)

    def construct(self, x):
        return ops.sum(self.ssim(x, IMG2))


def weight_grads(net, *inputs):
    def loss(*args):
        y = net(*args)
        return ops.sum(y * y)
    value, grads = ms.value_and_grad(loss, None, net.trainable_params())(*inputs)
    return [value, *grads]


CASES = {
    # --- functions
    "conv1d": lambda: ops.conv1d(S, W4, ms.Tensor(np.array([.1, .2, .3, .4], np.float32)), 2, "pad", 1, 1, 2),
    "conv1d_same": lambda: ops.conv1d(S, W3, None, 1, "same", 0, 2),
    "avg_pool1d": lambda: ops.avg_pool1d(S, 3, 2, 1, True, False),
    "avg_pool1d_plain": lambda: ops.avg_pool1d(S, 2, 2),
    "adaptive_avg_pool1d": lambda: ops.adaptive_avg_pool1d(S, 4),
    "adaptive_max_pool1d": lambda: ops.adaptive_max_pool1d(S, 2),
    "adaptive_max_pool2d": lambda: ops.adaptive_max_pool2d(X, (3, 4)),
    "adaptive_max_pool2d_even": lambda: ops.adaptive_max_pool2d(X, (5, 3)),
    "adaptive_max_pool2d_chw": lambda: ops.adaptive_max_pool2d(X[0], (None, 4)),
    "lp_pool1d": lambda: ops.lp_pool1d(S, 2, 3, 2),
    "lp_pool1d_unbatched": lambda: ops.lp_pool1d(S[0], 1, 2),
    "lp_pool2d": lambda: ops.lp_pool2d(X, 2.0, 2, 1, True),
    "lp_pool2d_p3": lambda: ops.lp_pool2d(ops.abs(X), 3, (2, 3)),
    "unfold": lambda: ops.unfold(X, 2, padding=1, stride=2),
    "unfold_dilated": lambda: ops.unfold(X, (2, 3), dilation=(1, 2), padding=(0, 1), stride=1),
    "fold": lambda: ops.fold(COLS, ms.Tensor([6, 8], ms.int32), 2, stride=2),
    "fold_padded": lambda: ops.fold(COLS2, ms.Tensor([5, 6], ms.int32), 2, (2, 1), 1, (1, 2)),
    "group_norm": lambda: ops.group_norm(X, 2, G4, B4),
    "group_norm_plain": lambda: ops.group_norm(S, 4, eps=1e-3),
    "channel_shuffle": lambda: ops.channel_shuffle(X, 2),
    "affine_grid": lambda: ops.affine_grid(THETA, (2, 3, 4, 5)),
    "affine_grid_corners": lambda: ops.affine_grid(THETA, (2, 3, 4, 5), True),
    "affine_grid_3d": lambda: ops.affine_grid(THETA3, (1, 1, 2, 3, 4)),
    "multi_margin_loss": lambda: ops.multi_margin_loss(A, LABELS),
    "multi_margin_loss_weighted": lambda: ops.multi_margin_loss(
        A, LABELS, 2, 2, ms.Tensor(np.array([.5, 1, 2, 3], np.float32)), "none"),
    "multi_margin_loss_sum": lambda: ops.multi_margin_loss(A, LABELS, reduction="sum"),
    "dropout2d_eval": lambda: ops.dropout2d(X, 0.5, False),
    "dropout1d_p0": lambda: ops.dropout1d(S, 0.0),
    "upsample": lambda: ops.upsample(X, size=(7, 9), mode="bilinear", align_corners=True),
    # --- layers
    "AdaptiveAvgPool1d": lambda: nn.AdaptiveAvgPool1d(2)(S),
    "AdaptiveMaxPool1d": lambda: nn.AdaptiveMaxPool1d(4)(S),
    "AdaptiveMaxPool2d": lambda: nn.AdaptiveMaxPool2d((2, None))(X),
    "LPPool1d": lambda: nn.LPPool1d(2, 3)(S),
    "LPPool2d": lambda: nn.LPPool2d(1.5, (2, 2), 1)(ops.abs(X)),
    "Unfold": lambda: nn.Unfold([1, 2, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1])(X),
    "Unfold_same": lambda: nn.Unfold([1, 3, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "same")(X),
    "InstanceNorm1d": lambda: nn.InstanceNorm1d(4)(S),
    "CellDict": celldict,
    "FocalLoss": lambda: nn.FocalLoss(gamma=2.0)(A, ms.Tensor(np.array([[1], [0], [3]], np.int32))),
    "FocalLoss_onehot_weighted": lambda: nn.FocalLoss(ms.Tensor(np.array([1, 2, .5, 1], np.float32)), 1.5)(
        A, ONE_HOT),
    "FocalLoss_4d": lambda: nn.FocalLoss(reduction="none")(SEG, ms.Tensor(np.argmax(SEG_LABEL.asnumpy(), 1)[:, None]
                                                                          .astype(np.int32))),
    "DiceLoss": lambda: nn.DiceLoss()(P, ops.sigmoid(B)),
    "MultiClassDiceLoss": lambda: nn.MultiClassDiceLoss()(SEG, SEG_LABEL),
    "MultiClassDiceLoss_weighted": lambda: nn.MultiClassDiceLoss(
        ms.Tensor(np.array([[1.0], [2.0], [0.5]], np.float32)), 1, "sigmoid")(SEG, SEG_LABEL),
    "MultiMarginLoss": lambda: nn.MultiMarginLoss(margin=0.5)(A, LABELS),
    "MultiMarginLoss_weighted": lambda: nn.MultiMarginLoss(2, 1.0, "none")(
        A, LABELS, ms.Tensor(np.array([1, 2, 3, 4], np.float32))),
    "PoissonNLLLoss": lambda: nn.PoissonNLLLoss()(A, COUNTS),
    "PoissonNLLLoss_full": lambda: nn.PoissonNLLLoss(False, True, reduction="sum")(P * 3, COUNTS),
    "TripletMarginWithDistanceLoss": lambda: nn.TripletMarginWithDistanceLoss()(A, B, P),
    "TripletMarginWithDistanceLoss_swap": lambda: nn.TripletMarginWithDistanceLoss(
        lambda x, y: ops.sum(ops.abs(x - y), 1), True, "none", 0.5)(A, B, P),
    "PSNR": lambda: graph(nn.PSNR(), IMG1, IMG2),
    "PSNR_uint8": lambda: graph(nn.PSNR(255), ms.Tensor((IMG1.asnumpy() * 255).astype(np.uint8)),
                                ms.Tensor((IMG2.asnumpy() * 255).astype(np.uint8))),
    "SSIM": lambda: graph(nn.SSIM(), IMG1, IMG2),
    "SSIM_small": lambda: graph(nn.SSIM(2.0, 5, 1.0, 0.02, 0.05), IMG1 * 2, IMG2 * 2),
    "MSSSIM": lambda: graph(nn.MSSSIM(power_factors=(0.3, 0.3, 0.4), filter_size=5), BIG1, BIG2),
    "ImageGradients": lambda: nn.ImageGradients()(X),
    "ImageGradients_row": lambda: nn.ImageGradients()(X[:, :, :1]),
    "Moments": lambda: nn.Moments()(A),
    "Moments_axis": lambda: nn.Moments(axis=(0, 2), keep_dims=True)(S),
    "ReduceLogSumExp": lambda: nn.ReduceLogSumExp(1)(A),
    "ReduceLogSumExp_keep": lambda: nn.ReduceLogSumExp((0, 2), True)(S),
    "MatrixDiag": lambda: nn.MatrixDiag()(A),
    "MatrixDiagPart": lambda: nn.MatrixDiagPart()(S.transpose(0, 2, 1)),
    "MatrixSetDiag": lambda: nn.MatrixSetDiag()(S, ms.Tensor(np.arange(8, dtype=np.float32).reshape(2, 4))),
    "TimeDistributed": lambda: time_distributed(None),
    "TimeDistributed_reshape": lambda: time_distributed(0),
    "BiDense": bidense,
    "BiDense_3d": bidense_3d,
    "L1Regularizer": lambda: nn.L1Regularizer(0.5)(A),
    "RReLU_flat": lambda: nn.RReLU(0.2, 0.2)(A),
    # --- gradients
    "grad_conv1d": lambda: grad(lambda x: ops.conv1d(x, W4, None, 2, "pad", 1, 1, 2), S),
    "grad_avg_pool1d": lambda: grad(lambda x: ops.avg_pool1d(x, 3, 2, 1), S),
    "grad_adaptive_max_pool2d": lambda: grad(lambda x: ops.adaptive_max_pool2d(x, (3, 4)), X),
    "grad_lp_pool2d": lambda: grad(lambda x: ops.lp_pool2d(x, 2, 2), X),
    "grad_unfold": lambda: grad(lambda x: ops.unfold(x, 2, dilation=2, padding=1), X),
    "grad_fold": lambda: grad(lambda x: ops.fold(x, ms.Tensor([6, 8], ms.int32), 2, stride=2), COLS),
    "grad_group_norm": lambda: grad(lambda x: ops.group_norm(x, 2) * ops.arange(6, dtype=ms.float32), X),
    "grad_affine_grid": lambda: grad(lambda t: ops.affine_grid(t, (2, 1, 3, 4)), THETA),
    "grad_multi_margin_loss": lambda: grad(lambda x: ops.multi_margin_loss(x, LABELS, 2), A),
    "grad_FocalLoss": lambda: grad(lambda x: nn.FocalLoss()(x, ONE_HOT), A),
    "grad_MultiClassDiceLoss": lambda: grad(lambda x: nn.MultiClassDiceLoss()(x, SEG_LABEL), SEG),
    "grad_SSIM": lambda: graph(ms.grad(SSIMLoss()), IMG1),
    "grad_PoissonNLLLoss": lambda: grad(lambda x: nn.PoissonNLLLoss(reduction="none")(x, COUNTS), A),
    "grad_Moments": lambda: grad(lambda x: nn.Moments(1)(x)[1], A),
    "grad_BiDense": lambda: weight_grads(seeded(lambda: nn.BiDense(4, 4, 3)), A, B),
}


if __name__ == "__main__":
    dump_cases(CASES, sys.stdout)
