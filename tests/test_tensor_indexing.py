"""Tensors indexed by Tensors, assigned into, and used as Python indices, as
MindSpore users write them (its LSTM+CRF tutorial's ``emissions[0, idx, tags]``,
the GAN tutorial's ``random.shuffle`` of a Tensor): numpy's rules, eager and
traced, gradients included."""
from __future__ import annotations

import random

import numpy as np
import pytest

import irc as ms
from irc import nn, ops
from irc.diagnostics import UnsupportedError

A = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)


def T(v):  # noqa: N802 -- an index Tensor
    return ms.Tensor(np.array(v, np.int64))


CASES = {
    "x[t]": (lambda x, t: x[t([1, 0, -1])], lambda a: a[[1, 0, -1]]),
    "x[:, t]": (lambda x, t: x[:, t([2, 0])], lambda a: a[:, [2, 0]]),
    "x[0, t, 1]": (lambda x, t: x[0, t([[2, 0], [1, 1]]), 1], lambda a: a[0, [[2, 0], [1, 1]], 1]),
    "x[:, t, t]": (lambda x, t: x[:, t([2, 0]), t([3, -1])], lambda a: a[:, [2, 0], [3, -1]]),
    "x[t, :, t]": (lambda x, t: x[t([1, 0]), :, t([3, 1])], lambda a: a[[1, 0], :, [3, 1]]),
    "x[..., t]": (lambda x, t: x[..., t([4, 0])], lambda a: a[..., [4, 0]]),
    "x[1:, t, ::2]": (lambda x, t: x[1:, t([2]), ::2], lambda a: a[1:, [2], ::2]),
    "x[t, t] broadcast": (lambda x, t: x[t([[1], [0]]), t([2, 0, 1])], lambda a: a[[[1], [0]], [2, 0, 1]]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tensor_indices_follow_numpy_eager_and_traced(case):
    index, reference = CASES[case]
    want = reference(A)
    eager = index(ms.Tensor(A), T).asnumpy()
    traced = ms.jit(lambda x: index(x, T))(ms.Tensor(A)).asnumpy()
    assert eager.shape == want.shape and np.array_equal(eager, want)
    assert traced.shape == want.shape and np.array_equal(traced, want)


def test_a_gathered_parameter_trains_as_in_mindspore():
    """w[i, j] * w[:, j], summed: value and gradient as MindSpore 2.10's."""
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(np.arange(12, dtype=np.float32).reshape(3, 4)), name="w")

        def construct(self, i, j):
            return (self.w[i, j] * self.w[:, j]).sum()

    net = Net()
    step = ms.jit(ms.value_and_grad(net, None, net.trainable_params()))
    value, (grad,) = step(T([0, 2, 2]), T([1, 3, 3]))
    assert float(value.asnumpy()) == 477.0
    assert grad.asnumpy().tolist() == [[0, 16, 0, 22], [0, 1, 0, 22], [0, 1, 0, 64]]


def test_a_parameter_sliced_in_construct_keeps_its_gradient():
    """An int or a slice of a parameter inside construct is a traced Slice
    (an eager view would be a constant): value 11 and gradient
    [[1, 1, 1], [1, 0, 1]], MindSpore 2.10's."""
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), name="w")

        def construct(self, x):
            return (self.w[0] * x).sum() + self.w[1:, ::2].sum()

    net = Net()
    value, (grad,) = ms.value_and_grad(net, None, net.trainable_params())(
        ms.Tensor(np.ones(3, np.float32)))
    assert float(value.asnumpy()) == 11.0
    assert grad.asnumpy().tolist() == [[1, 1, 1], [1, 0, 1]]


def test_eager_bool_masks_select_and_traced_ones_are_refused_with_a_hint():
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert x[x > 2].asnumpy().tolist() == [3.0, 4.0, 5.0]
    with pytest.raises(UnsupportedError) as e:
        ms.jit(lambda y: y[y > 2])(x)
    assert "bool Tensor as an index" in e.value.message and "ops.where" in e.value.hint


