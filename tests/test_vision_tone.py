"""MindSpore's fixed tone and region image ops (Invert, Posterize, Solarize,
AdjustBrightness/Contrast/Saturation/Sharpness, Equalize, AutoContrast,
GaussianBlur, Crop, Erase, the fixed flips) byte for byte as MindSpore 2.10
computes them (tests/mindspore_style/vision_tone.py), eagerly and in a
pipeline; their random forms draw per sample and reproduce after set_seed."""
from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest

import irc.dataset as ds
import irc.dataset.vision as vision
from irc.capture import mindspore_alias
from irc.diagnostics import UserError

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")
with open(os.path.join(HERE, "vision_tone.mindspore.json")) as f:
    MINDSPORE = json.load(f)


def _script():
    spec = importlib.util.spec_from_file_location("vision_tone_cases", os.path.join(HERE, "vision_tone.py"))
    module = importlib.util.module_from_spec(spec)
    with mindspore_alias():
        spec.loader.exec_module(module)
    return module


SCRIPT = _script()


@pytest.mark.parametrize("case", sorted(MINDSPORE))
def test_eagerly_as_mindspore(case):
    assert SCRIPT.digests(case) == MINDSPORE[case]


def test_in_a_pipeline_as_eagerly():
    """An ImageFolder chain of several of them gives the eager results."""
    folder = os.path.join(os.path.dirname(__file__), "..", "samples", "data", "imagefolder")
    chain = [vision.Decode(), vision.Equalize(), vision.AutoContrast(5.0), vision.GaussianBlur(3),
             vision.Posterize(5), vision.AdjustSaturation(1.4), vision.Crop((1, 2), (20, 24)),
             vision.Erase(0, 0, 4, 4, (10, 20, 30)), vision.HorizontalFlip()]
    data = ds.ImageFolderDataset(folder, shuffle=False, decode=False).take(5)
    raw = [row["image"] for row in data.create_dict_iterator(output_numpy=True)]
    piped = [row["image"] for row in data.map(chain, "image").create_dict_iterator(output_numpy=True)]
    for r, p in zip(raw, piped):
        y = r
        for op in chain:
            y = op(y)
        np.testing.assert_array_equal(p, y)


def test_random_forms_draw_per_sample_and_reproduce():
    images = np.stack(SCRIPT.IMAGES[:1] * 200)[:, :16, :16]
    data = ds.NumpySlicesDataset({"image": images}, shuffle=False)

    def run(op):
        ds.config.set_seed(7)
        return np.stack([r["image"] for r in data.map(op, "image").create_dict_iterator(output_numpy=True)])

    inverted = run(vision.RandomInvert(0.5))
    flipped = (inverted == 255 - images).all(axis=(1, 2, 3))
    kept = (inverted == images).all(axis=(1, 2, 3))
    assert (flipped | kept).all() and 70 < flipped.sum() < 130
    np.testing.assert_array_equal(run(vision.RandomInvert(0.5)), inverted)     # set_seed: the same draws
    np.testing.assert_array_equal(run(vision.RandomPosterize((3, 3)))[0], vision.Posterize(3)(images[0]))
    np.testing.assert_array_equal(run(vision.RandomSolarize((90, 90)))[0], vision.Solarize(90)(images[0]))
    np.testing.assert_array_equal(run(vision.RandomEqualize(1.0))[0], vision.Equalize()(images[0]))
    np.testing.assert_array_equal(run(vision.RandomAutoContrast(prob=0.0)), images)
    sharpened = run(vision.RandomAdjustSharpness(2.0, 1.0))[0]
    np.testing.assert_array_equal(sharpened, vision.AdjustSharpness(2.0)(images[0]))
    bits = {int(np.unique(255 - (y | 0x00) & 0xFF).size) for y in run(vision.RandomPosterize((1, 8)))[:40]}
    assert len(bits) > 1           # different bit depths drawn


@pytest.mark.parametrize("make, message", [
    (lambda: vision.Posterize(9), "bits"), (lambda: vision.GaussianBlur(4), "odd"),
    (lambda: vision.Solarize(300), "threshold"), (lambda: vision.RandomPosterize((6, 2)), "min <= max"),
    (lambda: vision.Crop((0, 0), 0), "size"), (lambda: vision.AutoContrast(cutoff=60), "cutoff"),
])
def test_bad_arguments_are_located(make, message):
    with pytest.raises((UserError, ValueError, TypeError), match=message) as caught:
        make()
    assert "test_vision_tone.py" in str(getattr(caught.value, "where", "") or caught.value)


def test_rotations_have_mindspores_geometry():
    """Rotate about the image's centre or a given one, on the same canvas or
    the rotated image's bounding box: MindSpore 2.10's shapes and, nearest
    neighbour, its pixels exactly (its bundled OpenCV 4's fixed-point
    source coordinates, ties rounding up; the package index's OpenCV 5
    rounds them to even: up to every pixel differed); bilinear within its
    rounding (at most 4 levels, where the OpenCV builds differ)."""
    want = np.load(os.path.join(HERE, "rotate.mindspore.npz"))
    got = SCRIPT.rotated()
    assert sorted(got) == sorted(want.files)
    for key in want.files:
        a, b = got[key].astype(int), want[key].astype(int)
        assert a.shape == b.shape, key
        if key.startswith("Rotate45"):      # the bilinear case
            assert np.abs(a - b).max() <= 4, key
        else:
            np.testing.assert_array_equal(a, b, err_msg=key)


