"""The ``transforms`` dialect: generic tensor transforms of
``mindspore.dataset.transforms`` (``TypeCast``, ``OneHot``, ``Duplicate``,
``PadEnd``) and the ops that run others at random (``RandomChoice``,
``RandomApply``).

``transforms.Compose`` is not an op: the API flattens it into its list.
"""
from __future__ import annotations

import numpy as np

from ..ir.registry import MAP, REQUIRED, Dialect
from ..ir.traits import CommutesWithHWC2CHW, Offloadable, Pure, Random
from ..ir.types import UNKNOWN, TensorType, is_dtype, to_numpy_dtype
from .vision import uniforms

FAMILY = "transforms"
DIALECT = Dialect("transforms")
define = DIALECT.define


# --- TypeCast ------------------------------------------------------------------

def _infer_typecast(attrs, ins):
    dtype = attrs["dtype"]
    if not is_dtype(dtype) or dtype == "bytes":
        raise ValueError(f"TypeCast: {dtype!r} is not a numeric dtype")
    if ins[0].dtype == "bytes":
        raise TypeError(f"TypeCast: cannot cast encoded bytes {ins[0]} (add vision.Decode() first)")
    return [ins[0].with_dtype(dtype)]


TYPECAST = define("transforms.TypeCast", kind=MAP, family=FAMILY, operands=("input",),
                  attrs={"dtype": REQUIRED}, infer=_infer_typecast,
                  traits=(Pure(), Offloadable(), CommutesWithHWC2CHW()),
                  doc="x.astype(dtype) (float -> int truncates toward zero); dtype is the IR spelling")


def _typecast(x, attrs):
    x = np.asarray(x)
    if x.dtype.kind in "OSU":
        raise TypeError(f"TypeCast: cannot cast an array of dtype {x.dtype}")
    return x.astype(to_numpy_dtype(attrs["dtype"]))


@TYPECAST.host_batch
def _typecast_batch(inputs, attrs, draws):
    return [_typecast(inputs[0], attrs)]


# --- OneHot ----------------------------------------------------------------------

def _infer_onehot(attrs, ins):
    t = ins[0]
    if t.dtype in ("bytes", "bool") or t.dtype.startswith("f"):
        raise TypeError(f"OneHot: expected integer labels, got {t}")
    dtype = "f64" if attrs["smoothing_rate"] else t.dtype
    return [TensorType(dtype, (*t.shape, int(attrs["num_classes"])))]


ONEHOT = define("transforms.OneHot", kind=MAP, family=FAMILY, operands=("labels",), traits=(Pure(),),
                attrs={"num_classes": REQUIRED, "smoothing_rate": 0.0}, infer=_infer_onehot,
                doc="labels -> one-hot vectors (shape + [num_classes]); dtype kept, "
                    "float64 (1-s)*onehot + s/num_classes when smoothing_rate s > 0 (as MindSpore)")


def one_hot(x, attrs) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind not in "iu":
        raise TypeError(f"OneHot: expected integer labels, got an array of dtype {x.dtype}")
    n = int(attrs["num_classes"])
    if x.size and (x.min() < 0 or x.max() >= n):
        raise ValueError(f"OneHot: label {int(x.min() if x.min() < 0 else x.max())} "
                         f"is outside [0, {n - 1}] (num_classes={n})")
    s = float(attrs["smoothing_rate"])
    hot = (x[..., None] == np.arange(n)).astype(np.float64 if s else x.dtype)
    if s:   # in float64, with MindSpore's expression (bit for bit)
        hot = hot * (1.0 - s) + s / n
    return hot


@ONEHOT.host_batch
def _onehot_batch(inputs, attrs, draws):
    return [one_hot(inputs[0], attrs)]


# --- Duplicate ---------------------------------------------------------------------

DUPLICATE = define("transforms.Duplicate", kind=MAP, family=FAMILY, attrs={},
                   operands=("input",), results=("output", "copy"), traits=(Pure(),),
                   infer=lambda attrs, ins: [ins[0], ins[0]],
                   doc="one column -> two copies")


@DUPLICATE.host_batch
def _duplicate_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    return [x, x.copy()]


# --- PadEnd ------------------------------------------------------------------------

