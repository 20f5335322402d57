"""A @constexpr drawing from np.random in a Cell called in GRAPH_MODE
(PointNet2's farthest-point sampling start): folded once when compiled, so
every call gets the same value.  MindSpore's output is in
constexpr_random_graph_mode.mindspore.txt."""
# A @constexpr that draws from numpy (PointNet2's farthest-point-sampling start
# index, src/pointnet2_utils.py generate_tensor_fps): in GRAPH_MODE MindSpore
# folds it into the compiled graph once, so every later call reuses the draw.
import numpy as np
import mindspore as ms
from mindspore import nn, Tensor
from mindspore.ops.primitive import constexpr

ms.set_context(mode=ms.GRAPH_MODE)

@constexpr
def start_index(n):
    return Tensor(np.random.randint(n, size=(2,)), ms.int32)

class Net(nn.Cell):
    def construct(self, x):
        return x[:, 0] * 0 + start_index(x.shape[1])

np.random.seed(0)
net = Net()
x = Tensor(np.zeros((2, 100), np.float32))
for call in range(3):
    print("call", call, net(x).asnumpy().tolist())
