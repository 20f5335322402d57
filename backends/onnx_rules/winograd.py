"""3x3 stride-1 convolutions as Winograd F(4x4, 3x3) on the CPU.

Lavin and Gray's minimal filtering ("Fast Algorithms for Convolutional
Neural Networks", 2016): each 6x6 tile of the input and each 3x3 kernel are
taken to a 36-point transform domain, where a convolution's 144
multiply-adds per 4x4 outputs become 36 - one batched GEMM of 36 [O, C]
matrices - and the 4x4 outputs come back by a fixed linear map.

In ONNX, with onnxruntime's kernels:
- the input transform is one Conv of every channel by the 36 fixed 6x6
  kernels B^T(.)B at stride 4 (onnxruntime's NCHWc convolution);
- the kernel transform is one Gemm of the 36x9 matrix G(.)G^T by the kernels;
- the products are one batched MatMul over the 36 points;
- the output transform is one MatMul by A^T(.)A (16x36), and Col2Im puts
  the 4x4 blocks in place.

An input gradient dX of the same convolution (a convolution of dy with the
flipped kernel, summed over the output channels) shares the kernel
transform.  Flipping the kernel is the same as flipping the data: B^T J in,
J A^T out (J reverses a tile).  The batched MatMul then contracts U's first
matrix axis, through onnxruntime's FusedMatMul(transA).

Measured against onnxruntime's Conv on ResNet-18's layer shapes at batch 8,
1 thread (this module's forms, weights transformed in the graph): 56x56x64
1.0-1.3x faster, 28x28x128 1.5x, 14x14x256 1.4-1.7x, 7x7x512 1.7-1.9x;
dX alike.  At 2 threads: 1.1x, 1.5x, 1.6x, 1.9x.
Where it loses - few channels, few tiles per kernel, tiles mostly padding
(a 2x2 image) - the rule in :func:`applies` keeps the direct Conv.

The results differ from a direct convolution's by about 1e-5 of the
output's largest magnitude (the transforms' 1/6 and 1/24 are not exact in
float32).  The lowering takes it only for programs irc runs on the CPU
(``LoweringOptions.winograd``), never for an exported model.
"""
from __future__ import annotations

import numpy as np

TILE, KERNEL = 4, 3
POINTS = TILE + KERNEL - 1          # 6: a tile of input is 6x6

# Lavin and Gray's F(4, 3) matrices (points 0, +-1, +-2, infinity)
B_T = np.array([[4, 0, -5, 0, 1, 0],
                [0, -4, -4, 1, 1, 0],
                [0, 4, -4, -1, 1, 0],
                [0, -2, -1, 2, 1, 0],
                [0, 2, -1, -2, 1, 0],
                [0, 4, 0, -5, 0, 1]], np.float64)
G = np.array([[1 / 4, 0, 0],
              [-1 / 6, -1 / 6, -1 / 6],
              [-1 / 6, 1 / 6, -1 / 6],
              [1 / 24, 1 / 12, 1 / 6],
              [1 / 24, -1 / 12, 1 / 6],
              [0, 0, 1]], np.float64)
A_T = np.array([[1, 1, 1, 1, 1, 0],
                [0, 1, -1, 2, -2, 0],
                [0, 1, 1, 4, 4, 0],
                [0, 1, -1, 8, -8, 1]], np.float64)

# A lowering's memo key (and model property): a choice here waited for the batch
SIZE_DEPENDENT = "irc.size_dependent"

# Below these the direct Conv measured as fast or faster (see applies)
MIN_CHANNELS = 64
MIN_TILE_CHANNELS = 8192
MIN_USEFUL = 0.5


def _two_sided(m: np.ndarray) -> np.ndarray:
    """The matrix of X -> m X m^T on flattened square X: kron(m, m)."""
    return np.kron(m, m)


