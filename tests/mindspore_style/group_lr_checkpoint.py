"""An optimizer with a learning rate per parameter group (the model zoo's
OpenPose): its checkpoint holds learning_rate_group_i, one a group, where a
single rate's learning_rate would be, in MindSpore's key order.  MindSpore's
output is in group_lr_checkpoint.mindspore.txt."""
import os
import tempfile

import numpy as np
import mindspore as ms
from mindspore import Tensor, nn

ms.set_seed(1)
net = nn.Dense(3, 2)
opt = nn.Adam([{"params": [net.weight], "lr": 0.0}, {"params": [net.bias], "lr": 0.1}])
step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
print("loss %.6f" % float(step(Tensor(np.ones((4, 3), np.float32)), Tensor(np.zeros((4, 2), np.float32))).asnumpy()))
path = os.path.join(tempfile.mkdtemp(), "group_lr.ckpt")
ms.save_checkpoint(step, path)
saved = ms.load_checkpoint(path)
print([k for k in saved if k != "irc.metadata"])
print({k: round(float(saved[k].asnumpy()), 6) for k in saved if "learning_rate" in k})
