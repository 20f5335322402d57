"""Automatic augmentation policies of the ``vision`` dialect: MindSpore's
``AutoAugment``, ``RandAugment`` and ``TrivialAugmentWide`` (its
auto_augment_op.cc, rand_augment_op.cc, trivial_augment_wide_op.cc and
image_utils.cc's ApplyAugment), and its Python ``RandomErasing``.

Each sub-operation is the kernel of the op it names (Affine, Rotate,
AdjustBrightness ..., ``irc.dialects.vision_tone``), with its magnitude
computed as the C++ does, in float32.  The draws of the three policies
encode MindSpore's integer choices (``pick``), so their ``mindspore``
recipes can hand over the very choices MindSpore's ``std::mt19937`` makes.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.registry import MAP
from ..ir.traits import Pure, Random
from ..ir.types import TensorType
from . import stdrandom
from .transforms import pick
from .vision import DIALECT, FAMILY, _check_image_array, image_dims, sharpness, uniforms
from .vision_tone import (adjust, affine, autocontrast, equalize, invert, posterize, rotate, solarize)

define = DIALECT.define
f32 = np.float32


# --- the sub-operations (image_utils.cc's ApplyAugment) ------------------------------

def linspace(start, end, n: int, scale=1.0, offset=0.0, rounded=False) -> list:
    """MindSpore's Linspace, in float32; ``rounded``: half to even (its Round)."""
    step = f32(0) if n == 1 else (f32(end) - f32(start)) / f32(n - 1)
    out = [(f32(start) + f32(i) * step) * f32(scale) + f32(offset) for i in range(n)]
    return [f32(np.rint(v)) for v in out] if rounded else out


def apply_augment(x, name: str, magnitude, interpolation: str, fill, rotate_fill):
    """One sub-operation on an RGB uint8 image.  Translations are whole
    numbers handed to AffineOp, which multiplies them by the width or height
    (MindSpore 2.10's: a magnitude of 1 or more moves the image out of view);
    ``rotate_fill`` is the fill in the order the C++ hands it to Rotate."""
    m = f32(magnitude)
    if name in ("ShearX", "ShearY"):
        shear = float(f32(float(m * f32(180)) / math.pi))
        return affine(x, 0.0, [0.0, 0.0], 1.0, [shear, 0.0] if name == "ShearX" else [0.0, shear],
                      interpolation, fill)
    if name in ("TranslateX", "TranslateY"):
        t = float(int(m))
        return affine(x, 0.0, [t, 0.0] if name == "TranslateX" else [0.0, t], 1.0, [0.0, 0.0],
                      interpolation, fill)
    if name == "Rotate":
        return rotate(x, float(m), interpolation, False, None, rotate_fill)
    if name in ("Brightness", "Color", "Contrast"):
        key = {"Brightness": "brightness", "Color": "saturation", "Contrast": "contrast"}[name]
        return adjust(x, key, float(f32(1) + m))
    if name == "Sharpness":
        return sharpness(x[None], np.array([f32(1) + m], np.float32))[0]
    if name == "Posterize":
        return posterize(x, int(m))
    if name == "Solarize":          # a threshold pair (t, t): pixels at or above t inverted
        return solarize(x, float(m), 255.0)
    if name == "AutoContrast":
        return autocontrast(x, 0.0, [])
    if name == "Equalize":
        return equalize(x)
    if name == "Invert":
        return invert(x)
    return x.copy()                 # Identity


def _rotate_fill(fill) -> list:
    """The fill as the policies hand it to Rotate: (r, b, g), so a rotated
    image's corners are (g, b, r) (measured on MindSpore 2.10, all three)."""
    return [fill[0], fill[2], fill[1]]


