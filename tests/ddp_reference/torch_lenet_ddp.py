"""The same job in PyTorch DDP (gloo), on the batches irc's pipeline gives each shard."""
import os
import numpy as np
import torch, torch.nn as nn, torch.distributed as dist
torch.set_num_threads(1)
rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo")
import irc.dataset as ds, irc.dataset.vision as CV, irc.dataset.transforms as C
import irc
d = ds.MnistDataset(os.environ["MNIST"], shuffle=False, num_shards=size, shard_id=rank)
d = d.map(C.TypeCast(irc.int32), input_columns="label")
d = d.map([CV.Resize((32, 32)), CV.Rescale(1 / 255.0, 0.0), CV.Rescale(1 / 0.3081, -0.1307 / 0.3081),
           CV.HWC2CHW()], input_columns="image")
if os.environ.get("TAKE"):
    d = d.take(int(os.environ["TAKE"]))
d = d.batch(16, drop_remainder=True)
batches = [(np.asarray(b["image"]), np.asarray(b["label"])) for b in d.create_dict_iterator(output_numpy=True)]

class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, bias=False); self.bn1 = nn.BatchNorm2d(6, eps=1e-5, momentum=0.1)
        self.conv2 = nn.Conv2d(6, 16, 5, bias=False)
        self.fc1 = nn.Linear(400, 120); self.fc2 = nn.Linear(120, 84); self.fc3 = nn.Linear(84, 10)
    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2).flatten(1)
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))

init = np.load(os.path.join(os.environ["OUT"], "init.npz"))
names = {"conv1.weight": "conv1.weight", "bn1.weight": "bn1.gamma", "bn1.bias": "bn1.beta",
         "conv2.weight": "conv2.weight", "fc1.weight": "fc1.weight", "fc1.bias": "fc1.bias",
         "fc2.weight": "fc2.weight", "fc2.bias": "fc2.bias", "fc3.weight": "fc3.weight", "fc3.bias": "fc3.bias"}
net = LeNet5()
with torch.no_grad():
    for tn, mn in names.items():
        net.state_dict()[tn].copy_(torch.from_numpy(init[mn]))
# MindSpore's data parallel keeps BatchNorm buffers per rank: no buffer broadcast
import warnings
warnings.simplefilter("ignore", FutureWarning)
ddp = nn.parallel.DistributedDataParallel(net, broadcast_buffers=False)
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
losses = []
for x, y in batches:
    opt.zero_grad()
    loss = nn.functional.cross_entropy(ddp(torch.from_numpy(x)), torch.from_numpy(y).long())
    loss.backward(); opt.step(); losses.append(loss.item())
np.savez(os.path.join(os.environ["OUT"], f"torch{rank}.npz"),
         **{mn: net.state_dict()[tn].numpy() for tn, mn in names.items()})
print("torch rank", rank, "steps", len(batches), "last loss", round(losses[-1], 6))
dist.destroy_process_group()
