"""MindSpore's optimizer primitives (``ops.ApplyMomentum`` ...), which a
user's optimizer calls on its Parameters in construct:
``self.apply_momentum(param, accum, lr, grad, momentum)``.  Each computes its
documented update in ``ops`` and assigns the new values to the Parameters
(eagerly at once; traced, as the step's updates, as ``ops.assign``), then
returns them as MindSpore's does.  The hyper-parameters may be numbers or
Tensors (a Parameter ``momentum``)."""
from __future__ import annotations

from ..common.tensor import Parameter, Tensor
from ..diagnostics import UserTypeError, user_frame
from . import functional as F
from .operations import Primitive


def _assigned(prim: str, pairs) -> tuple:
    """Assign each (Parameter, value); the Parameters."""
    for target, value in pairs:
        if not isinstance(target, Parameter):
            raise UserTypeError(f"For '{prim}', the variables to update must be Parameters, got "
                                f"{type(target).__name__}", where=user_frame(),
                                hint="hold the variable and its state as mindspore.Parameter")
        F.assign(target, F.cast(value, target.dtype))
    return tuple(target for target, _ in pairs)


def _one_minus(x):
    """1 - x of a hyper-parameter, a number or a Tensor."""
    return F.sub(1.0, x) if isinstance(x, Tensor) else 1.0 - x


def _sign_product(g, m):
    return F.mul(F.sign(g), F.sign(m))


class _ApplyPrimitive(Primitive):
    """A primitive keeping MindSpore's keyword options (use_locking ...) as attributes."""

    def __init__(self, **options):
        super().__init__()
        self.attrs.update(options)
        for name, value in options.items():
            setattr(self, name, value)


class ApplyMomentum(_ApplyPrimitive):
    """accum = momentum accum + grad; var -= lr accum (Nesterov: lr (grad + momentum accum))."""

    def __init__(self, use_nesterov=False, use_locking=False, gradient_scale=1.0):
        super().__init__(use_nesterov=use_nesterov, use_locking=use_locking, gradient_scale=gradient_scale)

    def __call__(self, variable, accumulation, learning_rate, gradient, momentum):
        accum = F.add(F.mul(accumulation, momentum), gradient)
        step = F.add(gradient, F.mul(accum, momentum)) if self.use_nesterov else accum
        var = F.sub(variable, F.mul(step, learning_rate))
        return _assigned("ApplyMomentum", [(variable, var), (accumulation, accum)])[0]


class ApplyGradientDescent(_ApplyPrimitive):
    """var -= alpha delta."""

    def __call__(self, var, alpha, delta):
        return _assigned("ApplyGradientDescent", [(var, F.sub(var, F.mul(alpha, delta)))])[0]


class ApplyAdagrad(_ApplyPrimitive):
    """accum += grad^2 (update_slots); var -= lr grad / sqrt(accum)."""

    def __init__(self, update_slots=True):
        super().__init__(update_slots=update_slots)

    def __call__(self, var, accum, lr, grad):
        return _adagrad(self, "ApplyAdagrad", var, accum, lr, grad, None)


class ApplyAdagradV2(_ApplyPrimitive):
    """accum += grad^2 (update_slots); var -= lr grad / (sqrt(accum) + epsilon)."""

    def __init__(self, epsilon, update_slots=True):
        super().__init__(epsilon=epsilon, update_slots=update_slots)

    def __call__(self, var, accum, lr, grad):
        return _adagrad(self, "ApplyAdagradV2", var, accum, lr, grad, self.epsilon)


def _adagrad(prim, name, var, accum, lr, grad, epsilon):
    new_accum = F.add(accum, F.square(grad)) if prim.update_slots else accum
    root = F.sqrt(new_accum) if epsilon is None else F.add(F.sqrt(new_accum), epsilon)
    return _assigned(name, [(var, F.sub(var, F.div(F.mul(lr, grad), root))), (accum, new_accum)])


class ApplyRMSProp(_ApplyPrimitive):
    """ms = decay ms + (1 - decay) grad^2; mom = momentum mom + lr grad / sqrt(ms + epsilon); var -= mom."""

    def __init__(self, use_locking=False):
        super().__init__(use_locking=use_locking)

    def __call__(self, var, mean_square, moment, learning_rate, grad, decay, momentum, epsilon):
        ms = F.add(F.mul(mean_square, decay), F.mul(F.square(grad), _one_minus(decay)))
        mom = F.add(F.mul(moment, momentum), F.div(F.mul(learning_rate, grad), F.sqrt(F.add(ms, epsilon))))
        return _assigned("ApplyRMSProp", [(var, F.sub(var, mom)), (mean_square, ms), (moment, mom)])[0]