def _infer_pad_end(attrs, ins):
    t, shape = ins[0], list(attrs["pad_shape"])
    if len(shape) != t.rank:
        raise ValueError(f"PadEnd: pad_shape {shape} has {len(shape)} dimension(s), the column {t} {t.rank}")
    return [TensorType(t.dtype, [d if want < 0 else want for d, want in zip(t.shape, shape)])]


PAD_END = define("transforms.PadEnd", kind=MAP, family=FAMILY, operands=("input",), traits=(Pure(),),
                 attrs={"pad_shape": REQUIRED, "pad_value": None}, infer=_infer_pad_end,
                 doc="each axis cut or padded at its end to pad_shape (-1: kept) with pad_value "
                     "(none: 0, or '' for strings)")


@PAD_END.host_sample
def _pad_end_sample(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    if x.ndim != len(attrs["pad_shape"]):
        raise ValueError(f"PadEnd: pad_shape {list(attrs['pad_shape'])} does not fit a row of shape "
                         f"{list(x.shape)}")
    shape = [d if want < 0 else want for d, want in zip(x.shape, attrs["pad_shape"])]
    value = attrs["pad_value"]
    if value is None:
        value = "" if x.dtype.kind in "OSU" else 0
    if x.dtype.kind == "U" and isinstance(value, str):   # room for the pad's characters
        x = x.astype(np.result_type(x.dtype, np.array(value).dtype))
    out = np.full(shape, value, dtype=x.dtype)
    kept = tuple(slice(0, min(d, want)) for d, want in zip(x.shape, shape))
    out[kept] = x[kept]
    return [out]


# --- Fill, Mask, Slice, Concatenate, Unique ------------------------------------------

def _is_text(x: np.ndarray) -> bool:
    return x.dtype.kind in "OSU"


def _value_for(op: str, x: np.ndarray, value):
    """``value`` as an element of ``x`` (a number cast to x's dtype, as
    MindSpore's C++ casts it: Fill(2.7) on int32 is 2)."""
    if _is_text(x) != isinstance(value, str):
        raise TypeError(f"{op}: a {'string' if isinstance(value, str) else 'number'} "
                        f"{value!r} for a column of {'strings' if _is_text(x) else x.dtype}")
    return value if isinstance(value, str) else np.asarray(value).astype(x.dtype)


FILL = define("transforms.Fill", kind=MAP, family=FAMILY, operands=("input",), traits=(Pure(),),
              attrs={"fill_value": REQUIRED}, infer=lambda attrs, ins: [ins[0]],
              doc="every element set to fill_value (a number cast to the column's dtype, or a string)")


@FILL.host_batch
def _fill_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    value = _value_for("Fill", x, attrs["fill_value"])
    # A string column's dtype is as wide as its longest element: widen it so a
    # longer fill value is not cut short.
    dtype = np.result_type(x.dtype, np.asarray(value).dtype) if _is_text(x) else x.dtype
    return [np.full(x.shape, value, dtype=dtype)]


_RELATIONS = {"EQ": np.equal, "NE": np.not_equal, "GT": np.greater, "GE": np.greater_equal,
              "LT": np.less, "LE": np.less_equal}


def _infer_mask(attrs, ins):
    if attrs["operator"] not in _RELATIONS:
        raise ValueError(f"Mask: operator must be one of {list(_RELATIONS)}, got {attrs['operator']!r}")
    return [ins[0].with_dtype(attrs["dtype"])]


MASK = define("transforms.Mask", kind=MAP, family=FAMILY, operands=("input",), traits=(Pure(),),
              attrs={"operator": REQUIRED, "constant": REQUIRED, "dtype": "bool"}, infer=_infer_mask,
              doc="x <operator> constant (EQ, NE, GT, GE, LT, LE; the constant cast to x's dtype), "
                  "as dtype")


@MASK.host_batch
def _mask_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    hit = _RELATIONS[attrs["operator"]](x, _value_for("Mask", x, attrs["constant"]))
    return [hit.astype(to_numpy_dtype(attrs["dtype"]))]


def _slice_indices(spec, size: int) -> np.ndarray:
    """One dimension's picks: an index (kept as a dimension of 1, as
    MindSpore's), a list of them, a [start, stop, step] slice, or all."""
    kind = spec["kind"]
    if kind == "all":
        return np.arange(size)
    if kind == "slice":
        return np.arange(size)[slice(spec["start"], spec["stop"], spec["step"])]
    picks = np.asarray(spec["value"] if kind == "list" else [spec["value"]], np.int64)
    if picks.size and (picks.min() < -size or picks.max() >= size):
        raise IndexError(f"Slice: index {int(picks.max() if picks.max() >= size else picks.min())} "
                         f"is outside a dimension of {size}")
    return picks % size if size else picks


def _expand_ellipsis(slices, rank: int) -> list:
    if any(s["kind"] == "ellipsis" for s in slices):
        at = next(i for i, s in enumerate(slices) if s["kind"] == "ellipsis")
        fill = [{"kind": "all"}] * max(0, rank - (len(slices) - 1))
        slices = slices[:at] + fill + slices[at + 1:]
    if len(slices) > rank:
        raise ValueError(f"Slice: {len(slices)} slicing dimensions for a row of rank {rank}")
    return slices


def _infer_slice(attrs, ins):
    t = ins[0]
    slices = _expand_ellipsis(list(attrs["slices"]), t.rank)
    shape = list(t.shape)
    for i, spec in enumerate(slices):
        shape[i] = UNKNOWN if shape[i] == UNKNOWN else len(_slice_indices(spec, shape[i]))
    return [t.with_shape(shape)]


SLICE = define("transforms.Slice", kind=MAP, family=FAMILY, operands=("input",), traits=(Pure(),),
               attrs={"slices": REQUIRED}, infer=_infer_slice,
               doc="the row indexed dimension by dimension (each an index, a list of indices, a "
                   "slice, or all: an outer product of the picks, as MindSpore's Slice)")


@SLICE.host_batch
def _slice_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])           # [N, row...]: every row picked alike
    rows = x.shape[1:]
    slices = _expand_ellipsis(list(attrs["slices"]), len(rows))
    picks = [_slice_indices(spec, rows[i]) for i, spec in enumerate(slices)]
    picks += [np.arange(d) for d in rows[len(picks):]]
    return [x[np.ix_(np.arange(len(x)), *picks)]]


