"""The ``vision`` dialect: image transforms of ``mindspore.dataset.vision``.

Every operator of ``shared/OPS.md`` that acts on images is declared here once,
with its type inference, its traits, its numpy implementation (``host_batch``
on an NHWC batch; one HWC image is a batch of one, and only the operators that
take encoded bytes or make windows of per-sample sizes have a ``host_sample``
of their own).  The eight offloadable operators' ONNX lowerings on a batched
NHWC tensor are the backend's (``backends/onnx_rules/vision.py``).

Layout is decided by rank: rank 3 is one image (HWC), rank 4 a batch (NHWC).
Operators that come after ``HWC2CHW`` see CHW / NCHW and treat it by the same
rank rule (``Normalize(is_hwc=False)`` is the one operator that knows).

Draw conventions (``num_draws`` uniform [0, 1) numbers per sample; the host
and the device get the same numbers, the device as float32).  The flips and
RandomCrop also say how MindSpore draws (their ``Random`` trait's
``mindspore``): the draws that take MindSpore's decisions from its
generator, which :mod:`.draws` uses where it knows MindSpore's layout.

* every op first rounds its draws to float32 and clamps them below 1.0
  (:func:`uniforms`), exactly as the device graph does, so the decisions
  agree bit for bit;
* ``RandomHorizontalFlip`` / ``RandomVerticalFlip``: 1 draw ``u``; flip iff
  ``u < prob`` (compared in float32);
* ``RandomColorAdjust``: 4 draws, always, in the order brightness, contrast,
  saturation, hue; factor ``lo + u * (hi - lo)`` in float32; a component whose
  range is the identity ((1, 1), or (0, 0) for hue) is skipped;
* ``RandomSharpness``: 1 draw, factor ``lo + u * (hi - lo)``;
* ``RandomCrop``: 2 draws, ``top = floor(u0 * (H - h + 1))``,
  ``left = floor(u1 * (W - w + 1))``;
* ``RandomResizedCrop`` / ``RandomCropDecodeResize``: ``2 * max_attempts + 2``
  draws: for attempt ``i`` the pair ``(u[2i], u[2i+1])`` gives the area
  fraction ``s = smin + u * (smax - smin)`` and the aspect ratio
  ``exp(log(rmin) + u * (log(rmax) - log(rmin)))``; the last two draws place
  the accepted window (top, then left) as RandomCrop does.  If no attempt
  fits, the MindSpore fallback (centre crop, aspect ratio clamped) is used
  and the last two draws go unused.
"""
from __future__ import annotations

import functools
import io
import math

import numpy as np

from ..ir.registry import MAP, REQUIRED, Dialect
from ..ir.traits import CommutesWithHWC2CHW, Exportable, Offloadable, OneChannelHW, Pure, Random, RowsAsList
from ..ir.types import BATCH, UNKNOWN, TensorType, to_numpy_dtype
from . import stdrandom

FAMILY = "vision"
DIALECT = Dialect("vision")
define = DIALECT.define

# The largest float32 below 1: draws are clamped to it so that a float64 draw
# that rounds up to 1.0 in float32 cannot make ``u < 1.0`` false.
ONE_BELOW = np.float32(np.nextafter(np.float32(1.0), np.float32(0.0)))
INTERPOLATIONS = ("linear", "nearest", "bicubic")
PADDING_MODES = ("constant", "edge", "reflect", "symmetric")
SLICE_MODES = ("pad", "drop")


# OpenCV, when installed, decodes JPEGs and resizes uint8 images 4-50x faster
# than Pillow and the numpy reference, with the same bytes: both decoders are
# libjpeg-turbo with its defaults (islow IDCT, fancy upsampling), and
# INTER_LINEAR on uint8 is the fixed-point arithmetic resize_batch_reference
# reproduces (tests/test_vision_ops.py compares them on every run).
@functools.lru_cache(maxsize=None)
def _opencv():
    """OpenCV, imported on first use (0.15 s that a compile need not pay);
    None when absent or older than 4.10 (no IMREAD_COLOR_RGB)."""
    try:
        import cv2
        cv2.IMREAD_COLOR_RGB  # noqa: B018 -- the attribute 4.10 added
    except (ImportError, AttributeError):
        return None
    return cv2

_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}   # start-of-frame markers


def _jpeg_components(raw: bytes):
    """The colour components of a JPEG's frame (1 grey, 3 YCbCr/RGB, 4 CMYK),
    or None when ``raw`` is not a JPEG.  Pillow and OpenCV convert grey and
    YCbCr alike but CMYK differently, so only 1 and 3 take OpenCV (and only
    complete files, ending in EOI: Pillow refuses truncated ones)."""
    if raw[:3] != b"\xff\xd8\xff":
        return None
    i, n = 2, len(raw)
    while i + 9 < n:
        if raw[i] != 0xFF:
            return None
        marker = raw[i + 1]
        if marker in _JPEG_SOF:
            return raw[i + 9]
        if marker == 0xFF:      # fill byte
            i += 1
            continue
        i += 2 + int.from_bytes(raw[i + 2:i + 4], "big")
    return None


# =============================================================================
# shared helpers
# =============================================================================

def uniforms(draws, k: int | None = None) -> np.ndarray:
    """Draws as the device sees them: float32, clamped to [0, ONE_BELOW]."""
    if draws is None:
        raise ValueError(f"a random op needs {k or 'its'} uniform draws per sample, got none")
    u = np.minimum(np.asarray(draws, dtype=np.float32), ONE_BELOW)
    if k is not None and u.shape[-1] < k:
        raise ValueError(f"expected {k} draws per sample, got {u.shape[-1]}")
    return u


def factor(u, lo: float, hi: float):
    """``lo + u * (hi - lo)`` in float32 (the same expression on the device)."""
    return np.float32(lo) + u * np.float32(hi - lo)


def _fmt(t: TensorType) -> str:
    return str(t)


def image_dims(op: str, t: TensorType, *, dtypes=None, channels=None):
    """(batched, H, W, C) of an HWC (rank 3) or NHWC (rank 4) type."""
    if t.dtype == "bytes":
        raise TypeError(f"{op}: expected a decoded image, got encoded bytes {_fmt(t)} (add vision.Decode() first)")
    if t.rank not in (3, 4):
        raise ValueError(f"{op}: expected an image of rank 3 (HWC) or a batch of rank 4 (NHWC), "
                         f"got {_fmt(t)}")
    if dtypes is not None and t.dtype not in dtypes:
        raise TypeError(f"{op}: expected an image of dtype {' or '.join(dtypes)}, got {_fmt(t)}")
    batched = t.rank == 4
    h, w, c = t.shape[-3:]
    if channels is not None and isinstance(c, int) and c not in channels:
        raise ValueError(f"{op}: expected {' or '.join(map(str, channels))} channels, got {c} in {_fmt(t)}")
    return batched, h, w, c


def _image_type(t: TensorType, h, w, c=None, dtype=None) -> TensorType:
    lead = t.shape[:-3]
    return TensorType(dtype or t.dtype, (*lead, h, w, t.shape[-1] if c is None else c))


def _numeric(op: str, t: TensorType):
    if t.dtype == "bytes":
        raise TypeError(f"{op}: expected a numeric tensor, got encoded bytes {_fmt(t)} (add vision.Decode() first)")


def _check_image_array(op: str, x: np.ndarray, batched: bool = False):
    # Worded per sample: a sample's host rule is the batch rule on a batch of one.
    sample = x.shape[1:] if batched else x.shape
    if len(sample) != 3:
        raise ValueError(f"{op}: expected an HWC image of rank 3, got an array of shape {sample}")


