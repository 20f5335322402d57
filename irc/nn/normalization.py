"""``nn.BatchNorm2d`` / ``nn.BatchNorm1d``.

Training (``set_train(True)``, or ``use_batch_statistics=True``) normalises
with the batch's mean and biased variance and updates the running
statistics: ``moving = moving * momentum + batch * (1 - momentum)``, the
variance's batch term unbiased (``n / (n - 1)``), as MindSpore and PyTorch do.
Evaluation normalises with the running statistics.  ``gamma``/``beta`` are
trainable; ``moving_mean``/``moving_variance`` are Parameters with
``requires_grad=False``.
"""
from __future__ import annotations

from .. import ops
from ..diagnostics import UnsupportedError, UserTypeError, UserValueError, user_frame
from ..ops._dispatch import type_of
from .basic import _positive_int, make_param
from .cell import Cell


class _BatchNorm(Cell):
    _rank = (4,)
    _layout = "NCHW"
    _synchronised = False

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format="NCHW"):
        super().__init__()
        name = type(self).__name__
        self.num_features = _positive_int(num_features, "num_features", name)
        for what, value in (("momentum", momentum), ("eps", eps)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UserTypeError(f"{name}: {what} must be a number, got {value!r}",
                                    where=user_frame())
        if not 0.0 <= momentum <= 1.0:
            raise UserValueError(f"{name}: momentum must be in [0, 1], got {momentum}",
                                 where=user_frame())
        if eps <= 0:
            raise UserValueError(f"{name}: eps must be positive, got {eps}", where=user_frame())
        if data_format != "NCHW":
            raise UnsupportedError(f"{name}: irc supports data_format='NCHW' only",
                                   where=user_frame())
        self.format = data_format      # MindSpore's attribute name here
        self.eps, self.momentum = float(eps), float(momentum)
        self.use_batch_statistics = use_batch_statistics
        shape = (num_features,)
        # MindSpore's order: the running statistics first (checkpoints list them so),
        # and its own names (a network knows them by their paths: bn1.moving_mean)
        self.moving_mean = make_param(moving_mean_init, shape, "mean",
                                      requires_grad=False)
        self.moving_variance = make_param(moving_var_init, shape, "variance",
                                          requires_grad=False)
        self.gamma = make_param(gamma_init, shape, "gamma", requires_grad=affine)
        self.beta = make_param(beta_init, shape, "beta", requires_grad=affine)

    def construct(self, x):
        t = type_of(x)
        if t.rank not in self._rank:
            raise UserValueError(f"{type(self).__name__} expects {self._layout} input, got {t}",
                                 where=user_frame())
        training = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        return ops.batch_norm(x, self.moving_mean, self.moving_variance, self.gamma, self.beta,
                              training, 1.0 - self.momentum, self.eps, synchronised=self._synchronised)

    def extend_repr(self) -> str:
        return f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}"


class BatchNorm2d(_BatchNorm):
    _rank = (4,)
    _layout = "NCHW"