def _space(wide: bool, bins: int, h: int, w: int) -> dict:
    """RandAugment's (``wide``: TrivialAugmentWide's) space: name ->
    (magnitudes, signed), in std::map's order (by name)."""
    top = 0.99 if wide else 0.9
    space = {"Identity": ([0.0], False),
             "ShearX": (linspace(0.0, 0.99 if wide else 0.3, bins), True),
             "ShearY": (linspace(0.0, 0.99 if wide else 0.3, bins), True),
             "TranslateX": (linspace(0.0, 32.0 if wide else f32(150.0) / f32(331) * f32(w), bins), True),
             "TranslateY": (linspace(0.0, 32.0 if wide else f32(150.0) / f32(331) * f32(h), bins), True),
             "Rotate": (linspace(0.0, 135.0 if wide else 30.0, bins), True),
             "Brightness": (linspace(0.0, top, bins), True),
             "Color": (linspace(0.0, top, bins), True),
             "Contrast": (linspace(0.0, top, bins), True),
             "Sharpness": (linspace(0.0, top, bins), True),
             "Posterize": (linspace(0.0, bins - 1.0, bins, f32(-6.0 if wide else -4.0) / f32(bins - 1.0), 8.0,
                                    True), False),
             "Solarize": (linspace(255.0, 0.0, bins), False),
             "AutoContrast": ([0.0], False),
             "Equalize": ([0.0], False)}
    return dict(sorted(space.items()))


SPACE_NAMES = list(_space(False, 2, 1, 1))


def _infer_rgb(op: str):
    def infer(attrs, ins):
        image_dims(op, ins[0], dtypes=("u8",), channels=(3,))
        if ins[0].rank != 3:
            raise ValueError(f"{op}: expected one <H, W, 3> image, got {ins[0]}; apply it before batch")
        return [ins[0]]
    return infer


def _one_rgb(op: str, x) -> np.ndarray:
    x = np.asarray(x)
    _check_image_array(op, x)
    if x.dtype != np.uint8 or x.ndim != 3 or x.shape[-1] != 3:
        raise ValueError(f"{op}: expected an RGB uint8 image <H, W, 3>, got {x.dtype} {x.shape}")
    return x


def _each_image(op):
    """Attach ``fn(image, attrs, draws)`` (one image, its draws) as the op's
    host rule on a batch of equal-sized images (the sizes stay)."""
    def attach(fn):
        @op.host_batch
        def run(inputs, attrs, draws):
            x = np.asarray(inputs[0])
            rows = [None] * len(x) if draws is None else np.asarray(draws)
            return [np.stack([fn(image, attrs, u) for image, u in zip(x, rows)]) if len(x) else x]
        return fn
    return attach


def _centre(k: int, n: int) -> float:
    """The draw that picks ``k`` of ``n``: its bin's middle."""
    return (k + 0.5) / n


# --- AutoAugment ---------------------------------------------------------------------

# (op, prob, magnitude bin; -1: none): auto_augment_op.cc's tables
POLICIES = {
    "imagenet": [
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, -1)),
        (("Equalize", 0.8, -1), ("Equalize", 0.6, -1)), (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, -1), ("Solarize", 0.2, 4)), (("Equalize", 0.4, -1), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, -1)), (("Posterize", 0.8, 5), ("Equalize", 1.0, -1)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)), (("Equalize", 0.6, -1), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)), (("Rotate", 0.4, 9), ("Equalize", 0.6, -1)),
        (("Equalize", 0.0, -1), ("Equalize", 0.8, -1)), (("Invert", 0.6, -1), ("Equalize", 1.0, -1)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)), (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)), (("Sharpness", 0.4, 7), ("Invert", 0.6, -1)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, -1)), (("Color", 0.4, 0), ("Equalize", 0.6, -1)),
        (("Equalize", 0.4, -1), ("Solarize", 0.2, 4)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, -1)),
        (("Invert", 0.6, -1), ("Equalize", 1.0, -1)), (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, -1), ("Equalize", 0.6, -1))],
    "cifar10": [
        (("Invert", 0.1, -1), ("Contrast", 0.2, 6)), (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)), (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, -1), ("Equalize", 0.9, -1)), (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)), (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, -1), ("Equalize", 0.5, -1)), (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)), (("Equalize", 0.3, -1), ("AutoContrast", 0.4, -1)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)), (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, -1)), (("Equalize", 0.2, -1), ("AutoContrast", 0.6, -1)),
        (("Equalize", 0.2, -1), ("Equalize", 0.6, -1)), (("Color", 0.9, 9), ("Equalize", 0.6, -1)),
        (("AutoContrast", 0.8, -1), ("Solarize", 0.2, 8)), (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, -1)), (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, -1), ("Solarize", 0.8, 3)), (("Equalize", 0.8, -1), ("Invert", 0.1, -1)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, -1))],
    "svhn": [
        (("ShearX", 0.9, 4), ("Invert", 0.2, -1)), (("ShearY", 0.9, 8), ("Invert", 0.7, -1)),
        (("Equalize", 0.6, -1), ("Solarize", 0.6, 6)), (("Invert", 0.9, -1), ("Equalize", 0.6, -1)),
        (("Equalize", 0.6, -1), ("Rotate", 0.9, 3)), (("ShearX", 0.9, 4), ("AutoContrast", 0.8, -1)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, -1)), (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, -1), ("AutoContrast", 0.8, -1)), (("Equalize", 0.6, -1), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)), (("ShearY", 0.8, 8), ("Invert", 0.7, -1)),
        (("Equalize", 0.9, -1), ("TranslateY", 0.6, 6)), (("Invert", 0.9, -1), ("Equalize", 0.6, -1)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)), (("Invert", 0.8, -1), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)), (("Invert", 0.6, -1), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)), (("ShearX", 0.1, 6), ("Invert", 0.6, -1)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)), (("ShearY", 0.8, 4), ("Invert", 0.8, -1)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)), (("ShearY", 0.8, 5), ("AutoContrast", 0.7, -1)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, -1))],
}