class ApplyCenteredRMSProp(_ApplyPrimitive):
    """As ApplyRMSProp with mg = decay mg + (1 - decay) grad and sqrt(ms - mg^2 + epsilon)."""

    def __init__(self, use_locking=False):
        super().__init__(use_locking=use_locking)

    def __call__(self, var, mean_gradient, mean_square, moment, grad, learning_rate, decay, momentum, epsilon):
        rest = _one_minus(decay)
        mg = F.add(F.mul(mean_gradient, decay), F.mul(grad, rest))
        ms = F.add(F.mul(mean_square, decay), F.mul(F.square(grad), rest))
        root = F.sqrt(F.add(F.sub(ms, F.square(mg)), epsilon))
        mom = F.add(F.mul(moment, momentum), F.div(F.mul(learning_rate, grad), root))
        return _assigned("ApplyCenteredRMSProp", [(var, F.sub(var, mom)), (mean_gradient, mg),
                                                  (mean_square, ms), (moment, mom)])[0]


class ApplyAdaMax(_ApplyPrimitive):
    """m = beta1 m + (1 - beta1) grad; v = max(beta2 v, |grad|); var -= lr / (1 - beta1_power) m / (v + epsilon)."""

    def __call__(self, var, m, v, beta1_power, lr, beta1, beta2, epsilon, grad):
        new_m = F.add(F.mul(m, beta1), F.mul(grad, _one_minus(beta1)))
        new_v = F.maximum(F.mul(v, beta2), F.abs(grad))
        step = F.div(F.mul(new_m, lr), F.mul(F.add(new_v, epsilon), _one_minus(beta1_power)))
        return _assigned("ApplyAdaMax", [(var, F.sub(var, step)), (m, new_m), (v, new_v)])


class ApplyAdadelta(_ApplyPrimitive):
    """accum = rho accum + (1 - rho) grad^2; update = sqrt(accum_update + epsilon) / sqrt(accum +
    epsilon) grad; accum_update = rho accum_update + (1 - rho) update^2; var -= lr update."""

    def __call__(self, var, accum, accum_update, lr, rho, epsilon, grad):
        rest = _one_minus(rho)
        new_accum = F.add(F.mul(accum, rho), F.mul(F.square(grad), rest))
        update = F.mul(F.div(F.sqrt(F.add(accum_update, epsilon)), F.sqrt(F.add(new_accum, epsilon))), grad)
        new_update = F.add(F.mul(accum_update, rho), F.mul(F.square(update), rest))
        return _assigned("ApplyAdadelta", [(var, F.sub(var, F.mul(lr, update))), (accum, new_accum),
                                           (accum_update, new_update)])


class ApplyProximalAdagrad(_ApplyPrimitive):
    """accum += grad^2; r = lr / sqrt(accum); v = var - r grad; var = sign(v) max(|v| - r l1, 0) /
    (1 + r l2): MindSpore's kernels (its documentation has lr where they have r)."""

    def __init__(self, use_locking=False):
        super().__init__(use_locking=use_locking)

    def __call__(self, var, accum, lr, l1, l2, grad):
        new_accum = F.add(accum, F.square(grad))
        rate = F.div(lr, F.sqrt(new_accum))
        v = F.sub(var, F.mul(rate, grad))
        shrunk = F.maximum(F.sub(F.abs(v), F.mul(rate, l1)), 0.0)
        new_var = F.div(F.mul(F.sign(v), shrunk), F.add(1.0, F.mul(rate, l2)))
        return _assigned("ApplyProximalAdagrad", [(var, new_var), (accum, new_accum)])


class ApplyPowerSign(_ApplyPrimitive):
    """m = beta m + (1 - beta) grad; var -= lr exp(logbase sign_decay sign(grad) sign(m)) grad."""

    def __call__(self, var, m, lr, logbase, sign_decay, beta, grad):
        new_m = F.add(F.mul(m, beta), F.mul(grad, _one_minus(beta)))
        update = F.mul(F.exp(F.mul(F.mul(_sign_product(grad, new_m), logbase), sign_decay)), grad)
        return _assigned("ApplyPowerSign", [(var, F.sub(var, F.mul(lr, update))), (m, new_m)])


class ApplyAddSign(_ApplyPrimitive):
    """m = beta m + (1 - beta) grad; var -= lr (alpha + sign_decay sign(grad) sign(m)) grad."""

    def __call__(self, var, m, lr, alpha, sign_decay, beta, grad):
        new_m = F.add(F.mul(m, beta), F.mul(grad, _one_minus(beta)))
        update = F.mul(F.add(alpha, F.mul(sign_decay, _sign_product(grad, new_m))), grad)
        return _assigned("ApplyAddSign", [(var, F.sub(var, F.mul(lr, update))), (m, new_m)])


__all__ = ["ApplyMomentum", "ApplyGradientDescent", "ApplyAdagrad", "ApplyAdagradV2", "ApplyRMSProp",
           "ApplyCenteredRMSProp", "ApplyAdaMax", "ApplyAdadelta", "ApplyProximalAdagrad", "ApplyPowerSign",
           "ApplyAddSign"]
