"""NMSWithMask (its CPU kernel's order and IoU), RandomChoiceWithMask's
shapes, padding and mask, a Cell holding an Ascend-only DynamicRNN it never
calls, and a one-hot ('none', 'sum') cross entropy given labels outside its
classes, as the model zoo's CTPN takes them; eager and compiled.  MindSpore's
output is in nms_choice.mindspore.txt."""
import numpy as np, mindspore as ms
from mindspore import nn, ops
from mindspore.ops import operations as P


def show(name, outs):
    o, i, m = (t.asnumpy() for t in outs)
    print(name, o.dtype, o.tolist(), i.dtype, i.tolist(), m.tolist())


b = ms.Tensor(np.array([[0, 0, 16, 16, .9], [1, 1, 16, 16, .8], [30, 30, 40, 40, .7],
                        [0, 0, 16, 16, .95], [31, 31, 40, 40, .1]], np.float32))
show("nms", P.NMSWithMask(0.5)(b))
ties = ms.Tensor(np.array([[k, 0, k + 10, 10, .5] for k in range(7)], np.float32))
show("ties", ops.NMSWithMask(0.5)(ties))
edge = ms.Tensor(np.array([[0, 0, 1, 1, .9], [0, 0, 1, 2, .8]], np.float32))   # IoU 1/2, not 4/6
for t in (0.49, 0.5, 0.7):
    print("threshold", t, P.NMSWithMask(t)(edge)[2].asnumpy().tolist())
show("float16", P.NMSWithMask(0.3)(ms.Tensor(np.array([[0, 0, 7, 9, .3], [1, 2, 8, 8, .6], [2, 1, 9, 9, .6],
                                                       [20, 20, 21, 22, .1]], np.float16))))
rng = np.random.RandomState(7)
for n in (9, 64, 300):
    xy = rng.randint(0, 60, (n, 2)).astype(np.float32)
    boxes = np.concatenate([xy, xy + rng.randint(0, 30, (n, 2)), (rng.randint(0, 5, (n, 1)) / 7.0)], 1)
    boxes = boxes.astype(np.float32)                      # scores of 5 values: many ties
    o, i, m = (t.asnumpy() for t in P.NMSWithMask(0.25)(ms.Tensor(boxes)))
    order = [int(np.flatnonzero((boxes == row).all(1))[0]) for row in o]
    print("random", n, "kept", np.flatnonzero(m).tolist(), "order", order[:40], sum(k * v for k, v in enumerate(order)))


class Suppress(nn.Cell):
    def __init__(self):
        super().__init__()
        self.nms = P.NMSWithMask(0.5)

    def construct(self, x):
        return self.nms(x * 1.0)


show("compiled", ms.jit(Suppress())(b))
show("compiled ties", ms.jit(Suppress())(ties))

x = ms.Tensor(np.array([True, False, True, True, False, True, True, False, True, True]))
idx, mask = P.RandomChoiceWithMask(8)(x)
print("choice", idx.shape, idx.dtype, mask.shape, mask.dtype, sorted(idx.asnumpy()[mask.asnumpy()].ravel().tolist()),
      idx.asnumpy()[~mask.asnumpy()].tolist(), mask.asnumpy().tolist())
idx, mask = P.RandomChoiceWithMask(3, 1, 2)(x)
print("choice of 3", idx.shape, mask.asnumpy().tolist(), len(set(idx.asnumpy().ravel().tolist())),
      set(idx.asnumpy().ravel().tolist()) <= {0, 2, 3, 5, 6, 8, 9})
grid = ms.Tensor(np.array([[True, False, True], [False, True, True]]))
idx, mask = ops.choice_with_mask(grid, 6)
print("choice 2-d", idx.shape, sorted(map(tuple, idx.asnumpy()[mask.asnumpy()].tolist())),
      idx.asnumpy()[~mask.asnumpy()].tolist(), mask.asnumpy().tolist())


class Sample(nn.Cell):
    def __init__(self):
        super().__init__()
        self.choice = P.RandomChoiceWithMask(12)

    def construct(self, x):
        idx, mask = self.choice(x > 0)
        return idx * 1, mask


values = ms.Tensor(np.array([[1., -1, 2, 0], [3, 4, -2, 5]], np.float32))
idx, mask = ms.jit(Sample())(values)
print("compiled choice", idx.shape, idx.dtype, sorted(map(tuple, idx.asnumpy()[mask.asnumpy()].tolist())),
      idx.asnumpy()[~mask.asnumpy()].tolist(), mask.asnumpy().tolist())


class AscendBranch(nn.Cell):
    """The model zoo's CTPN holds DynamicRNNs it calls on Ascend only."""
    def __init__(self):
        super().__init__()
        self.rnn = P.DynamicRNN(forget_bias=0.0)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(x)


print("dynamic rnn held", AscendBranch()(ms.Tensor(np.array([-1.0, 2.0], np.float32))).asnumpy().tolist())

logits = ms.Tensor(np.array([[1., 2.], [0.5, -1.], [3., 1.], [0., 0.]], np.float32))
labels = ms.Tensor(np.array([1, 250, -1, 0], np.int32))
weights = ms.Tensor(np.array([1., 2., 3., 4.], np.float32))
for reduction in ("none", "sum"):
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction=reduction)
    total = lambda a, y: (loss(a, y) * (weights if reduction == "none" else 1.0)).sum()   # noqa: E731
    print("labels outside", reduction, loss(logits, labels).asnumpy().round(6).tolist(),
          ms.grad(total)(logits, labels).asnumpy().round(6).tolist(),
          ms.jit(ms.grad(total))(logits, labels).asnumpy().round(6).tolist(),
          ms.jit(total)(logits, labels).asnumpy().round(6).tolist())