def test_random_rotation_draws_its_angle():
    image = SCRIPT.IMAGES[6]
    data = ds.NumpySlicesDataset({"image": np.stack([image] * 20)}, shuffle=False)

    def run(op):
        ds.config.set_seed(3)
        return [r["image"] for r in data.map(op, "image").create_dict_iterator(output_numpy=True)]

    fixed = run(vision.RandomRotation((30, 30)))
    assert all(np.array_equal(y, vision.Rotate(30)(image)) for y in fixed)
    grown = run(vision.RandomRotation(90, expand=True))
    assert len({y.shape for y in grown}) > 1                   # each angle its own canvas
    assert all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(grown, run(
        vision.RandomRotation(90, expand=True))))


def _batches(op, nchw=False, seed=5):
    import irc.dataset.transforms as transforms
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (32, 6, 8, 3)).astype(np.uint8)
    if nchw:
        images = np.ascontiguousarray(images.transpose(0, 3, 1, 2))
    data = ds.NumpySlicesDataset({"image": images, "label": rng.integers(0, 4, 32).astype(np.int32)},
                                 shuffle=False)
    data = data.map(transforms.OneHot(4), "label").batch(8)
    ds.config.set_seed(seed)
    plain = list(data.create_tuple_iterator(output_numpy=True))
    ds.config.set_seed(seed)
    mixed = list(data.map(op, ["image", "label"]).create_tuple_iterator(output_numpy=True))
    return plain, mixed


def test_mixup_batch_mixes_each_image_and_label_with_a_partner_by_one_weight():
    plain, mixed = _batches(vision.MixUpBatch(0.4))
    for (x, y), (mx, my) in zip(plain, mixed):
        assert mx.dtype == np.uint8 and my.dtype == np.float32 and np.allclose(my.sum(1), 1)
        # one weight a batch: every label row holds lam and 1 - lam (or 1, a partner of its class)
        weights = {round(float(v), 4) for v in my[my > 0]} - {1.0}
        lam = max(weights, default=1.0)
        assert weights <= {lam, round(1 - lam, 4)}
        for i in range(8):      # each image is w x[i] + (1 - w) x[j] for a partner j, rounded
            blends = [np.rint(w * x[i].astype(np.float64) + (1 - w) * x[j]) for j in range(8)
                      for w in (lam, 1 - lam)]
            assert min(np.abs(mx[i] - b).max() for b in blends) <= 1
    again = _batches(vision.MixUpBatch(0.4))[1]
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(mixed, again))


@pytest.mark.parametrize("nchw", [False, True])
def test_cutmix_batch_pastes_a_box_and_mixes_labels_by_its_share(nchw):
    fmt = vision.ImageBatchFormat.NCHW if nchw else vision.ImageBatchFormat.NHWC
    plain, mixed = _batches(vision.CutMixBatch(fmt, 1.0, 1.0), nchw)
    for (x, y), (mx, my) in zip(plain, mixed):
        assert mx.shape == x.shape and mx.dtype == np.uint8 and np.allclose(my.sum(1), 1)
        for i in range(8):
            changed = (mx[i] != x[i]).any(axis=0) if nchw else (mx[i] != x[i]).any(axis=-1)
            if changed.any():                      # the changed pixels lie in one box
                rows, cols = np.flatnonzero(changed.any(1)), np.flatnonzero(changed.any(0))
                assert changed[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].mean() > 0.3
    unchanged = _batches(vision.CutMixBatch(fmt, 1.0, 0.0), nchw)[1]
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(plain, unchanged))


def test_batch_mixing_needs_batched_one_hot_labels():
    images = np.zeros((8, 4, 4, 3), np.uint8)
    data = ds.NumpySlicesDataset({"image": images, "label": np.zeros(8, np.int32)}, shuffle=False).batch(4)
    with pytest.raises(UserError, match="one-hot labels"):
        list(data.map(vision.MixUpBatch(), ["image", "label"]).create_tuple_iterator())


def test_pil_augmentation_in_a_batch_map_and_the_dropout_primitive(capsys):
    """tests/mindspore_style/pil_batch_map.py: the model zoo's RandAugment
    pattern (vision.ToPIL, a PIL augmentation, ToTensor, Normalize(is_hwc=False)
    in a per_batch_map) and ops.Dropout's (output, mask): as MindSpore 2.10."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "pil_batch_map.py", rel=1e-6)


def test_images_without_a_channel_axis_go_through_a_pipeline(capsys):
    """tests/mindspore_style/hw_images.py: [H, W] images (the model zoo's
    UNet reads TIFF pages so) through Rescale, Resize, Pad, CenterCrop,
    Normalize, the flips, Crop, Rotate and the tone ops, batched: MindSpore
    2.10's shapes, dtypes and values (its ops take <H, W>)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "hw_images.py")
    import irc.dataset as ds
    import irc.dataset.vision as vision
    data = ds.NumpySlicesDataset({"image": np.zeros((4, 6, 5), np.float32)}, shuffle=False)
    # offload asked: an [H, W] image stays on the host (its device form takes NHWC)
    data = data.map([vision.Rescale(2.0, 0.0), vision.HorizontalFlip()], "image", offload=True).batch(2)
    assert [img.shape for (img,) in data.create_tuple_iterator(output_numpy=True)] == [(2, 6, 5)] * 2


