"""``mindspore.dataset.transforms.transforms``: generic tensor transforms.

``TypeCast``, ``OneHot``, ``Duplicate`` and ``PadEnd`` describe ops of the ``transforms``
dialect (``irc/dialects/transforms.py``); ``Compose`` is not an op: the
pipeline flattens it into its list (``irc.dataset._ops.flatten_ops``).
"""
from __future__ import annotations

from .._ops import TensorOperation, arg_error, check_int, check_number, check_prob, flatten_ops, op_steps

__all__ = ["Compose", "Duplicate", "OneHot", "PadEnd", "TypeCast", "RandomChoice", "RandomApply"]


def _ir_dtype(op: str, dtype) -> str:
    """mstype / numpy dtype / 'int32' / 'i32' / anything with a ``.name`` -> IR dtype."""
    from ...common.dtype import to_ir
    from ...ir.types import MINDSPORE_NAMES, is_dtype
    try:
        ir = to_ir(dtype)
    except (TypeError, ValueError):
        name = getattr(dtype, "name", None)
        if isinstance(name, str):
            name = name.lower()
            ir = MINDSPORE_NAMES.get(name) or MINDSPORE_NAMES.get(name + "_") or (name if is_dtype(name) else None)
        else:
            ir = None
        if ir is None:
            raise arg_error(TypeError, f"{op}: not a dtype: {dtype!r} (use e.g. mindspore.int32)") from None
    if ir == "bytes":
        raise arg_error(ValueError, f"{op}: cannot cast to bytes")
    return ir


class TypeCast(TensorOperation):
    """Cast to ``data_type`` (float -> int truncates toward zero)."""
    op_name = "transforms.TypeCast"

    def __init__(self, data_type=None, *, dtype=None):
        if (data_type is None) == (dtype is None):
            raise arg_error(TypeError, "TypeCast: give the target dtype, e.g. TypeCast(mindspore.int32)")
        super().__init__(dtype=_ir_dtype("TypeCast", data_type if dtype is None else dtype))


class OneHot(TensorOperation):
    """Integer labels -> one-hot vectors of ``num_classes`` (smoothed when smoothing_rate > 0)."""
    op_name = "transforms.OneHot"

    def __init__(self, num_classes, smoothing_rate=0.0):
        super().__init__(num_classes=check_int("OneHot", "num_classes", num_classes, 1),
                         smoothing_rate=check_number("OneHot", "smoothing_rate", smoothing_rate, 0.0, 1.0))


class Duplicate(TensorOperation):
    """One column -> two identical columns."""
    op_name = "transforms.Duplicate"

    def __init__(self):
        super().__init__()


class PadEnd(TensorOperation):
    """Each axis cut or padded at its end to ``pad_shape`` (None keeps an
    axis) with ``pad_value`` (default 0, or '' for strings)."""
    op_name = "transforms.PadEnd"

    def __init__(self, pad_shape, pad_value=None):
        if not isinstance(pad_shape, (list, tuple)) or not pad_shape:
            raise arg_error(TypeError, f"PadEnd: pad_shape must be a non-empty list, got {pad_shape!r}")
        shape = [-1 if d is None else check_int("PadEnd", "pad_shape", d, 1) for d in pad_shape]
        if pad_value is not None and not isinstance(pad_value, (str, bytes)):
            pad_value = check_number("PadEnd", "pad_value", pad_value)
            pad_value = int(pad_value) if float(pad_value).is_integer() else pad_value
        if isinstance(pad_value, bytes):
            pad_value = pad_value.decode("utf-8")
        super().__init__(pad_shape=shape, pad_value=pad_value)


class Compose:
    """A list of transforms applied in order (flattened into the map's list)."""
    is_compose = True

    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)) or not transforms:
            raise arg_error(TypeError, "Compose: transforms must be a non-empty list of transforms")
        for t in flatten_ops(transforms):
            if not callable(t):
                raise arg_error(TypeError, f"Compose: {t!r} is not a transform")
        self.transforms = list(transforms)
        from ...diagnostics import user_frame
        self.source = user_frame()

    @property
    def operations(self) -> list:
        return flatten_ops(self.transforms)

    def __call__(self, *arrays):
        values = arrays
        for op in self.operations:
            out = op(*values)
            values = out if isinstance(out, tuple) else (out,)
        return values[0] if len(values) == 1 else values

    def __repr__(self) -> str:
        return f"Compose({self.transforms!r})"


class RandomChoice(TensorOperation):
    """One of ``transforms`` (each a transform or a list of them) per sample."""
    op_name = "transforms.RandomChoice"

    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)) or not transforms:
            raise arg_error(TypeError, "RandomChoice: transforms must be a non-empty list of transforms")
        super().__init__(transforms=[op_steps("RandomChoice", t) for t in transforms])


class RandomApply(TensorOperation):
    """``transforms`` (a list, applied in order) with probability ``prob``."""
    op_name = "transforms.RandomApply"

    def __init__(self, transforms, prob=0.5):
        if not isinstance(transforms, (list, tuple)) or not transforms:
            raise arg_error(TypeError, "RandomApply: transforms must be a non-empty list of transforms")
        super().__init__(transforms=op_steps("RandomApply", transforms), prob=check_prob("RandomApply", prob))
