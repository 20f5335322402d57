"""mindspore.numpy's element-wise math, reductions and array functions (on
float32 and int32 arrays, Python scalars), inside mindspore.jit and through
ms.grad, as MindSpore 2.10 gives them (numpy_math.mindspore.txt): dtypes
included (a sum of ints int64, a mean of ints truncated, argmax int64).  Where
MindSpore's numpy refuses an int (exp, log ...) irc takes it: left out here.
Its float32 exp, tan, tanh and rad2deg round differently from irc's by up to
1e-5 (irc's nearer the float64 values)."""
import numpy as np
import mindspore as ms
import mindspore.numpy as mnp

a = mnp.array([[1.5, -2.25, 3.0], [0.5, 4.0, -1.0]], dtype=mnp.float32)
i = mnp.array([[3, 1, 4], [1, 5, 9]], dtype=mnp.int32)
b = mnp.array([2.0, 0.5, -1.5], dtype=mnp.float32)
pos = mnp.array([[0.25, 0.5, 0.75], [1.5, 2.0, 3.0]], dtype=mnp.float32)


# where MindSpore 2.10's numpy refuses (an int for exp, log, floor ...) or
# has no such name: left out (irc takes them)
REFUSED = {"exp i", "expm1 i", "log i", "log10 i", "log1p i", "log2 i", "floor i", "trunc f", "rint i",
           "multiply i", "arctan2 i", "logaddexp i", "logaddexp2 i", "not_equal i", "less_equal i",
           "float_power i", "tanh i"}


def show(name, fn):
    if name in REFUSED:
        return
    try:
        out = fn()
        outs = out if isinstance(out, (list, tuple)) else [out]
        parts = []
        for o in outs:
            if hasattr(o, "asnumpy"):
                v = o.asnumpy()
                parts.append(f"{v.dtype}{list(v.shape)} " + str(np.round(v.astype(np.float64), 5).tolist()))
            else:
                parts.append(repr(o))
    except Exception as e:      # noqa: BLE001
        print(name, "error", type(e).__name__)
        return
    print(name, " | ".join(parts))


unary = ["absolute", "abs", "fabs", "exp", "exp2", "expm1", "log", "log10", "log1p", "log2", "sqrt", "square",
         "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
         "arctanh", "ceil", "floor", "trunc", "rint", "sign", "negative", "reciprocal", "deg2rad", "radians",
         "rad2deg", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "logical_not", "positive",
         "fix", "cbrt"]
for n in unary:
    x = pos if n in ("log", "log10", "log2", "sqrt", "arccosh") else (pos / 4 if n in ("arcsin", "arccos", "arctanh") else a)
    show(n + " f", lambda: getattr(mnp, n)(x))
    if n not in ("arcsin", "arccos", "arctanh", "arccosh", "logical_not", "isneginf", "isposinf"):
        show(n + " i", lambda: getattr(mnp, n)(i))
binary = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "remainder", "mod",
          "fmod", "arctan2", "hypot", "logaddexp", "logaddexp2", "copysign", "heaviside", "equal", "not_equal",
          "greater", "greater_equal", "less", "less_equal", "float_power"]
for n in binary:
    show(n + " f", lambda: getattr(mnp, n)(a, b))
    show(n + " i", lambda: getattr(mnp, n)(i, 2))
for n in ("logical_and", "logical_or", "logical_xor"):
    show(n, lambda: getattr(mnp, n)(a > 0, b > 0))
show("around", lambda: mnp.around(a * 1.234, 2))
for n in ("sum", "mean", "amax", "amin", "max", "min", "var", "std", "ptp", "argmax", "argmin", "cumsum", "cumprod",
          "count_nonzero", "nansum", "nanmean"):
    show(n + " all", lambda: getattr(mnp, n)(a))
    show(n + " ax", lambda: getattr(mnp, n)(i, 1) if n not in ("var", "std") else getattr(mnp, n)(a, 1, 1))