def _round_clip_u8(x: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


def round_half_away(x: float) -> int:
    """C++ ``std::round``: halves go away from zero (``round_half_away(14.5) == 15``).

    MindSpore decides crop sizes and offsets with it; Python's ``round`` goes
    to even (``round(14.5) == 14``) and would move such a window by a pixel.
    ``x - trunc(x)`` is exact in floating point, so no sum can round up first."""
    whole = math.trunc(x)
    if abs(x - whole) >= 0.5:
        whole += 1 if x > 0 else -1
    return int(whole)


# MindSpore's CPU image ops compute with OpenCV's uint8 arithmetic; these two
# reproduce it bit for bit (measured against MindSpore 2.10).

GRAY_WEIGHTS = (9798, 19235, 3735)   # cvtColor RGB2GRAY: 0.299, 0.587, 0.114 in 15-bit fixed point
GRAY_SHIFT = 15


def gray_u8(y: np.ndarray) -> np.ndarray:
    """OpenCV's RGB2GRAY of float32 values on the uint8 grid: [..., 1] float32
    on the uint8 grid (``(R*9798 + G*19235 + B*3735 + 2**14) >> 15``; every
    sum is an integer below 2**24, so float32 holds it exactly)."""
    r, g, b = (np.float32(w) for w in GRAY_WEIGHTS)
    s = y[..., 0:1] * r + y[..., 1:2] * g + y[..., 2:3] * b + np.float32(1 << (GRAY_SHIFT - 1))
    return np.floor(s / np.float32(1 << GRAY_SHIFT))


def add_weighted(a: np.ndarray, wa: np.ndarray, b: np.ndarray, wb: np.ndarray) -> np.ndarray:
    """OpenCV's ``addWeighted(a, wa, b, wb, 0)`` on uint8: ``fma(a, wa,
    float32(b * wb))`` rounded half to even and saturated; float32 on the
    uint8 grid.  The fused multiply-add rounds once: float64 holds ``a * wa +
    part`` exactly (a uint8 times a float32 plus a float32 of similar size),
    so computing it there and rounding to float32 is that one rounding."""
    part = b.astype(np.float32) * wb.astype(np.float32)
    y = (a.astype(np.float64) * wa.astype(np.float64) + part).astype(np.float32)
    return np.clip(np.rint(y), 0, 255)


# =============================================================================
# the eight offloadable operators
# =============================================================================

# --- Rescale -----------------------------------------------------------------

def _infer_rescale(attrs, ins):
    _numeric("Rescale", ins[0])
    return [ins[0].with_dtype("f32")]


RESCALE = define("vision.Rescale", kind=MAP, family=FAMILY, operands=("image",),
                 attrs={"rescale": REQUIRED, "shift": 0.0},
                 traits=(Pure(), Offloadable(), CommutesWithHWC2CHW(), OneChannelHW()),
                 infer=_infer_rescale,
                 doc="float32(x) * rescale + shift")


def _rescale(x, attrs):
    x = np.asarray(x)
    return x.astype(np.float32) * np.float32(attrs["rescale"]) + np.float32(attrs["shift"])


@RESCALE.host_batch
def _rescale_batch(inputs, attrs, draws):
    return [_rescale(inputs[0], attrs)]


# --- Normalize ---------------------------------------------------------------

def _infer_normalize(attrs, ins):
    t = ins[0]
    _numeric("Normalize", t)
    if t.rank not in (3, 4):
        raise ValueError(f"Normalize: expected an image of rank 3 or a batch of rank 4, got {_fmt(t)}")
    n = len(attrs["mean"])
    axis = -1 if attrs["is_hwc"] else t.rank - 3
    c = t.shape[axis]
    if isinstance(c, int) and n != 1 and c != n:
        layout = "HWC" if attrs["is_hwc"] else "CHW"
        raise ValueError(f"Normalize: mean/std have {n} values but the {layout} image {_fmt(t)} "
                         f"has {c} channels")
    return [t.with_dtype("f32")]


def _normalize_as_chw(attrs):
    """After a hoisted HWC2CHW, Normalize takes its channels-first form."""
    return {"is_hwc": False} if attrs["is_hwc"] else None


NORMALIZE = define("vision.Normalize", kind=MAP, family=FAMILY, operands=("image",),
                   attrs={"mean": REQUIRED, "std": REQUIRED, "is_hwc": True},
                   traits=(Pure(), Offloadable(), CommutesWithHWC2CHW(_normalize_as_chw), OneChannelHW()),
                   infer=_infer_normalize,
                   doc="(float32(x) - mean) / std per channel; is_hwc=False: CHW input")


def _channel_consts(attrs) -> tuple[np.ndarray, np.ndarray]:
    """mean and std as float32 vectors, one value per channel (or one for all):
    the constants of every form of Normalize (numpy, lookup table, ONNX)."""
    return np.asarray(attrs["mean"], np.float32), np.asarray(attrs["std"], np.float32)


def _norm_consts(attrs):
    """mean and std shaped to broadcast against the image's channel axis."""
    mean, std = _channel_consts(attrs)
    if not attrs["is_hwc"]:   # channel axis rank-3: [C, 1, 1]
        mean, std = mean.reshape(-1, 1, 1), std.reshape(-1, 1, 1)
    return mean, std


def _normalize(x, attrs):
    x = np.asarray(x)
    if x.dtype == np.uint8 and x.ndim in (3, 4) and x.size and _opencv() is not None \
            and 1 <= x.shape[-1 if attrs["is_hwc"] else -3] <= 4:
        return _normalize_u8_by_table(x, attrs)
    mean, std = _norm_consts(attrs)
    return (x.astype(np.float32) - mean) / std


# Below this many pixels a channel plane is looked up for the whole chunk at
# once (a call per plane costs more than the plane: 32x32, 3.0 us an image
# against 8.9); above it, plane by plane straight into place (224x224: 90 us
# against 144 for the chunk's extra copy).  Measured on 32 images, 2 cores.
_PLANE_PIXELS_PER_CALL = 10_000


def _normalize_u8_by_table(x: np.ndarray, attrs) -> np.ndarray:
    """A uint8 image has 256 values per channel: the formula is evaluated on
    them once (the same float32 arithmetic, so the same bits) and looked up
    per pixel by ``cv2.LUT``, 2-6x faster than numpy's broadcast.  The planes
    are written channels-first; an HWC image gets an HWC view of them, so the
    HWC2CHW that usually follows is a view too, not a copy (see
    :func:`_hwc2chw_batch`)."""
    cv2 = _opencv()
    hwc = attrs["is_hwc"]
    c = x.shape[-1] if hwc else x.shape[-3]
    mean, std = _channel_consts(attrs)
    table = np.broadcast_to((np.arange(256, dtype=np.float32)[:, None] - mean) / std, (256, c))
    tables = [np.ascontiguousarray(table[:, k])[None] for k in range(c)]    # [1, 256] each
    images = x.reshape(-1, *x.shape[-3:])
    h, w = images.shape[1:3] if hwc else images.shape[2:]
    planes = np.empty((len(images), c, h, w), np.float32)
    if h * w < _PLANE_PIXELS_PER_CALL:
        chw = np.ascontiguousarray(images.transpose(0, 3, 1, 2)) if hwc else images  # uint8: cheap
        n = len(images)
        for k in range(c):
            planes[:, k] = cv2.LUT(np.ascontiguousarray(chw[:, k]).reshape(n * h, w),
                                   tables[k]).reshape(n, h, w)
    else:
        for image, out in zip(images, planes):
            for k, plane in enumerate(cv2.split(image) if hwc else image):
                cv2.LUT(plane, tables[k], dst=out[k])
    y = planes.transpose(0, 2, 3, 1) if hwc else planes
    return y[0] if x.ndim == 3 else y


@NORMALIZE.host_batch
def _normalize_batch(inputs, attrs, draws):
    return [_normalize(inputs[0], attrs)]


# --- NormalizePad: Normalize, then a channel of zeros (4 channels for 3) ----------------

def _infer_normalize_pad(attrs, ins):
    t = _infer_normalize(attrs, ins)[0]
    if attrs["dtype"] not in ("f32", "f16"):
        raise ValueError(f"NormalizePad: dtype must be float32 or float16, got {attrs['dtype']}")
    axis = t.rank - 1 if attrs["is_hwc"] else t.rank - 3
    shape = list(t.shape)
    shape[axis] = shape[axis] + 1 if isinstance(shape[axis], int) else UNKNOWN
    return [TensorType(attrs["dtype"], tuple(shape))]


NORMALIZE_PAD = define("vision.NormalizePad", kind=MAP, family=FAMILY, operands=("image",),
                       attrs={"mean": REQUIRED, "std": REQUIRED, "dtype": "f32", "is_hwc": True},
                       traits=(Pure(),), infer=_infer_normalize_pad,
                       doc="Normalize, then a channel of zeros after the others, as dtype "
                           "(float32 or float16)")


@NORMALIZE_PAD.host_batch
def _normalize_pad_batch(inputs, attrs, draws):
    x = np.asarray(_normalize(inputs[0], attrs))
    axis = x.ndim - 1 if attrs["is_hwc"] else x.ndim - 3
    zeros = np.zeros(x.shape[:axis] + (1,) + x.shape[axis + 1:], x.dtype)
    return [np.concatenate([x, zeros], axis=axis).astype(to_numpy_dtype(attrs["dtype"]))]


# --- HWC2CHW -----------------------------------------------------------------

def hw_images(t: TensorType) -> bool:
    """An HW image (rank 2) or a batch of them (rank 3 after ``batch``): no channel axis."""
    return t.rank == 2 or (t.rank == 3 and t.shape[0] == BATCH)


def _infer_hwc2chw(attrs, ins):
    t = ins[0]
    if hw_images(t):      # MindSpore returns a 2-D image unchanged
        return [t]
    if t.rank not in (3, 4):
        raise ValueError(f"HWC2CHW: expected an image of rank 2 (HW), 3 (HWC) or a batch of rank 4 "
                         f"(NHWC), got {_fmt(t)}")
    s = t.shape
    return [t.with_shape((*s[:-3], s[-1], s[-3], s[-2]))]


HWC2CHW = define("vision.HWC2CHW", kind=MAP, family=FAMILY, attrs={}, operands=("image",),
                 traits=(Pure(), Offloadable()), infer=_infer_hwc2chw,
                 doc="transpose HWC -> CHW (NHWC -> NCHW on a batch); dtype kept; "
                     "an HW image (a batch of them) is returned unchanged")


@HWC2CHW.host_batch
def _hwc2chw_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    if x.ndim == 3:       # a batch of HW images
        return [x.copy()]
    _check_image_array("HWC2CHW", x, batched=True)
    # a view of channel planes (Normalize's output) transposes back without a copy
    return [np.ascontiguousarray(x.transpose(0, 3, 1, 2))]


# --- RandomHorizontalFlip / RandomVerticalFlip -----------------------------------

def _infer_flip(name):
    def infer(attrs, ins):
        image_dims(name, ins[0])
        return [ins[0]]
    return infer


def _flip_as_mindspore(gen, m: int, attrs, hw) -> np.ndarray:
    """MindSpore flips iff ``bernoulli_distribution(prob)``: a
    ``generate_canonical<double>`` draw below prob.  The draw itself is the
    flip's draw, except where float32 rounding would decide otherwise."""
    u = stdrandom.canonical(gen, m)
    prob = float(attrs["prob"])
    flip = u < prob
    ours = np.minimum(u.astype(np.float32), ONE_BELOW) < np.float32(prob)
    u[flip & ~ours], u[~flip & ours] = 0.0, 1.0
    return u[:, None]


HFLIP = define("vision.RandomHorizontalFlip", kind=MAP, family=FAMILY, operands=("image",),
               attrs={"prob": 0.5},
               traits=(Pure(), Offloadable(), Random(lambda attrs: 1, _flip_as_mindspore), OneChannelHW()),
               infer=_infer_flip("RandomHorizontalFlip"),
               doc="reverse W iff u < prob (1 draw)")
VFLIP = define("vision.RandomVerticalFlip", kind=MAP, family=FAMILY, operands=("image",),
               attrs={"prob": 0.5},
               traits=(Pure(), Offloadable(), Random(lambda attrs: 1, _flip_as_mindspore), OneChannelHW()),
               infer=_infer_flip("RandomVerticalFlip"),
               doc="reverse H iff u < prob (1 draw)")


def _flip_mask(draws, prob) -> np.ndarray:
    return uniforms(draws)[..., 0] < np.float32(prob)


def _attach_flip(op, axis: int):   # axis in the HWC image: 1 = W, 0 = H
    name = op.name.split(".")[1]

    @op.host_batch
    def _batch(inputs, attrs, draws):
        x = np.asarray(inputs[0])
        _check_image_array(name, x, batched=True)
        mask = _flip_mask(draws, attrs["prob"])
        if x.dtype in _CV2_FLIP_DTYPES and 1 <= x.shape[-1] <= 4 and x.flags.c_contiguous \
                and _opencv() is not None:     # OpenCV takes packed HWC images only
            return [_flip_cv2(x, mask, axis)]
        out = x.copy()
        out[mask] = np.flip(x[mask], axis + 1)
        return [out]


# OpenCV's flip copies a reversed image 10x faster than numpy's reversed-stride copy.
_CV2_FLIP_DTYPES = tuple(np.dtype(t) for t in ("u1", "i1", "u2", "i2", "i4", "f4", "f8"))


def _flip_cv2(x: np.ndarray, mask: np.ndarray, axis: int) -> np.ndarray:
    cv2 = _opencv()
    out = np.empty_like(x)
    code = 1 if axis == 1 else 0     # OpenCV: 1 mirrors columns, 0 rows
    for i in range(len(x)):
        if mask[i]:
            cv2.flip(x[i], code, dst=out[i])
        else:
            out[i] = x[i]
    return out


_attach_flip(HFLIP, 1)
_attach_flip(VFLIP, 0)


# --- RandomColorAdjust ---------------------------------------------------------

def _infer_color(attrs, ins):
    image_dims("RandomColorAdjust", ins[0], dtypes=("u8",), channels=(3,))
    return [ins[0]]


COLOR = define("vision.RandomColorAdjust", kind=MAP, family=FAMILY, operands=("image",),
               attrs={"brightness": [1.0, 1.0], "contrast": [1.0, 1.0],
                      "saturation": [1.0, 1.0], "hue": [0.0, 0.0]},
               traits=(Pure(), Offloadable(), Random(lambda attrs: 4)), infer=_infer_color,
               doc="brightness, contrast, saturation, hue in that order (4 draws); RGB uint8")

_COLOR_KEYS = (("brightness", (1.0, 1.0)), ("contrast", (1.0, 1.0)),
               ("saturation", (1.0, 1.0)), ("hue", (0.0, 0.0)))


def _color_steps(attrs):
    """[(component, draw index, lo, hi)] of the enabled components, in order."""
    steps = []
    for k, (key, identity) in enumerate(_COLOR_KEYS):
        lo, hi = (float(v) for v in attrs[key])
        if (lo, hi) != identity:
            steps.append((key, k, lo, hi))
    return steps


def _hue_shift(y, h):
    """RGB -> HSV, H = (H + h) mod 1, HSV -> RGB, float32 (colorsys's maths)."""
    r, g, b = y[..., 0:1], y[..., 1:2], y[..., 2:3]
    maxc = np.maximum(np.maximum(r, g), b)
    minc = np.minimum(np.minimum(r, g), b)
    delta = maxc - minc
    safe = np.where(delta > 0, delta, np.float32(1.0))
    rc = (maxc - r) / safe
    gc = (maxc - g) / safe
    bc = (maxc - b) / safe
    hh = np.where(r == maxc, bc - gc,
                  np.where(g == maxc, np.float32(2.0) + rc - bc, np.float32(4.0) + gc - rc))
    hh = hh / np.float32(6.0)
    hh = hh - np.floor(hh)
    hh = hh + h
    hh = hh - np.floor(hh)
    h6 = hh * np.float32(6.0)
    out = []
    for n in (5.0, 3.0, 1.0):
        k = h6 + np.float32(n)
        k = k - np.float32(6.0) * np.floor(k / np.float32(6.0))
        w = np.clip(np.minimum(k, np.float32(4.0) - k), np.float32(0.0), np.float32(1.0))
        out.append(maxc - delta * w)
    return np.concatenate(out, axis=-1)


def color_adjust(x: np.ndarray, attrs: dict, u: np.ndarray) -> np.ndarray:
    """The colour maths on an NHWC batch with per-sample draws ``u`` [N, 4],
    rounded to the uint8 grid after every component (the device too).

    Brightness, contrast and saturation are MindSpore's (OpenCV's) arithmetic:
    ``x * f`` saturated; ``addWeighted(m, 1 - f, x, f)`` with ``m`` the mean of
    the uint8 gray image rounded as ``int(mean + 0.5)``; ``addWeighted(gray,
    1 - f, x, f)``.  Hue is colorsys's maths in float32 (OPS.md)."""
    y = x.astype(np.float32)
    for key, k, lo, hi in _color_steps(attrs):
        f = factor(u[:, k], lo, hi).reshape(-1, 1, 1, 1)
        if key == "brightness":
            y = np.rint(np.clip(y * f, 0, 255))
        elif key == "contrast":
            m = gray_u8(y).mean(axis=(1, 2, 3), keepdims=True, dtype=np.float64)
            y = add_weighted(np.floor(m + 0.5), np.float32(1.0) - f, y, f)
        elif key == "saturation":
            y = add_weighted(gray_u8(y), np.float32(1.0) - f, y, f)
        else:
            y = np.rint(np.clip(_hue_shift(y, f), 0, 255))
    return _round_clip_u8(y)


@COLOR.host_batch
def _color_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("RandomColorAdjust", x, batched=True)
    return [color_adjust(x, attrs, uniforms(draws, 4))]


# --- RandomSharpness -----------------------------------------------------------

def _infer_sharpness(attrs, ins):
    image_dims("RandomSharpness", ins[0], dtypes=("u8",))
    return [ins[0]]


SHARPNESS = define("vision.RandomSharpness", kind=MAP, family=FAMILY, operands=("image",),
                   attrs={"degrees": [0.1, 1.9]}, traits=(Pure(), Offloadable(), Random(lambda attrs: 1)),
                   infer=_infer_sharpness,
                   doc="blur + f * (x - blur), blur = 3x3 [[1,1,1],[1,5,1],[1,1,1]]/13 per channel "
                       "rounded to uint8, outer ring unchanged (1 draw); OpenCV's arithmetic, as "
                       "MindSpore's CPU op (bit for bit)")

_SMOOTH = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], np.float32) / np.float32(13.0)


