"""``mindspore.ops``: primitives (``ops.Reshape()``) and functions
(``ops.reshape``) usable in a Cell's ``construct``; they run eagerly on
Tensors and become ``nn.*`` graph nodes while a network is traced."""
from __future__ import annotations

from ..diagnostics import missing_names
from . import derived, derived_more, derived_nn, functional, operations  # noqa: F401
from .derived import *  # noqa: F401,F403 -- MindSpore 2.x's functions built from the others
from .derived_more import *  # noqa: F401,F403 -- more of them: special functions, scatters, statistics
from .derived_nn import *  # noqa: F401,F403 -- its nn-style functions (conv1d, unfold, layer_norm ...)
from .ctc import ctc_loss  # noqa: F401
from .apply_ops import *  # noqa: F401,F403 -- the optimizer primitives (ApplyMomentum ...)
from .control_flow import ForiLoop, Scan, WhileLoop  # noqa: F401
from .functional import slice_ as slice  # noqa: F401,A001 -- MindSpore's ops.slice
from .derived import range_ as range  # noqa: F401,A001 -- MindSpore's ops.range
from .functional import (  # noqa: F401
    abs, adaptive_avg_pool2d, adaptive_avg_pool3d, add, addn, all, amax, amin, any, arange, argmax, argmin, assign,
    assign_add, assign_sub,
    avg_pool2d, avg_pool3d, batch_norm, bias_add, binary_cross_entropy, binary_cross_entropy_with_logits, bmm,
    broadcast_to, cast, cat, ceil, chunk, clamp, clip, clip_by_global_norm, concat, conv2d, conv3d,
    conv_transpose2d, conv_transpose3d, cos, cosine_similarity, cross_entropy, cumsum, dense, depend, div, dot,
    dropout, dtype, elu, equal, erf, exp, expand_dims, expm1, eye, fill, flatten, flip, floor, floor_div,
    floor_mod, gather, gelu, greater, greater_equal, hardsigmoid, hardswish, hardtanh, identity,
    interpolate, isfinite, isinf, isnan, isneginf, isposinf, kl_div, l1_loss, leaky_relu, less, less_equal, log, log1p,
    log_softmax, logical_and, logical_not, logical_or, logsigmoid, logsumexp, masked_fill, matmul,
    max, max_pool2d, max_pool3d, maximum, mean, min, minimum, mish, mse_loss, mul, neg, nll_loss, norm, normal,
    not_equal, one_hot, ones, ones_like, outer, pad, partial, permute, pow, prelu, print_, rand, randn, rank,
    reciprocal, reduce_mean, reduce_sum, relu, relu6, reshape, round, rsqrt, scalar_to_tensor, select, shape,
    sigmoid, sign, silu, sin, smooth_l1_loss, softmax, softplus, split, sqrt, square, squeeze,
    stack, standard_normal, std, stop_gradient, strided_slice, sub, sum, tan, tanh, tile,
    transpose, tril, triu, tuple_to_array, unbind, uniform, unsqueeze, unstack, var, where, zeros,
    zeros_like,
)
from .operations import (  # noqa: F401
    Abs, AdaptiveAvgPool2D, Add, AddN, AllReduce, Argmax, ArgMaxWithValue, ArgMinWithValue, Assign,
    AssignAdd, AssignSub,
    AvgPool, AvgPool3D, BatchMatMul, BCEWithLogitsLoss, BiasAdd, BroadcastTo, Cast, Concat, Conv2D, Conv3D, Cos, CTCLoss, CumSum, Depend, DepthToSpace, Div, Dropout,
    DType, Elu, Equal, Erf, Exp, ExpandDims, Expm1, Eye, Fill, Flatten, Floor, FloatStatus, FloorDiv,
    FloorMod,
    Gather, GatherNd, GatherV2, GeLU, Greater, GreaterEqual, HSigmoid, HSwish, Identity, IsFinite, IsNan,
    L2Normalize, Less, LessEqual, Log, Log1p, LogicalAnd, LogicalNot, LogicalOr, LogSoftmax,
    MatMul, Maximum, MaxPool, MaxPool3D, Minimum, MirrorPad, Mul, Neg, NotEqual, OneHot, Ones, OnesLike, Pad,
    Pow, Primitive, PrimitiveWithCheck, PrimitiveWithInfer, Print, RealDiv, Reciprocal, ReduceOp,
    ScalarSummary, TensorSummary, ImageSummary, HistogramSummary,
    ReduceAll, ReduceAny,
    ReduceMax, ReduceMean, ReduceMin, ReduceSum, ReLU, ReLU6, Reshape, ResizeBilinearV2,
    ResizeNearestNeighbor, Round, Rsqrt, Select, Shape, Sigmoid, SigmoidCrossEntropyWithLogits,
    Sign, Sin, Softmax, SoftmaxCrossEntropyWithLogits, Softplus, SpaceToDepth, SparseSoftmaxCrossEntropyWithLogits, Split, Sqrt, Square,
    Slice, Squeeze, Stack, StopGradient, StridedSlice, Sub, Tan, Tanh, TensorScatterUpdate, Tile, TopK, TupleToArray, Transpose, Unique, Unstack, Zeros,
    ZerosLike, constexpr, prim_attr_register,
    ACos, Asin, Atan, Atan2, Acosh, Asinh, Atanh, Cosh, Sinh, Ceil, Trunc, Softsign, Mish, Hypot,
    Xlogy, Xdivy, LogicalXor, Sinc, SeLU, Inv, IsInf, SquaredDifference, DivNoNan, MulNoNan,
    Heaviside, Rank, ReverseV2, GatherD, Sort, ReduceProd, Meshgrid, BinaryCrossEntropy,
    StandardNormal, UniformReal, ScalarCast, ScatterNdUpdate, L2Loss, Mod, Rint, Size, ScalarToTensor,
    LinSpace, ReverseSequence, SmoothL1Loss, IOU, ScatterNd, CheckValid, NMSWithMask, RandomChoiceWithMask,
    DynamicRNN, NPUAllocFloatStatus, NPUClearFloatStatus, NPUGetFloatStatus,
    Erfc, Erfinv, Lgamma, Digamma, Gcd, Lcm, Fmax, Fmin, NonZero, MaskedSelect, IndexFill, IndexAdd, Renorm,
    IsClose, NanToNum, TensorScatterAdd, TensorScatterSub, TensorScatterMul, TensorScatterDiv, TensorScatterMax,
    TensorScatterMin, TensorScatterElements, UnsortedSegmentSum, UnsortedSegmentMax, UnsortedSegmentMin,
    UnsortedSegmentProd, UniqueConsecutive, BoundingBoxEncode, BoundingBoxDecode, ROIAlign, SearchSorted, Bucketize,
    ScatterAdd, ScatterSub, ScatterMul, ScatterDiv, ScatterMax, ScatterMin, ScatterUpdate, ScatterNdAdd,
    ScatterNdSub, ScatterNdMul, ScatterNdDiv, ScatterNdMax, ScatterNdMin,
)

# Gradients and jit trace whole functions: they live in the frontend
# (irc/train/functional.py), loaded on first use.
COMPOSITE = ("value_and_grad", "grad", "GradOperation", "jit")


def composite_getattr(module: str):
    """A module ``__getattr__`` (mindspore.ops, mindspore.ops.composite): the
    COMPOSITE names from irc/train/functional.py, any other name missing."""
    missing = missing_names(module)

    def __getattr__(name: str):
        if name in COMPOSITE:
            from ..train import functional
            return getattr(functional, name)
        return missing(name)
    return __getattr__


__getattr__ = composite_getattr(__name__)

# MindSpore's overloading and mapping (also in mindspore.ops.composite)
from .composite import HyperMap, Map, MultitypeFuncGraph  # noqa: E402,F401
