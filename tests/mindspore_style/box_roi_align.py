"""BoundingBoxEncode / BoundingBoxDecode (primitives and functions, float32
as its CPU kernels compute them), ROIAlign (roi_end_mode 1 and 0, sample_num
2 and 3, a roi past the edge, a tiny one, one MindSpore skips: x1 = x2 = 0)
and its gradient for the features, eager and compiled, as the model zoo's
Faster R-CNN uses them; and GRAPH_MODE's augmented assignment of a Tensor a
Cell holds (``loss = self.loss; loss += x``: what each call added stays, as
Faster R-CNN's RPN loss sums over the steps).  MindSpore's output is in
box_roi_align.mindspore.txt."""
import numpy as np, mindspore as ms
from mindspore import nn, ops

rng = np.random.RandomState(3)
a = np.abs(rng.rand(6, 4) * 40).astype(np.float32)
a[:, 2:] += a[:, :2]
g = np.abs(rng.rand(6, 4) * 40).astype(np.float32)
g[:, 2:] += g[:, :2]
d = (rng.randn(6, 4) * 2).astype(np.float32)
d[0, 2] = 9.0                                               # past |log(wh_ratio_clip)|
show = lambda name, t: print(name, np.round(t.asnumpy().astype(np.float64), 6).tolist())   # noqa: E731
show("encode", ops.BoundingBoxEncode(means=(0.0, 0.1, 0.0, -0.1), stds=(0.1, 0.1, 0.2, 0.2))(
    ms.Tensor(a), ms.Tensor(g)))
show("encode fn", ops.bounding_box_encode(ms.Tensor(a), ms.Tensor(g)))
show("decode", ops.BoundingBoxDecode(max_shape=(50, 60), means=(0.0, 0.0, 0.1, 0.0), stds=(0.1, 0.1, 0.2, 0.2))(
    ms.Tensor(a), ms.Tensor(d)))
show("decode fn", ops.bounding_box_decode(ms.Tensor(a), ms.Tensor(d), (30, 40), wh_ratio_clip=0.1))

f = rng.randn(2, 2, 7, 9).astype(np.float32)
rois = np.array([[0, 1, 2, 20, 14], [1, 0, 0, 5, 3], [1, 10.5, 3.2, 11, 3.4], [0, 0, 4, 0, 9],
                 [0, 20, 12, 60, 50], [1, -6, -5, 8, 7], [0, 2.25, 1.75, 30.5, 22.125]], np.float32)
weights = np.cos(np.arange(7 * 2 * 2 * 3, dtype=np.float32)).reshape(7, 2, 2, 3)


class Pool(nn.Cell):
    def __init__(self, op):
        super().__init__()
        self.op = op

    def construct(self, x, r):
        return (self.op(x, r) * ms.Tensor(weights)).sum()


for mode, sample, scale in ((1, 2, 0.25), (1, 3, 0.5), (0, 2, 0.125)):
    op = ops.ROIAlign(2, 3, scale, sample, mode)
    out = op(ms.Tensor(f), ms.Tensor(rois)).asnumpy()
    out[3] = 0                                              # x1 = x2 = 0: MindSpore's kernel leaves it unwritten
    print("roi_align", mode, sample, np.round(out.astype(np.float64), 6).tolist())
    if mode == 1:                                           # MindSpore 2.10's gradient takes roi_end_mode 1 always
        grads = ms.grad(Pool(op), (0, 1))(ms.Tensor(f), ms.Tensor(rois))
        show("roi_align grad", grads[0])
        print("roi_align grad rois", grads[1].asnumpy().tolist())

ms.set_context(mode=ms.GRAPH_MODE)
op = ops.ROIAlign(2, 3, 0.25, 2)
show("roi_align graph grad", ms.grad(Pool(op), 0)(ms.Tensor(f), ms.Tensor(rois)))


class Sums(nn.Cell):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.loss = ms.numpy.zeros((1,), np.float32)
        self.other = ms.Tensor(np.ones((1,), np.float32))

    def construct(self, x):
        loss = self.loss
        if self.kind == 0:
            for _ in range(2):
                loss += x
        elif self.kind == 1:
            loss = loss + x                                 # a new tensor: nothing kept
        else:
            other = self.other
            other -= x
            other *= 2
            loss += other
        return loss


for mode_name, mode in (("graph", ms.GRAPH_MODE), ("pynative", ms.PYNATIVE_MODE)):
    ms.set_context(mode=mode)
    for kind in range(3):
        net = Sums(kind)
        got = [float(net(ms.Tensor(np.full((1,), 3.0, np.float32))).asnumpy()[0]) for _ in range(3)]
        print("augmented", mode_name, kind, got, "held", float(net.loss.asnumpy()[0]), float(net.other.asnumpy()[0]))
