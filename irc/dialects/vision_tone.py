"""Image ops of the ``vision`` dialect that change tone or a region with
fixed parameters (MindSpore's ``vision.Invert``, ``AdjustBrightness``,
``Equalize``, ``AutoContrast``, ``GaussianBlur``, ``Crop``, ``Erase`` ...),
and their random forms (``RandomInvert``, ``RandomPosterize`` ...).

They run on the host (one HWC uint8 image at a time: sizes may differ
between samples) with OpenCV's arithmetic, which is MindSpore's CPU
kernels': ``tests/test_vision_tone.py`` compares every op with MindSpore
2.10's output byte for byte.  The random forms take their draws as every
random op does (``irc.dialects.draws``): the same after the same
``set_seed``, from irc's streams, not MindSpore's.
"""
from __future__ import annotations

import numpy as np

from ..ir.registry import MAP, REQUIRED
from ..ir.traits import OneChannelHW, Pure, Random
from ..ir.types import UNKNOWN, TensorType
from . import stdrandom
from .transforms import infer_optional_steps, join_types, pick, run_sequence, sequence_draws
from .vision import (
    DIALECT, FAMILY, _check_image_array, _opencv, color_adjust, factor, hw_images, image_dims,
    sharpness, uniforms,
)

define = DIALECT.define


def _u8_image(op: str):
    def infer(attrs, ins):
        image_dims(op, ins[0], dtypes=("u8",))
        return [ins[0]]
    return infer


def _rgb_u8(op: str, ins):
    image_dims(op, ins[0], dtypes=("u8",), channels=(3,))
    return [ins[0]]


def _any_image(op: str, ins):
    image_dims(op, ins[0])
    return [ins[0]]


def _per_image(op, fn, draws_per_sample: int = 0, uint8_only: bool = True):
    """Attach ``fn(image, attrs, u)`` (one HWC image, uint8 unless
    ``uint8_only`` is off; ``u`` its draws) as the op's host rule on a batch
    of equal images."""
    name = op.name.split(".")[1]

    @op.host_batch
    def run(inputs, attrs, draws):
        x = np.asarray(inputs[0])
        _check_image_array(name, x, batched=True)
        if uint8_only and x.dtype != np.uint8 and not name.endswith("Flip"):
            raise TypeError(f"{name}: expected a uint8 image, got {x.dtype}")
        u = uniforms(draws, draws_per_sample) if draws_per_sample else [None] * len(x)
        return [np.stack([fn(image, attrs, ui) for image, ui in zip(x, u)]) if len(x) else x]


def _define(name, attrs, doc, *, draws: int = 0, infer=None):
    # MindSpore's tone and flip ops take <H, W> images too
    traits = (Pure(), OneChannelHW()) + ((Random(lambda attrs, k=draws: k),) if draws else ())
    return define(f"vision.{name}", kind=MAP, family=FAMILY, operands=("image",), attrs=attrs,
                  traits=traits, infer=infer or _u8_image(name), doc=doc)


# --- tone: fixed ----------------------------------------------------------------

def invert(x):
    return 255 - x


def posterize(x, bits: int):
    return x & np.uint8((0xFF << (8 - int(bits))) & 0xFF)


def solarize(x, lo: float, hi: float):
    """Pixels in [lo, hi] inverted."""
    return np.where((x >= lo) & (x <= hi), 255 - x, x).astype(np.uint8)


def _fixed(key: str, f: float):
    attrs = {k: [1.0, 1.0] for k in ("brightness", "contrast", "saturation")}
    attrs["hue"] = [0.0, 0.0]
    attrs[key] = [float(f), float(f)]
    return attrs


def adjust(x, key: str, f: float):
    """MindSpore's AdjustBrightness/Contrast/Saturation: RandomColorAdjust's
    arithmetic with the factor fixed."""
    return color_adjust(x[None], _fixed(key, f), np.zeros((1, 4), np.float32))[0]


def adjust_hue(x, hue: float):
    """MindSpore's AdjustHue: OpenCV's RGB -> HSV_FULL (hue 0-255), the hue
    byte plus ``uint8(hue * 255)`` (C++'s cast of a negative product wraps),
    back to RGB.  Not RandomColorAdjust's hue (OPS.md's float maths): within
    1 of MindSpore 2.10's pixels (its bundled OpenCV rounds HSV a little
    differently)."""
    cv2 = _opencv()
    hsv = cv2.cvtColor(x, cv2.COLOR_RGB2HSV_FULL)
    hsv[..., 0] += np.uint8(int(np.float32(hue) * np.float32(255)) & 0xFF)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB_FULL)


def adjust_gamma(x, gamma: float, gain: float):
    """MindSpore's table: floor(min((i / 255)^gamma (256 - 1e-3) gain, 255)),
    in float32."""
    f = np.power(np.arange(256, dtype=np.float32) / np.float32(255.0), np.float32(gamma)).astype(np.float32)
    table = np.floor(np.minimum(f * np.float32(256.0 - 1e-3) * np.float32(gain), np.float32(255.0)))
    return table.astype(np.uint8)[x]


def equalize(x):
    """Each channel's histogram equalised (OpenCV's equalizeHist)."""
    cv2 = _opencv()
    return np.stack([cv2.equalizeHist(np.ascontiguousarray(x[..., c])) for c in range(x.shape[-1])], -1)


