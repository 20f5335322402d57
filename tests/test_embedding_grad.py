"""An embedding's gradient adds the rows of every index, duplicates
included, on any number of threads (the model zoo's DeepFM, BERT, the
sentiment LSTM).  onnxruntime's CPU ScatterND lost updates on 2 threads."""
import numpy as np
import pytest

import irc as ms
import irc.nn as nn
from irc import Tensor
from irc.backends.settings import settings


@pytest.mark.parametrize("shape", [(50, 64), (30, 4, 8)])
def test_repeated_indices_add_up_on_two_threads(shape):
    # onnxruntime's CPU threads (CUDA's ScatterND adds atomically, in no fixed order)
    ms.set_context(runtime_num_threads=2, device_target="CPU")
    try:
        rng = np.random.RandomState(0)
        table = nn.Cell()
        table.w = ms.Parameter(Tensor(rng.standard_normal(shape).astype(np.float32)), name="w")
        indices = rng.randint(0, shape[0], 20000).astype(np.int32)       # every row ~400-700 times
        scale = rng.standard_normal((20000,) + shape[1:]).astype(np.float32)

        def loss(i, s):
            return (ms.ops.gather(table.w, i, 0) * s).sum()

        grad_fn = ms.grad(loss, grad_position=None, weights=[table.w])
        want = np.zeros(shape, np.float64)
        np.add.at(want, indices, scale.astype(np.float64))
        got = [grad_fn(Tensor(indices), Tensor(scale))[0].asnumpy() for _ in range(3)]
    finally:
        settings.reset()                                   # irc chooses the threads and device again
    np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-3)
    assert all(np.array_equal(got[0], g) for g in got[1:])          # the same bits on every call
