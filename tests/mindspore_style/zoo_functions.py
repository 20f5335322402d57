"""The model zoo's further ops functions irc lacked: ops.range (35 uses),
tensor_dot (15), repeat_elements (12), add_flags (8), sequence_mask,
pixel_shuffle / pixel_unshuffle; values, and gradients inside a Cell.
MindSpore's output is in zoo_functions.mindspore.txt."""
import numpy as np
import mindspore as ms
from mindspore import Tensor, nn, ops
from mindspore import dtype as mstype

r = ops.range(Tensor(0, mstype.int32), Tensor(10, mstype.int32), Tensor(4, mstype.int32))
print("range", r.asnumpy().tolist(), r.dtype)
r = ops.range(Tensor(1.0, mstype.float32), Tensor(2.0, mstype.float32), Tensor(0.25, mstype.float32))
print("range float", r.asnumpy().tolist(), r.dtype)
a = Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
b = Tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
print("tensor_dot", ops.tensor_dot(a, b, ((2,), (0,))).asnumpy().tolist())
c = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
print("tensor_dot 2", ops.tensor_dot(a, c, ((1, 2), (0, 1))).asnumpy().tolist())
x = Tensor(np.array([[1, 2], [3, 4]], np.int32))
print("repeat_elements", ops.repeat_elements(x, 2, 1).asnumpy().tolist(), ops.repeat_elements(x, 3).asnumpy().tolist())
print("add_flags", ops.add_flags(lambda t: t + 1, has_effect=True)(Tensor(np.float32(1.0))))
lengths = Tensor(np.array([1, 3, 2], np.int32))
print("sequence_mask", ops.sequence_mask(lengths, 4).asnumpy().tolist(), ops.sequence_mask(lengths).asnumpy().tolist())
p = Tensor(np.arange(2 * 8 * 2 * 3, dtype=np.float32).reshape(2, 8, 2, 3))
s = ops.pixel_shuffle(p, 2)
print("pixel_shuffle", s.shape, s.asnumpy()[1, 1].tolist())
print("pixel_unshuffle", ops.pixel_unshuffle(s, 2).shape, bool((ops.pixel_unshuffle(s, 2) == p).all()))


class Net(nn.Cell):
    def construct(self, u, v):
        t = ops.tensor_dot(u, v, ((2,), (0,)))
        shuffled = ops.pixel_shuffle(ops.reshape(u * u, (1, 24, 1, 1)), 2)       # (1, 6, 2, 2)
        return (ops.repeat_elements(t, 2, 1) * 0.5).sum() + (shuffled * shuffled[:, :1]).sum()


u = Tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4))
v = Tensor(np.linspace(0.5, -0.5, 12, dtype=np.float32).reshape(4, 3))
gu, gv = ms.grad(Net(), grad_position=(0, 1))(u, v)
print("Net", round(float(Net()(u, v)), 5))
print("grad u", np.round(gu.asnumpy(), 4).tolist())
print("grad v", np.round(gv.asnumpy(), 4).tolist())
