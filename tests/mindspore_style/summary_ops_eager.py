"""ops.ScalarSummary (and TensorSummary) called in a Cell's construct, run
eagerly (PyNative): the next SummaryRecord.record writes the values, the last
one of each tag; a record made while no op ran writes none.  The events are
read back by hand (TFRecord frames, then the Event/Summary protobuf fields)."""
import glob
import os
import struct
import sys
import tempfile

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.train.summary import SummaryRecord

ms.set_context(mode=ms.PYNATIVE_MODE)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scalar = ops.ScalarSummary()
        self.tensor = ops.TensorSummary()

    def construct(self, x):
        y = x * 2.0
        self.scalar("y_sum", y.sum())
        self.tensor("y", y)
        return y


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        elif wire == 5:
            v, i = b[i:i + 4], i + 4
        else:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        yield num, v


def events(path):
    data = open(path, "rb").read()
    i = 0
    while i < len(data):
        (n,) = struct.unpack("<Q", data[i:i + 8])
        yield data[i + 12:i + 12 + n]
        i += 12 + n + 4


net = Net()
with tempfile.TemporaryDirectory() as out:
    with SummaryRecord(out) as record:
        for step in (1, 2):
            net(Tensor(np.arange(3, dtype=np.float32) + step))
            net(Tensor(np.ones(3, np.float32) * step))
            record.record(step)
        record.record(3)
    path = [p for p in glob.glob(os.path.join(out, "*")) if not p.endswith("_lineage")][0]
    for event in events(path):
        f = dict(fields(event))
        if 5 not in f:
            continue
        step = f[2]
        for num, value in fields(f[5]):
            v = dict(fields(value))
            kind = "scalar %.4f" % struct.unpack("<f", v[3])[0] if 3 in v else "tensor"
            print("step", step, v[1].decode(), kind)
print("ops.ScalarSummary() returns", net.scalar("t", Tensor(1.0)))
sys.stdout.flush()