def applies(emit, batch, channels_in: int, channels_out: int, out_hw) -> bool:
    """Whether a 3x3 stride-1 convolution of these sizes is faster as
    Winograd than as onnxruntime's Conv.  Measured (1 thread, batch 1-32,
    8-512 channels, 2x2 to 56x56): it wins with 64+ channels on both
    sides, when at least half of each tile's outputs are the image's, and
    when the tiles times the channels are 8192 or more (8x512x512x7x7:
    1.8x; 32x128x128x4x4: 0.8x; 1x512x512x7x7: 0.5x).

    With a symbolic batch the direct Conv is kept where the answer depends
    on it, and the model is marked ``SIZE_DEPENDENT``: a program lowers it
    again for the batch it is fed (``trainer.Program``)."""
    if not emit.options.winograd:
        return False
    ho, wo = out_hw
    tiles_h, tiles_w = -(-ho // TILE), -(-wo // TILE)
    narrow = min(channels_in, channels_out)
    if narrow < MIN_CHANNELS or ho * wo < MIN_USEFUL * TILE * TILE * tiles_h * tiles_w:
        return False
    if tiles_h * tiles_w * narrow >= MIN_TILE_CHANNELS:
        return True                     # whatever the batch
    if not isinstance(batch, int):
        emit.memo[SIZE_DEPENDENT] = True
        return False
    return batch * tiles_h * tiles_w * narrow >= MIN_TILE_CHANNELS


def kernel_transform(emit, w: str, out_channels: int, in_channels: int) -> str:
    """U = G w G^T of every [O, C, 3, 3] kernel, as [36, O, C]; made once per
    weight in a graph (a convolution and its input gradient share it)."""
    key = ("winograd.U", w)
    if key not in emit.memo:
        flat = emit.op("Reshape", [w, emit.const(np.array([out_channels * in_channels, KERNEL * KERNEL]))])
        u = emit.op("Gemm", [emit.const(_two_sided(G).astype(np.float32)), flat], transB=1)
        emit.memo[key] = emit.op("Reshape", [u, emit.const(np.array([POINTS * POINTS, out_channels,
                                                                       in_channels]))])
    return emit.memo[key]


def convolution(emit, x: str, u: str, *, channels_in: int, channels_out: int, in_hw, pads,
                out_hw, flipped: bool) -> str:
    """The 3x3 stride-1 convolution of NCHW ``x`` [N, channels_in, H, W]
    with the transformed kernels ``u``, padded by ``pads`` (top, left,
    bottom, right), as [N, channels_out, *out_hw].  ``flipped``: the
    kernels are used flipped and transposed, ``u`` being [36, channels_in,
    channels_out] (dX = conv(dy, flip(W)^T))."""
    (h, w), (ho, wo) = in_hw, out_hw
    th, tw = -(-ho // TILE), -(-wo // TILE)
    tiles = th * tw
    j6, j4 = np.eye(POINTS)[::-1], np.eye(TILE)[::-1]
    b_t = B_T @ j6 if flipped else B_T
    a_t = j4 @ A_T if flipped else A_T
    i64 = np.int64
    # Input transform: every channel an image of its own, 36 fixed 6x6
    # kernels at stride 4, padded so that the tiles cover the output
    planes = emit.op("Reshape", [x, emit.const(np.array([-1, 1, h, w], i64))])
    kernels = np.stack([np.outer(b_t[i], b_t[j]) for i in range(POINTS) for j in range(POINTS)])
    grow = [TILE * th + KERNEL - 1 - h - pads[0], TILE * tw + KERNEL - 1 - w - pads[1]]
    v = emit.op("Conv", [planes, emit.const(kernels[:, None].astype(np.float32))],
                strides=[TILE, TILE], pads=[pads[0], pads[1], grow[0], grow[1]])
    v = emit.op("Reshape", [v, emit.const(np.array([-1, channels_in, POINTS * POINTS, tiles], i64))])
    v = emit.op("Transpose", [v], perm=[2, 1, 0, 3])                      # [36, C, N, T]
    v = emit.op("Reshape", [v, emit.const(np.array([POINTS * POINTS, channels_in, -1], i64))])
    # The products: 36 GEMMs contracting the input channels
    if flipped:
        m = emit.op("FusedMatMul", [u, v], domain="com.microsoft", transA=1)
    else:
        m = emit.op("MatMul", [u, v])                                     # [36, O, N*T]
    # Output transform, then each 4x4 block to its place
    y = emit.op("MatMul", [emit.const(_two_sided(a_t).astype(np.float32)),
                           emit.op("Reshape", [m, emit.const(np.array([POINTS * POINTS, -1], i64))])])
    y = emit.op("Reshape", [y, emit.const(np.array([TILE * TILE, channels_out, -1, tiles], i64))])
    y = emit.op("Transpose", [y], perm=[2, 1, 0, 3])                      # [N, O, 16, T]
    y = emit.op("Reshape", [y, emit.const(np.array([0, channels_out * TILE * TILE, tiles], i64))])
    y = emit.op("Col2Im", [y, emit.const(np.array([TILE * th, TILE * tw], i64)),
                           emit.const(np.array([TILE, TILE], i64))], strides=[TILE, TILE])
    if (TILE * th, TILE * tw) != (ho, wo):
        y = emit.op("Slice", [y, emit.const(np.array([0, 0], i64)), emit.const(np.array([ho, wo], i64)),
                              emit.const(np.array([2, 3], i64))])
    return y
