"""mindspore.parallel._transformer as the model zoo's GPT uses it: AttentionMask,
a 2-layer TransformerEncoder (pre- and post-norm), _LayerNorm, CrossEntropyLoss
(its value and the encoder's gradients through it), the parallel configs;
F.tensor_pow.  MindSpore 2.10's wheel no longer ships the package: the printout
is MindSpore 2.10 with mindspore/parallel/_transformer as MindSpore last
shipped it (its encoder computes in float16: the test's tolerance is 1e-3)."""
import numpy as np
from mindspore import Tensor, nn, ops
import mindspore.common.dtype as mstype
from mindspore.ops import functional as F
from mindspore.ops import operations as P
from mindspore.parallel._transformer import TransformerOpParallelConfig, OpParallelConfig
from mindspore.parallel._transformer.transformer import AttentionMask, TransformerEncoder
from mindspore.parallel._transformer.layers import _LayerNorm
from mindspore.parallel._transformer.loss import CrossEntropyLoss

rng = np.random.RandomState(5)
config = TransformerOpParallelConfig(data_parallel=1, model_parallel=1)
print("dp_mp", config.dp_mp_config.data_parallel, config.dp_mp_config.model_parallel)
try:
    OpParallelConfig(data_parallel=0)
except ValueError:
    print("data_parallel=0 refused")

mask = AttentionMask(seq_length=4)(Tensor(np.array([[1, 1, 1, 0], [1, 1, 1, 1]], np.float32)))
print("mask", mask.shape, mask.asnumpy().astype(np.float32).ravel().tolist())


class Net(nn.Cell):
    def __init__(self, post):
        super().__init__()
        self.encoder = TransformerEncoder(batch_size=2, num_layers=2, hidden_size=8, ffn_hidden_size=16,
                                          seq_length=4, num_heads=2, attention_dropout_rate=0.0,
                                          hidden_dropout_rate=0.0, post_layernorm_residual=post)
        self.get_mask = AttentionMask(seq_length=4)
        self.norm = _LayerNorm((8,))
        self.head = Tensor(rng.normal(0, 0.5, (8, 6)).astype(np.float32))
        self.loss = CrossEntropyLoss(config.dp_mp_config)

    def construct(self, x, input_mask, labels):
        hidden, present = self.encoder(x, self.get_mask(input_mask))
        logits = ops.matmul(P.Reshape()(self.norm(P.Cast()(hidden, mstype.float32)), (-1, 8)), self.head)
        return self.loss(logits, labels, P.Reshape()(input_mask, (-1,))), hidden, present


x = Tensor(rng.normal(0, 1, (2, 4, 8)).astype(np.float32))
input_mask = Tensor(np.array([[1, 1, 1, 0], [1, 1, 1, 1]], np.float32))
labels = Tensor(rng.randint(0, 6, 8).astype(np.int32))
for post in (False, True):
    net = Net(post)
    for name, p in net.parameters_and_names():
        p.set_data(Tensor(rng.normal(0, 0.4, p.shape).astype(np.float32)))
    if not post:
        print("params", [(n, tuple(p.shape)) for n, p in net.parameters_and_names()][:10])
    loss, hidden, present = net(x, input_mask, labels)
    print("post" if post else "pre", "loss", loss.shape, loss.asnumpy().astype(np.float32).tolist())
    print(" hidden", hidden.shape, np.round(hidden.asnumpy().astype(np.float32)[1, 2], 4).tolist())
    print(" present", len(present), present[0][0].shape, present[0][1].shape)
    weights = net.trainable_params()
    grads = ops.GradOperation(get_by_list=True)(lambda *a: net(*a)[0], weights)(x, input_mask, labels)
    for w, g in list(zip(weights, grads))[:18:3]:
        print(" grad", w.name, round(float(g.asnumpy().astype(np.float64).sum()), 4),
              round(float(np.abs(g.asnumpy().astype(np.float64)).sum()), 4))

print("tensor_pow", np.round(F.tensor_pow(np.e, Tensor(np.array([0.0, -1.0, 0.5], np.float32))).asnumpy(), 5).tolist())