def _auto_space(h: int, w: int) -> dict:
    """AutoAugment's space (10 bins): name -> (magnitudes, signed)."""
    return {"ShearX": (linspace(0.0, 0.3, 10), True), "ShearY": (linspace(0.0, 0.3, 10), True),
            "TranslateX": (linspace(0.0, f32(150.0) / f32(331) * f32(w), 10), True),
            "TranslateY": (linspace(0.0, f32(150.0) / f32(331) * f32(h), 10), True),
            "Rotate": (linspace(0.0, 30.0, 10), True),
            "Brightness": (linspace(0.0, 0.9, 10), True), "Color": (linspace(0.0, 0.9, 10), True),
            "Contrast": (linspace(0.0, 0.9, 10), True), "Sharpness": (linspace(0.0, 0.9, 10), True),
            "Posterize": (linspace(0.0, 9.0, 10, f32(-4.0) / f32(9.0), 8.0, True), False),
            "Solarize": (linspace(256.0, 0.0, 10), False),
            "AutoContrast": ([0.0], False), "Equalize": ([0.0], False), "Invert": ([0.0], False)}


def _auto_augment_as_mindspore(gen, m: int, attrs, hw) -> np.ndarray:
    """MindSpore's GetParams: the sub-policy (uniform_int_distribution(0, n - 1)),
    two uniform_real_distribution<float> probabilities, two signs
    (uniform_int_distribution(0, 1)), per sample, in that order."""
    n = len(POLICIES[attrs["policy"]])
    out = np.empty((m, 5), np.float64)
    for row in out:
        row[0] = _centre(stdrandom.uniform_int(gen, n), n)
        row[1:3] = stdrandom.canonical_float(gen, 2)
        row[3] = _centre(stdrandom.uniform_int(gen, 2), 2)
        row[4] = _centre(stdrandom.uniform_int(gen, 2), 2)
    return out


_AUGMENT_ATTRS = {"interpolation": "nearest", "fill_value": [0, 0, 0]}

AUTO_AUGMENT = define(
    "vision.AutoAugment", kind=MAP, family=FAMILY, operands=("image",),
    attrs={"policy": "imagenet", **_AUGMENT_ATTRS}, infer=_infer_rgb("AutoAugment"),
    traits=(Pure(), Random(lambda attrs: 5, _auto_augment_as_mindspore)),
    doc="one sub-policy of policy's table picked (1 draw), each of its two (op, prob, bin) steps "
        "applied iff its draw <= prob (2 draws), its magnitude negated on a coin (2 draws): "
        "MindSpore's tables and draws")


