"""``mindspore.dataset.transforms.transforms``: generic tensor transforms.

``TypeCast``, ``OneHot``, ``Duplicate``, ``PadEnd``, ``Fill``, ``Mask``, ``Slice``,
``Concatenate`` and ``Unique`` describe ops of the ``transforms``
dialect (``irc/dialects/transforms.py``); ``Compose`` is not an op: the
pipeline flattens it into its list (``irc.dataset._ops.flatten_ops``).
"""
from __future__ import annotations

import enum

import numpy as np

from .._ops import TensorOperation, arg_error, check_int, check_number, check_prob, flatten_ops, op_steps

__all__ = ["Compose", "Concatenate", "Duplicate", "Fill", "Mask", "OneHot", "PadEnd", "Relational", "Slice",
           "TypeCast", "Unique", "RandomChoice", "RandomApply"]


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


def _element(op: str, name: str, value):
    """A number or a string, as the op's attribute holds it."""
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise arg_error(TypeError, f"{op}: {name} must be a number or a string, got {value!r}")
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


class Fill(TensorOperation):
    """Every element of the row set to ``fill_value``."""
    op_name = "transforms.Fill"

    def __init__(self, fill_value):
        super().__init__(fill_value=_element("Fill", "fill_value", fill_value))


class Relational(enum.IntEnum):
    """Mask's comparisons, in MindSpore's order."""
    EQ = 0
    NE = 1
    GT = 2
    GE = 3
    LT = 4
    LE = 5


class Mask(TensorOperation):
    """``row <operator> constant`` per element, as ``dtype`` (bool by default)."""
    op_name = "transforms.Mask"

    def __init__(self, operator, constant, dtype=None):
        if not isinstance(operator, Relational):
            raise arg_error(TypeError, f"Mask: operator must be a Relational (Relational.EQ ...), got {operator!r}")
        super().__init__(operator=operator.name, constant=_element("Mask", "constant", constant),
                         dtype="bool" if dtype is None else _ir_dtype("Mask", dtype))


def _slice_spec(item):
    if item is Ellipsis:
        return {"kind": "ellipsis"}
    if item is True or item is None:
        return {"kind": "all"}
    if isinstance(item, slice):
        if item.start is None or item.stop is None:
            raise arg_error(ValueError, f"Slice: a slice needs its start and stop, as MindSpore's, got {item!r}")
        return {"kind": "slice", "start": int(item.start), "stop": int(item.stop),
                "step": 1 if item.step is None else int(item.step)}
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        return {"kind": "index", "value": int(item)}
    if isinstance(item, (list, tuple)) and item and all(isinstance(i, (int, np.integer)) and not isinstance(i, bool)
                                                         for i in item):
        return {"kind": "list", "value": [int(i) for i in item]}
    raise arg_error(TypeError, f"Slice: each slice must be an int, a list of ints, a slice, True, None or "
                               f"..., got {item!r}")


class Slice(TensorOperation):
    """The row indexed per dimension: an index (kept as a dimension of one),
    a list of indices, a slice, or all (True, None, ...)."""
    op_name = "transforms.Slice"

    def __init__(self, *slices):
        if not slices:
            raise arg_error(ValueError, "Slice: give at least one slice")
        super().__init__(slices=[_slice_spec(s) for s in slices])


class Concatenate(TensorOperation):
    """``prepend`` + the 1-D row + ``append``."""
    op_name = "transforms.Concatenate"

    def __init__(self, axis=0, prepend=None, append=None):
        if check_int("Concatenate", "axis", axis) not in (0, -1):
            raise arg_error(ValueError, f"Concatenate: only a 1-D row can be concatenated: axis must be 0 or "
                                        f"-1, got {axis}")

        def elements(name, array):
            if array is None:
                return None
            values = np.asarray(array)
            if values.ndim != 1:
                raise arg_error(ValueError, f"Concatenate: {name} must be 1-D, got shape {list(values.shape)}")
            return [_element("Concatenate", name, v.item() if hasattr(v, "item") else v) for v in values]
        super().__init__(axis=int(axis), prepend=elements("prepend", prepend), append=elements("append", append))


class Unique(TensorOperation):
    """The flattened row's distinct values (first appearance order), each
    element's index among them and their counts: three columns."""
    op_name = "transforms.Unique"

    def __init__(self):
        super().__init__()


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
