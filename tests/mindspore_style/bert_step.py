"""The model zoo's loss-scale step (BERT's BertTrainOneStepWithLossScaleCell,
shortened): a TrainOneStepWithLossScaleCell subclass whose construct scales
the gradients with C.HyperMap over a C.MultitypeFuncGraph, clips them, and
branches on the overflow flag (`if overflow: succ = False else: succ =
self.optimizer(grads)`), given to Model with a DynamicLossScaleUpdateCell."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
from mindspore import Parameter, Tensor
from mindspore.common import dtype as mstype
from mindspore.ops import composite as C
from mindspore.ops import functional as F
from mindspore.ops import operations as P
from small_net import Net
from mindspore.train.callback import Callback, LossMonitor

ms.set_seed(0)

grad_scale = C.MultitypeFuncGraph("grad_scale")
reciprocal = P.Reciprocal()


@grad_scale.register("Tensor", "Tensor")
def tensor_grad_scale(scale, grad):
    return grad * reciprocal(scale)


class BertLikeTrainOneStepWithLossScaleCell(nn.TrainOneStepWithLossScaleCell):
    def __init__(self, network, optimizer, scale_update_cell=None):
        super().__init__(network, optimizer, scale_update_cell)
        self.cast = P.Cast()
        self.degree = 1
        self.loss_scale = None
        self.loss_scaling_manager = scale_update_cell
        if scale_update_cell:
            self.loss_scale = Parameter(Tensor(scale_update_cell.get_loss_scale(), dtype=mstype.float32))

    def construct(self, x, y, sens=None):
        weights = self.weights
        loss = self.network(x, y)
        if sens is None:
            scaling_sens = self.loss_scale
        else:
            scaling_sens = sens
        status, scaling_sens = self.start_overflow_check(loss, scaling_sens)
        grads = self.grad(self.network, weights)(x, y, self.cast(scaling_sens, mstype.float32))
        grads = self.hyper_map(F.partial(grad_scale, scaling_sens * self.degree), grads)
        grads = C.clip_by_global_norm(grads, 1.0)
        cond = self.get_overflow_status(status, grads)
        overflow = cond
        if sens is None:
            overflow = self.loss_scaling_manager(self.loss_scale, cond)
        if overflow:
            succ = False
        else:
            succ = self.optimizer(grads)
        ret = (loss, cond, scaling_sens)
        return F.depend(ret, succ)


class ScaleMonitor(Callback):
    def on_train_step_end(self, run_context):
        loss, overflow, scale = run_context.original_args().net_outputs
        print(f"overflow {bool(overflow.asnumpy())} scale {float(scale.asnumpy()):.6g}")


def gen():
    rng = np.random.default_rng(1)
    for _ in range(48):
        x = (rng.standard_normal(8) * 30).astype(np.float32)
        yield x, np.int32(int(x.sum() > 0) + int(x[0] > 15))


net = Net()
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
opt = nn.Adam(net.trainable_params(), 0.01)
update = nn.DynamicLossScaleUpdateCell(loss_scale_value=2.0 ** 126, scale_factor=2, scale_window=2)
step = BertLikeTrainOneStepWithLossScaleCell(nn.WithLossCell(net, loss), opt, update)
data = ds.GeneratorDataset(gen, ["x", "y"], shuffle=False).batch(8)
ms.Model(step).train(2, data, callbacks=[LossMonitor(), ScaleMonitor()])
print("sum |w|", round(sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params()), 5))
