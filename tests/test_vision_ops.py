"""Host semantics of the data transforms (shared/OPS.md), their type
inference, and the eager user API (``irc.dataset.vision`` / ``.transforms``)."""
from __future__ import annotations

import colorsys
import io
import math
import time

import numpy as np
import pytest
from PIL import Image, ImageEnhance

import irc
import irc.dataset.transforms as transforms
import irc.dataset.vision as vision
from irc.backends.onnx_rules import rule_for
from irc.dataset import config
from irc.dialects import vision as V
from irc.ir import registry
from irc.ir.types import TensorType

RNG = np.random.default_rng(20240601)


def img(h=17, w=23, c=3, seed=0, dtype=np.uint8):
    return np.random.default_rng(seed).integers(0, 256, (h, w, c)).astype(dtype)


def op(name):
    return registry.get(name)


def sample(name, x, attrs=None, draws=None):
    o = op(name)
    return o.host_sample_fn([x], o.normalize_attrs(attrs or {}), draws)


def batch(name, x, attrs=None, draws=None):
    o = op(name)
    return o.host_batch_fn([x], o.normalize_attrs(attrs or {}), draws)


COLOR_ID = {"brightness": [1.0, 1.0], "contrast": [1.0, 1.0], "saturation": [1.0, 1.0], "hue": [0.0, 0.0]}


def color(x, **fixed):
    """RandomColorAdjust with every enabled component's range pinned to one factor."""
    attrs = dict(COLOR_ID, **{k: [v, v] for k, v in fixed.items()})
    return sample("vision.RandomColorAdjust", x, attrs, np.zeros(4))[0]


# =============================================================================
# the eight offloadable operators
# =============================================================================

def test_rescale_formula():
    x = img()
    (y,) = sample("vision.Rescale", x, {"rescale": 1 / 255, "shift": -0.25})
    assert y.dtype == np.float32
    want = x.astype(np.float32) * np.float32(1 / 255) + np.float32(-0.25)
    np.testing.assert_array_equal(y, want)
    assert abs(float(y[0, 0, 0]) - (x[0, 0, 0] / 255 - 0.25)) < 1e-6


def test_normalize_hwc_and_chw():
    x = img(5, 6, 3)
    mean, std = [10.0, 20.0, 30.0], [2.0, 4.0, 8.0]
    (y,) = sample("vision.Normalize", x, {"mean": mean, "std": std})
    assert y.dtype == np.float32 and y.shape == (5, 6, 3)
    for c in range(3):
        np.testing.assert_allclose(y[..., c], (x[..., c].astype(np.float64) - mean[c]) / std[c], rtol=1e-6)
    chw = np.ascontiguousarray(x.transpose(2, 0, 1))
    (z,) = sample("vision.Normalize", chw, {"mean": mean, "std": std, "is_hwc": False})
    assert z.shape == (3, 5, 6)
    np.testing.assert_array_equal(z, y.transpose(2, 0, 1))
    # channel count checked by inference
    with pytest.raises(ValueError, match="3 values"):
        op("vision.Normalize").infer(op("vision.Normalize").normalize_attrs({"mean": mean, "std": std}),
                                     [TensorType("u8", (5, 6, 4))])


def test_hwc2chw():
    x = img(4, 5, 3)
    (y,) = sample("vision.HWC2CHW", x)
    assert y.shape == (3, 4, 5) and y.dtype == np.uint8
    assert y[2, 3, 1] == x[3, 1, 2]
    (yb,) = batch("vision.HWC2CHW", np.stack([x, x]))
    assert yb.shape == (2, 3, 4, 5)


def test_typecast_truncates_and_dtype_spellings():
    x = np.array([-2.7, -0.5, 0.5, 2.7, 255.9], np.float32)
    (y,) = sample("transforms.TypeCast", x, {"dtype": "i32"})
    assert y.dtype == np.int32 and y.tolist() == [-2, 0, 0, 2, 255]
    (u,) = sample("transforms.TypeCast", np.array([3.99, 0.2], np.float64), {"dtype": "u8"})
    assert u.dtype == np.uint8 and u.tolist() == [3, 0]

    class Named:
        name = "int32"
    for spelling in (irc.int32, np.int32, np.dtype("int32"), "int32", "i32", Named()):
        assert transforms.TypeCast(spelling).attrs == {"dtype": "i32"}
    assert transforms.TypeCast(irc.float32)(np.int64(7)).dtype == np.float32
    with pytest.raises(TypeError, match="TypeCast"):
        transforms.TypeCast("not-a-dtype")


@pytest.mark.parametrize("name,axis", [("vision.RandomHorizontalFlip", 1), ("vision.RandomVerticalFlip", 0)])
def test_flip_follows_draw(name, axis):
    x = img(6, 7, 3)
    (a,) = sample(name, x, {"prob": 0.3}, np.array([0.29]))
    np.testing.assert_array_equal(a, np.flip(x, axis))
    (b,) = sample(name, x, {"prob": 0.3}, np.array([0.31]))
    np.testing.assert_array_equal(b, x)
    # a float64 draw that rounds to 1.0 in float32 still flips at prob=1, never at prob=0
    (c,) = sample(name, x, {"prob": 1.0}, np.array([1 - 1e-12]))
    np.testing.assert_array_equal(c, np.flip(x, axis))
    (d,) = sample(name, x, {"prob": 0.0}, np.array([0.0]))
    np.testing.assert_array_equal(d, x)


@pytest.mark.parametrize("cls,axis", [(vision.RandomHorizontalFlip, 1), (vision.RandomVerticalFlip, 0)])
def test_flip_rate_matches_prob(cls, axis):
    config.set_seed(7)
    x = img(3, 4, 1)
    flip = cls(prob=0.25)
    n = 2000
    flipped = sum(bool(np.array_equal(flip(x), np.flip(x, axis))) for _ in range(n))
    # binomial(2000, 0.25): sd ~ 19.4; 5 sd either side
    assert abs(flipped - 0.25 * n) < 100


# --- RandomColorAdjust -------------------------------------------------------------

def _gray(x):
    """OpenCV's (MindSpore's) uint8 gray: 0.299 R + 0.587 G + 0.114 B in 15-bit fixed point, rounded."""
    x = x.astype(np.int64)
    return ((x[..., 0] * 9798 + x[..., 1] * 19235 + x[..., 2] * 3735 + (1 << 14)) >> 15).astype(np.float64)


