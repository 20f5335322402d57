"""MindSpore's attribute-less math primitives (the model zoo's ArcFace margin
calls ops.ACos()): values eagerly, and values and gradients inside a Cell
under ms.grad.  MindSpore's output is in trig_primitives.mindspore.txt."""
import numpy as np
import mindspore as ms
from mindspore import Tensor, nn, ops

x = Tensor(np.array([[0.1, -0.3, 0.7], [0.45, -0.9, 0.0]], np.float32))
y = Tensor(np.array([[0.5, 2.0, -1.5], [0.0, 1.25, -0.2]], np.float32))
big = Tensor(np.array([[1.5, 2.0, 3.5], [1.0, 1.25, 4.0]], np.float32))
unary = {"ACos": x, "Asin": x, "Atan": y, "Acosh": big, "Asinh": y, "Atanh": x, "Cosh": y, "Sinh": y,
         "Ceil": y, "Trunc": y, "Softsign": y, "Mish": y, "Sinc": y, "SeLU": y, "Inv": big}
for name, arg in unary.items():
    print(name, np.round(getattr(ops, name)()(arg).asnumpy(), 5).tolist())
for name in ("Atan2", "Hypot", "Xlogy", "Xdivy", "SquaredDifference", "DivNoNan", "MulNoNan"):
    print(name, np.round(getattr(ops, name)()(big if name == "Xlogy" else x, y).asnumpy(), 5).tolist())
print("Heaviside", ops.Heaviside()(y, Tensor(np.float32(0.5))).asnumpy().tolist())
print("LogicalXor", ops.LogicalXor()(Tensor(x.asnumpy() > 0), Tensor(y.asnumpy() > 0)).asnumpy().tolist())
print("IsInf", ops.IsInf()(Tensor(np.array([1.0, np.inf, -np.inf, np.nan], np.float32))).asnumpy().tolist())
print("Rank", ops.Rank()(x))


class Margin(nn.Cell):            # ArcFace's additive angular margin, in small
    def __init__(self):
        super().__init__()
        self.acos, self.cos, self.sinh = ops.ACos(), ops.Cos(), ops.Sinh()
        self.atan2, self.sqd = ops.Atan2(), ops.SquaredDifference()

    def construct(self, a, b):
        return (self.cos(self.acos(a) + 0.5) + self.sinh(b) * 0.1 + self.atan2(a, b) +
                self.sqd(a, b)).sum()


ga, gb = ms.grad(Margin(), grad_position=(0, 1))(x, y)
print("Margin", round(float(Margin()(x, y).asnumpy()), 5))
print("grad a", np.round(ga.asnumpy(), 4).tolist())
print("grad b", np.round(gb.asnumpy(), 4).tolist())