def autocontrast(x, cutoff: float, ignore) -> np.ndarray:
    """Each channel stretched to [0, 255] after ``cutoff`` percent of its
    pixels are cut from each end of its histogram (``ignore``d values
    uncounted): PIL's cutoff walk, and MindSpore's table, ``int(i * scale +
    offset)`` in float32, truncated."""
    out = np.empty_like(x)
    for c in range(x.shape[-1]):
        plane = x[..., c]
        hist = np.bincount(plane.ravel(), minlength=256).astype(np.int64)
        for v in ignore or ():
            hist[int(v)] = 0
        if cutoff:
            total = int(hist.sum())
            for order in (range(256), range(255, -1, -1)):
                cut = int(total * cutoff // 100)
                for i in order:
                    take = min(cut, int(hist[i]))
                    hist[i] -= take
                    cut -= take
                    if cut <= 0:
                        break
        table = np.arange(256)
        present = np.flatnonzero(hist)
        if present.size and present[-1] > present[0]:
            lo, hi = int(present[0]), int(present[-1])
            scale = np.float32(255.0) / np.float32(hi - lo)
            offset = np.float32(-lo) * scale
            table = np.clip((np.arange(256, dtype=np.float32) * scale + offset).astype(np.int64), 0, 255)
        out[..., c] = table.astype(np.uint8)[plane]
    return out


def gaussian_blur(x, kernel_size, sigma):
    cv2 = _opencv()
    kx, ky = kernel_size
    sx, sy = sigma
    return cv2.GaussianBlur(x, (int(kx), int(ky)), float(sx), sigmaY=float(sy),
                            borderType=cv2.BORDER_REFLECT_101).reshape(x.shape)


HORIZONTAL_FLIP = _define("HorizontalFlip", {}, "W reversed", infer=lambda a, ins: _any_image("HorizontalFlip", ins))
VERTICAL_FLIP = _define("VerticalFlip", {}, "H reversed", infer=lambda a, ins: _any_image("VerticalFlip", ins))
INVERT = _define("Invert", {}, "255 - x")
POSTERIZE = _define("Posterize", {"bits": REQUIRED}, "x with its lowest 8 - bits bits cleared")
SOLARIZE = _define("Solarize", {"threshold": REQUIRED}, "pixels in [threshold[0], threshold[1]] inverted")
ADJUST_BRIGHTNESS = _define("AdjustBrightness", {"brightness_factor": REQUIRED}, "x * f, saturated")
ADJUST_CONTRAST = _define("AdjustContrast", {"contrast_factor": REQUIRED},
                          "addWeighted(gray mean, 1 - f, x, f)")
ADJUST_SATURATION = _define("AdjustSaturation", {"saturation_factor": REQUIRED},
                            "addWeighted(gray, 1 - f, x, f)")
ADJUST_HUE = _define("AdjustHue", {"hue_factor": REQUIRED},
                     "hue turned by hue_factor of a turn in OpenCV's 8-bit HSV, as MindSpore's",
                     infer=lambda a, ins: _rgb_u8("AdjustHue", ins))
ADJUST_SHARPNESS = _define("AdjustSharpness", {"sharpness_factor": REQUIRED},
                           "blur + f * (x - blur), RandomSharpness's kernel with f fixed")
ADJUST_GAMMA = _define("AdjustGamma", {"gamma": REQUIRED, "gain": 1.0},
                      "floor(min((x / 255)^gamma (256 - 1e-3) gain, 255)), MindSpore's table")
EQUALIZE = _define("Equalize", {}, "each channel's histogram equalised")
AUTO_CONTRAST = _define("AutoContrast", {"cutoff": 0.0, "ignore": []},
                        "each channel stretched to [0, 255], cutoff percent cut from each end")
GAUSSIAN_BLUR = _define("GaussianBlur", {"kernel_size": REQUIRED, "sigma": REQUIRED},
                        "a Gaussian kernel of kernel_size (x, y) and sigma (x, y), borders reflected")

_per_image(HORIZONTAL_FLIP, lambda x, a, u: np.ascontiguousarray(x[:, ::-1]))
_per_image(VERTICAL_FLIP, lambda x, a, u: np.ascontiguousarray(x[::-1]))
_per_image(INVERT, lambda x, a, u: invert(x))
_per_image(POSTERIZE, lambda x, a, u: posterize(x, a["bits"]))
_per_image(SOLARIZE, lambda x, a, u: solarize(x, *a["threshold"]))
_per_image(ADJUST_BRIGHTNESS, lambda x, a, u: adjust(x, "brightness", a["brightness_factor"]))
_per_image(ADJUST_CONTRAST, lambda x, a, u: adjust(x, "contrast", a["contrast_factor"]))
_per_image(ADJUST_SATURATION, lambda x, a, u: adjust(x, "saturation", a["saturation_factor"]))
_per_image(ADJUST_HUE, lambda x, a, u: adjust_hue(x, a["hue_factor"]))
_per_image(ADJUST_SHARPNESS, lambda x, a, u: sharpness(x[None], np.float32([a["sharpness_factor"]]))[0])
_per_image(ADJUST_GAMMA, lambda x, a, u: adjust_gamma(x, a["gamma"], a["gain"]))
_per_image(EQUALIZE, lambda x, a, u: equalize(x))
_per_image(AUTO_CONTRAST, lambda x, a, u: autocontrast(x, a["cutoff"], a["ignore"]))
_per_image(GAUSSIAN_BLUR, lambda x, a, u: gaussian_blur(x, a["kernel_size"], a["sigma"]))


# --- geometry and regions: fixed --------------------------------------------------------

def _infer_crop(attrs, ins):
    image_dims("Crop", ins[0])
    h, w = attrs["size"]
    t = ins[0]
    return [t.with_shape((*t.shape[:-3], h, w, t.shape[-1]))]


CROP = define("vision.Crop", kind=MAP, family=FAMILY, operands=("image",),
              attrs={"coordinates": REQUIRED, "size": REQUIRED}, traits=(Pure(), OneChannelHW()),
              infer=_infer_crop,
              doc="the size (h, w) window at coordinates (top, left)")


@CROP.host_batch
def _crop(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("Crop", x, batched=True)
    (top, left), (h, w) = attrs["coordinates"], attrs["size"]
    if top + h > x.shape[1] or left + w > x.shape[2]:
        raise ValueError(f"Crop: the window ({top}, {left}) + ({h}, {w}) exceeds the image "
                         f"{x.shape[1]}x{x.shape[2]}")
    return [np.ascontiguousarray(x[:, top:top + h, left:left + w])]


def _infer_erase(attrs, ins):
    image_dims("Erase", ins[0])
    return [ins[0]]


ERASE = _define("Erase", {"top": REQUIRED, "left": REQUIRED, "height": REQUIRED, "width": REQUIRED,
                          "value": [0.0, 0.0, 0.0]},
                "the (height, width) region at (top, left) set to value (one per channel)",
                infer=_infer_erase)


def erase(x, attrs):
    out = x.copy()
    t, l, h, w = (int(attrs[k]) for k in ("top", "left", "height", "width"))
    value = np.asarray(attrs["value"], np.float64)
    out[t:t + h, l:l + w] = np.broadcast_to(np.trunc(value).astype(x.dtype), out[t:t + h, l:l + w].shape)
    return out


@ERASE.host_batch
def _erase(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("Erase", x, batched=True)
    return [np.stack([erase(image, attrs) for image in x]) if len(x) else x]


# --- rotation ---------------------------------------------------------------------

_CV2_INTER = {"nearest": 0, "linear": 1, "bicubic": 2}


def rotate(x, degrees: float, interpolation: str, expand: bool, center, fill):
    """MindSpore's Rotate: OpenCV's warpAffine about ``center`` (((w - 1) / 2,
    (h - 1) / 2) by default), counter-clockwise; ``expand`` makes the canvas
    the rotated image's bounding box (OpenCV's RotatedRect, in float32, as
    MindSpore computes it) and centres the image on it."""
    cv2 = _opencv()
    h, w = x.shape[:2]
    cx, cy = (np.float32((w - 1) * 0.5), np.float32((h - 1) * 0.5)) if center is None else \
        (np.float32(center[0]), np.float32(center[1]))
    m = cv2.getRotationMatrix2D((float(cx), float(cy)), float(degrees), 1.0)
    size = (w, h)
    if expand:
        angle = float(degrees) * np.pi / 180.0
        b, a = np.float32(np.cos(angle)) * np.float32(0.5), np.float32(np.sin(angle)) * np.float32(0.5)
        fw, fh = np.float32(w), np.float32(h)
        p0 = (cx - a * fh - b * fw, cy + b * fh - a * fw)
        p1 = (cx + a * fh - b * fw, cy - b * fh - a * fw)
        xs = [p0[0], p1[0], np.float32(2) * cx - p0[0], np.float32(2) * cx - p1[0]]
        ys = [p0[1], p1[1], np.float32(2) * cy - p0[1], np.float32(2) * cy - p1[1]]
        bw, bh = np.float32(max(xs) - min(xs)), np.float32(max(ys) - min(ys))
        m[0, 2] += float(bw) / 2.0 - w / 2.0
        m[1, 2] += float(bh) / 2.0 - h / 2.0
        size = (int(np.rint(bw)), int(np.rint(bh)))
    # MindSpore passes the fill as cv::Scalar(b, g, r) to an RGB image: its
    # first channel gets the fill's last value (measured on MindSpore 2.10)
    fill = tuple(float(f) for f in reversed(fill)) + (0.0,) * (4 - len(fill))
    return warp(x, m, size, interpolation, fill)


_AB_BITS = 10      # OpenCV 4's warpAffine: source coordinates in 1/1024ths


def _warp_nearest(x: np.ndarray, m: np.ndarray, size: tuple, fill: tuple) -> np.ndarray:
    """``cv2.warpAffine(..., INTER_NEAREST, BORDER_CONSTANT)`` as the OpenCV 4
    that MindSpore bundles computes it: each source coordinate in fixed
    point, ``(round(a * 1024) + round(b * 1024) + 512) >> 10``, so a tie
    (a 90-degree turn of an odd-by-even image: every pixel) rounds up.  The
    OpenCV 5 of the package index rounds ties to even, which repeats every
    other row and column there."""
    import cv2
    inverse = cv2.invertAffineTransform(m)        # destination -> source, as warpAffine inverts
    w, h = size
    cols, rows = np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64)[:, None]
    scale, half = 1 << _AB_BITS, 1 << (_AB_BITS - 1)

    def source(k: int) -> np.ndarray:
        row_part = np.rint((inverse[k, 1] * rows + inverse[k, 2]) * scale).astype(np.int64)
        col_part = np.rint(inverse[k, 0] * cols * scale).astype(np.int64)
        return (row_part + col_part + half) >> _AB_BITS
    sx, sy = source(0), source(1)
    inside = (sx >= 0) & (sx < x.shape[1]) & (sy >= 0) & (sy < x.shape[0])
    channels = x.shape[2:]
    y = np.empty((h, w, *channels), x.dtype)
    y[...] = np.asarray(fill[:channels[0]] if channels else fill[0], dtype=np.float64).astype(x.dtype)
    y[inside] = x[sy[inside], sx[inside]]
    return y


def _infer_rotate(attrs, ins):
    image_dims("Rotate", ins[0], dtypes=("u8", "f32"))
    t = ins[0]
    if attrs["expand"]:
        return [t.with_shape((*t.shape[:-3], UNKNOWN, UNKNOWN, t.shape[-1]))]
    return [t]


_ROTATE_ATTRS = {"resample": "nearest", "expand": False, "center": None, "fill_value": [0, 0, 0]}
ROTATE = define("vision.Rotate", kind=MAP, family=FAMILY, operands=("image",),
                attrs={"degrees": REQUIRED, **_ROTATE_ATTRS}, traits=(Pure(), OneChannelHW()),
                infer=_infer_rotate,
                doc="rotated counter-clockwise by degrees about center (OpenCV's warpAffine, "
                    "MindSpore's geometry); expand: on the rotated image's bounding box")
RANDOM_ROTATION = define("vision.RandomRotation", kind=MAP, family=FAMILY, operands=("image",),
                         attrs={"degrees": [0.0, 0.0], **_ROTATE_ATTRS},
                         traits=(Pure(), Random(lambda attrs: 1), OneChannelHW()), infer=_infer_rotate,
                         doc="Rotate by an angle drawn in [degrees[0], degrees[1]] (1 draw)")


# one image at a time: with expand, each angle gives its own size
@ROTATE.host_sample
def _rotate(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("Rotate", x)
    return [rotate(x, attrs["degrees"], attrs["resample"], attrs["expand"], attrs["center"],
                   attrs["fill_value"])]


@RANDOM_ROTATION.host_sample
def _random_rotation(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("RandomRotation", x)
    lo, hi = attrs["degrees"]
    return [rotate(x, float(factor(uniforms(draws, 1)[0], lo, hi)), attrs["resample"], attrs["expand"],
                   attrs["center"], attrs["fill_value"])]


# --- affine ------------------------------------------------------------------------

def affine_matrix(h: int, w: int, degrees, tx, ty, scale, shear_x, shear_y) -> np.ndarray:
    """MindSpore's GetAffineMatrix: T * C * RSS * C^-1 about the image's
    centre ((w - 1) / 2, (h - 1) / 2), shears in degrees (x, then y
    negated), angles and entries held as float32, the trigonometry in
    double; ``tx``/``ty`` in pixels."""
    f32 = np.float32
    a = f32(float(f32(degrees)) * np.pi / 180.0)
    sx = f32(float(f32(shear_x)) * np.pi / 180.0)
    sy = f32(float(f32(-f32(shear_y))) * np.pi / 180.0)
    if np.cos(float(sy)) == 0.0:
        raise ValueError("Affine: cos(shear_y) must not be zero")
    s, a_sy = float(f32(scale)), float(f32(a + sy))
    m0 = f32(s * np.cos(a_sy) / np.cos(float(sy)))
    m1 = f32(s * (-np.cos(a_sy) * np.tan(float(sx)) / np.cos(float(sy)) - np.sin(float(a))))
    m3 = f32(s * np.sin(a_sy) / np.cos(float(sy)))
    m4 = f32(s * (-np.sin(a_sy) * np.tan(float(sx)) / np.cos(float(sy)) + np.cos(float(a))))
    cx, cy = f32((w - 1) / 2.0), f32((h - 1) / 2.0)
    m2 = (f32(1) - m0) * cx - m1 * cy + f32(tx)
    m5 = (f32(1) - m4) * cy - m3 * cx + f32(ty)
    return np.array([[m0, m1, m2], [m3, m4, m5]], np.float32).astype(np.float64)


def affine(x, degrees, translate, scale, shear, interpolation: str, fill) -> np.ndarray:
    """MindSpore's Affine: OpenCV's warpAffine onto the image's own size,
    ``translate`` a fraction of the width and height, the fill in RGB order."""
    h, w = x.shape[:2]
    tx, ty = np.float32(translate[0]) * np.float32(w), np.float32(translate[1]) * np.float32(h)
    m = affine_matrix(h, w, degrees, tx, ty, scale, shear[0], shear[1])
    return warp(x, m, (w, h), interpolation, tuple(float(f) for f in fill) + (0.0,) * (4 - len(fill)))


def warp(x, m: np.ndarray, size: tuple, interpolation: str, fill: tuple) -> np.ndarray:
    """OpenCV's warpAffine with a constant border; nearest neighbour as the
    OpenCV 4 MindSpore bundles rounds (:func:`_warp_nearest`)."""
    if interpolation == "nearest":
        return _warp_nearest(x, m, size, fill)
    cv2 = _opencv()
    y = cv2.warpAffine(x, m, size, flags=_CV2_INTER[interpolation], borderMode=cv2.BORDER_CONSTANT,
                       borderValue=fill)
    return y.reshape(size[1], size[0], *x.shape[2:])


def _infer_affine(attrs, ins):
    image_dims("Affine", ins[0], dtypes=("u8", "f32"))
    return [ins[0]]


_AFFINE_ATTRS = {"resample": "nearest", "fill_value": [0, 0, 0]}
AFFINE = define("vision.Affine", kind=MAP, family=FAMILY, operands=("image",),
                attrs={"degrees": REQUIRED, "translate": REQUIRED, "scale": REQUIRED, "shear": REQUIRED,
                       **_AFFINE_ATTRS},
                traits=(Pure(), OneChannelHW()), infer=_infer_affine,
                doc="rotated by degrees, moved by translate (fractions of the size), scaled, sheared "
                    "(x, y degrees) about the centre: MindSpore's matrix, OpenCV's warpAffine")


def _infer_perspective(attrs, ins):
    image_dims("Perspective", ins[0], dtypes=("u8", "f32"))
    for name in ("start_points", "end_points"):
        if len(attrs[name]) != 4 or any(len(p) != 2 for p in attrs[name]):
            raise ValueError(f"Perspective: {name} must be four [x, y] points, got {attrs[name]}")
    return [ins[0]]


PERSPECTIVE = define("vision.Perspective", kind=MAP, family=FAMILY, operands=("image",),
                     attrs={"start_points": REQUIRED, "end_points": REQUIRED, "interpolation": "linear"},
                     traits=(Pure(), OneChannelHW()), infer=_infer_perspective,
                     doc="the projective map taking start_points to end_points (four [x, y] each), "
                         "OpenCV's warpPerspective onto the image's size, black outside")


def _perspective(image, attrs, u):
    cv2 = _opencv()
    m = cv2.getPerspectiveTransform(np.float32(attrs["start_points"]), np.float32(attrs["end_points"]))
    h, w = image.shape[:2]
    y = cv2.warpPerspective(image, m, (w, h), flags=_CV2_INTER[attrs["interpolation"]],
                           borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return y.reshape(image.shape)


_per_image(PERSPECTIVE, _perspective, uint8_only=False)


def _affine_as_mindspore(gen, m: int, attrs, hw) -> np.ndarray:
    """MindSpore's RandomAffine draws its six numbers in this op's order, each
    a ``uniform_real_distribution<float>``: its draw is the canonical float."""
    return stdrandom.canonical_float(gen, 6 * m).reshape(m, 6)


RANDOM_AFFINE = define("vision.RandomAffine", kind=MAP, family=FAMILY, operands=("image",),
                       attrs={"degrees": REQUIRED, "translate": [0.0, 0.0, 0.0, 0.0], "scale": [1.0, 1.0],
                              "shear": [0.0, 0.0, 0.0, 0.0], **_AFFINE_ATTRS},
                       traits=(Pure(), Random(lambda attrs: 6, _affine_as_mindspore), OneChannelHW()),
                       infer=_infer_affine,
                       doc="Affine with degrees, x and y translations (fractions), scale and x and y "
                           "shears each drawn in its range (6 draws)")


_per_image(AFFINE, lambda image, a, u: affine(image, a["degrees"], a["translate"], a["scale"], a["shear"],
                                               a["resample"], a["fill_value"]), uint8_only=False)


@RANDOM_AFFINE.host_batch
def _random_affine(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    _check_image_array("RandomAffine", x, batched=True)
    u = uniforms(draws, 6)
    out = []
    for image, ui in zip(x, u):
        h, w = image.shape[:2]
        # the ranges held as float32, as MindSpore's op holds them (their widths taken in float)
        f32 = np.float32
        (d0, d1), t, (s0, s1), sh = ([f32(v) for v in attrs[k]] for k in ("degrees", "translate", "scale", "shear"))
        degrees = np.fmod(factor(ui[0], d0, d1), f32(360.0))
        tx = factor(ui[1], np.float32(t[0]) * np.float32(w), np.float32(t[1]) * np.float32(w))
        ty = factor(ui[2], np.float32(t[2]) * np.float32(h), np.float32(t[3]) * np.float32(h))
        m = affine_matrix(h, w, degrees, tx, ty, factor(ui[3], s0, s1), factor(ui[4], sh[0], sh[1]),
                          factor(ui[5], sh[2], sh[3]))
        fill = tuple(float(f) for f in attrs["fill_value"]) + (0.0,)
        out.append(warp(image, m, (w, h), attrs["resample"], fill))
    return [np.stack(out) if out else x]


# --- RandomSelectSubpolicy ------------------------------------------------------------
#
# A policy is a list of sub-policies, each a list of {"op", "attrs", "prob"}
# steps.  A sample's draws: the sub-policy's, then for each step its
# probability's and its op's (made whether or not the step applies).

def _step_draws(step) -> int:
    return 1 + sequence_draws([step])


def _infer_subpolicy(attrs, ins):
    op = "RandomSelectSubpolicy"
    return [join_types(op, [infer_optional_steps(op, sub, ins[0]) for sub in attrs["policy"]])]


RANDOM_SELECT_SUBPOLICY = define(
    "vision.RandomSelectSubpolicy", kind=MAP, family=FAMILY, operands=("image",),
    attrs={"policy": REQUIRED}, infer=_infer_subpolicy,
    traits=(Pure(), Random(lambda attrs: 1 + max(sum(_step_draws(s) for s in sub) for sub in attrs["policy"]))),
    doc="one sub-policy picked per sample, each of its (op, prob) steps applied with its "
        "probability, in order (the pick's draw, then each step's and its op's)")


@RANDOM_SELECT_SUBPOLICY.host_sample
def _random_select_subpolicy(inputs, attrs, draws):
    policy = attrs["policy"]
    u = uniforms(draws, 1)
    sub = policy[pick(u[0], len(policy))]
    x, at = np.asarray(inputs[0]), 1
    for step in sub:
        k = _step_draws(step)
        if u[at] < np.float32(step["prob"]):
            x = run_sequence([step], x, u[at + 1:at + k])
        at += k
    return [x]


# --- UniformAugment --------------------------------------------------------------------

def _infer_uniform_augment(attrs, ins):
    return [infer_optional_steps("UniformAugment", attrs["transforms"], ins[0])]


def _uniform_augment_draws(attrs) -> int:
    return 2 * len(attrs["transforms"]) + sequence_draws(attrs["transforms"])


def _uniform_augment_as_mindspore(gen, m: int, attrs, hw) -> np.ndarray | None:
    """MindSpore's UniformAugment picks with ``std::sample`` and flips a
    ``uniform_int_distribution(0, 1)`` per pick (0 applies it) from its own
    generator; each transform draws from its own (seeded with the seed
    itself on every worker, moved only when it runs), kept beside ``gen`` so
    they go on across calls."""
    from ..ir.registry import get
    steps = attrs["transforms"]
    n = len(steps)
    recipes = [get(s["op"]).trait(Random) for s in steps]
    if any(r is not None and r.mindspore is None for r in recipes):
        return None
    own = gen.__dict__.setdefault("transform_generators", {})
    out = np.ones((m, _uniform_augment_draws(attrs)), np.float64)
    for row in out:
        for i in stdrandom.sample_indices(gen, n, int(attrs["num_ops"])):
            row[i] = 0.0
            row[n + i] = stdrandom.uniform_int(gen, 2)
    at = 2 * n
    for i, step in enumerate(steps):
        k = sequence_draws([step])
        runs = np.flatnonzero((out[:, i] == 0.0) & (out[:, n + i] == 0.0))
        if k and len(runs):     # the transform's draws for the samples it runs on, in order
            step_gen = own.setdefault(i, stdrandom.Mt19937(gen.__dict__.get("nested_seed", 0)))
            draws = recipes[i].mindspore(step_gen, len(runs), step["attrs"], hw)
            if draws is None:
                return None
            out[runs, at:at + k] = draws
        at += k
    return out


UNIFORM_AUGMENT = define(
    "vision.UniformAugment", kind=MAP, family=FAMILY, operands=("image",),
    attrs={"transforms": REQUIRED, "num_ops": 2}, infer=_infer_uniform_augment,
    traits=(Pure(), Random(_uniform_augment_draws, _uniform_augment_as_mindspore)),
    doc="num_ops of transforms picked per sample (a draw per transform ranks them: the lowest "
        "picked), each picked one applied iff its coin (a draw per transform) is below 0.5, in "
        "the list's order, then each transform's own draws: MindSpore's std::sample and coin")


@UNIFORM_AUGMENT.host_sample
def _uniform_augment(inputs, attrs, draws):
    steps, k = attrs["transforms"], int(attrs["num_ops"])
    n = len(steps)
    u = uniforms(draws, 2 * n)
    picked = set(np.argsort(u[:n], kind="stable")[:k].tolist())   # the k lowest ranks
    x, at = np.asarray(inputs[0]), 2 * n
    for i, step in enumerate(steps):
        size = sequence_draws([step])
        if i in picked and u[n + i] < np.float32(0.5):
            x = run_sequence([step], x, u[at:at + size])
        at += size
    return [x]


# --- the random forms ----------------------------------------------------------------

def _with_prob(name: str, fn, doc: str, extra_attrs=None):
    op = _define(name, {"prob": 0.5, **(extra_attrs or {})}, f"{doc}, with probability prob (1 draw)",
                 draws=1)
    _per_image(op, lambda x, a, u: fn(x, a) if u[0] < np.float32(a["prob"]) else x.copy(), 1)
    return op


RANDOM_INVERT = _with_prob("RandomInvert", lambda x, a: invert(x), "255 - x")
RANDOM_EQUALIZE = _with_prob("RandomEqualize", lambda x, a: equalize(x), "equalised")
RANDOM_AUTO_CONTRAST = _with_prob("RandomAutoContrast",
                                  lambda x, a: autocontrast(x, a["cutoff"], a["ignore"]),
                                  "auto-contrasted", {"cutoff": 0.0, "ignore": []})
RANDOM_ADJUST_SHARPNESS = _with_prob(
    "RandomAdjustSharpness", lambda x, a: sharpness(x[None], np.float32([a["degree"]]))[0],
    "sharpened by degree", {"degree": 1.0})

RANDOM_POSTERIZE = _define("RandomPosterize", {"bits": [8, 8]},
                           "Posterize with bits drawn in [bits[0], bits[1]] (1 draw)", draws=1)
_per_image(RANDOM_POSTERIZE, lambda x, a, u: posterize(
    x, min(int(a["bits"][0] + u[0] * (a["bits"][1] - a["bits"][0] + 1)), a["bits"][1])), 1)

RANDOM_SOLARIZE = _define("RandomSolarize", {"threshold": [0, 255]},
                          "Solarize at a threshold drawn in [threshold[0], threshold[1]] (1 draw): "
                          "pixels at or above it inverted", draws=1)
_per_image(RANDOM_SOLARIZE, lambda x, a, u: solarize(
    x, float(factor(u[0], a["threshold"][0], a["threshold"][1])), 255), 1)


RANDOM_COLOR = _define("RandomColor", {"degrees": [0.1, 1.9]},
                       "blended with its grey by a factor drawn in degrees (1 draw): "
                       "MindSpore's addWeighted(x, t, grey, 1 - t)", draws=1,
                       infer=lambda a, ins: _rgb_u8("RandomColor", ins))


def blend_with_grey(x, t: np.float32):
    """MindSpore's RandomColor kernel: the image itself within half a level's
    worth of 1 (0.00195), its grey within that of 0, else OpenCV's
    ``addWeighted(x, t, grey, 1 - t, 0)`` (in that order: its rounding)."""
    cv2 = _opencv()
    eps = 0.00195
    if abs(float(t) - 1.0) < eps:
        return x.copy()
    grey = cv2.cvtColor(x, cv2.COLOR_RGB2GRAY)
    grey3 = cv2.merge([grey, grey, grey])
    if abs(float(t)) < eps:
        return grey3
    return cv2.addWeighted(x, float(t), grey3, float(np.float32(1) - t), 0)


_per_image(RANDOM_COLOR, lambda x, a, u: blend_with_grey(x, factor(u[0], *a["degrees"])), 1)


# --- colour spaces: ConvertColor ------------------------------------------------------

# MindSpore's ConvertMode (lower case) -> (OpenCV's code, channels out).
# OpenCV takes 3 or 4 channels for every mode but the grey ones' (1), as
# MindSpore does (RGBA2GRAY on an RGB image is its grey).
CONVERT_MODES = {
    "color_bgr2bgra": (0, 4), "color_bgra2bgr": (1, 3), "color_bgr2rgba": (2, 4),
    "color_rgba2bgr": (3, 3), "color_bgr2rgb": (4, 3), "color_bgra2rgba": (5, 4),
    "color_bgr2gray": (6, 1), "color_rgb2gray": (7, 1), "color_gray2bgr": (8, 3),
    "color_gray2bgra": (9, 4), "color_bgra2gray": (10, 1), "color_rgba2gray": (11, 1),
}


def _convert_channels(mode: str) -> tuple[int, ...]:
    return (1,) if mode.startswith("color_gray2") else (3, 4)


def _infer_convert_color(attrs, ins):
    code, c_out = CONVERT_MODES[attrs["convert_mode"]]
    t = ins[0]
    if hw_images(t):                 # a grey image without its channel axis
        t = t.with_shape((*t.shape, 1))
    _, h, w, c = image_dims("ConvertColor", t, dtypes=("u8", "u16", "f32"),
                            channels=_convert_channels(attrs["convert_mode"]))
    lead = t.shape[:-3]
    return [TensorType(t.dtype, (*lead, h, w) if c_out == 1 else (*lead, h, w, c_out))]


CONVERT_COLOR = define("vision.ConvertColor", kind=MAP, family=FAMILY, operands=("image",),
                       attrs={"convert_mode": REQUIRED}, traits=(Pure(),), infer=_infer_convert_color,
                       doc="OpenCV's cvtColor in MindSpore's ConvertMode; a grey result without "
                           "its channel axis")


@CONVERT_COLOR.host_batch
def _convert_color(inputs, attrs, draws):
    cv2 = _opencv()
    code, c_out = CONVERT_MODES[attrs["convert_mode"]]
    channels = _convert_channels(attrs["convert_mode"])
    x = np.asarray(inputs[0])
    if channels == (1,) and x.ndim == 3:          # a batch of [H, W] images
        x = x[..., None]
    _check_image_array("ConvertColor", x, batched=True)
    if x.shape[-1] not in channels:
        raise ValueError(f"ConvertColor: {attrs['convert_mode'].upper()} takes images of "
                         f"{' or '.join(map(str, channels))} channel(s), got an image of shape {x.shape[1:]}")
    out = np.empty((*x.shape[:3], c_out), x.dtype)
    for i, image in enumerate(x):
        out[i] = cv2.cvtColor(image, code).reshape(out.shape[1:])
    return [out[..., 0] if c_out == 1 else out]


# --- batch mixing: MixUpBatch, CutMixBatch --------------------------------------------
#
# After batch, on (images, one-hot labels): MindSpore's arithmetic (its
# mixup_batch_op.cc and cutmix_batch_op.cc) with irc's draws: one uniform per
# batch seeds a generator for the Beta(alpha, alpha) mixing weights (as a
# ratio of two Gamma(alpha) draws, MindSpore's way), the partner permutation
# and CutMix's boxes.

def _infer_mix(op: str):
    def infer(attrs, ins):
        images, labels = ins
        if images.rank != 4:
            raise ValueError(f"{op}: expected a batch of images (rank 4, NHWC or NCHW), got "
                             f"{images}; batch first")
        if labels.rank not in (2, 3) or labels.dtype in ("bytes", "bool"):
            raise ValueError(f"{op}: expected one-hot labels [N, C] or [N, L, C], got {labels}; "
                             f"apply transforms.OneHot before batch")
        return [images, labels.with_dtype("f32")]
    return infer


def _batch_rng(u) -> np.random.Generator:
    return np.random.default_rng(int(np.float64(uniforms(u, 1)[0]) * (1 << 53)))


def _beta(rng: np.random.Generator, alpha: float) -> np.float32:
    x1, x2 = rng.gamma(alpha, 1.0, 2).astype(np.float32)
    return np.float32(x1 / (x1 + x2))


def _blend(a, b, lam: np.float32):
    y = a.astype(np.float32) * lam + b.astype(np.float32) * (np.float32(1) - lam)
    if a.dtype == np.uint8:
        return np.clip(np.rint(y), 0, 255).astype(np.uint8)
    return y.astype(a.dtype)


MIXUP_BATCH = define("vision.MixUpBatch", kind=MAP, family=FAMILY, operands=("images", "labels"),
                     results=("images", "labels"), attrs={"alpha": 1.0},
                     traits=(Pure(), Random(lambda attrs: 1)), infer=_infer_mix("MixUpBatch"),
                     doc="lam ~ Beta(alpha, alpha), a permutation p: images lam x + (1 - lam) x[p] "
                         "(uint8 rounded), labels lam y + (1 - lam) y[p] in float32 (1 draw a batch)")


@MIXUP_BATCH.host_sample
def _mixup(inputs, attrs, draws):
    images, labels = np.asarray(inputs[0]), np.asarray(inputs[1]).astype(np.float32)
    rng = _batch_rng(draws)
    lam = _beta(rng, float(attrs["alpha"]))
    perm = rng.permutation(len(images))
    out_labels = (labels * lam + labels[perm] * (np.float32(1) - lam)).astype(np.float32)
    return [_blend(images, images[perm], lam), out_labels]


CUTMIX_BATCH = define("vision.CutMixBatch", kind=MAP, family=FAMILY, operands=("images", "labels"),
                      results=("images", "labels"),
                      attrs={"image_batch_format": "nhwc", "alpha": 1.0, "prob": 1.0},
                      traits=(Pure(), Random(lambda attrs: 1)), infer=_infer_mix("CutMixBatch"),
                      doc="with probability prob an image takes a box of its partner's pixels "
                          "(side sqrt(1 - lam), lam ~ Beta(alpha, alpha)) and the labels mix by "
                          "the box's share (1 draw a batch)")


def _crop_box(rng, height: int, width: int, lam: np.float32):
    """MindSpore's GetCropBox: (x, y, w, h) of the box, clamped as there."""
    cut_ratio = np.float32(np.sqrt(np.float32(1) - lam))
    cut_w, cut_h = int(np.float32(width) * cut_ratio), int(np.float32(height) * cut_ratio)
    cx, cy = int(rng.integers(0, width + 1)), int(rng.integers(0, height + 1))
    x = min(max(cx - cut_w // 2, 0), width - 1)
    y = min(max(cy - cut_h // 2, 0), height - 1)
    x2 = min(max(cx + cut_w // 2, 0), width - 1)
    y2 = min(max(cy + cut_h // 2, 0), height - 1)
    return x, y, min(max(x2 - x, 1), width - 1), min(max(y2 - y, 1), height - 1)


@CUTMIX_BATCH.host_sample
def _cutmix(inputs, attrs, draws):
    images, labels = np.asarray(inputs[0]), np.asarray(inputs[1]).astype(np.float32)
    nchw = attrs["image_batch_format"] == "nchw"
    height, width = images.shape[2:4] if nchw else images.shape[1:3]
    rng = _batch_rng(draws)
    perm = rng.permutation(len(images))
    out_images, out_labels = images.copy(), labels.copy()
    for i in range(len(images)):
        lam = _beta(rng, float(attrs["alpha"]))
        if rng.random() < attrs["prob"]:
            x, y, w, h = _crop_box(rng, height, width, lam)
            j = perm[i]
            if nchw:
                out_images[i, :, y:y + h, x:x + w] = images[j, :, y:y + h, x:x + w]
            else:
                out_images[i, y:y + h, x:x + w] = images[j, y:y + h, x:x + w]
            share = np.float32(1) - np.float32(w * h) / np.float32(height * width)
            out_labels[i] = labels[i] * share + labels[j] * (np.float32(1) - share)
    return [out_images, out_labels]