@pytest.mark.parametrize("f", [0.0, 0.4, 1.3, 2.5])
def test_brightness_formula_and_pil(f):
    x = img(20, 24, 3, seed=1)
    y = color(x, brightness=f)
    want = np.clip(np.rint(np.clip(x.astype(np.float32) * np.float32(f), 0, 255)), 0, 255)
    np.testing.assert_array_equal(y, want.astype(np.uint8))
    pil = np.asarray(ImageEnhance.Brightness(Image.fromarray(x)).enhance(f))
    assert np.abs(pil.astype(int) - y).max() <= 1


def _image_with_mean_fraction(lo, hi):
    """A test image whose gray mean has its fractional part in [lo, hi)."""
    for seed in range(100):
        x = img(20, 24, 3, seed=seed)
        frac = float(_gray(x).astype(np.float64).mean()) % 1.0
        if lo <= frac < hi:
            return x
    raise AssertionError("no such image")


@pytest.mark.parametrize("f", [0.0, 0.5, 1.6])
@pytest.mark.parametrize("frac", [(0.05, 0.45), (0.55, 0.95)])
def test_contrast_formula_and_pil(f, frac):
    x = _image_with_mean_fraction(*frac)
    y = color(x, contrast=f)
    m = math.floor(float(_gray(x).mean()) + 0.5)   # PIL and MindSpore: int(mean + 0.5)
    want = np.rint(np.clip(m + np.float32(f) * (x.astype(np.float32) - m), 0, 255)).astype(np.uint8)
    # the same maths; float32 rounding (OpenCV's addWeighted) may move a tie by one
    assert np.abs(y.astype(int) - want).max() <= 1 and (y == want).mean() > 0.98
    pil = np.asarray(ImageEnhance.Contrast(Image.fromarray(x)).enhance(f))
    assert np.abs(pil.astype(int) - y).max() <= 1


@pytest.mark.parametrize("f", [0.0, 0.5, 1.8])
def test_saturation_formula_and_pil(f):
    x = img(20, 24, 3, seed=3)
    y = color(x, saturation=f)
    g = _gray(x)[..., None]
    want = np.rint(np.clip(g + f * (x - g), 0, 255)).astype(np.uint8)
    # the same maths; float32 rounding (OpenCV's addWeighted) may move a tie by one
    assert np.abs(y.astype(int) - want).max() <= 1 and (y == want).mean() > 0.98
    pil = np.asarray(ImageEnhance.Color(Image.fromarray(x)).enhance(f))
    assert np.abs(pil.astype(int) - y).max() <= 1
    if f == 0.0:   # fully desaturated: all channels equal the (rounded) gray
        assert (y[..., 0] == y[..., 1]).all() and (y[..., 1] == y[..., 2]).all()


@pytest.mark.parametrize("h", [-0.5, -0.2, 0.05, 0.33, 0.5])
def test_hue_against_colorsys(h):
    x = img(9, 11, 3, seed=4)
    y = color(x, hue=h)
    want = np.empty_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            r, g, b = (float(v) / 255 for v in x[i, j])
            hh, s, v = colorsys.rgb_to_hsv(r, g, b)
            rgb = colorsys.hsv_to_rgb((hh + h) % 1.0, s, v)
            want[i, j] = [min(255, max(0, round(c * 255))) for c in rgb]
    assert np.abs(want.astype(int) - y).max() <= 1
    assert (y != x).any(-1).mean() > 0.5   # the shift did something


def test_color_order_and_identity():
    x = img(12, 10, 3, seed=5)
    # identity ranges do nothing at all, whatever the draws
    y = sample("vision.RandomColorAdjust", x, {}, np.array([0.9, 0.1, 0.5, 0.7]))[0]
    np.testing.assert_array_equal(y, x)
    # the fixed order brightness -> contrast -> saturation -> hue, rounding between
    both = color(x, brightness=1.4, saturation=0.3)
    step = color(color(x, brightness=1.4), saturation=0.3)
    np.testing.assert_array_equal(both, step)
    other = color(color(x, saturation=0.3), brightness=1.4)
    assert not np.array_equal(both, other)


def test_color_factor_uses_draws():
    x = img(8, 8, 3, seed=6)
    attrs = dict(COLOR_ID, brightness=[0.5, 1.5])
    y = sample("vision.RandomColorAdjust", x, attrs, np.array([0.25, 0.9, 0.9, 0.9]))[0]
    np.testing.assert_array_equal(y, color(x, brightness=0.75))


# --- RandomSharpness ---------------------------------------------------------------

def _sharp_reference(x, f):
    """blur + f * (x - blur) in float64, the blur a uint8 image (OpenCV's filter2D)."""
    x = x.astype(np.float64)
    k = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]]) / 13.0
    blur = x.copy()
    for i in range(1, x.shape[0] - 1):
        for j in range(1, x.shape[1] - 1):
            for c in range(x.shape[2]):
                blur[i, j, c] = np.rint((x[i - 1:i + 2, j - 1:j + 2, c] * k).sum())
    return np.clip(blur + f * (x - blur), 0, 255)


@pytest.mark.parametrize("f", [0.0, 0.6, 1.9])
def test_sharpness_formula_border_and_channels(f):
    x = img(9, 12, 3, seed=7)
    y = sample("vision.RandomSharpness", x, {"degrees": [f, f]}, np.array([0.5]))[0]
    assert y.dtype == np.uint8
    assert np.abs(y.astype(float) - _sharp_reference(x, f)).max() <= 0.5 + 1e-3
    # outer ring unchanged
    np.testing.assert_array_equal(y[0], x[0])
    np.testing.assert_array_equal(y[-1], x[-1])
    np.testing.assert_array_equal(y[:, 0], x[:, 0])
    np.testing.assert_array_equal(y[:, -1], x[:, -1])
    # per channel: changing channel 1 leaves channels 0 and 2 of the output alone
    x2 = x.copy()
    x2[..., 1] = 255 - x2[..., 1]
    y2 = sample("vision.RandomSharpness", x2, {"degrees": [f, f]}, np.array([0.5]))[0]
    np.testing.assert_array_equal(y2[..., [0, 2]], y[..., [0, 2]])
    pil = np.asarray(ImageEnhance.Sharpness(Image.fromarray(x)).enhance(f))
    assert np.abs(pil.astype(int) - y).max() <= 1