@_each_image(AUTO_AUGMENT)
def _auto_augment(image, attrs, draws):
    x = _one_rgb("AutoAugment", image)
    u = uniforms(draws, 5)
    policy = POLICIES[attrs["policy"]]
    sub = policy[pick(u[0], len(policy))]
    space = _auto_space(*x.shape[:2])
    fill = list(attrs["fill_value"])
    for i, (name, prob, bin_) in enumerate(sub):
        if u[1 + i] <= f32(prob):
            magnitudes, signed = space[name]
            magnitude = magnitudes[bin_] if len(magnitudes) != 1 and bin_ != -1 else f32(0)
            if signed and pick(u[3 + i], 2) == 0:
                magnitude = -magnitude
            x = apply_augment(x, name, magnitude, attrs["interpolation"], fill, _rotate_fill(fill))
    return x


# --- RandAugment and TrivialAugmentWide -------------------------------------------------
#
# Their RandInt(0, n) is uniform_int_distribution(0, n)(gen) % n: n + 1
# outcomes, the first choice twice as likely.  A pick's draw picks one of
# the n + 1 outcomes; the sign's of (0, 1, 2): 1 negates (a third of the time).

def _rand_int(u, n: int) -> int:
    return pick(u, n + 1) % n


def _ms_rand_int(gen, n: int) -> float:
    return _centre(stdrandom.uniform_int(gen, n + 1), n + 1)


def _rand_augment_as_mindspore(gen, m: int, attrs, hw) -> np.ndarray:
    """Per sample and op: the op's RandInt, then the sign's."""
    k = 2 * int(attrs["num_ops"])
    out = np.empty((m, k), np.float64)
    for row in out:
        for j in range(0, k, 2):
            row[j] = _ms_rand_int(gen, len(SPACE_NAMES))
            row[j + 1] = _ms_rand_int(gen, 2)
    return out


RAND_AUGMENT = define(
    "vision.RandAugment", kind=MAP, family=FAMILY, operands=("image",),
    attrs={"num_ops": 2, "magnitude": 9, "num_magnitude_bins": 31, **_AUGMENT_ATTRS},
    infer=_infer_rgb("RandAugment"),
    traits=(Pure(), Random(lambda attrs: 2 * int(attrs["num_ops"]), _rand_augment_as_mindspore)),
    doc="num_ops times: one of 14 ops picked (AutoContrast twice as likely: MindSpore's RandInt), "
        "at the magnitude's bin, negated a third of the time (2 draws each)")


@_each_image(RAND_AUGMENT)
def _rand_augment(image, attrs, draws):
    x = _one_rgb("RandAugment", image)
    k = 2 * int(attrs["num_ops"])
    if not k:
        return x.copy()
    u = uniforms(draws, k)
    space = _space(False, int(attrs["num_magnitude_bins"]), *x.shape[:2])
    fill = list(attrs["fill_value"])
    for j in range(0, k, 2):
        name = SPACE_NAMES[_rand_int(u[j], len(SPACE_NAMES))]
        magnitudes, signed = space[name]
        magnitude = magnitudes[int(attrs["magnitude"])] if len(magnitudes) != 1 else f32(0)
        if signed and _rand_int(u[j + 1], 2):
            magnitude = -magnitude
        x = apply_augment(x, name, magnitude, attrs["interpolation"], fill, _rotate_fill(fill))
    return x


def _trivial_as_mindspore(gen, m: int, attrs, hw) -> np.ndarray:
    """Per sample: the op's RandInt, the magnitude bin's (only for an op with
    magnitudes), the sign's."""
    bins = int(attrs["num_magnitude_bins"])
    sized = {name for name, (mags, _) in _space(True, bins, 1, 1).items() if len(mags) != 1}
    out = np.full((m, 3), 0.5)
    for row in out:
        op = stdrandom.uniform_int(gen, len(SPACE_NAMES) + 1)
        row[0] = _centre(op, len(SPACE_NAMES) + 1)
        if SPACE_NAMES[op % len(SPACE_NAMES)] in sized:
            row[1] = _ms_rand_int(gen, bins)
        row[2] = _ms_rand_int(gen, 2)
    return out


TRIVIAL_AUGMENT_WIDE = define(
    "vision.TrivialAugmentWide", kind=MAP, family=FAMILY, operands=("image",),
    attrs={"num_magnitude_bins": 31, **_AUGMENT_ATTRS}, infer=_infer_rgb("TrivialAugmentWide"),
    traits=(Pure(), Random(lambda attrs: 3, _trivial_as_mindspore)),
    doc="one of 14 ops picked, a magnitude bin picked, negated a third of the time (3 draws; "
        "the first choice of each twice as likely: MindSpore's RandInt)")


