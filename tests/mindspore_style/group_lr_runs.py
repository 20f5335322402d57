"""What the parameter-group rate scripts (group_lr_arrays.py,
group_lr_schedules.py) train and how: rows of a small regression, and a
Model.train of them recording each step's loss."""
import numpy as np
import mindspore.dataset as ds
from mindspore import nn
from mindspore.train import Callback, Model

x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
y = np.stack([x.sum(1), x[:, 0] - x[:, 2]], 1).astype(np.float32)


def model_losses(net, opt, epochs, sink):
    """Model(net, MSELoss, opt).train on the rows in batches of 2: the losses its callbacks saw."""
    seen = []

    class Record(Callback):
        def step_end(self, run_context):
            seen.append(float(run_context.original_args().net_outputs.asnumpy()))
    data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(2)
    Model(net, nn.MSELoss(), opt).train(epochs, data, callbacks=[Record()], dataset_sink_mode=sink)
    return seen
