"""GradOperation(get_all=True) over a loss that also takes an int32 label
(the model zoo's PointNet2 differentiates so): the label's gradient is int32
zeros; a Tensor the Cell holds, passed on as an argument, is folded in and
has none.  MindSpore's output is in grad_int_inputs.mindspore.txt."""
import numpy as np
import mindspore as ms
from mindspore import Tensor, nn, ops

ms.set_context(mode=ms.GRAPH_MODE)


class Loss(nn.Cell):
    def construct(self, x, label):
        return (x * x * ops.one_hot(label, 3, Tensor(1.0), Tensor(0.0))).sum()


class G(nn.Cell):
    def __init__(self):
        super().__init__()
        self.loss = Loss()
        self.grad = ops.GradOperation(get_all=True)
        self.label = Tensor(np.array([0, 2], np.int32))

    def construct(self, x, label):
        return self.grad(self.loss)(x, label)


class GHeld(G):
    def construct(self, x):
        return self.grad(self.loss)(x, self.label)


x, label = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), Tensor(np.array([0, 2], np.int32))
for name, grads in (("argument", G()(x, label)), ("held", GHeld()(x))):
    print(name, len(grads), [(str(g.dtype), g.asnumpy().tolist()) for g in grads])
