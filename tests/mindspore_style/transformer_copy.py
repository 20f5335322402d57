"""nn.Transformer (encoder and decoder) trained as a copy task: MindSpore's
layers, initial weights (each >1-D weight drawn Xavier-uniform again),
masks (a causal tgt_mask, a key padding mask) and gradients."""
import numpy as np
import mindspore as ms
import mindspore.nn as nn
from mindspore import Tensor

ms.set_seed(3)
np.random.seed(3)


class Copy(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(12, 16)
        self.transformer = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2,
                                          num_decoder_layers=2, dim_feedforward=32, dropout=0.0,
                                          batch_first=True)
        self.head = nn.Dense(16, 12)

    def construct(self, src, tgt, causal, padding):
        out = self.transformer(self.embed(src), self.embed(tgt), tgt_mask=causal,
                               src_key_padding_mask=padding)
        return self.head(out)


net = Copy()
loss_fn = nn.CrossEntropyLoss()
opt = nn.Adam(net.trainable_params(), 0.01)
rng = np.random.default_rng(0)
src = rng.integers(1, 12, (8, 6)).astype(np.int32)
src[:, 5] = 0
tgt_in = np.concatenate([np.zeros((8, 1), np.int32), src[:, :-1]], 1)
causal = Tensor(np.triu(np.ones((6, 6), np.bool_), 1))
padding = Tensor(src == 0)


def forward(s, t, y):
    logits = net(s, t, causal, padding)
    return loss_fn(logits.reshape(-1, 12), y.reshape(-1))


grad_fn = ms.value_and_grad(forward, None, opt.parameters)


@ms.jit
def step(s, t, y):
    loss, grads = grad_fn(s, t, y)
    opt(grads)
    return loss


print("initial sum |w|", round(sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params()), 4))
for i in range(6):
    loss = step(Tensor(src), Tensor(tgt_in), Tensor(src))
    print(f"step {i}: loss {float(loss.asnumpy()):.6f}")
print("sum |w|", round(sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params()), 4))
