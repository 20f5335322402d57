"""Item assignment to tensors inside construct, as the model zoo's PointNet2
writes its farthest-point sampling (``centroids[:, i] = farthest``): rows,
elements and slices of a tensor made in construct, with the batch a
dataset's, trained by TrainOneStepCell and by Model.train; the gradient
flows through the assigned values.  MindSpore's output is in
setitem_construct.mindspore.txt."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
from mindspore import Parameter, Tensor, nn, ops
from mindspore.train import Model

ms.set_context(mode=ms.GRAPH_MODE)


class Rows(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([1.0, 2.0, 3.0, 4.0], np.float32)), name="w")

    def construct(self, x):
        rows = ops.Cast()(ops.zeros((3, 2), ms.int32), ms.float32)
        for i in range(3):
            rows[i] = (x * self.w).sum(-1) * (i + 1)
        rows[0, 1] = rows[0, 1] * 2.0
        rows[1:, :] = rows[1:, :] + 1.0
        return rows.sum()


net = Rows()
step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), 0.1))
x = Tensor(np.array([[1.0, 1.0, 1.0, 1.0], [0.5, -1.0, 2.0, 0.0]], np.float32))
for k in range(2):
    loss = step(x)
    print("rows loss %.4f" % float(loss.asnumpy()), "w", np.round(net.w.asnumpy(), 4).tolist())


class Columns(nn.Cell):
    """A batch of rows, each column picked in a loop as a sampler does."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(6, 3, weight_init="ones", bias_init="zeros")

    def construct(self, x, label):
        h = self.dense(x)
        picked = ops.zeros_like(h)
        for i in range(3):
            picked[:, i] = h[:, (i + 1) % 3] * (i + 1)
        picked[:, 0] = picked[:, 0] + 1.0
        return ((picked - label) ** 2).mean()


data = np.arange(48, dtype=np.float32).reshape(8, 6) / 48.0
labels = np.ones((8, 3), np.float32)
d = ds.NumpySlicesDataset({"x": data, "label": labels}, shuffle=False).batch(4, drop_remainder=True)
cols = Columns()
model = Model(cols, optimizer=nn.SGD(cols.trainable_params(), 0.05))
losses = []


class Record(ms.train.Callback):
    def step_end(self, run_context):
        losses.append(float(run_context.original_args().net_outputs.asnumpy()))


model.train(2, d, callbacks=[Record()], dataset_sink_mode=False)
print("columns losses", ["%.5f" % v for v in losses])
print("columns weight", np.round(cols.dense.weight.asnumpy()[0], 4).tolist())