class BatchNorm3d(Cell):
    """BatchNorm2d over NCDHW input seen as N, C, D*H, W (statistics per
    channel over N, D, H, W), as MindSpore builds it: its parameters are its
    ``bn2d``'s (checkpoints name them ``bn.bn2d.gamma``)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, dtype=None):
        super().__init__()
        self.bn2d = BatchNorm2d(num_features, eps, momentum, affine, gamma_init, beta_init,
                                moving_mean_init, moving_var_init, use_batch_statistics)

    def construct(self, x):
        t = type_of(x)
        if t.rank != 5:
            raise UserValueError(f"BatchNorm3d expects NCDHW input, got {t}", where=user_frame())
        shape = x.shape
        y = self.bn2d(ops.reshape(x, (shape[0], shape[1], -1, shape[4])))
        return ops.reshape(y, shape)


class BatchNorm1d(_BatchNorm):
    _rank = (2, 3)
    _layout = "NC or NCL"


class SyncBatchNorm(_BatchNorm):
    """A BatchNorm2d whose training statistics are over every rank's batch
    when ranks train together (any parallel mode; the sync-batch-norm pass),
    so N ranks normalise as one process on their batches together; in one
    process, a BatchNorm2d.  ``process_groups``: irc synchronises over all
    the ranks (None, or one group of them all)."""

    _rank = (2, 4)
    _layout = "NC or NCHW"
    _synchronised = True

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, process_groups=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init,
                         moving_mean_init, moving_var_init, use_batch_statistics)
        if process_groups is not None and not (
                isinstance(process_groups, (list, tuple)) and len(process_groups) == 1):
            raise UnsupportedError("SyncBatchNorm: irc synchronises over all the ranks; "
                                   f"process_groups {process_groups!r} splits them",
                                   where=user_frame(), hint="leave process_groups=None")
        self.process_groups = process_groups


class LayerNorm(Cell):
    """``nn.LayerNorm(normalized_shape, begin_norm_axis=-1, begin_params_axis=-1,
    gamma_init='ones', beta_init='zeros', epsilon=1e-7)``: over the axes from
    ``begin_norm_axis`` on, ``(x - mean) / sqrt(var + epsilon)`` (biased
    variance), times ``gamma`` plus ``beta`` (shaped ``normalized_shape``,
    applied from ``begin_params_axis`` on).  Composed of the elementwise and
    reduction ops, so its gradient is theirs."""

    def __init__(self, normalized_shape, begin_norm_axis=-1, begin_params_axis=-1, gamma_init="ones",
                 beta_init="zeros", epsilon=1e-7, dtype=None):
        super().__init__()
        if not isinstance(normalized_shape, (tuple, list)) or not normalized_shape:
            raise UserTypeError(f"LayerNorm: normalized_shape must be a non-empty tuple or list of ints, "
                                f"got {normalized_shape!r}", where=user_frame())
        shape = tuple(_positive_int(d, "normalized_shape", "LayerNorm") for d in normalized_shape)
        for what, axis in (("begin_norm_axis", begin_norm_axis), ("begin_params_axis", begin_params_axis)):
            if isinstance(axis, bool) or not isinstance(axis, int):
                raise UserTypeError(f"LayerNorm: {what} must be an int, got {axis!r}", where=user_frame())
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or epsilon <= 0:
            raise UserValueError(f"LayerNorm: epsilon must be a positive number, got {epsilon!r}",
                                 where=user_frame())
        self.normalized_shape = shape
        self.begin_norm_axis, self.begin_params_axis = begin_norm_axis, begin_params_axis
        self.epsilon = float(epsilon)
        self.gamma = make_param(gamma_init, shape, "gamma")
        self.beta = make_param(beta_init, shape, "beta")

    def construct(self, x):
        rank = type_of(x).rank
        norm_from = self.begin_norm_axis % rank if -rank <= self.begin_norm_axis < rank else None
        params_from = self.begin_params_axis % rank if -rank <= self.begin_params_axis < rank else None
        if norm_from is None or params_from is None or \
                tuple(type_of(x).shape[params_from:]) != self.normalized_shape:
            raise UserValueError(f"LayerNorm: an input of type {type_of(x)} does not end in "
                                 f"normalized_shape {list(self.normalized_shape)} from "
                                 f"begin_params_axis {self.begin_params_axis} (begin_norm_axis "
                                 f"{self.begin_norm_axis})", where=user_frame())
        return _standardised(x, tuple(range(norm_from, rank)), self.epsilon) * self.gamma + self.beta

    def extend_repr(self) -> str:
        return (f"normalized_shape={list(self.normalized_shape)}, begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}")


def group_sizes(num_groups, num_channels) -> tuple[int, int]:
    """GroupNorm's (num_groups, num_channels), checked (nn's and mint.nn's)."""
    groups = _positive_int(num_groups, "num_groups", "GroupNorm")
    channels = _positive_int(num_channels, "num_channels", "GroupNorm")
    if channels % groups:
        raise UserValueError(f"GroupNorm: num_channels ({channels}) must divide by num_groups "
                             f"({groups})", where=user_frame())
    return groups, channels


class GroupNorm(Cell):
    """Each sample's channels in ``num_groups`` groups, each normalised over
    its channels and positions (biased variance), times ``gamma`` plus
    ``beta`` per channel."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, gamma_init="ones",
                 beta_init="zeros", dtype=None):
        super().__init__()
        self.num_groups, self.num_channels = group_sizes(num_groups, num_channels)
        self.eps, self.affine = float(eps), bool(affine)
        self.gamma = make_param(gamma_init, (num_channels,), "gamma") if affine else None
        self.beta = make_param(beta_init, (num_channels,), "beta") if affine else None

    def construct(self, x):
        return _group_normalised(x, self.num_groups, self.eps, self.gamma, self.beta)


class InstanceNorm2d(GroupNorm):
    """GroupNorm with a group per channel (MindSpore's keeps no running
    statistics to use)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, gamma_init="ones",
                 beta_init="zeros"):
        super().__init__(num_features, num_features, eps, affine, gamma_init, beta_init)


class InstanceNorm3d(InstanceNorm2d):
    """InstanceNorm2d over NCDHW input."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, gamma_init="ones",
                 beta_init="zeros", dtype=None):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init)


def _standardised(x, axes, eps: float):
    """(x - mean) / sqrt(biased variance + eps) over ``axes``: LayerNorm's and GroupNorm's."""
    centred = x - ops.mean(x, axes, keep_dims=True)
    var = ops.mean(centred * centred, axes, keep_dims=True)
    return centred / ops.sqrt(var + eps)


def _group_normalised(x, groups, eps, gamma, beta):
    shape = x.shape
    y = ops.reshape(_standardised(ops.reshape(x, (shape[0], groups, -1)), 2, eps), shape)
    if gamma is None:
        return y
    per_channel = (1, -1) + (1,) * (len(shape) - 2)
    return y * ops.reshape(gamma, per_channel) + ops.reshape(beta, per_channel)