def test_sharpness_factor_from_draw():
    x = img(6, 6, 1, seed=8)
    y = sample("vision.RandomSharpness", x, {"degrees": [0.0, 2.0]}, np.array([0.75]))[0]
    z = sample("vision.RandomSharpness", x, {"degrees": [1.5, 1.5]}, np.array([0.0]))[0]
    np.testing.assert_array_equal(y, z)


# =============================================================================
# Resize
# =============================================================================

def _cv_linear_coords(sin, sout, clamp):
    """OpenCV's source index and fixed-point weights for one output index."""
    scale = 1.0 / (sout / sin)
    out = []
    for d in range(sout):
        f = float(np.float32((d + 0.5) * scale - 0.5))
        s = math.floor(f)
        f = float(np.float32(f - s))
        if clamp:
            if s < 0:
                s, f = 0, 0.0
            if s >= sin - 1:
                s, f = sin - 1, 0.0
        w0 = int(np.rint(np.float32(1.0 - f) * np.float32(2048)))
        w1 = int(np.rint(np.float32(f) * np.float32(2048)))
        out.append((min(max(s, 0), sin - 1), min(max(s + 1, 0), sin - 1), w0, w1))
    return out


def _cv_linear_reference(x, oh, ow):
    """Per-pixel OpenCV INTER_LINEAR for uint8 (no antialias): an int horizontal
    pass with 11-bit weights, and the vertical pass as OpenCV rounds it."""
    h, w, c = x.shape
    ys = _cv_linear_coords(h, oh, clamp=False)
    xs = _cv_linear_coords(w, ow, clamp=True)
    out = np.zeros((oh, ow, c), np.uint8)
    for i, (y0, y1, b0, b1) in enumerate(ys):
        for j, (x0, x1, a0, a1) in enumerate(xs):
            for k in range(c):
                s0 = int(x[y0, x0, k]) * a0 + int(x[y0, x1, k]) * a1
                s1 = int(x[y1, x0, k]) * a0 + int(x[y1, x1, k]) * a1
                v = ((((s0 >> 4) * b0) >> 16) + (((s1 >> 4) * b1) >> 16) + 2) >> 2
                out[i, j, k] = min(max(v, 0), 255)
    return out


def _bilinear_float(x, oh, ow):
    """Textbook half-pixel bilinear (no antialias) in float64, rounded."""
    h, w, c = x.shape
    out = np.zeros((oh, ow, c))
    for i in range(oh):
        sy = min(max((i + 0.5) * h / oh - 0.5, 0), h - 1)
        y0 = int(math.floor(sy)); y1 = min(y0 + 1, h - 1); fy = sy - y0
        for j in range(ow):
            sx = min(max((j + 0.5) * w / ow - 0.5, 0), w - 1)
            x0 = int(math.floor(sx)); x1 = min(x0 + 1, w - 1); fx = sx - x0
            top = x[y0, x0] * (1 - fx) + x[y0, x1] * fx
            bot = x[y1, x0] * (1 - fx) + x[y1, x1] * fx
            out[i, j] = top * (1 - fy) + bot * fy
    return np.clip(np.rint(out), 0, 255)


@pytest.mark.parametrize("shape,size", [((28, 28, 1), (32, 32)),     # the LeNet case, up
                                        ((13, 17, 3), (5, 7)),       # down, non-integer
                                        ((8, 12, 3), (4, 6)),        # exactly 2x down
                                        ((6, 5, 2), (11, 19)),       # up, non-integer
                                        ((40, 9, 1), (9, 40)),
                                        ((3, 200, 3), (5, 150))])   # wide rows: the gather path
def test_resize_linear_matches_opencv_reference(shape, size):
    x = img(*shape, seed=sum(shape))
    (y,) = sample("vision.Resize", x, {"size": list(size)})
    assert y.shape == (*size, shape[2]) and y.dtype == np.uint8
    np.testing.assert_array_equal(y, _cv_linear_reference(x, *size))
    # and it is bilinear without antialiasing (not PIL's filtered downscale)
    assert np.abs(y.astype(int) - _bilinear_float(x.astype(np.float64), *size)).max() <= 1


def test_resize_linear_is_not_antialiased():
    # a 1-pixel checkerboard shrunk 3x: half-pixel centres land exactly on
    # source pixels (3i + 1), so bilinear without antialias keeps a 0/255
    # checkerboard where an antialiasing filter (PIL's) gives flat grey
    x = ((np.indices((15, 15)).sum(0) % 2) * 255).astype(np.uint8)[..., None]
    (y,) = sample("vision.Resize", x, {"size": [5, 5]})
    np.testing.assert_array_equal(y[..., 0], ((np.indices((5, 5)).sum(0) % 2) * 255).astype(np.uint8))
    pil = np.asarray(Image.fromarray(x[..., 0]).resize((5, 5), Image.BILINEAR)).astype(int)
    assert np.abs(pil - 128).max() < 60


def test_resize_against_cv2_when_available():
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(3)
    for _ in range(20):
        h, w, oh, ow = (int(v) for v in rng.integers(2, 60, 4))
        x = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        for name, flag in (("linear", cv2.INTER_LINEAR), ("nearest", cv2.INTER_NEAREST)):
            (y,) = sample("vision.Resize", x, {"size": [oh, ow], "interpolation": name})
            np.testing.assert_array_equal(y, cv2.resize(x, (ow, oh), interpolation=flag))


def test_resize_nearest_and_bicubic():
    x = img(5, 7, 3, seed=9)
    (y,) = sample("vision.Resize", x, {"size": [10, 3], "interpolation": "nearest"})
    for i in range(10):
        for j in range(3):
            si = min(int(math.floor(i * 5 / 10)), 4)
            sj = min(int(math.floor(j * 7 / 3)), 6)
            np.testing.assert_array_equal(y[i, j], x[si, sj])
    flat = np.full((6, 9, 3), 77, np.uint8)
    for interp in ("bicubic", "linear", "nearest"):
        (z,) = sample("vision.Resize", flat, {"size": [13, 4], "interpolation": interp})
        assert z.shape == (13, 4, 3) and (z == 77).all()
    for size in ([11, 13], [3, 4]):
        (c,) = sample("vision.Resize", x, {"size": size, "interpolation": "bicubic"})
        assert np.abs(c.astype(int) - _bicubic_float(x.astype(float), *size)).max() <= 1


