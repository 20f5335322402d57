"""Gradients of gradients, as WGAN-GP's critic penalty and Hessian
diagonals take them: ms.grad of ms.grad, and the penalty
(|dD/dx| - 1)^2 differentiated for the critic's weights, eagerly and in a
jitted Adam step, with Tanh, LeakyReLU and ReLU critics; MindSpore 2.10's
numbers in gradient_penalty.mindspore.txt."""
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor

ms.set_seed(0)
x = Tensor(np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32))


def cube_sum(v):
    return (v ** 3).sum()


def tanh_mean(v):
    return ops.tanh(v).mean()


print("second", ms.grad(ms.grad(cube_sum))(x).asnumpy().round(5).tolist())
print("second tanh mean", ms.grad(ms.grad(tanh_mean))(x).asnumpy().round(6).tolist())
for act in (nn.Tanh(), nn.LeakyReLU(0.2), nn.ReLU()):
    D = nn.SequentialCell(nn.Dense(3, 8), act, nn.Dense(8, 4), act, nn.Dense(4, 1))

    def critic_sum(r):
        return D(r).sum()
    critic_grad = ms.grad(critic_sum)

    def gp(real):
        grads = critic_grad(real)
        return ((ops.sqrt((grads ** 2).sum(axis=1)) - 1) ** 2).mean()
    v, gs = ms.value_and_grad(gp, None, D.trainable_params())(x)
    print("gp", type(act).__name__, round(float(v.asnumpy()), 6), [round(float(t.asnumpy().sum()), 6) for t in gs])
    opt = nn.Adam(D.trainable_params(), 0.01)
    gp_grad = ms.value_and_grad(gp, None, opt.parameters)

    @ms.jit
    def step(real):
        v, gs = gp_grad(real)
        opt(gs)
        return v
    print("gp steps", [round(float(step(x).asnumpy()), 5) for _ in range(4)])