def _infer_concatenate(attrs, ins):
    t = ins[0]
    if t.rank != 1:
        raise ValueError(f"Concatenate: only a 1-D row can be concatenated, got {t}")
    extra = len(attrs["prepend"] or []) + len(attrs["append"] or [])
    return [t.with_shape([UNKNOWN if t.shape[0] == UNKNOWN else t.shape[0] + extra])]


CONCATENATE = define("transforms.Concatenate", kind=MAP, family=FAMILY, operands=("input",), traits=(Pure(),),
                     attrs={"axis": 0, "prepend": None, "append": None}, infer=_infer_concatenate,
                     doc="prepend + the 1-D row + append (their elements cast to the row's dtype)")


@CONCATENATE.host_batch
def _concatenate_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])           # [N, L]: 1-D rows
    if x.ndim != 2:
        raise ValueError(f"Concatenate: only a 1-D row can be concatenated, got rows of shape {list(x.shape[1:])}")
    ends = [np.asarray([_value_for("Concatenate", x, v) for v in attrs[k] or []], x.dtype) for k in ("prepend", "append")]
    parts = [np.broadcast_to(ends[0], (len(x), len(ends[0]))), x, np.broadcast_to(ends[1], (len(x), len(ends[1])))]
    if _is_text(x):       # room for the longest string
        return [np.asarray(np.concatenate([p.astype(object) for p in parts], axis=1).tolist())]
    return [np.concatenate(parts, axis=1)]


def _infer_unique(attrs, ins):
    t = ins[0]
    if t.rank < 2:
        raise ValueError(f"Unique: input must be at least 2-D in order to do unique op, got {t}")
    flat = TensorType(t.dtype, (UNKNOWN,))
    return [flat, TensorType("i32", (UNKNOWN,)), TensorType("i32", (UNKNOWN,))]


UNIQUE = define("transforms.Unique", kind=MAP, family=FAMILY, operands=("input",), traits=(Pure(),),
                results=("output", "idx", "counts"), attrs={}, infer=_infer_unique,
                doc="the flattened row's distinct values in order of first appearance, each "
                    "element's position among them, and their counts (int32): MindSpore's")


