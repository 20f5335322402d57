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
matrix axis, through onnxruntime's FusedMatMul(transA).  The weight
gradient dW is F(3x3, 4x4) on the same six points: the forward's
transformed input tiles, shared, times dy's 4x4 tiles (G_DW), contracted
over the tiles (FusedMatMul(transB)).

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

from irc.ir.types import to_numpy_dtype

from ..onnx_emitter import MS_DOMAIN

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

# F(3x3, 4x4) for the weight gradient, on the same 6 points: its input
# transform is B_T above (so the forward's is shared), its 4-tap "filter"
# (a 4x4 tile of dy) transform and 3x3 output transform are the Toom-Cook
# ones for those points, G_DW scaled to match B_T
G_DW = np.array([[1 / 4, 0, 0, 0],
                 [-1 / 6, -1 / 6, -1 / 6, -1 / 6],
                 [-1 / 6, 1 / 6, -1 / 6, 1 / 6],
                 [1 / 24, 1 / 12, 1 / 6, 1 / 3],
                 [1 / 24, -1 / 12, 1 / 6, -1 / 3],
                 [0, 0, 0, 1]], np.float64)
A_T_DW = np.array([[1, 1, 1, 1, 1, 0],
                   [0, 1, -1, 2, -2, 0],
                   [0, 1, 1, 4, 4, 1]], np.float64)

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
    on it, and the emitter told (``size_dependent``): a program lowers the
    model again for the batch it is fed (``trainer.Program``)."""
    if not emit.options.winograd:
        return False
    ho, wo = out_hw
    tiles_h, tiles_w = _tiles(out_hw)
    narrow = min(channels_in, channels_out)
    if narrow < MIN_CHANNELS or ho * wo < MIN_USEFUL * TILE * TILE * tiles_h * tiles_w:
        return False
    if tiles_h * tiles_w * narrow >= MIN_TILE_CHANNELS:
        return True                     # whatever the batch
    if not isinstance(batch, int):
        emit.size_dependent = True
        return False
    return batch * tiles_h * tiles_w * narrow >= MIN_TILE_CHANNELS


def input_sizes(emit, attrs, x_type, kernel_hw):
    """(batch, channels, HW) of the float32 NCHW input of a 3x3 stride-1
    convolution with static sizes (the batch may be symbolic: bound by the
    options' ``sizes`` or left a name), the form this module lowers; else None."""
    if int(attrs["group"]) != 1 or list(attrs["strides"]) != [1, 1] or list(attrs["dilations"]) != [1, 1] \
            or tuple(kernel_hw) != (KERNEL, KERNEL):
        return None
    shape = getattr(x_type, "shape", None)
    if shape is None or len(shape) != 4 or to_numpy_dtype(x_type.dtype) != np.float32 \
            or not all(isinstance(d, int) for d in shape[1:]):
        return None
    return emit.options.sizes.get(shape[0], shape[0]), shape[1], tuple(shape[2:])


def kernel_transform(emit, w: str, out_channels: int, in_channels: int) -> str:
    """U = G w G^T of every [O, C, 3, 3] kernel, as [36, O, C]; made once per
    weight in a graph (a convolution and its input gradient share it)."""
    def make():
        shape = np.array([out_channels * in_channels, KERNEL * KERNEL], np.int64)
        u = emit.op("Gemm", [emit.const(_two_sided(G).astype(np.float32)), emit.op("Reshape", [w, emit.const(shape)])],
                    transB=1)
        return emit.op("Reshape", [u, emit.const(np.array([POINTS * POINTS, out_channels, in_channels], np.int64))])
    return emit.once(("winograd.U", w), make)


def _tiles(out_hw) -> tuple[int, int]:
    return -(-out_hw[0] // TILE), -(-out_hw[1] // TILE)


def _to_points(emit, planes_of: str, channels: int, hw, pads, kernels: np.ndarray, tiles: int) -> str:
    """Every channel of NCHW ``planes_of`` an image of its own, convolved at
    stride 4 by the fixed ``kernels`` [36, k, k] (a tile's transform) with
    ``pads``: [36, channels, N * tiles]."""
    i64 = np.int64
    planes = emit.op("Reshape", [planes_of, emit.const(np.array([-1, 1, *hw], i64))])
    v = emit.op("Conv", [planes, emit.const(kernels[:, None].astype(np.float32))],
                strides=[TILE, TILE], pads=list(pads))
    v = emit.op("Reshape", [v, emit.const(np.array([-1, channels, POINTS * POINTS, tiles], i64))])
    v = emit.op("Transpose", [v], perm=[2, 1, 0, 3])                      # [36, C, N, T]
    return emit.op("Reshape", [v, emit.const(np.array([POINTS * POINTS, channels, -1], i64))])


def _tile_kernels(m: np.ndarray) -> np.ndarray:
    """The 36 kernels of X -> m X m^T: kernel (i, j) is outer(m[i], m[j])."""
    return np.stack([np.outer(m[i], m[j]) for i in range(POINTS) for j in range(POINTS)])


def input_transform(emit, x: str, *, channels: int, in_hw, pads, out_hw, flipped: bool) -> str:
    """B^T d B of every 6x6 tile of ``x`` padded by ``pads``, the tiles
    covering ``out_hw``: [36, channels, N * tiles].  Made once per input in a
    graph: a convolution's weight gradient reads its forward's."""
    def make():
        th, tw = _tiles(out_hw)
        b_t = B_T @ np.eye(POINTS)[::-1] if flipped else B_T
        # padded at the bottom and right as far as the last tile reaches
        grow = [TILE * th + KERNEL - 1 - in_hw[0] - pads[0], TILE * tw + KERNEL - 1 - in_hw[1] - pads[1]]
        return _to_points(emit, x, channels, in_hw, [pads[0], pads[1], *grow], _tile_kernels(b_t), th * tw)
    return emit.once(("winograd.V", x, tuple(pads), tuple(out_hw), flipped), make)


def convolution(emit, x: str, u: str, *, channels_in: int, channels_out: int, in_hw, pads,
                out_hw, flipped: bool) -> str:
    """The 3x3 stride-1 convolution of NCHW ``x`` [N, channels_in, H, W]
    with the transformed kernels ``u``, padded by ``pads`` (top, left,
    bottom, right), as [N, channels_out, *out_hw].  ``flipped``: the
    kernels are used flipped and transposed, ``u`` being [36, channels_in,
    channels_out] (dX = conv(dy, flip(W)^T))."""
    th, tw = _tiles(out_hw)
    tiles = th * tw
    a_t = np.eye(TILE)[::-1] @ A_T if flipped else A_T
    i64 = np.int64
    v = input_transform(emit, x, channels=channels_in, in_hw=in_hw, pads=pads, out_hw=out_hw,
                        flipped=flipped)
    # The products: 36 GEMMs contracting the input channels
    if flipped:
        m = emit.op("FusedMatMul", [u, v], domain=MS_DOMAIN, transA=1)
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
    if (TILE * th, TILE * tw) != tuple(out_hw):
        y = emit.op("Slice", [y, emit.const(np.array([0, 0], i64)), emit.const(np.array(out_hw, i64)),
                              emit.const(np.array([2, 3], i64))])
    return y


def weight_gradient(emit, x: str, dy: str, *, channels_in: int, channels_out: int, in_hw, pads,
                    out_hw) -> str:
    """dW [O, C, 3, 3] of the 3x3 stride-1 convolution of ``x`` padded by
    ``pads``, from ``dy`` [N, O, *out_hw], as F(3x3, 4x4): the 3x3 taps are
    the correlation of each 6x6 input tile (the forward's B^T d B, shared)
    with its 4x4 tile of dy (G_dw . G_dw^T), summed over the tiles in one
    batched GEMM of 36 [O, tiles] x [tiles, C] products: 36 multiply-adds
    per tile and channel pair where the direct form takes 144."""
    th, tw = _tiles(out_hw)
    i64 = np.int64
    v = input_transform(emit, x, channels=channels_in, in_hw=in_hw, pads=pads, out_hw=out_hw,
                        flipped=False)                                    # [36, C, N*T]
    # dy's 4x4 tiles, zero past the image (tiles that reach beyond it add nothing)
    d = _to_points(emit, dy, channels_out, out_hw, [0, 0, TILE * th - out_hw[0], TILE * tw - out_hw[1]],
                   _tile_kernels(G_DW), th * tw)                          # [36, O, N*T]
    products = emit.op("FusedMatMul", [d, v], domain=MS_DOMAIN, transB=1)   # [36, O, C]
    flat = emit.op("Reshape", [products, emit.const(np.array([POINTS * POINTS, -1], i64))])
    dw = emit.op("Gemm", [flat, emit.const(_two_sided(A_T_DW).T.astype(np.float32))], transA=1)
    return emit.op("Reshape", [dw, emit.const(np.array([channels_out, channels_in, KERNEL, KERNEL], i64))])