def test_python_operations_side_by_side_pass_pil_images(capsys):
    """tests/mindspore_style/pil_chain.py: consecutive Python operations of
    one map (ToPIL, PIL functions, back to numpy) run as MindSpore's
    Compose: the PIL image reaches the next function (irc gave it a numpy
    array, and the model zoo's ViT augmentation failed on img.mode)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "pil_chain.py", rel=0, abs=0.01)


def test_a_chain_of_python_operations_names_the_one_that_raised():
    def broken(img):
        return img.no_such_attribute

    data = ds.NumpySlicesDataset({"image": np.zeros((2, 8, 8, 3), np.uint8)}, shuffle=False)
    data = data.map([vision.ToPIL(), broken, np.array], input_columns="image")
    with pytest.raises(UserError, match="the Python function .*broken raised AttributeError"):
        list(data.create_tuple_iterator(output_numpy=True))


def test_hue_colour_blend_colour_spaces_and_resized_crop_as_mindspore(capsys):
    """AdjustHue, RandomColor, ConvertColor (every ConvertMode) and
    ResizedCrop: tests/mindspore_style/vision_more.py printed as under
    MindSpore 2.10, pixel sums and all."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "vision_more.py", rel=0, abs=0)


def test_random_color_blends_by_a_drawn_factor():
    from irc.dialects.vision import factor, uniforms
    from irc.dialects.vision_tone import blend_with_grey
    from irc.ir.registry import get
    x = np.random.default_rng(4).integers(0, 256, (3, 6, 5, 3)).astype(np.uint8)
    op = get("vision.RandomColor")
    attrs = op.normalize_attrs({"degrees": [0.2, 1.8]})
    u = np.array([[0.0], [0.5], [0.999]])
    (out,) = op.host_batch_fn([x], attrs, u)
    for i in range(3):
        t = factor(uniforms(u[i:i + 1], 1)[0, 0], 0.2, 1.8)
        np.testing.assert_array_equal(out[i], blend_with_grey(x[i], t))
    assert not np.array_equal(out[0], out[2])
    # the two ends MindSpore special-cases: the image itself and its grey
    np.testing.assert_array_equal(blend_with_grey(x[0], np.float32(1.001)), x[0])
    grey = blend_with_grey(x[0], np.float32(0.0))
    assert (grey[..., 0] == grey[..., 1]).all() and (grey[..., 1] == grey[..., 2]).all()


def test_affine_and_random_affine_as_mindspore(capsys):
    """tests/mindspore_style/affine.py: MindSpore's matrix and fill, nearest
    neighbour pixel for pixel; bilinear and bicubic sums within 0.1% (this
    machine's OpenCV rounds them a little differently)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "affine.py", rel=1e-3, abs=0)


def test_random_affine_draws_each_parameter_in_its_range():
    from irc.dialects.vision import factor, uniforms
    from irc.dialects.vision_tone import affine_matrix, warp
    from irc.ir.registry import get
    op = get("vision.RandomAffine")
    attrs = op.normalize_attrs({"degrees": [-20.0, 20.0], "translate": [-0.1, 0.1, 0.0, 0.2],
                                "scale": [0.8, 1.2], "shear": [-5.0, 5.0, 0.0, 3.0]})
    x = np.random.default_rng(5).integers(0, 256, (2, 12, 16, 3)).astype(np.uint8)
    u = np.random.default_rng(6).random((2, 6))
    (out,) = op.host_batch_fn([x], attrs, u)
    for i in range(2):
        v = uniforms(u[i:i + 1], 6)[0]
        m = affine_matrix(12, 16, factor(v[0], -20, 20), factor(v[1], np.float32(-0.1) * 16, np.float32(0.1) * 16),
                          factor(v[2], 0.0, np.float32(0.2) * 12), factor(v[3], 0.8, 1.2), factor(v[4], -5, 5),
                          factor(v[5], 0, 3))
        np.testing.assert_array_equal(out[i], warp(x[i], m, (16, 12), "nearest", (0.0, 0.0, 0.0, 0.0)))
    assert not np.array_equal(out[0], out[1])


def test_random_affine_and_uniform_augment_draw_as_mindspore(capsys):
    """tests/mindspore_style/random_augment_draws.py: RandomAffine's six
    float draws and UniformAugment's std::sample pick, its coin per pick and
    its transforms' own generators (seeded with the seed itself on every
    worker) take MindSpore 2.10's decisions: per-image sums over two epochs,
    one worker and two, equal to MindSpore's (irc applied every pick, and
    drew its own numbers for both ops)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "random_augment_draws.py", rel=0, abs=0)
