"""A learning-rate schedule written as MindSpore's, its own construct of the
global step (the model zoo's BERT/TinyBERT BertLearningRate), given to
AdamWeightDecay in a TrainOneStepCell under Model and to Momentum in
Model(net, loss, opt): the rates and losses MindSpore 2.10 prints."""
import numpy as np
import mindspore as ms
import mindspore.nn as nn
import mindspore.dataset as ds
from mindspore.nn.learning_rate_schedule import LearningRateSchedule, PolynomialDecayLR, WarmUpLR

class WarmupPolyLR(LearningRateSchedule):          # as BERT/TinyBERT's BertLearningRate
    def __init__(self, lr, end_lr, warmup_steps, decay_steps, power):
        super().__init__()
        self.warmup_lr = WarmUpLR(lr, warmup_steps)
        self.decay_lr = PolynomialDecayLR(lr, end_lr, decay_steps, power)
        self.warmup_steps = ms.Tensor(np.array([warmup_steps], np.float32))
        self.greater = ms.ops.Greater()
    def construct(self, global_step):
        is_warmup = self.greater(self.warmup_steps, global_step).astype(ms.float32)
        return (1 - is_warmup) * self.decay_lr(global_step) + is_warmup * self.warmup_lr(global_step)

ms.set_seed(0)
net = nn.WithLossCell(nn.Dense(4, 1), nn.MSELoss())
sched = WarmupPolyLR(1e-2, 1e-6, 2, 4, 1.0)
print([round(float(sched(ms.Tensor(np.array([s], np.int32))).asnumpy().reshape(-1)[0]), 7) for s in range(6)])
opt = nn.AdamWeightDecay(net.trainable_params(), learning_rate=sched)
step = nn.TrainOneStepCell(net, opt)
x = np.random.RandomState(0).randn(16, 4).astype(np.float32); y = x.sum(1, keepdims=True)
data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(4)
ms.Model(step).train(2, data, callbacks=[ms.LossMonitor()])
net2 = nn.Dense(4, 1)
model = ms.Model(net2, nn.MSELoss(), nn.Momentum(net2.trainable_params(), WarmupPolyLR(1e-2, 1e-6, 2, 4, 1.0), 0.9))
data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(4)
model.train(2, data, callbacks=[ms.LossMonitor()])
