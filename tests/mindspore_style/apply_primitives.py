"""The optimizer primitives (ops.ApplyMomentum ...) on Parameters: three
updates eagerly and three inside a jitted function; the variables and their
state printed."""
import numpy as np
import mindspore as ms
from mindspore import ops, Parameter, Tensor

rng = np.random.default_rng(0)
GRADS = [Tensor(rng.normal(size=(2, 3)).astype(np.float32)) for _ in range(3)]
f = np.float32


def params(*fills):
    start = rng.normal(size=(2, 3)).astype(np.float32)
    return [Parameter(Tensor(start), name="var")] + [
        Parameter(Tensor(np.full((2, 3), v, np.float32)), name=f"s{i}") for i, v in enumerate(fills)]


CASES = {
    "ApplyMomentum": (ops.ApplyMomentum(), (0.0,), lambda p, g: (p[0], p[1], f(0.1), g, f(0.9))),
    "ApplyGradientDescent": (ops.ApplyGradientDescent(), (), lambda p, g: (p[0], f(0.1), g)),
    "ApplyAdagrad": (ops.ApplyAdagrad(), (0.1,), lambda p, g: (p[0], p[1], f(0.1), g)),
    "ApplyAdagradV2": (ops.ApplyAdagradV2(epsilon=1e-3), (0.1,), lambda p, g: (p[0], p[1], f(0.1), g)),
    "ApplyRMSProp": (ops.ApplyRMSProp(), (1.0, 0.0),
                     lambda p, g: (p[0], p[1], p[2], f(0.01), g, f(0.9), f(0.5), f(1e-6))),
    "ApplyCenteredRMSProp": (ops.ApplyCenteredRMSProp(), (0.0, 1.0, 0.0),
                             lambda p, g: (p[0], p[1], p[2], p[3], g, f(0.01), f(0.9), f(0.5), f(1e-6))),
    "ApplyAdaMax": (ops.ApplyAdaMax(), (0.0, 0.0),
                    lambda p, g: (p[0], p[1], p[2], f(0.9), f(0.01), f(0.9), f(0.99), f(1e-8), g)),
    "ApplyAdadelta": (ops.ApplyAdadelta(), (0.0, 0.0),
                      lambda p, g: (p[0], p[1], p[2], f(1.0), f(0.9), f(1e-6), g)),
    "ApplyProximalAdagrad": (ops.ApplyProximalAdagrad(), (0.1,),
                             lambda p, g: (p[0], p[1], f(0.1), f(0.05), f(0.01), g)),
    "ApplyPowerSign": (ops.ApplyPowerSign(), (0.0,),
                       lambda p, g: (p[0], p[1], f(0.01), f(np.e), f(0.5), f(0.9), g)),
    "ApplyAddSign": (ops.ApplyAddSign(), (0.0,),
                     lambda p, g: (p[0], p[1], f(0.01), f(1.0), f(0.5), f(0.9), g)),
}

for name, (prim, fills, args) in CASES.items():
    for jitted in (False,):
        ps = params(*fills)

        def step(g):
            return prim(*args(ps, g))

        step = ms.jit(step) if jitted else step
        for g in GRADS:
            step(g)
        print(name, "jit" if jitted else "eager", [np.round(p.asnumpy().astype(np.float64), 5).tolist() for p in ps])
