"""The RNN sentiment tutorial's training step on the CPU: irc beside
PyTorch eager (when installed), the runners taking turns in one process.

The network is the tutorial's: an embedding, a 2-layer bidirectional LSTM
(``batch_first``), a Dense on the last forward and backward hidden states,
BCEWithLogitsLoss and Adam.  irc compiles it as ``Model.train`` does (one
call per step; each layer and direction's recurrence one ONNX Scan, forward
and backward); PyTorch runs ``torch.nn.LSTM`` (its fused CPU kernel) on the
same shapes, at the same intra-op thread counts.

    python benchmarks/recurrent.py [--seq 100] [--batch 32] [--hidden 128] [--embed 100]
                                   [--steps 2] [--repeat 3] [--threads 1 2]

The tutorial itself trains at --seq 500 --batch 64 --hidden 256 --embed 100.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import irc  # noqa: E402
import irc.dataset as ds  # noqa: E402
from irc import nn, ops  # noqa: E402
from irc.backends.trainer import DeviceState, Program  # noqa: E402
from irc.capture import Job  # noqa: E402
from irc.compiler import compile_job  # noqa: E402
from peers import taking_turns  # noqa: E402

VOCAB = 1000


class Sentiment(nn.Cell):
    def __init__(self, embed: int, hidden: int):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, embed)
        self.rnn = nn.LSTM(embed, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Dense(hidden * 2, 1)

    def construct(self, tokens):
        _, (hidden, _) = self.rnn(self.embedding(tokens))
        return self.fc(ops.concat((hidden[-2], hidden[-1]), axis=1))


def batches(steps: int, batch: int, seq: int):
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, VOCAB, (steps * batch, seq)).astype(np.int32)
    labels = rng.integers(0, 2, (steps * batch, 1)).astype(np.float32)
    return tokens, labels


def irc_runner(steps: int, batch: int, seq: int, embed: int, hidden: int, threads: int):
    tokens, labels = batches(steps, batch, seq)
    data = ds.NumpySlicesDataset({"tokens": tokens, "label": labels}, shuffle=False).batch(batch)
    np.random.seed(0)
    net = Sentiment(embed, hidden)
    model = irc.Model(net, nn.BCEWithLogitsLoss(), nn.Adam(net.trainable_params(), 1e-3))
    job = Job("train", model, data, {"epoch": 1, "callbacks": [], "dataset_sink_mode": False,
                                     "steps_per_epoch": steps}, None)
    module, _ = compile_job(job)
    prog = Program(module, "device", threads=threads)
    state = DeviceState(prog, module.weights)
    lr = np.array(1e-3, np.float32)
    feeds = [{"tokens": tokens[i * batch:(i + 1) * batch], "label": labels[i * batch:(i + 1) * batch],
              "learning_rate": lr} for i in range(steps)]

    def run():
        for f in feeds:
            prog.run(f, state)
    return run


def torch_runner(steps: int, batch: int, seq: int, embed: int, hidden: int, threads: int):
    try:
        import torch
    except ImportError:
        return None
    tnn = torch.nn

    class Net(tnn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = tnn.Embedding(VOCAB, embed)
            self.rnn = tnn.LSTM(embed, hidden, num_layers=2, bidirectional=True, batch_first=True)
            self.fc = tnn.Linear(hidden * 2, 1)

        def forward(self, x):
            _, (h, _) = self.rnn(self.embedding(x))
            return self.fc(torch.cat((h[-2], h[-1]), 1))
    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.Adam(net.parameters(), 1e-3)
    loss_fn = tnn.BCEWithLogitsLoss()
    tokens, labels = batches(steps, batch, seq)
    feeds = [(torch.from_numpy(tokens[i * batch:(i + 1) * batch]).long(),
              torch.from_numpy(labels[i * batch:(i + 1) * batch])) for i in range(steps)]

    def run():
        torch.set_num_threads(threads)
        for x, y in feeds:
            opt.zero_grad()
            loss_fn(net(x), y).backward()
            opt.step()
    return run


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seq", type=int, default=100)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--embed", type=int, default=100)
    p.add_argument("--steps", type=int, default=2, help="steps per timed round")
    p.add_argument("--repeat", type=int, default=3, help="timed rounds (median)")
    p.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    a = p.parse_args(argv)
    shape = (a.steps, a.batch, a.seq, a.embed, a.hidden)
    runners = {}
    for threads in a.threads:
        runners[f"irc, {threads} thread(s)"] = irc_runner(*shape, threads)
        torch_run = torch_runner(*shape, threads)
        if torch_run is not None:
            runners[f"pytorch eager, {threads} thread(s)"] = torch_run
    times = taking_turns(runners, a.repeat)
    print(f"sentiment LSTM (2 layers, bidirectional), sequence {a.seq}, batch {a.batch}, hidden {a.hidden}, "
          f"embedding {a.embed}, CPU, median of {a.repeat} rounds of {a.steps} steps, runners taking turns")
    for name, t in times.items():
        print(f"{name:32} {t / a.steps * 1e3:9.1f} ms/step")
    for threads in a.threads:
        torch_t = times.get(f"pytorch eager, {threads} thread(s)")
        if torch_t is not None:
            print(f"{threads} thread(s): pytorch eager / irc = {torch_t / times[f'irc, {threads} thread(s)']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