@_each_image(TRIVIAL_AUGMENT_WIDE)
def _trivial_augment_wide(image, attrs, draws):
    x = _one_rgb("TrivialAugmentWide", image)
    u = uniforms(draws, 3)
    bins = int(attrs["num_magnitude_bins"])
    name = SPACE_NAMES[_rand_int(u[0], len(SPACE_NAMES))]
    magnitudes, signed = _space(True, bins, *x.shape[:2])[name]
    magnitude = magnitudes[_rand_int(u[1], bins)] if len(magnitudes) != 1 else f32(0)
    if signed and _rand_int(u[2], 2):
        magnitude = -magnitude
    fill = list(attrs["fill_value"])
    return apply_augment(x, name, magnitude, attrs["interpolation"], fill, _rotate_fill(fill))


# --- RandomErasing ------------------------------------------------------------------------
#
# MindSpore's is Python (py_transforms_util's get_erase_params and erase) on
# a CHW array, drawing from Python's ``random``; here the same arithmetic on
# irc's draws: the coin, four per attempt (area, aspect, top, left), one
# seeding the normal values of value="random".

def _erasing_draws(attrs) -> int:
    return 2 + 4 * int(attrs["max_attempts"])


def _infer_erasing(attrs, ins):
    t = ins[0]
    if t.rank != 3 or t.dtype in ("bytes", "bool"):
        raise ValueError(f"RandomErasing: expected one <C, H, W> array, got {t}; apply ToTensor "
                         f"(or HWC2CHW) before it")
    if isinstance(attrs["value"], list) and isinstance(t.shape[0], int) and t.shape[0] != 3:
        raise ValueError(f"RandomErasing: a value of 3 numbers needs 3 channels, got {t}")
    return [TensorType(t.dtype, t.shape)]


RANDOM_ERASING = define(
    "vision.RandomErasing", kind=MAP, family=FAMILY, operands=("image",),
    attrs={"prob": 0.5, "scale": [0.02, 0.33], "ratio": [0.3, 3.3], "value": 0, "max_attempts": 10},
    infer=_infer_erasing, traits=(Pure(), Random(_erasing_draws)),
    doc="with probability prob, a box of area scale x H x W and aspect ratio (tried max_attempts "
        "times until it fits) set to value: an int, 3 per channel, or 'random' (standard normal)")


def erasing_box(u, scale, ratio, h: int, w: int, max_attempts: int):
    """(top, left, height, width) of the box, or None: get_erase_params's
    arithmetic (in double, Python's round and randint) on draws ``u``."""
    for a in range(max_attempts):
        ua, ur, ut, ul = u[4 * a:4 * a + 4]
        erase_area = (scale[0] + (scale[1] - scale[0]) * ua) * (h * w)
        aspect = ratio[0] + (ratio[1] - ratio[0]) * ur
        ew = int(round(math.sqrt(erase_area * aspect)))
        eh = int(round(ew / aspect))
        if eh < h and ew < w:
            return min(int(ut * (h - eh + 1)), h - eh), min(int(ul * (w - ew + 1)), w - ew), eh, ew
    return None


@_each_image(RANDOM_ERASING)
def _random_erasing(image, attrs, draws):
    x = np.asarray(image)
    if x.ndim != 3:
        raise ValueError(f"RandomErasing: expected a <C, H, W> array, got shape {x.shape}")
    u = np.asarray(draws, np.float64)          # double, as Python's random draws
    if not float(attrs["prob"]) > u[0]:
        return x.copy()
    c, h, w = x.shape
    box = erasing_box(u[2:], attrs["scale"], attrs["ratio"], h, w, int(attrs["max_attempts"]))
    if box is None:
        return x.copy()
    top, left, eh, ew = box
    value = attrs["value"]
    if value == "random":
        rng = np.random.default_rng(int(u[1] * (1 << 53)))
        value = rng.standard_normal((c, eh, ew))
    elif isinstance(value, list):
        value = np.multiply(np.ones((c, eh, ew)), np.array(value)[:, None, None])
    out = x.copy()
    out[:, top:top + eh, left:left + ew] = value
    return out
