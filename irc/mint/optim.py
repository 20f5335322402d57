"""``mindspore.mint.optim``: PyTorch-style optimizers (``SGD(params, lr,
momentum=0, ...)``, ``Adam``, ``AdamW``, ``FusedAdamW``), called on the
gradients as MindSpore's: ``optimizer(grads)`` after ``value_and_grad``.

- ``SGD`` is irc's SGD update (PyTorch's: the first step's momentum buffer
  is the gradient; dampening; Nesterov; weight decay added to the
  gradient), so it also trains under ``Model.train``.
- ``Adam`` and ``AdamW`` update as MindSpore 2.10's mint ones: bias
  corrections ``1 - beta^t``, ``param -= lr / (1 - beta1^t) * m /
  (sqrt(v) / sqrt(1 - beta2^t) + eps)``; Adam adds ``weight_decay * param``
  to the gradient, AdamW first scales the parameter by ``1 - lr *
  weight_decay``.  They are written with irc.ops (their state
  ``exp_avg.<param>``, ``exp_avg_sq.<param>``, ``state_step``), so they run
  eagerly and inside ``jit``; ``Model.train`` compiles only the optimizers
  of its own update table and says so.
"""
from __future__ import annotations

import numpy as np

from .. import ops
from ..common.tensor import Parameter
from ..diagnostics import UnsupportedError, UserValueError, missing_names, user_frame
from ..nn import optim as _optim
from ..ops._dispatch import assign

_GROUP_KEYS = {"params", "lr", "weight_decay"}


def _check_groups(cls: str, params) -> list:
    """Parameters, or dicts of them with their own lr / weight_decay (irc
    takes no other per-group settings)."""
    items = list(params)
    for group in items:
        if isinstance(group, dict) and set(group) - _GROUP_KEYS:
            raise UnsupportedError(f"{cls}: a parameter group's {sorted(set(group) - _GROUP_KEYS)} "
                                   f"(irc's groups set lr and weight_decay)", where=user_frame())
        if isinstance(group, dict) and not isinstance(group.get("lr", 0.0), (int, float)):
            # PyTorch's group lr is a number; per-step rates are nn optimizers' (MindSpore's)
            raise UnsupportedError(f"{cls}: a parameter group's lr must be a number, got "
                                   f"{type(group['lr']).__name__}", where=user_frame(),
                                   hint="use mindspore.nn's optimizer for per-step group rates")
    return items


class _Torch:
    """PyTorch's decay: every parameter of an ungrouped list (MindSpore's nn
    optimizers skip the normalisations' gamma and beta)."""

    def _decay_all(self, params, weight_decay) -> None:
        if all(isinstance(p, Parameter) for p in params):
            self.weight_decays = [float(weight_decay)] * len(self.param_list)


class SGD(_Torch, _optim.SGD):
    def __init__(self, params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False):
        if maximize:
            raise UnsupportedError("SGD: maximize=True is not supported by irc", where=user_frame())
        params = _check_groups("SGD", params)
        super().__init__(params, float(lr), float(momentum), float(dampening), float(weight_decay),
                         bool(nesterov))
        self._decay_all(params, weight_decay)


class Adam(_Torch, _optim.Optimizer):
    kind = "mint.Adam"
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
                 *, maximize=False):
        cls = type(self).__name__
        params = _check_groups(cls, params)
        super().__init__(float(lr), params, float(weight_decay))
        self._decay_all(params, weight_decay)
        beta1, beta2 = (float(b) for b in betas)
        if not (0.0 <= beta1 < 1.0 and 0.0 <= beta2 < 1.0) or eps < 0:
            raise UserValueError(f"{cls}: betas must be in [0, 1) and eps at least 0, got {betas}, {eps}",
                                 where=user_frame())
        self.beta1, self.beta2, self.eps = beta1, beta2, float(eps)
        self.amsgrad, self.maximize = bool(amsgrad), bool(maximize)
        prefixes = ["exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if amsgrad else [])
        state = {(prefix, id(p)): Parameter(np.zeros(p.shape, np.float32), name=f"{prefix}.{key}",
                                            requires_grad=False)
                 for prefix in prefixes for p, key in zip(self.param_list, self._param_keys)}
        object.__setattr__(self, "_state", state)
        object.__setattr__(self, "state_step", Parameter(np.zeros(1, np.float32), name="state_step",
                                                         requires_grad=False))

    def state_parameters(self) -> list:
        return [*self._state.values(), self.state_step]

    def make_state(self) -> list:
        return self.state_parameters()

    def minimize_attrs(self, names: dict) -> dict:
        raise UnsupportedError(f"mint.optim.{type(self).__name__} under Model.train is not supported by "
                               f"irc yet", where=self.source,
                               hint="train with value_and_grad and optimizer(grads), or use "
                                    "mint.optim.SGD / nn.Adam with Model.train")

    def construct(self, gradients):
        grads = tuple(gradients) if isinstance(gradients, (tuple, list)) else (gradients,)
        if len(grads) != len(self.param_list):
            raise UserValueError(f"{type(self).__name__} has {len(self.param_list)} parameters but got "
                                 f"{len(grads)} gradients", where=user_frame())
        step = ops.add(self.state_step, 1.0)
        assign(self.state_step, step)
        step = ops.reshape(step, ())        # MindSpore's state_step is [1]; a scalar keeps each shape
        b1, b2 = self.beta1, self.beta2
        correction1 = ops.sub(1.0, ops.pow(b1, step))
        root_correction2 = ops.sqrt(ops.sub(1.0, ops.pow(b2, step)))
        for p, g, decay, own_lr in zip(self.param_list, grads, self.weight_decays, self.param_lrs):
            lr = self._fixed_rate() if own_lr is None else own_lr
            g = ops.neg(g) if self.maximize else g
            value = p
            if decay and self.decoupled:
                value = ops.mul(p, 1.0 - lr * decay)
            elif decay:
                g = ops.add(g, ops.mul(p, decay))
            m, v = self._state["exp_avg", id(p)], self._state["exp_avg_sq", id(p)]
            m_new = ops.add(ops.mul(m, b1), ops.mul(g, 1.0 - b1))
            v_new = ops.add(ops.mul(v, b2), ops.mul(ops.mul(g, g), 1.0 - b2))
            seen = v_new
            if self.amsgrad:
                most = self._state["max_exp_avg_sq", id(p)]
                seen = ops.maximum(most, v_new)
                assign(most, seen)
            denom = ops.add(ops.div(ops.sqrt(seen), root_correction2), self.eps)
            step_size = ops.neg(ops.div(lr, correction1))
            assign(p, ops.add(value, ops.mul(step_size, ops.div(m_new, denom))))
            assign(m, m_new)
            assign(v, v_new)
        return True


class AdamW(Adam):
    kind = "mint.AdamW"
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                 *, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


FusedAdamW = type("FusedAdamW", (AdamW,), {"__doc__": "AdamW (MindSpore's fused kernel: the same update)."})
__getattr__ = missing_names(__name__)
