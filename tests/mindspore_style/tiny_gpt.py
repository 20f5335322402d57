"""A tiny GPT-style language model as model-zoo scripts write one: decoder-only
(nn.TransformerEncoder with a causal mask), padded_batch of variable-length
sentences, a loss-scale step with gradient clipping given to Model, eval with
eval_network and a perplexity-like Loss metric."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore import Tensor
from mindspore.train.callback import LossMonitor

ms.set_seed(5)
VOCAB, SEQ = 16, 8


def sentences():
    rng = np.random.default_rng(0)
    for _ in range(64):
        n = int(rng.integers(3, SEQ + 2))
        start = int(rng.integers(1, VOCAB - 1))
        tokens = (start + np.arange(n)) % (VOCAB - 1) + 1      # counting: learnable
        yield tokens.astype(np.int32)


def shift(tokens, info):
    return [t[:-1] for t in tokens], [t[1:] for t in tokens]


class GPT(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32, padding_idx=0)
        self.pos = ms.Parameter(Tensor(np.random.default_rng(1).normal(0, 0.02, (SEQ, 32)).astype(np.float32)), name="pos")
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, 2, nn.LayerNorm((32,)))
        self.head = nn.Dense(32, VOCAB)
        self.causal = Tensor(np.triu(np.ones((SEQ, SEQ), np.bool_), 1))

    def construct(self, tokens):
        x = self.embed(tokens) + self.pos
        return self.head(self.blocks(x, src_mask=self.causal, src_key_padding_mask=tokens == 0))


class LMLoss(nn.Cell):
    def __init__(self, net):
        super().__init__(auto_prefix=False)
        self.net = net
        self.ce = nn.CrossEntropyLoss(ignore_index=0)

    def construct(self, tokens, targets):
        logits = self.net(tokens)
        return self.ce(logits.reshape(-1, VOCAB), targets.reshape(-1))


class EvalLM(nn.Cell):
    def __init__(self, loss_net):
        super().__init__(auto_prefix=False)
        self.loss_net = loss_net

    def construct(self, tokens, targets):
        loss = self.loss_net(tokens, targets)
        return loss, loss, targets


def dataset():
    data = ds.GeneratorDataset(sentences, ["tokens"], shuffle=False)
    data = data.batch(8, per_batch_map=shift, input_columns=["tokens"], output_columns=["tokens", "targets"])
    return data


def padded():
    data = ds.GeneratorDataset(sentences, ["tokens"], shuffle=False)
    data = data.map(lambda t: (t[:-1], t[1:]), "tokens", ["tokens", "targets"])
    return data.padded_batch(8, drop_remainder=True, pad_info={"tokens": ([SEQ], 0), "targets": ([SEQ], 0)})


net = GPT()
loss_net = LMLoss(net)
opt = nn.AdamWeightDecay(net.trainable_params(), 3e-3, weight_decay=0.01)
update = nn.DynamicLossScaleUpdateCell(loss_scale_value=2 ** 12, scale_factor=2, scale_window=20)


class Step(nn.TrainOneStepWithLossScaleCell):
    def construct(self, tokens, targets):
        loss = self.network(tokens, targets)
        scale = self.scale_sense
        status, scale = self.start_overflow_check(loss, scale)
        grads = self.grad(self.network, self.weights)(tokens, targets, ops.cast(scale, ms.float32))
        grads = self.hyper_map(ops.partial(lambda s, g: g / s, scale), grads)
        grads = ops.clip_by_global_norm(grads, 1.0)
        cond = self.get_overflow_status(status, grads)
        overflow = self.process_loss_scale(cond)
        if not overflow:
            self.optimizer(grads)
        return loss, cond, scale


model = ms.Model(Step(loss_net, opt, update), eval_network=EvalLM(loss_net), eval_indexes=[0, 1, 2],
                 metrics={"loss": nn.Loss()})
print("before", model.eval(padded()))
model.train(6, padded(), callbacks=[LossMonitor(8)])
print("after", model.eval(padded()))
