"""LeNet5 trained K steps by irc (one sink, one onnxruntime call) ends on the
same weights as PyTorch's SGD(momentum=0.9) + CrossEntropyLoss from the same
start on the same batches.  Skipped when torch is not installed."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import irc  # noqa: E402
import irc.dataset as ds  # noqa: E402
from irc import nn, ops  # noqa: E402

K, BATCH, LR, MOMENTUM = 6, 32, 0.05, 0.9


class LeNet5(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid", weight_init="normal")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid", weight_init="normal")
        self.fc1 = nn.Dense(400, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, 10)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = ops.reshape(x, (BATCH, -1))
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def torch_lenet(weights):
    t = torch.nn

    class Net(t.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = t.Conv2d(1, 6, 5, bias=False)
            self.conv2 = t.Conv2d(6, 16, 5, bias=False)
            self.fc1, self.fc2, self.fc3 = t.Linear(400, 120), t.Linear(120, 84), t.Linear(84, 10)

        def forward(self, x):
            x = t.functional.max_pool2d(t.functional.relu(self.conv1(x)), 2)
            x = t.functional.max_pool2d(t.functional.relu(self.conv2(x)), 2)
            x = x.reshape(BATCH, -1)
            x = t.functional.relu(self.fc1(x))
            x = t.functional.relu(self.fc2(x))
            return self.fc3(x)
    net = Net().double()
    with torch.no_grad():
        for name, p in net.named_parameters():
            p.copy_(torch.from_numpy(weights[name].astype(np.float64)))
    return net


@pytest.mark.parametrize("sink", [True, False])
def test_lenet_matches_pytorch_sgd_momentum(sink):
    rng = np.random.default_rng(7)
    np.random.seed(3)
    images = rng.normal(size=(K * BATCH, 1, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, K * BATCH).astype(np.int32)
    net = LeNet5()
    for _, p in net.parameters_and_names():   # a start where every layer learns
        p.set_data(rng.normal(0, 0.15, p.shape).astype(np.float32))
    start = {name: p.asnumpy().copy() for name, p in net.parameters_and_names()}
    data = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False).batch(BATCH)
    model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      nn.Momentum(net.trainable_params(), LR, MOMENTUM))
    model.train(1, data, dataset_sink_mode=sink)

    ref = torch_lenet(start)
    opt = torch.optim.SGD(ref.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = torch.nn.CrossEntropyLoss()
    for k in range(K):
        x = torch.from_numpy(images[k * BATCH:(k + 1) * BATCH].astype(np.float64))
        y = torch.from_numpy(labels[k * BATCH:(k + 1) * BATCH].astype(np.int64))
        opt.zero_grad()
        loss_fn(ref(x), y).backward()
        opt.step()
    for name, p in ref.named_parameters():
        want = p.detach().numpy()
        have = getattr(net, name.split(".")[0]).__getattr__(name.split(".")[1]).asnumpy()
        rel = np.abs(have - want).max() / np.abs(want).max()
        assert rel <= 1e-4, f"{name}: relative difference {rel:.2e}"
        assert np.abs(have - start[name]).max() > 1e-4, f"{name} did not train"