show("sum kd", lambda: mnp.sum(i, axis=0, keepdims=True, initial=10))
show("average", lambda: mnp.average(a, axis=1, weights=b))
show("average r", lambda: mnp.average(a, returned=True))
show("diff", lambda: mnp.diff(i, n=2, axis=1))
show("diff pa", lambda: mnp.diff(a, prepend=0.0, append=mnp.array([[1.0], [2.0]], dtype=mnp.float32)))
show("ediff1d", lambda: mnp.ediff1d(i, to_end=mnp.array([7], dtype=mnp.int32), to_begin=0))
show("ravel", lambda: mnp.ravel(i))
show("broadcast_to", lambda: mnp.broadcast_to(b, (2, 3)))
show("broadcast_arrays", lambda: mnp.broadcast_arrays(b, mnp.array([[1.0], [2.0]], dtype=mnp.float32)))
show("atleast", lambda: [mnp.atleast_1d(mnp.array(1.0)), mnp.atleast_2d(b), mnp.atleast_3d(b), mnp.atleast_3d(a)])
show("hstack", lambda: mnp.hstack((a, a)))
show("vstack", lambda: mnp.vstack((b, b)))
show("dstack", lambda: mnp.dstack((a, a)))
show("column_stack", lambda: mnp.column_stack((b, b)))
show("split", lambda: mnp.split(mnp.arange(6), 3))
show("array_split", lambda: mnp.array_split(mnp.arange(7), 3))
show("split idx", lambda: mnp.split(mnp.arange(6), [1, 4]))
show("hsplit", lambda: mnp.hsplit(a, 3))
show("vsplit", lambda: mnp.vsplit(a, 2))
show("repeat", lambda: mnp.repeat(i, 2))
show("repeat ax", lambda: mnp.repeat(i, [1, 2], axis=0))
show("rot90", lambda: mnp.rot90(a, 3))
show("fliplr", lambda: mnp.fliplr(a))
show("flipud", lambda: mnp.flipud(a))
show("rollaxis", lambda: mnp.rollaxis(mnp.ones((2, 3, 4)), 2).shape)
show("take", lambda: mnp.take(i, mnp.array([0, 4, 9], dtype=mnp.int32)))
show("take ax", lambda: mnp.take(a, mnp.array([2, 0], dtype=mnp.int32), axis=1))
show("take_along_axis", lambda: mnp.take_along_axis(a, mnp.array([[0], [2]], dtype=mnp.int32), 1))
show("diagonal", lambda: mnp.diagonal(mnp.arange(9).reshape(3, 3), 1))
show("trace", lambda: mnp.trace(mnp.arange(9).reshape(3, 3)))
show("tril", lambda: mnp.tril(i, -1))
show("triu", lambda: mnp.triu(a, 1))
show("tri", lambda: mnp.tri(3, 4, 1))
show("outer", lambda: mnp.outer(b, b))
show("inner", lambda: mnp.inner(a, b))
show("dot", lambda: mnp.dot(a, mnp.ones((3, 2))))
show("dot 1d", lambda: mnp.dot(b, b))
show("kron", lambda: mnp.kron(b, mnp.array([1.0, 10.0], dtype=mnp.float32)))
show("cross", lambda: mnp.cross(a, mnp.ones((2, 3))))
show("meshgrid", lambda: mnp.meshgrid(mnp.arange(3), mnp.arange(2)))
show("meshgrid ij", lambda: mnp.meshgrid(mnp.arange(3), mnp.arange(2), indexing="ij"))
show("select", lambda: mnp.select([a < 0, a > 2], [a * 10, a * 100], 7))
show("isclose", lambda: mnp.isclose(a, a + 1e-6))
show("isclose2", lambda: mnp.isclose(b, mnp.array([2.0, 0.6, -1.5], dtype=mnp.float32), rtol=0.1))
show("array_equal", lambda: mnp.array_equal(a, a))
show("trapz", lambda: mnp.trapz(a))
show("trapz x", lambda: mnp.trapz(a, dx=0.5, axis=0))
show("vander", lambda: mnp.vander(b, 3))
show("polyval", lambda: mnp.polyval(mnp.array([3.0, 0.0, 1.0], dtype=mnp.float32), b))
show("consts", lambda: [mnp.pi, mnp.inf, mnp.PINF, mnp.NINF])


@ms.jit
def traced(x, y):
    return (mnp.sum(x, 1), mnp.mean(x, 0), mnp.repeat(x, 2, 1), mnp.kron(y, y), mnp.diff(x), mnp.cumsum(x, 0),
            mnp.take(x, mnp.array([0, 2], dtype=mnp.int32), 1), mnp.isclose(x, x),
            mnp.hypot(x, x), mnp.rot90(x), mnp.vander(y, 3), mnp.average(x, 1, y), mnp.trapz(x))


show("traced", lambda: traced(a, b))
grad = ms.grad(lambda x: mnp.sum(mnp.square(mnp.diff(x)) * mnp.cbrt(x[:, :2])))
show("grad", lambda: grad(a))
