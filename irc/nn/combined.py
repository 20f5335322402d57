"""``mindspore.nn``'s combined layers: ``Conv2dBnAct`` and ``DenseBnAct``,
a convolution (or dense layer), an optional BatchNorm and an optional
activation, with MindSpore's parameter names (``conv.weight``,
``batchnorm.gamma`` ...) and defaults (the model zoo's RetinaNet and SSD
ResNet blocks use them).  ``after_fake`` is quantisation-aware training's
flag: accepted and checked, as MindSpore keeps it."""
from __future__ import annotations

from ..diagnostics import UserTypeError, user_frame
from ..ops.operations import Primitive
from .activation import LeakyReLU, get_activation
from .basic import Dense
from .cell import Cell
from .conv import Conv2d
from .normalization import BatchNorm1d, BatchNorm2d

__all__ = ["Conv2dBnAct", "DenseBnAct"]


def _flag(cls: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise UserTypeError(f"For '{cls}', the type of '{name}' must be bool, but got "
                            f"{type(value).__name__}", where=user_frame())
    return value


class _BnAct(Cell):
    """The layer (set by the subclass), then BatchNorm, then the activation."""

    def _bn_act(self, has_bn, batchnorm, activation, alpha, after_fake) -> None:
        cls = type(self).__name__
        self.has_bn = _flag(cls, "has_bn", has_bn)
        self.after_fake = _flag(cls, "after_fake", after_fake)
        self.has_act = activation is not None
        if self.has_bn:
            self.batchnorm = batchnorm()
        if activation == "leakyrelu":
            self.activation = LeakyReLU(alpha)
        else:
            self.activation = get_activation(activation) if isinstance(activation, str) else activation
            if activation is not None and not isinstance(self.activation, (Cell, Primitive)):
                raise UserTypeError(f"For '{cls}', the 'activation' must be str or Cell or Primitive, "
                                    f"but got {type(activation).__name__}.", where=user_frame())

    def _after(self, x):
        if self.has_bn:
            x = self.batchnorm(x)
        if self.has_act:
            x = self.activation(x)
        return x


class Conv2dBnAct(_BnAct):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, has_bias=False, weight_init="normal", bias_init="zeros",
                 has_bn=False, momentum=0.997, eps=1e-5, activation=None, alpha=0.2, after_fake=True):
        super().__init__()
        self.conv = Conv2d(in_channels, out_channels, kernel_size=kernel_size, stride=stride,
                           pad_mode=pad_mode, padding=padding, dilation=dilation, group=group,
                           has_bias=has_bias, weight_init=weight_init, bias_init=bias_init)
        self._bn_act(has_bn, lambda: BatchNorm2d(out_channels, eps, momentum), activation, alpha, after_fake)

    def construct(self, x):
        return self._after(self.conv(x))


class DenseBnAct(_BnAct):
    def __init__(self, in_channels, out_channels, weight_init="normal", bias_init="zeros", has_bias=True,
                 has_bn=False, momentum=0.9, eps=1e-5, activation=None, alpha=0.2, after_fake=True):
        super().__init__()
        self.dense = Dense(in_channels, out_channels, weight_init, bias_init, has_bias)
        self._bn_act(has_bn, lambda: BatchNorm1d(out_channels, eps, momentum), activation, alpha, after_fake)

    def construct(self, x):
        return self._after(self.dense(x))
