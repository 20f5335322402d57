"""MindSpore 2.10's AdaMax, ProximalAdagrad and Rprop, and the optimizer
primitives (ops.ApplyMomentum ...) a user's optimizer calls, beside
MindSpore 2.10's printouts."""


def test_adamax_proximal_adagrad_rprop_train_as_under_mindspore(capsys):
    """tests/mindspore_style/optimizers_more.py: AdaMax (beta1_power,
    moment1/moment2, weight decay), ProximalAdagrad (l1, l2: its kernels'
    rate lr / sqrt(accum) in the shrinkage, not the documented lr) and
    Rprop (etas, step-size bounds, weight decay) through Model.train, a
    jitted step and eagerly: losses, weights, state and global_step as
    MindSpore 2.10 printed them."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "optimizers_more.py", rel=1e-5)


def test_the_optimizer_primitives_update_their_parameters_as_mindspores(capsys):
    """tests/mindspore_style/apply_primitives.py: ApplyMomentum,
    ApplyGradientDescent, ApplyAdagrad(V2), ApplyRMSProp,
    ApplyCenteredRMSProp, ApplyAdaMax, ApplyAdadelta, ApplyProximalAdagrad,
    ApplyPowerSign and ApplyAddSign, three updates of Parameters eagerly:
    the variables and their state as MindSpore 2.10's.  (ApplyMomentum's
    use_nesterov follows the documentation: MindSpore 2.10's CPU kernel
    ignores it.)"""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "apply_primitives.py", rel=1e-5, abs=1e-6)
