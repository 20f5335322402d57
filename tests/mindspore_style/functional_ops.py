"""mindspore.ops functions a MindSpore 2.x script calls, each on fixed
inputs: run under MindSpore 2.10 it writes functional_ops.mindspore.json
(every result as a list, its dtype and shape); tests/test_functional_ops.py
runs the same CASES under irc, eagerly and inside ms.jit."""
import sys

import numpy as np
import mindspore as ms
from mindspore import ops

from case_inputs import dump_cases, shared_inputs

rng, _inputs = shared_inputs()
A, B, P, G, I, J, Z, M, V, W, S, T, Q, GI = (_inputs[k] for k in "A B P G I J Z M V W S T Q GI".split())
IDX = ms.Tensor(np.array([2, 0, 3], np.int32))

CASES = {
    # comparisons and arithmetic under MindSpore 2.x's names
    "ge": lambda: ops.ge(A, B), "gt": lambda: ops.gt(A, 0.0), "le": lambda: ops.le(A, B),
    "lt": lambda: ops.lt(I, J), "eq": lambda: ops.eq(I, 7), "ne": lambda: ops.ne(A, B),
    "subtract": lambda: ops.subtract(A, B, alpha=2), "multiply": lambda: ops.multiply(A, B),
    "divide": lambda: ops.divide(A, B), "divide_floor": lambda: ops.divide(I, J, rounding_mode="floor"),
    "divide_trunc": lambda: ops.divide(A, B, rounding_mode="trunc"),
    "true_divide": lambda: ops.true_divide(I, J), "negative": lambda: ops.negative(A),
    "absolute": lambda: ops.absolute(I), "floor_divide": lambda: ops.floor_divide(I, J),
    "remainder": lambda: ops.remainder(I, J), "remainder_f": lambda: ops.remainder(A, 0.7),
    "fmod": lambda: ops.fmod(I, J), "fmod_f": lambda: ops.fmod(A, 0.7),
    "trunc": lambda: ops.trunc(A * 3), "frac": lambda: ops.frac(A * 3),
    "logical_xor": lambda: ops.logical_xor(ops.gt(A, 0), ops.gt(B, 0)),
    # elementwise math
    "log2": lambda: ops.log2(G), "log10": lambda: ops.log10(G), "exp2": lambda: ops.exp2(A),
    "sinh": lambda: ops.sinh(A), "cosh": lambda: ops.cosh(A), "asinh": lambda: ops.asinh(A),
    "acosh": lambda: ops.acosh(G), "atanh": lambda: ops.atanh(P),
    "asin": lambda: ops.asin(P), "acos": lambda: ops.acos(P), "atan": lambda: ops.atan(A),
    "atan2": lambda: ops.atan2(A, B), "arctan2": lambda: ops.arctan2(B, A),
    "hypot": lambda: ops.hypot(A, B), "logaddexp": lambda: ops.logaddexp(A, B),
    "logaddexp2": lambda: ops.logaddexp2(A, B), "logit": lambda: ops.logit(P),
    "logit_eps": lambda: ops.logit(P, eps=0.2), "xlogy": lambda: ops.xlogy(Z, G),
    "xdivy": lambda: ops.xdivy(Z, G), "deg2rad": lambda: ops.deg2rad(A * 90),
    "rad2deg": lambda: ops.rad2deg(A), "sinc": lambda: ops.sinc(Z),
    "copysign": lambda: ops.copysign(A, B), "heaviside": lambda: ops.heaviside(Z, B),
    "lerp": lambda: ops.lerp(A, B, 0.3), "lerp_t": lambda: ops.lerp(A, B, P),
    "addcmul": lambda: ops.addcmul(A, B, P, ms.Tensor(0.5, ms.float32)),
    "addcdiv": lambda: ops.addcdiv(A, B, G, ms.Tensor(2.0, ms.float32)),
    "clip_by_value": lambda: ops.clip_by_value(A, -0.5, 0.5), "square": lambda: ops.square(I),
    # activations
    "selu": lambda: ops.selu(A), "celu": lambda: ops.celu(A, 0.7), "softsign": lambda: ops.softsign(A),
    "softmin": lambda: ops.softmin(A, axis=0), "hardshrink": lambda: ops.hardshrink(A, 0.6),
    "softshrink": lambda: ops.softshrink(A, 0.4), "tanhshrink": lambda: ops.tanhshrink(A),
    "glu": lambda: ops.glu(A), "glu_0": lambda: ops.glu(S, axis=0),
    "threshold": lambda: ops.threshold(A, 0.2, -1.0),
    # reductions
    "prod": lambda: ops.prod(A, 1), "prod_all": lambda: ops.prod(P), "prod_keep": lambda: ops.prod(I, 0, True),
    "count_nonzero": lambda: ops.count_nonzero(Z), "count_nonzero_1": lambda: ops.count_nonzero(Z, 1),
    "nansum": lambda: ops.nansum(A, 1), "std_mean": lambda: ops.std_mean(A, 1),
    "var_mean": lambda: ops.var_mean(A, 0, ddof=1), "aminmax": lambda: ops.aminmax(A, axis=1),
    "cumprod": lambda: ops.cumprod(A, 1), "logcumsumexp": lambda: ops.logcumsumexp(A, 1),
    "cummax": lambda: ops.cummax(ms.Tensor(np.array([[1., 3., 2., 3., 0., 5.], [4., 4., 1., 5., 5., 2.]],
                                                    np.float32)), 1),
    "cummin": lambda: ops.cummin(ms.Tensor(np.array([[1., 3., 2., 3., 0., 5.], [4., 4., 1., 5., 5., 2.]],
                                                    np.float32)), 1), "cummax_0": lambda: ops.cummax(I, 0),
    # shapes and layout
    "swapaxes": lambda: ops.swapaxes(S, 0, 2), "swapdims": lambda: ops.swapdims(S, 1, 2),
    "moveaxis": lambda: ops.moveaxis(S, 0, -1), "movedim": lambda: ops.movedim(S, (0, 1), (2, 0)),
    "t": lambda: ops.t(A), "narrow": lambda: ops.narrow(A, 1, 1, 2), "ravel": lambda: ops.ravel(A),
    "flipud": lambda: ops.flipud(A), "fliplr": lambda: ops.fliplr(A),
    "rot90": lambda: ops.rot90(A, 1, (0, 1)), "rot90_k": lambda: ops.rot90(S, 3, (1, 2)),
    "roll": lambda: ops.roll(A, 1, 1), "roll_flat": lambda: ops.roll(A, -5),
    "roll_multi": lambda: ops.roll(S, (1, -1), (0, 2)),
    "repeat_interleave": lambda: ops.repeat_interleave(A, 2, 1),
    "repeat_interleave_flat": lambda: ops.repeat_interleave(I, 2),
    "hstack": lambda: ops.hstack((A, B)), "vstack": lambda: ops.vstack((A, B)),
    "vstack_1d": lambda: ops.vstack((V, V)), "dstack": lambda: ops.dstack((A, B)),
    "column_stack": lambda: ops.column_stack((W, W)), "row_stack": lambda: ops.row_stack((A, B)),
    "atleast_2d": lambda: ops.atleast_2d(V), "atleast_3d": lambda: ops.atleast_3d(A),
    "tensor_split": lambda: ops.tensor_split(M, 3, 1), "tensor_split_idx": lambda: ops.tensor_split(M, (1, 3), 1),
    "hsplit": lambda: ops.hsplit(A, 2), "vsplit": lambda: ops.vsplit(S, 2),
    "diag": lambda: ops.diag(V), "diagonal": lambda: ops.diagonal(Q, 1), "trace": lambda: ops.trace(Q),
    "diag_embed": lambda: ops.diag_embed(A),
    "meshgrid": lambda: ops.meshgrid(V, W, indexing="ij"), "meshgrid_xy": lambda: ops.meshgrid(V, W),
    "full": lambda: ops.full((2, 3), 1.5), "full_like": lambda: ops.full_like(I, 4),
    "linspace": lambda: ops.linspace(0.0, 1.0, 5), "numel": lambda: ops.numel(S),
    "index_select": lambda: ops.index_select(M, 1, IDX),
    "gather_elements": lambda: ops.gather_elements(A, 1, GI), "gather_d": lambda: ops.gather_d(A, 1, GI),
    "take": lambda: ops.take(A, ms.Tensor(np.array([0, 5, 11], np.int64))),
    "tril_indices": lambda: ops.tril_indices(3, 4, 1), "triu_indices": lambda: ops.triu_indices(3, 3),
    # linear algebra
    "mm": lambda: ops.mm(A, M), "mv": lambda: ops.mv(A, V), "inner": lambda: ops.inner(A, B),
    "ger": lambda: ops.ger(W, V), "addmm": lambda: ops.addmm(A, A, Q, beta=0.5, alpha=2.0),
    "addmv": lambda: ops.addmv(W, A, V), "addr": lambda: ops.addr(A, W, V),
    "baddbmm": lambda: ops.baddbmm(ms.Tensor(np.ones((2, 3, 5), np.float32)), S, T, beta=0.5, alpha=0.1),
    "addbmm": lambda: ops.addbmm(ms.Tensor(np.ones((3, 5), np.float32)), S, T),
    "kron": lambda: ops.kron(ms.Tensor(np.eye(2, dtype=np.float32)), A),
    "vecdot": lambda: ops.vecdot(A, B), "cdist": lambda: ops.cdist(S, S),
    "dist": lambda: ops.dist(A, B), "cross": lambda: ops.cross(A[:, :3], B[:, :3], 1),
    "matrix_power": lambda: ops.matrix_power(Q, 3),
    "einsum_mm": lambda: ops.einsum("ij,jk->ik", A, M), "einsum_bmm": lambda: ops.einsum("bij,bjk->bik", S, T),
    "einsum_trace": lambda: ops.einsum("ii", Q), "einsum_outer": lambda: ops.einsum("i,j->ij", W, V),
    "einsum_sum": lambda: ops.einsum("bij->bj", S),
    # sorting
    "topk": lambda: ops.topk(A, 2), "topk_small": lambda: ops.topk(A, 2, dim=0, largest=False),
    "sort": lambda: ops.sort(A), "sort_desc": lambda: ops.sort(A, axis=0, descending=True),
    "argsort": lambda: ops.argsort(A), "argsort_desc": lambda: ops.argsort(A, axis=0, descending=True),
    "msort": lambda: ops.msort(A),
    # losses
    "huber_loss": lambda: ops.huber_loss(A, B, delta=0.5),
    "soft_margin_loss": lambda: ops.soft_margin_loss(A, ops.sign(B)),
    "margin_ranking_loss": lambda: ops.margin_ranking_loss(W, W * 0.5, ms.Tensor(np.array([1, -1, 1], np.float32)), 0.1),
    "cosine_embedding_loss": lambda: ops.cosine_embedding_loss(A, B, ms.Tensor(np.array([1, -1, 1], np.float32)), 0.2),
    "hinge_embedding_loss": lambda: ops.hinge_embedding_loss(A, ops.sign(B), 0.5),
    "multilabel_soft_margin_loss": lambda: ops.multilabel_soft_margin_loss(A, ops.gt(B, 0).astype(ms.float32)),
    "triplet_margin_loss": lambda: ops.triplet_margin_loss(A, B, P),
    "gaussian_nll_loss": lambda: ops.gaussian_nll_loss(A, B, P),
}


if __name__ == "__main__":
    dump_cases(CASES, sys.stdout)