def sharpness(x: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Sharpness on an NHWC uint8 batch with per-sample factors ``f`` [N].

    MindSpore's op: ``filter2D`` (the blur, a uint8 image), the outer ring
    copied back from ``x``, then ``addWeighted(x, f, blur, 1 - f)``."""
    n, h, w, c = x.shape
    if h < 3 or w < 3:      # every pixel is on the ring
        return x.copy()
    xi = x.astype(np.int32)
    s = (xi[:, :-2, :-2] + xi[:, :-2, 1:-1] + xi[:, :-2, 2:]
         + xi[:, 1:-1, :-2] + 5 * xi[:, 1:-1, 1:-1] + xi[:, 1:-1, 2:]
         + xi[:, 2:, :-2] + xi[:, 2:, 1:-1] + xi[:, 2:, 2:])
    blur = x.copy()
    blur[:, 1:-1, 1:-1] = np.rint(s / 13.0)     # s / 13 is never a tie: any rounding agrees
    f = np.asarray(f, np.float32).reshape(-1, 1, 1, 1)
    return add_weighted(x, f, blur, np.float32(1.0) - f).astype(np.uint8)


@SHARPNESS.host_batch
def _sharpness_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("RandomSharpness", x, batched=True)
    lo, hi = attrs["degrees"]
    return [sharpness(x, factor(uniforms(draws, 1)[:, 0], lo, hi))]


# =============================================================================
# host-only operators
# =============================================================================

# --- Decode --------------------------------------------------------------------

def _infer_decode(attrs, ins):
    t = ins[0]
    if t.dtype == "bytes" and t.rank == 0:
        return [TensorType("u8", (UNKNOWN, UNKNOWN, 3))]
    if t.dtype == "bytes" and t.rank == 1:
        return [TensorType("u8", (t.shape[0], UNKNOWN, UNKNOWN, 3))]
    # MindSpore's form: the file's bytes as uint8[L], or int8[L] (the model
    # zoo's YOLO datasets read files with np.fromfile(path, dtype="int8"))
    if t.dtype in ("u8", "i8") and t.rank == 1:
        return [TensorType("u8", (UNKNOWN, UNKNOWN, 3))]
    raise TypeError(f"Decode: expected encoded image bytes (bytes[], u8[L] or i8[L]), got {_fmt(t)}")


DECODE = define("vision.Decode", kind=MAP, family=FAMILY, attrs={}, infer=_infer_decode,
                operands=("data",), traits=(Pure(),),
                doc="JPEG/PNG/BMP/... bytes -> RGB uint8 HWC (Pillow)")


def _as_bytes(x) -> bytes:
    if isinstance(x, (bytes, bytearray, memoryview)):
        return bytes(x)
    a = np.asarray(x)
    if a.dtype.kind in "SO" and a.ndim == 0:
        v = a.item()
        if isinstance(v, (bytes, bytearray, memoryview)):
            return bytes(v)
        if isinstance(v, np.ndarray):
            return _as_bytes(v)
        raise TypeError(f"Decode: expected encoded image bytes, got {type(v).__name__}")
    if a.dtype in (np.uint8, np.int8) and a.ndim == 1:
        return a.tobytes()
    if a.dtype.kind == "S" and a.shape == (1,):      # a MindRecord bytes field (MindDataset's form)
        return a.tobytes()
    raise TypeError(f"Decode: expected encoded image bytes, got an array of dtype {a.dtype} "
                    f"and shape {a.shape}")


def decode(data) -> np.ndarray:
    raw = _as_bytes(data)
    cv2 = _opencv() if raw.endswith(b"\xff\xd9") and _jpeg_components(raw) in (1, 3) else None
    if cv2 is not None:
        img = cv2.imdecode(np.frombuffer(raw, np.uint8),
                           cv2.IMREAD_COLOR_RGB | cv2.IMREAD_IGNORE_ORIENTATION)
        if img is not None:
            return img
    return decode_pillow(raw)


def decode_pillow(raw: bytes) -> np.ndarray:
    """The reference decoder (OPS.md: Pillow, converted to RGB)."""
    from PIL import Image, UnidentifiedImageError
    try:
        with Image.open(io.BytesIO(raw)) as im:
            return np.asarray(im.convert("RGB"), dtype=np.uint8).copy()
    except (UnidentifiedImageError, OSError) as e:
        raise ValueError(f"Decode: cannot decode the image ({len(raw)} bytes): {e}") from None


# Encoded bytes have no batch form: Decode has only a per-sample rule.
@DECODE.host_sample
def _decode_sample(inputs, attrs, draws):
    return [decode(inputs[0])]


# --- Resize ----------------------------------------------------------------------

def resize_output_size(size, h: int, w: int) -> tuple[int, int]:
    """(out_h, out_w): ``size`` is [h, w] or an int for the shorter side
    (the longer side scaled as MindSpore does, in float32, floored)."""
    if isinstance(size, (list, tuple)):
        if len(size) == 1:
            size = size[0]
        else:
            return int(size[0]), int(size[1])
    s = int(size)
    if h < w:
        return s, int(math.floor(np.float32(w) / np.float32(h) * np.float32(s)))
    return int(math.floor(np.float32(h) / np.float32(w) * np.float32(s))), s


def _sized(op: str, t: TensorType, size):
    """Output (h, w) dims for ``size`` given the input type's dims."""
    _, h, w, _ = image_dims(op, t)
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return int(size[0]), int(size[1])
    if isinstance(h, int) and isinstance(w, int):
        return resize_output_size(size, h, w)
    return UNKNOWN, UNKNOWN


def _infer_resize(attrs, ins):
    h, w = _sized("Resize", ins[0], attrs["size"])
    return [_image_type(ins[0], h, w)]


# Not offloaded by MindSpore; irc export computes linear and nearest inside
# the model, bit-exact (backends/onnx_rules/vision.py).
_EXACT_ON_DEVICE = Exportable(lambda attrs: attrs.get("interpolation") in ("linear", "nearest"))
RESIZE = define("vision.Resize", kind=MAP, family=FAMILY, operands=("image",),
                traits=(Pure(), _EXACT_ON_DEVICE, OneChannelHW()),
                attrs={"size": REQUIRED, "interpolation": "linear"}, infer=_infer_resize,
                doc="OpenCV-exact resize: linear = INTER_LINEAR (half-pixel, no antialias), "
                    "nearest = INTER_NEAREST, bicubic = INTER_CUBIC; size int = shorter side")

# Below this row length (W*C) the horizontal pass is one small dense matmul
# (the fastest numpy form); above it, two gathers.
_MATMUL_MAX = 512
_COEF_BITS = 11
_COEF_SCALE = 1 << _COEF_BITS   # 2048, OpenCV's INTER_RESIZE_COEF_SCALE


def _src_pos(sin: int, sout: int):
    """OpenCV's source coordinates: float32((d + 0.5) * scale - 0.5), floor, frac."""
    scale = 1.0 / (sout / sin)
    f = ((np.arange(sout, dtype=np.float64) + 0.5) * scale - 0.5).astype(np.float32)
    s = np.floor(f).astype(np.int64)
    return s, (f - s.astype(np.float32)).astype(np.float32)


@functools.lru_cache(maxsize=512)
def linear_table(sin: int, sout: int, axis: str):
    """Taps (i0, i1), float weights (w0, w1) and OpenCV's 11-bit fixed-point
    weights (a0, a1) of INTER_LINEAR along one axis.  OpenCV clamps the
    coordinate on the x axis (fx = 0 at the borders) but not on the y axis,
    where it clamps the rows fetched instead; both are reproduced."""
    s, f = _src_pos(sin, sout)
    if axis == "x":
        low = s < 0
        f[low], s[low] = 0, 0
        high = s >= sin - 1
        f[high], s[high] = 0, sin - 1
    w0 = (np.float32(1.0) - f).astype(np.float32)
    w1 = f
    a0 = np.rint(w0 * np.float32(_COEF_SCALE)).astype(np.int32)
    a1 = np.rint(w1 * np.float32(_COEF_SCALE)).astype(np.int32)
    i0 = np.clip(s, 0, sin - 1)
    i1 = np.clip(s + 1, 0, sin - 1)
    out = (i0, i1, w0, w1, a0, a1)
    for a in out:
        a.setflags(write=False)
    return out


@functools.lru_cache(maxsize=512)
def _linear_matrix(sin: int, sout: int, channels: int) -> np.ndarray:
    """INTER_LINEAR's fixed-point x weights as a [sin*C, sout*C] float32
    matrix acting on rows whose channels are interleaved."""
    i0, i1, _, _, a0, a1 = linear_table(sin, sout, "x")
    m = np.zeros((sin, sout), np.float32)
    cols = np.arange(sout)
    np.add.at(m, (i0, cols), a0.astype(np.float32))
    np.add.at(m, (i1, cols), a1.astype(np.float32))
    m = np.kron(m, np.eye(channels, dtype=np.float32)) if channels > 1 else m
    m.setflags(write=False)
    return m


def _cubic_coeffs(x: np.ndarray) -> np.ndarray:
    a = np.float32(-0.75)
    x = x.astype(np.float32)
    one = np.float32(1.0)
    c0 = ((a * (x + one) - np.float32(5.0) * a) * (x + one) + np.float32(8.0) * a) * (x + one) - np.float32(4.0) * a
    c1 = ((a + np.float32(2.0)) * x - (a + np.float32(3.0))) * x * x + one
    c2 = ((a + np.float32(2.0)) * (one - x) - (a + np.float32(3.0))) * (one - x) * (one - x) + one
    c3 = one - c0 - c1 - c2
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.float32)