# a row's distinct values are as many as it has: no batch of them stacks
@UNIQUE.host_sample
def _unique_sample(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    if x.ndim < 2:
        raise ValueError(f"Unique: input must be at least 2-D in order to do unique op, got rank:{x.ndim}")
    flat = x.reshape(-1)
    values, first, inverse, counts = np.unique(flat, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first, kind="stable")         # first appearance, not sorted
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return [values[order], rank[inverse.reshape(-1)].astype(np.int32), counts[order].astype(np.int32)]


# --- RandomChoice, RandomApply: ops that run other ops ------------------------------
#
# A sequence is a list of {"op": name, "attrs": {...}} steps (a Compose's ops).
# A sample's draws: the selection's first, then each step's in order.

def sequence_draws(steps) -> int:
    from ..ir.registry import get
    return sum(int(get(s["op"]).num_draws(s["attrs"])) for s in steps)


def infer_sequence(steps, t: TensorType) -> TensorType:
    from ..ir.registry import get
    for s in steps:
        outs = get(s["op"]).infer(s["attrs"], [t])
        if len(outs) != 1:
            raise ValueError(f"{s['op']} gives {len(outs)} columns: a random choice takes one-column ops")
        t = outs[0]
    return t


def join_types(op: str, types: list[TensorType]) -> TensorType:
    """The type every one of ``types`` is: a dim they disagree on unknown."""
    first = types[0]
    for t in types[1:]:
        if t.dtype != first.dtype or t.rank != first.rank:
            raise ValueError(f"{op}: its transforms give rows of different types ({first} and {t}); "
                             f"every choice must give one type")
    shape = tuple(d if all(t.shape[i] == d for t in types) else UNKNOWN for i, d in enumerate(first.shape))
    return first.with_shape(shape)


def infer_optional_steps(op: str, steps, t: TensorType) -> TensorType:
    """The type after ``steps`` each of which may apply or not, in order."""
    for step in steps:
        t = join_types(op, [t, infer_sequence([step], t)])
    return t


def pick(u, n: int) -> int:
    """Which of ``n`` choices a float32 draw ``u`` picks."""
    return min(int(u * np.float32(n)), n - 1)


def run_sequence(steps, x, u) -> np.ndarray:
    """``x`` through the steps, each given its draws from ``u``."""
    from ..ir.registry import get
    at = 0
    for s in steps:
        opdef = get(s["op"])
        k = int(opdef.num_draws(s["attrs"]))
        (x,) = opdef.host_sample_fn([x], s["attrs"], u[at:at + k] if k else None)
        at += k
    return x


def _infer_choice(attrs, ins):
    return [join_types("RandomChoice", [infer_sequence(steps, ins[0]) for steps in attrs["transforms"]])]


RANDOM_CHOICE = define("transforms.RandomChoice", kind=MAP, family=FAMILY, operands=("input",),
                       attrs={"transforms": REQUIRED}, infer=_infer_choice,
                       traits=(Pure(), Random(lambda attrs: 1 + max(sequence_draws(s) for s in attrs["transforms"]))),
                       doc="one of transforms (each a list of ops) picked per sample (1 draw, then its ops')")


@RANDOM_CHOICE.host_sample
def _random_choice(inputs, attrs, draws):
    choices = attrs["transforms"]
    u = uniforms(draws, 1)
    return [run_sequence(choices[pick(u[0], len(choices))], np.asarray(inputs[0]), u[1:])]


def _infer_apply(attrs, ins):
    return [join_types("RandomApply", [ins[0], infer_sequence(attrs["transforms"], ins[0])])]


RANDOM_APPLY = define("transforms.RandomApply", kind=MAP, family=FAMILY, operands=("input",),
                      attrs={"transforms": REQUIRED, "prob": 0.5}, infer=_infer_apply,
                      traits=(Pure(), Random(lambda attrs: 1 + sequence_draws(attrs["transforms"]))),
                      doc="transforms (a list of ops) applied with probability prob (1 draw, then theirs)")


@RANDOM_APPLY.host_sample
def _random_apply(inputs, attrs, draws):
    u = uniforms(draws, 1)
    x = np.asarray(inputs[0])
    if u[0] < np.float32(attrs["prob"]):
        x = run_sequence(attrs["transforms"], x, u[1:])
    return [x]