def test_item_assignment_and_tensors_as_python_indices():
    t = ms.Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    t[0] = t[2]
    t[ms.Tensor(1), 1] = 7
    assert t.asnumpy().tolist() == [[4, 5], [2, 7], [4, 5]]
    p = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name="p")
    version = p._version
    p[T([0, 2])] = 1.5
    assert p.asnumpy().tolist() == [1.5, 0, 1.5] and p._version > version
    assert (1, 2, 3, 4)[:ms.Tensor(2)] == (1, 2)
    def assign_first(y):          # traced: the name stands for the updated value, a copy keeps the old
        z = y.copy()
        y[0] = y[1] * 3.0
        return y, z
    y, z = ms.jit(assign_first)(ms.Tensor(np.array([1.0, 2.0], np.float32)))
    assert y.asnumpy().tolist() == [6.0, 2.0] and z.asnumpy().tolist() == [1.0, 2.0]


def test_basic_indexing_gives_views_as_pynative_does():
    """MindSpore 2.10's PyNative: a slice or an int index is a view (a
    write through either side shows in the other), a Tensor index a copy,
    and a Tensor made from an array does not write into it."""
    array = np.zeros(3, np.float32)
    t = ms.Tensor(array)
    t[0] = 5
    view, scalar, gathered = t[1:], t[2], t[T([0, 1])]
    t[1], t[2], t[0] = 9, 4, 1
    assert array.tolist() == [0, 0, 0]
    assert view.asnumpy().tolist() == [9, 4] and float(scalar) == 4 and gathered.asnumpy().tolist() == [5, 0]
    # the GAN tutorial shuffles its test noise; the swaps through views
    # repeat rows, as in MindSpore 2.10
    noise = ms.Tensor(np.arange(8, dtype=np.float32).reshape(4, 2))
    random.Random(0).shuffle(noise)
    assert noise.asnumpy().tolist() == [[0, 1], [0, 1], [2, 3], [6, 7]]


def test_logsumexp_takes_mindspore_2s_dim_and_numpy_where_traces():
    x = ms.Tensor(np.log(np.array([[1.0, 3.0], [2.0, 6.0]], np.float32)))
    assert ops.logsumexp(x, dim=1).asnumpy() == pytest.approx(np.log([4.0, 8.0]))
    assert ops.logsumexp(x, dim=(), keepdim=True).asnumpy() == pytest.approx(np.log([[12.0]]))
    import irc.numpy as mnp
    where = ms.jit(lambda c, y: mnp.where(c, y, 0.0))
    assert where(ms.Tensor([1, 0, 2]), ms.Tensor([1.0, 2.0, 3.0])).asnumpy().tolist() == [1, 0, 3]


def test_item_assignment_inside_construct_trains_as_under_mindspore(capsys):
    """tests/mindspore_style/setitem_construct.py: rows, elements and slices
    assigned in construct (PointNet2's farthest-point sampling writes
    ``centroids[:, i] = farthest``), a run-time batch kept whole; losses and
    weights as MindSpore 2.10's."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "setitem_construct.py", rel=1e-6, abs=1e-6)


def test_item_assignment_at_a_computed_index_or_into_a_cells_tensor_is_refused_with_its_line():
    import irc
    from irc import nn, ops
    from irc.diagnostics import UserError

    class Net(nn.Cell):
        def construct(self, x):
            i = ops.argmax(x[0])
            y = ops.zeros_like(x)
            y[0, i] = 1.0
            return y.sum()

    net = Net()
    step = nn.TrainOneStepCell(net, nn.SGD([irc.Parameter(irc.Tensor(np.ones(1, np.float32)), name="p")], 0.1))
    with pytest.raises(UserError, match="item assignment at a tensor index computed in construct"):
        step(irc.Tensor(np.ones((2, 3), np.float32)))

    class Holds(nn.Cell):
        def __init__(self):
            super().__init__()
            self.table = irc.Tensor(np.zeros((2, 3), np.float32))

        def construct(self, x):
            self.table[0] = x[0]
            return self.table.sum()

    held = Holds()
    step = nn.TrainOneStepCell(held, nn.SGD([irc.Parameter(irc.Tensor(np.ones(1, np.float32)), name="q")], 0.1))
    with pytest.raises(UserError, match="made outside it"):
        step(irc.Tensor(np.ones((2, 3), np.float32)))
    assert held.table.asnumpy().sum() == 0


def test_a_fixed_batch_size_is_a_number_in_construct_as_under_mindspore(capsys):
    """tests/mindspore_style/fixed_batch_sizes.py (PointNet2's uses of B):
    mnp.zeros((B, N)), np.arange(B) in a @constexpr, gather_nd over a
    run-time batch; trained weights as MindSpore 2.10's."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "fixed_batch_sizes.py", rel=1e-6, abs=1e-7)