@functools.lru_cache(maxsize=256)
def cubic_table(sin: int, sout: int):
    """Taps [sout, 4], float weights [sout, 4], fixed-point weights (INTER_CUBIC, A=-0.75)."""
    s, f = _src_pos(sin, sout)
    idx = np.clip(s[:, None] + np.arange(-1, 3)[None, :], 0, sin - 1)
    w = _cubic_coeffs(f)
    a = np.rint(w * np.float32(_COEF_SCALE)).astype(np.int64)
    for arr in (idx, w, a):
        arr.setflags(write=False)
    return idx, w, a


@functools.lru_cache(maxsize=256)
def nearest_table(sin: int, sout: int):
    """OpenCV INTER_NEAREST: src = min(floor(d * sin / sout), sin - 1)."""
    scale = 1.0 / (sout / sin)
    idx = np.minimum(np.floor(np.arange(sout) * scale).astype(np.int64), sin - 1)
    idx.setflags(write=False)
    return idx


def _saturate(y: np.ndarray, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return y.astype(dtype)
    info = np.iinfo(dtype)
    return np.clip(np.rint(y), info.min, info.max).astype(dtype)


def resize_batch(x: np.ndarray, out_h: int, out_w: int, interpolation: str = "linear") -> np.ndarray:
    """Resize an NHWC batch (all images of one size) to (out_h, out_w)."""
    if _opencv_resizes(x, out_h, out_w, interpolation):
        return _resize_linear_cv2(x, out_h, out_w)
    return resize_batch_reference(x, out_h, out_w, interpolation)


def _opencv_resizes(x: np.ndarray, out_h: int, out_w: int, interpolation: str) -> bool:
    """Whether OpenCV's INTER_LINEAR gives this resize of an (N)HWC array
    (uint8, a real size change, 1-4 channels)."""
    h, w, c = x.shape[-3:]
    return (interpolation == "linear" and x.dtype == np.uint8 and h and w and out_h > 0 and out_w > 0
            and (h, w) != (out_h, out_w) and 1 <= c <= 4 and _opencv() is not None)


def resize_image(x: np.ndarray, out_h: int, out_w: int, interpolation: str = "linear") -> np.ndarray:
    """:func:`resize_batch` of one HWC image (per-sample ops call it once an
    image: OpenCV directly, no batch to allocate and fill)."""
    if _opencv_resizes(x, out_h, out_w, interpolation):
        return _resize_one_cv2(x, out_h, out_w)
    return resize_batch(x[None], out_h, out_w, interpolation)[0]


def _resize_one_cv2(x: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    cv2 = _opencv()
    y = cv2.resize(x, (out_w, out_h), interpolation=cv2.INTER_LINEAR)
    return y.reshape(out_h, out_w, x.shape[2])    # OpenCV drops a single channel axis


def _resize_linear_cv2(x: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    out = np.empty((len(x), out_h, out_w, x.shape[3]), np.uint8)
    for i in range(len(x)):
        out[i] = _resize_one_cv2(x[i], out_h, out_w)
    return out


def resize_batch_reference(x: np.ndarray, out_h: int, out_w: int, interpolation: str = "linear") -> np.ndarray:
    """OpenCV's resize arithmetic in numpy (the reference; also what the
    ONNX lowering reproduces)."""
    n, h, w, c = x.shape
    if (h, w) == (out_h, out_w):
        return x.copy()
    if h == 0 or w == 0:
        raise ValueError(f"Resize: cannot resize an empty image of shape {x.shape[1:]}")
    if out_h <= 0 or out_w <= 0:
        raise ValueError(f"Resize: output size must be positive, got ({out_h}, {out_w})")
    if interpolation == "nearest":
        return np.ascontiguousarray(x[:, nearest_table(h, out_h)][:, :, nearest_table(w, out_w)])
    if interpolation == "bicubic":
        return _resize_cubic(x, out_h, out_w)
    if interpolation != "linear":
        raise ValueError(f"Resize: unknown interpolation {interpolation!r}")
    yi0, yi1, yw0, yw1, yb0, yb1 = linear_table(h, out_h, "y")
    xi0, xi1, xw0, xw1, xa0, xa1 = linear_table(w, out_w, "x")
    if x.dtype == np.uint8:
        # OpenCV's fixed point: a horizontal pass in int32 (weights * 2048),
        # then the vertical pass exactly as its (SIMD) VResizeLinearVec_32s8u
        # rounds: ((S0 >> 4) * b0 >> 16) + ((S1 >> 4) * b1 >> 16), + 2 >> 2.
        # The horizontal pass is a matmul with the [W, ow] weight matrix: all
        # partial sums are integers below 2**24, so float32 is exact.
        if w * c <= _MATMUL_MAX:
            # Channels stay interleaved: [W*C] -> [ow*C] with kron(weights, I_C).
            amat = _linear_matrix(w, out_w, c)
            rows = np.matmul(x.reshape(n, h, w * c).astype(np.float32), amat)
            rows = rows.astype(np.int32).reshape(n, h, out_w, c)         # N H ow C
        else:
            xs = x.astype(np.int32)
            rows = xs[:, :, xi0] * xa0[:, None] + xs[:, :, xi1] * xa1[:, None]
        rows >>= 4
        s0 = rows[:, yi0]
        s0 *= yb0[:, None, None]
        s0 >>= 16
        s1 = rows[:, yi1]
        s1 *= yb1[:, None, None]
        s1 >>= 16
        s0 += s1
        s0 += 2
        s0 >>= 2          # in [0, 255]: the weights are >= 0 and sum to 2048
        return s0.astype(np.uint8)
    work = np.float64 if x.dtype == np.float64 else np.float32
    xf = x.astype(work)
    rows = xf[:, :, xi0] * xw0[:, None].astype(work) + xf[:, :, xi1] * xw1[:, None].astype(work)
    y = rows[:, yi0] * yw0[:, None, None].astype(work) + rows[:, yi1] * yw1[:, None, None].astype(work)
    return _saturate(y, x.dtype)


def _resize_cubic(x, out_h, out_w):
    n, h, w, c = x.shape
    yi, yw, ya = cubic_table(h, out_h)
    xi, xw, xa = cubic_table(w, out_w)
    if x.dtype == np.uint8:
        # OpenCV (without IPP): an int horizontal pass (weights * 2048), then
        # its VResizeCubicVec_32s8u: float32 S0*b0 + (S1*b1 + (S2*b2 + S3*b3))
        # with b = beta / 2048**2, rounded half to even.
        xs = x.astype(np.int32)
        rows = sum(xs[:, :, xi[:, k]] * xa[:, k][:, None].astype(np.int32) for k in range(4))
        scale = np.float32(1.0 / (_COEF_SCALE * _COEF_SCALE))
        acc = None
        for k in (3, 2, 1, 0):
            b = (ya[:, k].astype(np.float32) * scale)[:, None, None]
            term = rows[:, yi[:, k]].astype(np.float32) * b
            acc = term if acc is None else term + acc
        return np.clip(np.rint(acc), 0, 255).astype(np.uint8)
    work = np.float64 if x.dtype == np.float64 else np.float32
    xf = x.astype(work)
    rows = sum(xf[:, :, xi[:, k]] * xw[:, k][:, None].astype(work) for k in range(4))
    y = sum(rows[:, yi[:, k]] * yw[:, k][:, None, None].astype(work) for k in range(4))
    return _saturate(y, x.dtype)


def _resize_attrs_size(attrs, h, w):
    return resize_output_size(attrs["size"], h, w)


@RESIZE.host_batch
def _resize_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("Resize", x, batched=True)
    oh, ow = _resize_attrs_size(attrs, x.shape[1], x.shape[2])
    return [resize_batch(x, oh, ow, attrs["interpolation"])]


# --- Pad / CenterCrop / RandomCrop ---------------------------------------------

def pad_batch(x: np.ndarray, padding, fill_value=0, mode: str = "constant") -> np.ndarray:
    """Pad an NHWC batch by padding = [left, top, right, bottom]."""
    left, top, right, bottom = (int(p) for p in padding)
    if not (left or top or right or bottom):
        return x
    n, h, w, c = x.shape
    if mode == "constant":
        fill = np.asarray(fill_value).reshape(-1)
        if fill.size not in (1, c):
            raise ValueError(f"fill_value has {fill.size} values but the image has {c} channels")
        out = np.empty((n, h + top + bottom, w + left + right, c), x.dtype)
        out[...] = fill[0] if fill.size == 1 else fill
        out[:, top:top + h, left:left + w] = x
        return out
    return np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), mode=mode)


def _pad_infer_dims(t: TensorType, padding):
    _, h, w, _ = image_dims("Pad", t)
    left, top, right, bottom = padding
    nh = h + top + bottom if isinstance(h, int) else UNKNOWN
    nw = w + left + right if isinstance(w, int) else UNKNOWN
    return nh, nw


def _infer_pad(attrs, ins):
    h, w = _pad_infer_dims(ins[0], attrs["padding"])
    return [_image_type(ins[0], h, w)]


PAD = define("vision.Pad", kind=MAP, family=FAMILY, operands=("image",), traits=(Pure(), OneChannelHW()),
             attrs={"padding": REQUIRED, "fill_value": 0, "padding_mode": "constant"},
             infer=_infer_pad, doc="pad by [left, top, right, bottom]")


@PAD.host_batch
def _pad_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("Pad", x, batched=True)
    return [pad_batch(x, attrs["padding"], attrs["fill_value"], attrs["padding_mode"])]


# --- PadToSize ------------------------------------------------------------------------

def _pad_to_size_padding(h: int, w: int, attrs) -> list[int]:
    """[left, top, right, bottom] taking an h x w image to ``size``, from
    ``offset`` (top, left), or centred (the odd pixel after) without one."""
    th, tw = (int(v) for v in attrs["size"])
    if th < h or tw < w:
        raise ValueError(f"PadToSize: the target size {[th, tw]} is smaller than the image's {[h, w]}")
    top, left = ((th - h) // 2, (tw - w) // 2) if attrs["offset"] is None else (int(v) for v in attrs["offset"])
    if top + h > th or left + w > tw:
        raise ValueError(f"PadToSize: offset {[top, left]} puts the {[h, w]} image outside {[th, tw]}")
    return [left, top, tw - w - left, th - h - top]


def _infer_pad_to_size(attrs, ins):
    image_dims("PadToSize", ins[0])
    h, w = attrs["size"]
    return [_image_type(ins[0], h, w)]


PAD_TO_SIZE = define("vision.PadToSize", kind=MAP, family=FAMILY, operands=("image",),
                     traits=(Pure(), OneChannelHW()),
                     attrs={"size": REQUIRED, "offset": None, "fill_value": 0, "padding_mode": "constant"},
                     infer=_infer_pad_to_size,
                     doc="padded to size [H, W]: offset [top, left] of the image in it (none: centred), "
                         "as vision.Pad fills")


@PAD_TO_SIZE.host_batch
def _pad_to_size_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("PadToSize", x, batched=True)
    padding = _pad_to_size_padding(x.shape[1], x.shape[2], attrs)
    return [pad_batch(x, padding, attrs["fill_value"], attrs["padding_mode"])]


def _infer_center_crop(attrs, ins):
    image_dims("CenterCrop", ins[0])
    h, w = attrs["size"]
    return [_image_type(ins[0], h, w)]


CENTER_CROP = define("vision.CenterCrop", kind=MAP, family=FAMILY, operands=("image",),
                     traits=(Pure(), OneChannelHW()),
                     attrs={"size": REQUIRED}, infer=_infer_center_crop,
                     doc="centre window of size [h, w] (top = (H - h) // 2); zero-padded first "
                         "where the image is smaller, an odd extra row/column on the top/left")


def center_crop_batch(x: np.ndarray, size) -> np.ndarray:
    ch, cw = int(size[0]), int(size[1])
    n, h, w, c = x.shape
    ph, pw = max(ch - h, 0), max(cw - w, 0)
    if ph or pw:
        # MindSpore's CenterCrop puts the odd pixel of padding first: (p + 1) // 2
        x = pad_batch(x, [pw - pw // 2, ph - ph // 2, pw // 2, ph // 2], 0)
        h, w = x.shape[1:3]
    top, left = (h - ch) // 2, (w - cw) // 2
    return np.ascontiguousarray(x[:, top:top + ch, left:left + cw])


@CENTER_CROP.host_batch
def _center_crop_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("CenterCrop", x, batched=True)
    return [center_crop_batch(x, attrs["size"])]


def _infer_random_crop(attrs, ins):
    _, ih, iw, _ = image_dims("RandomCrop", ins[0])
    h, w = attrs["size"]
    left, top, right, bottom = attrs["padding"] or (0, 0, 0, 0)
    if isinstance(ih, int) and isinstance(iw, int) and not attrs["pad_if_needed"]:
        ph, pw = ih + top + bottom, iw + left + right
        if ph < h or pw < w:
            raise ValueError(f"RandomCrop: crop size ({h}, {w}) is larger than the (padded) image "
                             f"({ph}, {pw}); use pad_if_needed=True or a smaller size")
    return [_image_type(ins[0], h, w)]


def _crop_as_mindspore(gen, m: int, attrs, hw) -> np.ndarray | None:
    """MindSpore draws the window's left, then its top, each a
    ``uniform_int_distribution`` over the room the padded image leaves; as
    draws, the middles of those offsets' intervals."""
    if hw is None:
        return None
    ch, cw = attrs["size"]
    left, top, right, bottom = attrs["padding"] or (0, 0, 0, 0)
    h, w = hw[0] + top + bottom, hw[1] + left + right
    if attrs["pad_if_needed"]:
        h, w = max(h, ch), max(w, cw)
    room_h, room_w = h - ch + 1, w - cw + 1
    if room_h < 1 or room_w < 1:
        return None
    xy = stdrandom.uniform_below(gen, np.tile([room_w, room_h], m)).reshape(m, 2).astype(np.float64)
    return np.stack([(xy[:, 1] + 0.5) / room_h, (xy[:, 0] + 0.5) / room_w], axis=1)


RANDOM_CROP = define("vision.RandomCrop", kind=MAP, family=FAMILY, operands=("image",),
                     attrs={"size": REQUIRED, "padding": None, "pad_if_needed": False,
                            "fill_value": 0, "padding_mode": "constant"},
                     infer=_infer_random_crop,
                     traits=(Pure(), Random(lambda attrs: 2, _crop_as_mindspore), OneChannelHW()),
                     doc="pad, then a uniform window: top = floor(u0*(H-h+1)), left = floor(u1*(W-w+1))")


def _crop_pad(x: np.ndarray, attrs) -> np.ndarray:
    """RandomCrop's padding: explicit padding, then pad_if_needed (both sides)."""
    if attrs["padding"] is not None:
        x = pad_batch(x, attrs["padding"], attrs["fill_value"], attrs["padding_mode"])
    ch, cw = attrs["size"]
    h, w = x.shape[1:3]
    if attrs["pad_if_needed"] and (h < ch or w < cw):
        dh, dw = max(ch - h, 0), max(cw - w, 0)
        x = pad_batch(x, [dw, dh, dw, dh], attrs["fill_value"], attrs["padding_mode"])
        h, w = x.shape[1:3]
    if h < ch or w < cw:
        raise ValueError(f"RandomCrop: crop size ({ch}, {cw}) is larger than the (padded) image "
                         f"({h}, {w}); use pad_if_needed=True or a smaller size")
    return x


def window_offset(u, room: int):
    """floor(u * (room + 1)) clamped to [0, room] (u float32 from :func:`uniforms`)."""
    off = np.floor(np.asarray(u, np.float64) * (room + 1)).astype(np.int64)
    return np.clip(off, 0, room)


def window_offset_of(u: float, room: int) -> int:
    """:func:`window_offset` of one draw (``u`` a float32's value as a Python
    float): the same double arithmetic without numpy's per-scalar cost
    (18 us a call, a third of a small image's whole crop)."""
    return min(max(math.floor(u * (room + 1)), 0), room)


@RANDOM_CROP.host_batch
def _random_crop_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("RandomCrop", x, batched=True)
    xp = _crop_pad(x, attrs)
    ch, cw = attrs["size"]
    u = uniforms(draws, 2)
    top = window_offset(u[:, 0], xp.shape[1] - ch)
    left = window_offset(u[:, 1], xp.shape[2] - cw)
    rows = (top[:, None] + np.arange(ch))[:, :, None]
    cols = (left[:, None] + np.arange(cw))[:, None, :]
    return [xp[np.arange(len(xp))[:, None, None], rows, cols]]


# --- CutOut ------------------------------------------------------------------------

def _cutout_hw(attrs, t: TensorType):
    """(H, W) of an image (HWC, or CHW with ``is_hwc=False``), batched or not."""
    if t.rank not in (3, 4):
        raise ValueError(f"CutOut: expected an image of rank 3 or a batch of rank 4, got {_fmt(t)}")
    return t.shape[-3:-1] if attrs["is_hwc"] else t.shape[-2:]


def _infer_cutout(attrs, ins):
    _numeric("CutOut", ins[0])
    length = attrs["length"]
    for side in _cutout_hw(attrs, ins[0]):
        if isinstance(side, int) and length > side:
            raise ValueError(f"CutOut: box size is too large for image erase: length {length}, "
                             f"image {_fmt(ins[0])}")
    return [ins[0]]


def _cutout_as_mindspore(gen, m: int, attrs, hw) -> np.ndarray | None:
    """MindSpore draws each patch's top, then its left, each a
    ``uniform_int_distribution`` over [0, side + length] (the patch then
    starts ``length`` before, clipped to the image); as draws, the middles
    of those offsets' intervals.  CHW images: irc's own draws (the stream
    knows an HWC image's size)."""
    if hw is None or not attrs["is_hwc"]:
        return None
    n, length = int(attrs["num_patches"]), int(attrs["length"])
    rooms = np.array([hw[0] + length + 1, hw[1] + length + 1], np.int64)
    offsets = stdrandom.uniform_below(gen, np.tile(rooms, m * n)).reshape(m, 2 * n).astype(np.float64)
    return (offsets + 0.5) / np.tile(rooms, n)


CUTOUT = define("vision.CutOut", kind=MAP, family=FAMILY, operands=("image",),
                attrs={"length": REQUIRED, "num_patches": 1, "is_hwc": True},
                infer=_infer_cutout,
                traits=(Pure(), Random(lambda attrs: 2 * int(attrs["num_patches"]), _cutout_as_mindspore)),
                doc="num_patches squares of side length set to 0, each starting at "
                    "(floor(u*(H+L+1)) - L, floor(u*(W+L+1)) - L), clipped to the image")


@CUTOUT.host_batch
def _cutout_batch(inputs, attrs, draws):
    x = np.array(inputs[0], copy=True)
    length, n = int(attrs["length"]), int(attrs["num_patches"])
    h, w = (x.shape[1:3] if attrs["is_hwc"] else x.shape[2:4])
    u = uniforms(draws, 2 * n)
    for i in range(len(x)):
        for p in range(n):
            top = window_offset_of(float(u[i, 2 * p]), h + length) - length
            left = window_offset_of(float(u[i, 2 * p + 1]), w + length) - length
            rows = slice(max(top, 0), min(top + length, h))
            cols = slice(max(left, 0), min(left + length, w))
            if attrs["is_hwc"]:
                x[i, rows, cols] = 0
            else:
                x[i, :, rows, cols] = 0
    return [x]


# --- RandomResizedCrop / RandomCropDecodeResize ----------------------------------

def _rrc_draws(attrs) -> int:
    return 2 * int(attrs["max_attempts"]) + 2


@functools.lru_cache(maxsize=64)
def _rrc_bounds(scale: tuple, ratio: tuple) -> tuple[float, ...]:
    """(smin, smax, rmin, rmax, log rmin, log rmax) of RandomResizedCrop's
    attributes, the ratio bounds as the float32 MindSpore holds."""
    rmin, rmax = (float(np.float32(v)) for v in ratio)
    return float(scale[0]), float(scale[1]), rmin, rmax, math.log(rmin), math.log(rmax)


def crop_box(h: int, w: int, attrs, draws) -> tuple[int, int, int, int]:
    """(top, left, crop_h, crop_w) of MindSpore's RandomCropAndResize, driven by draws.

    Sizes and the fallback's centring round as C++ ``std::round``; the ratio
    bounds are float32, as MindSpore holds them (``7 / float32(0.4)`` is
    17.49..., not 17.5)."""
    return _crop_box_of(h, w, attrs, uniforms(draws, _rrc_draws(attrs)).tolist())


def _crop_box_of(h: int, w: int, attrs, u: list) -> tuple[int, int, int, int]:
    """:func:`crop_box` of one sample's :func:`uniforms` as Python floats (the
    float32 draws, exactly): one image's arithmetic in numpy scalars cost as
    much as decoding a small JPEG."""
    smin, smax, rmin, rmax, lrmin, lrmax = _rrc_bounds(tuple(attrs["scale"]), tuple(attrs["ratio"]))
    area = float(h * w)
    for i in range(int(attrs["max_attempts"])):
        s = smin + u[2 * i] * (smax - smin)
        aspect = math.exp(lrmin + u[2 * i + 1] * (lrmax - lrmin))
        cw = round_half_away(math.sqrt(area * s * aspect))
        ch = max(round_half_away(cw / aspect), 1)     # from cw before its clamp, as MindSpore
        cw = max(cw, 1)
        if cw <= w and ch <= h:
            top = window_offset_of(u[-2], h - ch)
            left = window_offset_of(u[-1], w - cw)
            return top, left, ch, cw
    img_aspect = w / h
    if img_aspect < rmin:
        cw, ch = w, round_half_away(w / rmin)
    elif img_aspect > rmax:
        ch, cw = h, round_half_away(h * rmax)
    else:
        ch, cw = h, w
    ch, cw = max(min(ch, h), 1), max(min(cw, w), 1)
    return round_half_away((h - ch) / 2.0), round_half_away((w - cw) / 2.0), ch, cw


def _random_resized_crop(x: np.ndarray, attrs, draws) -> np.ndarray:
    return _random_resized_crop_of(x, attrs, uniforms(draws, _rrc_draws(attrs)).tolist())


def _random_resized_crop_of(x: np.ndarray, attrs, u: list) -> np.ndarray:
    """:func:`_random_resized_crop` of one sample's uniforms as Python floats."""
    h, w = x.shape[:2]
    if h == 0 or w == 0:
        raise ValueError(f"RandomResizedCrop: empty image of shape {x.shape}")
    top, left, ch, cw = _crop_box_of(h, w, attrs, u)
    window = x[top:top + ch, left:left + cw]
    oh, ow = attrs["size"]
    return resize_image(window, int(oh), int(ow), attrs["interpolation"])


_RRC_ATTRS = {"size": REQUIRED, "scale": [0.08, 1.0], "ratio": [3.0 / 4.0, 4.0 / 3.0],
              "interpolation": "linear", "max_attempts": 10}


def _infer_rrc(attrs, ins):
    image_dims("RandomResizedCrop", ins[0])
    h, w = attrs["size"]
    return [_image_type(ins[0], h, w)]


RANDOM_RESIZED_CROP = define(
    "vision.RandomResizedCrop", kind=MAP, family=FAMILY, attrs=dict(_RRC_ATTRS),
    operands=("image",), infer=_infer_rrc,
    traits=(Pure(), Random(_rrc_draws), OneChannelHW(), RowsAsList()),
    doc="random area/aspect window (2*max_attempts + 2 draws), resized to size")


# Each sample gets a window of its own size before the resize.
@RANDOM_RESIZED_CROP.host_sample
def _rrc_sample(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("RandomResizedCrop", x)
    return [_random_resized_crop(x, attrs, draws)]


def _crops(images, attrs, draws, op: str) -> list[np.ndarray]:
    """RandomResizedCrop of each image (an iterable: decoded as it is read),
    the draws made Python floats once; an [H, W] row as one channel."""
    u = uniforms(draws, _rrc_draws(attrs)).tolist()
    rows = []
    for i, x in enumerate(images):
        x = np.asarray(x)
        hw = x.ndim == 2        # OneChannelHW row by row: a list's rows have ranks of their own
        x = x[..., None] if hw else x
        _check_image_array(op, x)
        y = _random_resized_crop_of(x, attrs, u[i])
        rows.append(y[..., 0] if hw else y)
    return rows


# A chunk of decoded images of their own sizes (RowsAsList), or a batch of
# one size: one call.  Rows that do not stack (channels that differ) stay a
# list, as the engine keeps them.
@RANDOM_RESIZED_CROP.host_batch
def _rrc_batch(inputs, attrs, draws):
    images = inputs.image
    oh, ow = (int(v) for v in attrs["size"])
    if isinstance(images, np.ndarray) and len(images) == 0:
        return [np.empty((0, oh, ow, *images.shape[3:]), images.dtype)]
    rows = _crops(images, attrs, draws, "RandomResizedCrop")
    if all(r.shape == rows[0].shape and r.dtype == rows[0].dtype for r in rows):
        return [np.stack(rows)]
    return [rows]


def _infer_rcdr(attrs, ins):
    (t,) = _infer_decode(attrs, ins)
    h, w = attrs["size"]
    return [_image_type(t, h, w)]


RANDOM_CROP_DECODE_RESIZE = define(
    "vision.RandomCropDecodeResize", kind=MAP, family=FAMILY, attrs=dict(_RRC_ATTRS),
    operands=("data",), infer=_infer_rcdr, traits=(Pure(), Random(_rrc_draws), RowsAsList()),
    doc="Decode, then RandomResizedCrop (2*max_attempts + 2 draws)")


# One sample: encoded bytes in, a window of its own size resized.  The whole
# image is decoded at full scale: MindSpore's JpegCropAndDecode decodes only
# the window's rows and iMCU columns (libjpeg-turbo's skip/crop scanlines,
# which neither OpenCV nor Pillow expose), at scale 1 too, so its pixels are
# these.  A DCT-downscaled decode (libjpeg's 1/2, 1/4, 1/8) would be faster
# when the window shrinks 2x or more, but it changes pixels, not rounding.
@RANDOM_CROP_DECODE_RESIZE.host_sample
def _rcdr_sample(inputs, attrs, draws):
    return [_random_resized_crop(decode(inputs[0]), attrs, draws)]


# A chunk's file bytes (RowsAsList) in one call: the per-row work is then
# the decode and the resize, both in C (ImageFolder at 32: ~25 us of Python
# a row less than a call a row).  Decode gives 3 channels whatever the file.
@RANDOM_CROP_DECODE_RESIZE.host_batch
def _rcdr_batch(inputs, attrs, draws):
    oh, ow = (int(v) for v in attrs["size"])
    rows = _crops((decode(raw) for raw in inputs.data), attrs, draws, "RandomCropDecodeResize")
    return [np.stack(rows) if rows else np.empty((0, oh, ow, 3), np.uint8)]


# --- SlicePatches ------------------------------------------------------------------

def _patch_size(op, side, n, mode):
    if isinstance(side, int):
        if n > side:
            raise ValueError(f"{op}: cannot cut {side} pixels into {n} patches")
        return -(-side // n) if mode == "pad" else side // n
    return UNKNOWN


def _infer_slice(attrs, ins):
    t = ins[0]
    if t.rank == 2:   # HW
        h, w = t.shape
        lead = ()
    else:
        _, h, w, _ = image_dims("SlicePatches", t)
        lead = None
    nh, nw, mode = attrs["num_height"], attrs["num_width"], attrs["slice_mode"]
    ph = _patch_size("SlicePatches", h, nh, mode)
    pw = _patch_size("SlicePatches", w, nw, mode)
    out = TensorType(t.dtype, (ph, pw)) if lead == () else _image_type(t, ph, pw)
    return [out] * (nh * nw)


SLICE_PATCHES = define("vision.SlicePatches", kind=MAP, family=FAMILY,
                       operands=("image",), results=("*patches",), traits=(Pure(),),
                       attrs={"num_height": 1, "num_width": 1, "slice_mode": "pad",
                              "fill_value": 0},
                       infer=_infer_slice,
                       doc="num_height*num_width patches, row-major; pad: ceil sizes, "
                           "bottom/right filled; drop: floor sizes, the rest dropped")


def slice_patches(x: np.ndarray, attrs, batched: bool) -> list[np.ndarray]:
    nh, nw = int(attrs["num_height"]), int(attrs["num_width"])
    hax = 1 if batched else 0
    h, w = x.shape[hax], x.shape[hax + 1]
    ph = _patch_size("SlicePatches", h, nh, attrs["slice_mode"])
    pw = _patch_size("SlicePatches", w, nw, attrs["slice_mode"])
    if attrs["slice_mode"] == "pad" and (ph * nh != h or pw * nw != w):
        shape = list(x.shape)
        shape[hax], shape[hax + 1] = ph * nh, pw * nw
        padded = np.full(shape, attrs["fill_value"], dtype=x.dtype)
        padded[(slice(None),) * hax + (slice(0, h), slice(0, w))] = x
        x = padded
    lead = (slice(None),) * hax
    return [np.ascontiguousarray(x[lead + (slice(i * ph, (i + 1) * ph), slice(j * pw, (j + 1) * pw))])
            for i in range(nh) for j in range(nw)]


# A sample may be an HW image, which the NHWC batch rule does not take.
@SLICE_PATCHES.host_sample
def _slice_sample(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    if x.ndim not in (2, 3):
        raise ValueError(f"SlicePatches: expected an HW or HWC image, got an array of shape {x.shape}")
    return slice_patches(x, attrs, batched=False)


@SLICE_PATCHES.host_batch
def _slice_batch(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("SlicePatches", x, batched=True)
    return slice_patches(x, attrs, batched=True)


# The fixed-parameter tone, geometry and region ops and their random forms
# (vision.Invert, vision.Rotate ...): their own module, the same dialect.
from . import vision_tone  # noqa: E402,F401
# AutoAugment, RandAugment, TrivialAugmentWide and RandomErasing: theirs.
from . import vision_augment  # noqa: E402,F401
