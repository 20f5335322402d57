"""Optimizers users write on nn.Optimizer, as the model zoo's are (ViT's
AdamW: opt_init_args_register, parameters.clone, HyperMap over a
MultitypeFuncGraph with Python flags, decay_flags and per-group weight
decay, a power Parameter assigned in construct, get_lr): Model(net, loss,
opt).train builds MindSpore's TrainOneStepCell around it.  A second one
moves global_step itself (P.AssignAdd), so its dynamic rate advances;
without it MindSpore 2.x stays at the first rate.  MindSpore 2.10's output
is in custom_optimizer.mindspore.txt."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore import Parameter, Tensor
from mindspore.common.initializer import initializer
from mindspore.nn.optim import Optimizer
from mindspore.nn.optim.optimizer import opt_init_args_register
from mindspore.train.loss_scale_manager import FixedLossScaleManager

_adam = ops.MultitypeFuncGraph("adam")


@_adam.register("Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor",
                "Tensor", "Tensor", "Tensor", "Bool", "Bool")
def _adam_update(beta1_power, beta2_power, beta1, beta2, eps, lr, weight_decay, param, m, v, gradient,
                 decay_flag, optim_filter):
    if optim_filter:
        next_m = beta1 * m + (1.0 - beta1) * gradient
        next_v = beta2 * v + (1.0 - beta2) * ops.square(gradient)
        update = (next_m / (1.0 - beta1_power)) / (eps + ops.sqrt(next_v / (1.0 - beta2_power)))
        if decay_flag:
            update = weight_decay * param + update
        next_param = param - ops.reshape(lr * update, ops.shape(param))
        next_param = ops.depend(next_param, ops.assign(param, next_param))
        next_param = ops.depend(next_param, ops.assign(m, next_m))
        next_param = ops.depend(next_param, ops.assign(v, next_v))
        return next_param
    return gradient


class AdamW(Optimizer):
    @opt_init_args_register
    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0,
                 loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1 = Tensor(np.array([beta1]).astype(np.float32))
        self.beta2 = Tensor(np.array([beta2]).astype(np.float32))
        self.eps = Tensor(np.array([eps]).astype(np.float32))
        self.moments1 = self.parameters.clone(prefix="adam_m", init="zeros")
        self.moments2 = self.parameters.clone(prefix="adam_v", init="zeros")
        self.beta1_power = Parameter(initializer(1, [1], ms.float32), name="beta1_power")
        self.beta2_power = Parameter(initializer(1, [1], ms.float32), name="beta2_power")
        self.reciprocal_scale = Tensor(1.0 / loss_scale, ms.float32)

    def construct(self, gradients):
        lr = self.get_lr()
        gradients = tuple(g * self.reciprocal_scale for g in gradients)
        beta1_power = self.beta1_power * self.beta1
        self.beta1_power = beta1_power
        beta2_power = self.beta2_power * self.beta2
        self.beta2_power = beta2_power
        if self.is_group:
            return self.hyper_map(ops.partial(_adam, beta1_power, beta2_power, self.beta1, self.beta2,
                                              self.eps, lr),
                                  self.weight_decay, self.parameters, self.moments1, self.moments2,
                                  gradients, self.decay_flags, self.optim_filter)
        return self.hyper_map(ops.partial(_adam, beta1_power, beta2_power, self.beta1, self.beta2,
                                          self.eps, lr, self.weight_decay),
                              self.parameters, self.moments1, self.moments2, gradients,
                              self.decay_flags, self.optim_filter)


_sgd = ops.MultitypeFuncGraph("sgd")


@_sgd.register("Tensor", "Tensor", "Tensor")
def _sgd_update(lr, param, gradient):
    return ops.depend(param, ops.assign(param, param - lr * gradient))


class StepSGD(Optimizer):
    def __init__(self, params, learning_rate):
        super().__init__(learning_rate, params)
        self.assignadd = ops.AssignAdd()

    def construct(self, gradients):
        lr = self.get_lr()
        gradients = self.decay_weight(self.scale_grad(gradients))
        self.assignadd(self.global_step, self.global_step_increase_tensor)
        return self.hyper_map(ops.partial(_sgd, lr), self.parameters, gradients)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 8, has_bias=False)   # a bias before BatchNorm: its gradient is rounding noise, which Adam scales to full steps
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Dense(8, 3)

    def construct(self, x):
        return self.fc2(ops.relu(self.bn(self.fc1(x))))


def data():
    xs = np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32)
    ys = (np.arange(16) % 3).astype(np.int32)
    return ds.NumpySlicesDataset({"x": xs, "y": ys}, shuffle=False).batch(4)


class Losses(ms.train.Callback):
    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_step_end(self, run_context):
        self.losses.append(f"{float(run_context.original_args().net_outputs.asnumpy()):.5f}")


def report(name, net, opt, losses):
    weights = sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params())
    print(name, "losses", " ".join(losses.losses))
    print(name, f"sum|w| {weights:.5f}", "global_step", opt.global_step.asnumpy().tolist(),
          "moving mean", f"{float(np.abs(net.bn.moving_mean.asnumpy()).sum()):.5f}")


ms.set_seed(1)
net = Net()
groups = [{"params": [p for p in net.trainable_params() if "bias" not in p.name and "beta" not in p.name],
           "weight_decay": 0.05},
          {"params": [p for p in net.trainable_params() if "bias" in p.name or "beta" in p.name]},
          {"order_params": net.trainable_params()}]
opt = AdamW(groups, learning_rate=Tensor(np.array([0.01, 0.005, 0.002] + [0.001] * 10, np.float32)),
            loss_scale=1024.0)
print("AdamW", opt.is_group, opt.decay_flags, [p.name for p in opt.parameters][:2], opt.moments1[0].name,
      opt.init_args, opt.init_learning_rate[:2])
model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), opt,
                 loss_scale_manager=FixedLossScaleManager(1024.0, drop_overflow_update=False))
losses = Losses()
model.train(2, data(), callbacks=[losses], dataset_sink_mode=False)
report("AdamW", net, opt, losses)
print("AdamW state", f"{float(np.abs(opt.moments1[0].asnumpy()).sum()):.6f}",
      f"{float(opt.beta1_power.asnumpy()[0]):.6f}")

ms.set_seed(1)
net = Net()
opt = StepSGD(net.trainable_params(), [0.1, 0.05, 0.02] + [0.01] * 10)
losses = Losses()
ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), opt).train(
    2, data(), callbacks=[losses], dataset_sink_mode=False)
report("StepSGD", net, opt, losses)
