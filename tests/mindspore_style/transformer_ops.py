"""What the model zoo's Transformer needs beyond the common ops: ``ops.TopK``
and ``ops.GatherNd`` (its beam search), ``nn.ClipByNorm`` (its gradient
clipping) and ``Parameter.value()``, eagerly, in a GRAPH_MODE Cell and
through gradients.  MindSpore's output is in transformer_ops.mindspore.txt."""
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor, Parameter

ms.set_context(mode=ms.GRAPH_MODE)
x = Tensor(np.array([[1.0, 3.0, 3.0, -1e9, 2.0, -1e9], [-1e9, -1e9, -1e9, -1e9, 0.5, 0.5]], np.float32))
v, i = ops.TopK(sorted=True)(x, 4)
print("topk", v.asnumpy().tolist(), i.asnumpy().tolist(), i.dtype)
cube = Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
idx = Tensor(np.array([[[0, 2], [0, 0]], [[1, 1], [1, 2]]], np.int32))
print("gather_nd", ops.gather_nd(cube, idx).asnumpy().tolist())
print("gather_nd full", ops.gather_nd(cube, Tensor(np.array([[1, 2, 3], [0, 1, 1]], np.int32))).asnumpy().tolist())
clip = nn.ClipByNorm()
print("clip", clip(Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), Tensor(np.array([5.0], np.float32))).asnumpy().round(5).tolist())


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.linspace(-1, 1, 24).reshape(2, 3, 4).astype(np.float32)), name="w")
        self.topk = ops.TopK(sorted=True)
        self.gather_nd = ops.GatherNd()
        self.clip = nn.ClipByNorm()

    def construct(self, idx):
        picked = self.gather_nd(self.w.value() * 3.0, idx)
        top, _ = self.topk(picked, 2)
        return ops.reduce_sum(self.clip(top, Tensor(np.array([1.5], np.float32))) ** 2)


net = Net()
print("net", round(float(net(idx).asnumpy()), 5))
grad = ms.grad(net, grad_position=None, weights=net.trainable_params())(idx)
print("grad", np.round(grad[0].asnumpy(), 5).tolist())
step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), 0.1))
print("step", round(float(step(idx).asnumpy()), 5), np.round(net.w.asnumpy()[0, 0], 5).tolist())
