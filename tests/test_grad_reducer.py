"""A script's own collectives on one process: ``ops.AllReduce`` and
``nn.DistributedGradReducer`` as MindSpore defines them (the reduction over
one rank is the value; the reducer's mean multiplies by 1/degree), eagerly
and in a jitted function, and their bad arguments refused at the user's line.
The ranks together: tests/test_distributed.py."""
from __future__ import annotations

import numpy as np
import pytest

import irc as ms
from irc import nn, ops
from irc.diagnostics import UnsupportedError, UserValueError

GRADS = (np.arange(6, dtype=np.float32).reshape(2, 3), np.array([0.5, -2.0], np.float32))


def _reduce(reducer, jitted: bool):
    fn = ms.jit(lambda grads: reducer(grads)) if jitted else reducer
    return [g.asnumpy() for g in fn(tuple(ms.Tensor(g) for g in GRADS))]


@pytest.mark.parametrize("jitted", [False, True])
def test_the_reducer_sums_and_takes_the_mean_over_degree(jitted):
    params = [ms.Parameter(ms.Tensor(g), name=f"p{i}") for i, g in enumerate(GRADS)]
    summed = _reduce(nn.DistributedGradReducer(params, mean=False), jitted)
    assert all(np.array_equal(a, g) for a, g in zip(summed, GRADS))
    quarter = _reduce(nn.DistributedGradReducer(params, mean=True, degree=4), jitted)
    assert all(np.array_equal(a, g * np.float32(0.25)) for a, g in zip(quarter, GRADS))


def test_the_reducers_mean_follows_gradients_mean_by_default():
    params = [ms.Parameter(ms.Tensor(GRADS[0]), name="w")]
    ms.set_auto_parallel_context(gradients_mean=True)
    assert nn.DistributedGradReducer(params).mean
    ms.reset_auto_parallel_context()
    assert not nn.DistributedGradReducer(params).mean


@pytest.mark.parametrize("op", [ops.ReduceOp.SUM, ops.ReduceOp.MAX, ops.ReduceOp.MIN])
def test_all_reduce_over_one_rank_is_the_value(op):
    x = ms.Tensor(GRADS[0])
    assert np.array_equal(ops.AllReduce(op)(x).asnumpy(), GRADS[0])
    assert np.array_equal(ms.jit(lambda t: ops.AllReduce(op)(t) * 2)(x).asnumpy(), GRADS[0] * 2)


def test_bad_reductions_groups_and_degrees_are_refused_at_the_users_line():
    with pytest.raises(UnsupportedError, match="PROD") as e:
        ops.AllReduce(ops.ReduceOp.PROD)
    assert e.value.where and "test_grad_reducer.py" in e.value.where
    with pytest.raises(UserValueError, match="ReduceOp"):
        ops.AllReduce("average")
    with pytest.raises(UnsupportedError, match="world group") as e:
        ops.AllReduce(group="group_of_two")(ms.Tensor(GRADS[0]))
    assert "GlobalComm.WORLD_COMM_GROUP" in e.value.hint
    params = [ms.Parameter(ms.Tensor(GRADS[0]), name="w")]
    for degree in (0, -2, 1.5, True):
        with pytest.raises(UserValueError, match="degree"):
            nn.DistributedGradReducer(params, mean=True, degree=degree)


def test_the_reducers_docstring_training_wrapper_runs_and_steps():
    """MindSpore's DistributedGradReducer example as written: a step Cell
    reading the parallel settings from `context`, ops.Depend / ops.DType /
    ops.fill, called on a batch of ones: loss 256 (as its docstring prints),
    then one Momentum step of the analytic gradient 3.2 (degree 1: the
    device_num it reads is unset)."""
    from irc import context

    class TrainingWrapper(nn.Cell):
        def __init__(self, network, optimizer, sens=1.0):
            super(TrainingWrapper, self).__init__(auto_prefix=False)
            self.network = network
            self.network.add_flags(defer_inline=True)
            self.weights = optimizer.parameters
            self.optimizer = optimizer
            self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
            self.sens = sens
            self.reducer_flag = False
            self.grad_reducer = None
            self.parallel_mode = context.get_auto_parallel_context("parallel_mode")
            self.depend = ops.Depend()
            if self.parallel_mode in [ms.ParallelMode.DATA_PARALLEL, ms.ParallelMode.HYBRID_PARALLEL]:
                self.reducer_flag = True
            if self.reducer_flag:
                mean = context.get_auto_parallel_context("gradients_mean")
                degree = context.get_auto_parallel_context("device_num")
                self.grad_reducer = nn.DistributedGradReducer(optimizer.parameters, mean, degree)

        def construct(self, *args):
            weights = self.weights
            loss = self.network(*args)
            sens = ops.fill(ops.DType()(loss), ops.Shape()(loss), self.sens)
            grads = self.grad(self.network, weights)(*args, sens)
            if self.reducer_flag:
                grads = self.grad_reducer(grads)
            return self.depend(loss, self.optimizer(grads))

    class Net(nn.Cell):
        def __init__(self, in_features, out_features):
            super(Net, self).__init__()
            self.weight = ms.Parameter(ms.Tensor(np.ones([in_features, out_features]).astype(np.float32)),
                                       name='weight')
            self.matmul = ops.MatMul()

        def construct(self, x):
            return self.matmul(x, self.weight)

    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL)
    network = Net(16, 10)
    net_with_loss = nn.WithLossCell(network, nn.MSELoss())
    optimizer = nn.Momentum(net_with_loss.trainable_params(), learning_rate=0.1, momentum=0.9)
    train_cell = TrainingWrapper(net_with_loss, optimizer)
    assert train_cell.reducer_flag and train_cell.grad_reducer.degree == 1
    loss = train_cell(ms.Tensor(np.ones([16, 16], np.float32)), ms.Tensor(np.zeros([16, 10], np.float32)))
    assert float(loss.asnumpy()) == 256.0
    np.testing.assert_allclose(network.weight.asnumpy(), 1 - 0.1 * 3.2, rtol=1e-6)