def _bicubic_float(x, oh, ow):
    """OpenCV INTER_CUBIC in float64: Keys' kernel with A = -0.75, half-pixel
    centres, taps clamped to the border."""
    def kernel(t):
        a = -0.75
        t = abs(t)
        if t <= 1:
            return (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1
        if t < 2:
            return a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a
        return 0.0

    def taps(sin, sout, d):
        f = (d + 0.5) * sin / sout - 0.5
        s = math.floor(f)
        return [(min(max(s + k, 0), sin - 1), kernel(f - (s + k))) for k in (-1, 0, 1, 2)]
    h, w, c = x.shape
    out = np.zeros((oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            out[i, j] = sum(wy * wx * x[yy, xx] for yy, wy in taps(h, oh, i) for xx, wx in taps(w, ow, j))
    return np.clip(np.rint(out), 0, 255)


def test_resize_float_input_and_int_size():
    x = img(10, 16, 3, seed=10).astype(np.float32) / 255
    (y,) = sample("vision.Resize", x, {"size": [5, 8]})
    assert y.dtype == np.float32
    # 2x down half-pixel bilinear = mean of 2x2 blocks
    np.testing.assert_allclose(y, x.reshape(5, 2, 8, 2, 3).mean(axis=(1, 3)), atol=1e-6)
    # int size: the shorter side
    (a,) = sample("vision.Resize", img(28, 40, 1), {"size": 14})
    assert a.shape == (14, 20, 1)
    (b,) = sample("vision.Resize", img(45, 30, 1), {"size": 20})
    assert b.shape == (30, 20, 1)
    t = op("vision.Resize").infer(op("vision.Resize").normalize_attrs({"size": 14}), [TensorType("u8", (28, 40, 1))])
    assert t == [TensorType("u8", (14, 20, 1))]
    t = op("vision.Resize").infer(op("vision.Resize").normalize_attrs({"size": 14}), [TensorType("u8", ("?", "?", 3))])
    assert t == [TensorType("u8", ("?", "?", 3))]


def test_resize_batch_speed():
    x = RNG.integers(0, 256, (32, 28, 28, 1), dtype=np.uint8)
    attrs = op("vision.Resize").normalize_attrs({"size": [32, 32]})
    fn = op("vision.Resize").host_batch_fn
    fn([x], attrs, None)
    n = 200
    t = time.perf_counter()
    for _ in range(n):
        fn([x], attrs, None)
    per_call = (time.perf_counter() - t) / n
    assert per_call < 0.005, f"Resize 28->32 on 32 images took {per_call * 1e6:.0f} us"


# =============================================================================
# crops, padding, patches
# =============================================================================

def test_center_crop():
    x = img(10, 9, 3, seed=11)
    (y,) = sample("vision.CenterCrop", x, {"size": [4, 5]})
    np.testing.assert_array_equal(y, x[3:7, 2:7])
    (z,) = sample("vision.CenterCrop", img(3, 3, 1), {"size": [5, 5]})   # padded with zeros
    assert z.shape == (5, 5, 1) and z[0].sum() == 0 and z[:, 0].sum() == 0


def test_random_crop_window_from_draws():
    x = img(10, 12, 3, seed=12)
    attrs = {"size": [4, 5]}
    (a,) = sample("vision.RandomCrop", x, attrs, np.array([0.0, 0.0]))
    np.testing.assert_array_equal(a, x[:4, :5])
    (b,) = sample("vision.RandomCrop", x, attrs, np.array([0.999999, 0.999999]))
    np.testing.assert_array_equal(b, x[6:, 7:])
    (c,) = sample("vision.RandomCrop", x, attrs, np.array([0.5, 0.25]))   # floor(0.5*7)=3, floor(0.25*8)=2
    np.testing.assert_array_equal(c, x[3:7, 2:7])
    # padding (left, top, right, bottom) with a fill value, window at the top-left corner
    (d,) = sample("vision.RandomCrop", x, {"size": [4, 5], "padding": [1, 2, 3, 4], "fill_value": 9},
                  np.array([0.0, 0.0]))
    assert (d[:2] == 9).all() and (d[:, :1] == 9).all()
    np.testing.assert_array_equal(d[2:, 1:], x[:2, :4])
    with pytest.raises(ValueError, match="larger"):
        sample("vision.RandomCrop", x, {"size": [20, 5]}, np.array([0.0, 0.0]))
    (e,) = sample("vision.RandomCrop", x, {"size": [14, 12], "pad_if_needed": True}, np.array([0.5, 0.5]))
    assert e.shape == (14, 12, 3)


def test_pad_forms_and_fill():
    x = img(3, 4, 3, seed=13)
    (a,) = sample("vision.Pad", x, {"padding": [1, 2, 3, 4], "fill_value": [1, 2, 3]})
    assert a.shape == (3 + 2 + 4, 4 + 1 + 3, 3)
    np.testing.assert_array_equal(a[2:5, 1:5], x)
    assert (a[0, 0] == [1, 2, 3]).all() and (a[-1, -1] == [1, 2, 3]).all()
    (e,) = sample("vision.Pad", x, {"padding": [2, 2, 2, 2], "padding_mode": "edge"})
    np.testing.assert_array_equal(e[0, 0], x[0, 0])
    assert vision.Pad(3).attrs["padding"] == [3, 3, 3, 3]
    assert vision.Pad((1, 2)).attrs["padding"] == [1, 2, 1, 2]


def test_slice_patches_pad_and_drop():
    x = np.arange(5 * 7 * 1, dtype=np.uint8).reshape(5, 7, 1)
    pad = sample("vision.SlicePatches", x, {"num_height": 2, "num_width": 3, "slice_mode": "pad",
                                            "fill_value": 200})
    assert len(pad) == 6 and all(p.shape == (3, 3, 1) for p in pad)     # ceil(5/2), ceil(7/3)
    np.testing.assert_array_equal(pad[0], x[0:3, 0:3])
    np.testing.assert_array_equal(pad[1], x[0:3, 3:6])                  # row-major
    np.testing.assert_array_equal(pad[3][:2], x[3:5, 0:3])
    assert (pad[3][2] == 200).all()                                     # bottom filled
    assert (pad[5][:, 1:] == 200).all() and (pad[5][:2, 0] == x[3:5, 6]).all()
    drop = sample("vision.SlicePatches", x, {"num_height": 2, "num_width": 3, "slice_mode": "drop"})
    assert len(drop) == 6 and all(p.shape == (2, 2, 1) for p in drop)   # floor(5/2), floor(7/3)
    np.testing.assert_array_equal(drop[4], x[2:4, 2:4])
    with pytest.raises(ValueError, match="patches"):
        sample("vision.SlicePatches", x, {"num_height": 6, "num_width": 1})
    with pytest.raises(ValueError, match="num_height"):
        vision.SlicePatches(0, 2)
    with pytest.raises(ValueError, match="num_width"):
        vision.SlicePatches(1, 0)
    t = op("vision.SlicePatches").infer(op("vision.SlicePatches").normalize_attrs({"num_height": 2, "num_width": 3}),
                                        [TensorType("u8", (5, 7, 3))])
    assert t == [TensorType("u8", (3, 3, 3))] * 6


def test_random_resized_crop_and_decode_variant():
    x = img(30, 40, 3, seed=14)
    attrs = {"size": [8, 10], "max_attempts": 10}
    n = op("vision.RandomResizedCrop").num_draws(op("vision.RandomResizedCrop").normalize_attrs(attrs))
    assert n == 22
    d = np.random.default_rng(1).random(n)
    (y,) = sample("vision.RandomResizedCrop", x, attrs, d)
    assert y.shape == (8, 10, 3)
    top, left, ch, cw = V.crop_box(30, 40, op("vision.RandomResizedCrop").normalize_attrs(attrs), d)
    np.testing.assert_array_equal(y, V.resize_batch(x[None, top:top + ch, left:left + cw], 8, 10)[0])
    # the whole image when scale and ratio allow only that
    whole = {"size": [15, 20], "scale": [1.0, 1.0], "ratio": [4 / 3, 4 / 3]}
    (z,) = sample("vision.RandomResizedCrop", x, whole, np.zeros(22))
    np.testing.assert_array_equal(z, V.resize_batch(x[None], 15, 20)[0])
    # fallback: no attempt can fit (ratio far from the image's): centre crop, clamped ratio
    fb = {"size": [5, 5], "scale": [0.9, 1.0], "ratio": [10.0, 12.0]}
    # (image aspect 4/3 < 10: full width, height round(40 / 10), centred)
    assert V.crop_box(30, 40, op("vision.RandomResizedCrop").normalize_attrs(fb), np.zeros(22)) == (13, 0, 4, 40)
    # RandomCropDecodeResize == Decode then RandomResizedCrop with the same draws
    buf = io.BytesIO()
    Image.fromarray(x).save(buf, format="PNG")
    (w,) = sample("vision.RandomCropDecodeResize", np.frombuffer(buf.getvalue(), np.uint8), attrs, d)
    np.testing.assert_array_equal(w, y)


def test_random_crop_decode_resize_batch_is_its_rows():
    """A chunk's rows in a list (RowsAsList) give the per-sample results,
    stacked: JPEG (OpenCV), grey JPEG, CMYK JPEG and PNG (Pillow), sizes
    that take an attempt, the fallback, or no resize at all."""
    files = []
    for k, (h, w, mode, fmt) in enumerate([(30, 40, "RGB", "JPEG"), (45, 17, "L", "JPEG"),
                                           (20, 26, "CMYK", "JPEG"), (9, 50, "RGB", "PNG"),
                                           (8, 10, "RGB", "PNG")]):
        x = img(h, w, 3, seed=40 + k)
        buf = io.BytesIO()
        pic = Image.fromarray(x)
        (pic.convert(mode) if mode != "RGB" else pic).save(buf, format=fmt)
        files.append(buf.getvalue())
    o = op("vision.RandomCropDecodeResize")
    assert o.has_trait(V.RowsAsList)
    for attrs in ({"size": [8, 10]}, {"size": [8, 10], "scale": [1.0, 1.0], "ratio": [5 / 4, 5 / 4]},
                  {"size": [5, 5], "scale": [0.9, 1.0], "ratio": [10.0, 12.0]}):
        a = o.normalize_attrs(attrs)
        d = np.random.default_rng(2).random((len(files), o.num_draws(a)))
        (stacked,) = o.host_batch_fn([files], a, d)
        rows = [o.host_sample_fn([f], a, d[i])[0] for i, f in enumerate(files)]
        assert stacked.shape == (len(files), *rows[0].shape) and stacked.dtype == np.uint8
        np.testing.assert_array_equal(stacked, np.stack(rows))


def test_random_resized_crop_batch_is_its_rows():
    """Decoded images of their own sizes in a list (RowsAsList), [H, W]
    ones among them, or one batch array: the per-sample windows, stacked;
    rows whose channels differ stay a list."""
    o = op("vision.RandomResizedCrop")
    a = o.normalize_attrs({"size": [6, 7]})
    images = [img(30, 40, 3, seed=50), img(9, 31, 3, seed=51), img(6, 7, 3, seed=52)]
    d = np.random.default_rng(3).random((3, o.num_draws(a)))
    rows = [o.host_sample_fn([x], a, d[i])[0] for i, x in enumerate(images)]
    (stacked,) = o.host_batch_fn([images], a, d)
    np.testing.assert_array_equal(stacked, np.stack(rows))
    grey = [x[..., 0] for x in images]
    (flat,) = o.host_batch_fn([grey], a, d)
    assert flat.shape == (3, 6, 7)
    np.testing.assert_array_equal(flat, np.stack([o.host_sample_fn([x], a, d[i])[0] for i, x in enumerate(grey)]))
    (mixed,) = o.host_batch_fn([[images[0], grey[1]]], a, d[:2])
    assert isinstance(mixed, list) and mixed[0].shape == (6, 7, 3) and mixed[1].shape == (6, 7)
    same = np.stack([img(12, 10, 3, seed=k) for k in range(3)])
    (b,) = o.host_batch_fn([same], a, d)
    np.testing.assert_array_equal(b, np.stack([o.host_sample_fn([x], a, d[i])[0] for i, x in enumerate(same)]))
    (none,) = o.host_batch_fn([same[:0]], a, d[:0])
    assert none.shape == (0, 6, 7, 3)


# =============================================================================
# Decode, OneHot, Duplicate
# =============================================================================

def test_decode_png_and_jpeg():
    x = img(12, 9, 3, seed=15)
    png = io.BytesIO()
    Image.fromarray(x).save(png, format="PNG")
    (y,) = sample("vision.Decode", np.frombuffer(png.getvalue(), np.uint8))
    np.testing.assert_array_equal(y, x)
    (y2,) = sample("vision.Decode", np.array(png.getvalue(), dtype=object))
    np.testing.assert_array_equal(y2, x)
    smooth = np.clip(np.indices((16, 16)).sum(0)[..., None] * 8 + np.array([0, 30, 60]), 0, 255).astype(np.uint8)
    jpg = io.BytesIO()
    Image.fromarray(smooth).save(jpg, format="JPEG", quality=95)
    j = vision.Decode()(jpg.getvalue())
    assert j.shape == (16, 16, 3) and j.dtype == np.uint8
    assert np.abs(j.astype(int) - smooth).mean() < 3
    gray = io.BytesIO()
    Image.fromarray(x[..., 0]).save(gray, format="PNG")
    (g,) = sample("vision.Decode", np.frombuffer(gray.getvalue(), np.uint8))
    assert g.shape == (12, 9, 3) and (g[..., 2] == x[..., 0]).all()
    with pytest.raises(ValueError, match="Decode"):
        vision.Decode()(b"not an image")
    assert op("vision.Decode").infer({}, [TensorType("bytes", ())]) == [TensorType("u8", ("?", "?", 3))]


def test_onehot_and_duplicate():
    (y,) = sample("transforms.OneHot", np.int32(3), {"num_classes": 5})
    assert y.tolist() == [0, 0, 0, 1, 0] and y.dtype == np.int32
    (b,) = batch("transforms.OneHot", np.array([0, 4, 2], np.int64), {"num_classes": 5})
    assert b.shape == (3, 5) and b.argmax(1).tolist() == [0, 4, 2]
    (s,) = sample("transforms.OneHot", np.int32(1), {"num_classes": 4, "smoothing_rate": 0.2})
    np.testing.assert_allclose(s, [0.05, 0.85, 0.05, 0.05], rtol=1e-6)
    with pytest.raises(ValueError, match="outside"):
        sample("transforms.OneHot", np.int32(5), {"num_classes": 5})
    x = img(3, 3, 3)
    a, c = transforms.Duplicate()(x)
    np.testing.assert_array_equal(a, x)
    np.testing.assert_array_equal(c, x)
    assert op("transforms.Duplicate").infer({}, [TensorType("u8", (3, 3, 3))]) == [TensorType("u8", (3, 3, 3))] * 2
    assert op("transforms.OneHot").infer({"num_classes": 10, "smoothing_rate": 0.0},
                                         [TensorType("i32", ("N",))]) == [TensorType("i32", ("N", 10))]


# =============================================================================
# batch == stacked samples, inference on HWC and NHWC
# =============================================================================

BATCHABLE = [
    ("vision.Rescale", {"rescale": 0.5, "shift": 1.0}),
    ("vision.Normalize", {"mean": [100, 110, 120], "std": [50, 60, 70]}),
    ("vision.HWC2CHW", {}),
    ("vision.RandomHorizontalFlip", {"prob": 0.5}),
    ("vision.RandomVerticalFlip", {"prob": 0.5}),
    ("vision.RandomColorAdjust", {"brightness": [0.5, 1.5], "contrast": [0.5, 1.5],
                                  "saturation": [0.5, 1.5], "hue": [-0.3, 0.3]}),
    ("vision.RandomSharpness", {"degrees": [0.1, 1.9]}),
    ("vision.Resize", {"size": [9, 14]}),
    ("vision.Resize", {"size": [9, 14], "interpolation": "bicubic"}),
    ("vision.Resize", {"size": 5, "interpolation": "nearest"}),
    ("vision.CenterCrop", {"size": [5, 6]}),
    ("vision.Pad", {"padding": [1, 0, 2, 3], "fill_value": 7}),
    ("vision.RandomCrop", {"size": [6, 6], "padding": [2, 2, 2, 2]}),
    ("vision.SlicePatches", {"num_height": 2, "num_width": 2}),
    ("transforms.TypeCast", {"dtype": "f16"}),
    ("transforms.Duplicate", {}),
]


@pytest.mark.parametrize("name,attrs", BATCHABLE, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BATCHABLE)])
def test_host_batch_equals_stacked_samples(name, attrs):
    o = op(name)
    attrs = o.normalize_attrs(attrs)
    xb = np.random.default_rng(16).integers(0, 256, (6, 11, 13, 3)).astype(np.uint8)
    k = o.num_draws(attrs)
    draws = np.random.default_rng(17).random((6, k)) if k else None
    got = o.host_batch_fn([xb], attrs, draws)
    per = [o.host_sample_fn([xb[i]], attrs, None if draws is None else draws[i]) for i in range(6)]
    assert len(got) == len(per[0])
    for j, g in enumerate(got):
        want = np.stack([p[j] for p in per])
        assert g.dtype == want.dtype
        np.testing.assert_array_equal(g, want)
    # inference agrees with the results, per sample and batched
    (t,) = o.infer(attrs, [TensorType.of(xb[0])])[:1]
    assert t == TensorType.of(per[0][0])
    (tb,) = o.infer(attrs, [TensorType("u8", ("N", 11, 13, 3))])[:1]
    assert tb == TensorType(t.dtype, ("N", *t.shape))


def test_offloadable_and_draw_counts():
    offloadable = {n for n, o in registry.all_ops().items() if o.offloadable}
    assert {"vision.Rescale", "vision.Normalize", "vision.HWC2CHW", "transforms.TypeCast",
            "vision.RandomHorizontalFlip", "vision.RandomVerticalFlip", "vision.RandomColorAdjust",
            "vision.RandomSharpness"} <= offloadable
    for name in ("vision.Resize", "vision.Decode", "vision.RandomCrop", "vision.SlicePatches",
                 "transforms.OneHot", "transforms.Duplicate", "vision.CenterCrop", "vision.Pad"):
        assert not op(name).offloadable
        assert op(name).host_sample_fn is not None
    for name in offloadable & {n for n in registry.all_ops() if n.startswith(("vision.", "transforms."))}:
        assert rule_for(name) is not None and op(name).host_batch_fn is not None
    assert vision.RandomHorizontalFlip().num_draws == 1
    assert vision.RandomColorAdjust(hue=0.1).num_draws == 4
    assert vision.RandomSharpness().num_draws == 1
    assert vision.RandomCrop(4).num_draws == 2
    assert vision.RandomResizedCrop(4, max_attempts=3).num_draws == 8
    assert vision.Resize(4).num_draws == 0


def test_infer_rejects_non_images():
    with pytest.raises(ValueError, match="Resize"):
        op("vision.Resize").infer({"size": [4, 4], "interpolation": "linear"}, [TensorType("u8", (28,))])
    # an [H, W] image is one channel, as MindSpore's <H, W> (OneChannelHW)
    assert op("vision.Resize").infer({"size": [4, 4], "interpolation": "linear"},
                                     [TensorType("u8", (28, 28))]) == [TensorType("u8", (4, 4))]
    with pytest.raises(TypeError, match="Decode"):
        op("vision.Resize").infer({"size": [4, 4], "interpolation": "linear"}, [TensorType("bytes", ())])
    with pytest.raises(TypeError, match="uint8|u8"):
        op("vision.RandomColorAdjust").infer(op("vision.RandomColorAdjust").normalize_attrs({}),
                                             [TensorType("f32", (4, 4, 3))])
    assert op("vision.HWC2CHW").infer({}, [TensorType("f32", ("N", 32, 32, 3))]) == [TensorType("f32", ("N", 3, 32, 32))]


# =============================================================================
# the eager API
# =============================================================================

def test_eager_same_seed_same_draws():
    x = img(16, 16, 3, seed=18)
    ops = [vision.RandomColorAdjust(0.4, 0.4, 0.4, 0.1), vision.RandomSharpness(),
           vision.RandomCrop(8), vision.RandomResizedCrop(8), vision.RandomHorizontalFlip()]

    def run():
        config.set_seed(1234)
        return [o(x) for o in ops for _ in range(3)]
    a, b = run(), run()
    for p, q in zip(a, b):
        np.testing.assert_array_equal(p, q)
    config.set_seed(1235)
    c = [o(x) for o in ops for _ in range(3)]
    assert any(not np.array_equal(p, q) for p, q in zip(a, c))
    config.set_seed(99)
    u = config.rng().random(3)
    config.set_seed(99)
    np.testing.assert_array_equal(u, np.random.Generator(np.random.PCG64(99)).random(3))
    assert config.get_seed() == 99


def test_eager_errors_are_clear():
    with pytest.raises(ValueError, match="RandomHorizontalFlip: prob"):
        vision.RandomHorizontalFlip(1.5)
    with pytest.raises(ValueError, match="hue"):
        vision.RandomColorAdjust(hue=0.6)
    with pytest.raises(ValueError, match="hue"):
        vision.RandomColorAdjust(hue=(-0.7, 0.1))
    with pytest.raises(ValueError, match="brightness"):
        vision.RandomColorAdjust(brightness=(1.5, 0.5))
    with pytest.raises(TypeError, match="Resize: size"):
        vision.Resize("big")
    with pytest.raises(ValueError, match="not supported"):
        vision.Resize(32, vision.Inter.AREA)
    with pytest.raises(ValueError, match="std"):
        vision.Normalize([0.5], [0.0])
    with pytest.raises(ValueError, match="Resize: expected an image"):
        vision.Resize(8)(np.zeros(10, np.uint8))
    with pytest.raises(TypeError, match="RandomColorAdjust"):
        vision.RandomColorAdjust(0.2)(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError, match="channels"):
        vision.RandomColorAdjust(0.2)(np.zeros((4, 4, 1), np.uint8))


def test_eager_api_surface():
    r = vision.Resize((32, 32), interpolation=vision.Inter.BILINEAR)
    assert r.op_name == "vision.Resize" and r.attrs == {"size": [32, 32], "interpolation": "linear"}
    assert r.source is not None and r.source.endswith(f"test_vision_ops.py:{_line_of('vision.Resize((32, 32), interpolation')}")
    assert vision.Inter.CUBIC is vision.Inter.BICUBIC and vision.Inter.BILINEAR is vision.Inter.LINEAR
    assert vision.RandomColorAdjust(brightness=0.4, hue=0.1).attrs == {
        "brightness": [0.6, 1.4], "contrast": [1.0, 1.0], "saturation": [1.0, 1.0], "hue": [-0.1, 0.1]}
    assert vision.RandomSharpness(0.5).attrs == {"degrees": [0.5, 1.5]}
    assert vision.RandomColorAdjust(brightness=1.5).attrs["brightness"] == [0.0, 2.5]
    from irc.dataset.transforms import c_transforms as tc
    from irc.dataset.vision import c_transforms as vc
    assert vc.Resize is vision.Resize and vc.Inter is vision.Inter and tc.TypeCast is transforms.TypeCast
    from irc.dataset.vision.utils import SliceMode
    assert vision.SlicePatches(2, 2, SliceMode.DROP).attrs["slice_mode"] == "drop"
    # 2-D (HW) images are accepted eagerly and stay 2-D
    assert vision.Resize((4, 6))(np.zeros((8, 8), np.uint8)).shape == (4, 6)
    assert vision.HWC2CHW()(np.zeros((8, 5), np.uint8)).shape == (8, 5)    # unchanged, as MindSpore
    # Compose runs its list in order and flattens for map()
    from irc.dataset._ops import flatten_ops
    comp = transforms.Compose([vision.Resize((4, 4)), [vision.Rescale(1 / 255, 0)], vision.HWC2CHW()])
    out = comp(img(9, 9, 3))
    assert out.shape == (3, 4, 4) and out.dtype == np.float32
    assert [o.op_name for o in flatten_ops([comp, transforms.TypeCast(irc.int32)])] == [
        "vision.Resize", "vision.Rescale", "vision.HWC2CHW", "transforms.TypeCast"]
    for attrs in (r.attrs, vision.RandomCrop(4, padding=2).attrs, vision.Normalize([1, 2, 3], [1, 1, 1]).attrs):
        import json
        assert json.loads(json.dumps(attrs)) == attrs


def test_config_settings():
    assert config.get_num_parallel_workers() >= 1
    old = config.get_auto_offload()
    config.set_auto_offload(True)
    assert config.get_auto_offload() is True
    config.set_auto_offload(old)
    with pytest.raises(TypeError):
        config.set_auto_offload("yes")
    with pytest.raises(ValueError):
        config.set_seed(-1)
    config.set_num_parallel_workers(3)
    assert config.get_num_parallel_workers() == 3
    config.set_num_parallel_workers(2)


def _line_of(text: str) -> int:
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if text in line and "_line_of" not in line:
                return i
    raise AssertionError(text)


def test_opencv_fast_paths_match_the_numpy_and_pillow_references():
    # with OpenCV installed, Decode/Resize/Normalize/flips take it: same bits
    pytest.importorskip("cv2")
    from irc.dialects import vision as V
    rng = np.random.default_rng(16)
    for _ in range(30):
        h, w, oh, ow = (int(v) for v in rng.integers(1, 90, 4))
        c = int(rng.choice([1, 3, 4]))
        x = rng.integers(0, 256, (2, h, w, c), dtype=np.uint8)
        np.testing.assert_array_equal(V.resize_batch(x, oh, ow), V.resize_batch_reference(x, oh, ow))
    base = np.clip(rng.normal(128, 60, (61, 83, 3)), 0, 255).astype(np.uint8)
    for mode, kw in (("RGB", {"subsampling": 2}), ("RGB", {"subsampling": 0}), ("RGB", {"progressive": True}),
                     ("L", {}), ("CMYK", {})):
        buf = io.BytesIO()
        Image.fromarray(base).convert(mode).save(buf, format="JPEG", quality=85, **kw)
        raw = buf.getvalue()
        np.testing.assert_array_equal(V.decode(raw), V.decode_pillow(raw))
    with pytest.raises(ValueError, match="cannot decode"):
        V.decode(raw[:len(raw) // 2])        # truncated: refused, as Pillow does
    attrs = {"mean": [1.5, 2.0, 250.0], "std": [0.3, 7.0, 1.0], "is_hwc": True}
    mean, std = np.float32(attrs["mean"]), np.float32(attrs["std"])
    (y,) = sample("vision.Normalize", base, attrs)
    np.testing.assert_array_equal(y, (base.astype(np.float32) - mean) / std)
    # batches of images, channels last or first, small (a lookup per channel for
    # the whole batch) and large (one per plane)
    for c, (h, w) in ((1, (7, 9)), (3, (7, 9)), (4, (7, 9)), (3, (101, 120)), (1, (120, 101))):
        chans = {"mean": list(rng.uniform(0, 255, c)), "std": list(rng.uniform(0.5, 80, c))}
        m, s = np.float32(chans["mean"]), np.float32(chans["std"])
        hwc = rng.integers(0, 256, (5, h, w, c), dtype=np.uint8)
        (y,) = batch("vision.Normalize", hwc, {**chans, "is_hwc": True})
        np.testing.assert_array_equal(y, (hwc.astype(np.float32) - m) / s)
        chw = np.ascontiguousarray(hwc.transpose(0, 3, 1, 2))
        (y,) = batch("vision.Normalize", chw, {**chans, "is_hwc": False})
        np.testing.assert_array_equal(y, (chw.astype(np.float32) - m[:, None, None]) / s[:, None, None])
    (y,) = sample("vision.RandomHorizontalFlip", base, {"prob": 0.5}, np.zeros(1))
    np.testing.assert_array_equal(y, base[:, ::-1])


def test_normalize_writes_channel_planes_that_hwc2chw_takes_without_a_copy():
    pytest.importorskip("cv2")
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (2, 9, 7, 3), dtype=np.uint8)
    attrs = {"mean": [1.5, 2.0, 250.0], "std": [0.3, 7.0, 1.0]}
    mean, std = np.float32(attrs["mean"]), np.float32(attrs["std"])
    (y,) = batch("vision.Normalize", x, attrs)
    np.testing.assert_array_equal(y, (x.astype(np.float32) - mean) / std)
    (z,) = batch("vision.HWC2CHW", y)
    assert np.shares_memory(y, z) and z.flags.c_contiguous
    (f,) = batch("vision.RandomHorizontalFlip", y, {"prob": 0.5}, np.array([[0.0], [0.9]]))
    np.testing.assert_array_equal(f, np.stack([y[0, :, ::-1], y[1]]))     # a view: flipped right
    chw = np.ascontiguousarray(x.transpose(0, 3, 1, 2))     # channels-first uint8 (a hoisted HWC2CHW)
    (w,) = batch("vision.Normalize", chw, {**attrs, "is_hwc": False})
    np.testing.assert_array_equal(w, z)


def test_cutout_places_patches_as_mindspore(capsys):
    """tests/mindspore_style/cutout.py: vision.CutOut's patches (two per
    image, hanging over the edges) where MindSpore 2.10 puts them, on 1 and
    2 workers; an image smaller than the patch is a located error."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "cutout.py", rel=0, abs=0)
    import irc.dataset as ds
    import irc.dataset.vision as vision
    from irc.diagnostics import UserError
    data = ds.NumpySlicesDataset({"image": np.zeros((2, 3, 3, 3), np.uint8)}, shuffle=False)
    with pytest.raises(UserError, match="box size is too large"):
        list(data.map([vision.CutOut(4)], "image").create_tuple_iterator())


def test_pil_vision_transforms_as_mindspore(capsys):
    """tests/mindspore_style/pil_vision_transforms.py: Grayscale,
    RandomGrayscale, FiveCrop, TenCrop, RgbToHsv, HsvToRgb,
    LinearTransformation and ToNumpy as MindSpore 2.10 gives them (irc
    refused them: "not supported"); a numpy image where a PIL one is due is
    refused with a hint."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "pil_vision_transforms.py", rel=1e-6, abs=1e-6)
    with pytest.raises(TypeError, match="img should be PIL image"):
        vision.Grayscale()(np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(ValueError, match="num_output_channels must be 1 or 3"):
        vision.Grayscale(2)


def test_pad_to_size_normalize_pad_and_perspective_as_mindspore(capsys):
    """tests/mindspore_style/pad_normalize_perspective.py: PadToSize,
    NormalizePad and nearest-neighbour Perspective give MindSpore 2.10's
    pixels (irc refused them); Inter is MindSpore's IntEnum (it prints as 0,
    2 ...); a bilinear Perspective is OpenCV's warpPerspective of the
    projective map taking the start points to the end points."""
    import cv2
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "pad_normalize_perspective.py", rel=1e-6, abs=1e-6)
    assert int(vision.Inter.BILINEAR) == 2 and vision.Inter.LINEAR is vision.Inter.BILINEAR
    img = np.random.default_rng(1).integers(0, 256, (5, 7, 3), dtype=np.uint8)
    src, dst = [[0, 0], [6, 0], [6, 4], [0, 4]], [[1, 0], [5, 1], [6, 4], [0, 3]]
    want = cv2.warpPerspective(img, cv2.getPerspectiveTransform(np.float32(src), np.float32(dst)), (7, 5),
                               flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    np.testing.assert_array_equal(vision.Perspective(src, dst)(img), want)
    with pytest.raises(ValueError, match="smaller than the image"):
        vision.PadToSize(4)(img)
