"""vision.AutoAugment (IMAGENET, CIFAR10, SVHN), RandAugment,
TrivialAugmentWide and RandomErasing, as MindSpore 2.10's: the policies'
draws are MindSpore's own (its std::mt19937, seed + worker) and their
pixels its kernels' (auto_augment_draws.py); RandomErasing is MindSpore's
Python arithmetic on irc's draws (random_erasing_box.py)."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import irc.dataset as ds
import irc.dataset.vision as vision
from irc.diagnostics import UserError
from irc.dialects import vision_augment as va
from irc.ir.text import parse_module, print_module
from printout import prints_as_mindspore
from test_random_selection import X, run     # a 9x11 RGB image; an op on it with given draws


def test_the_policies_draw_and_augment_as_mindspore(capsys):
    prints_as_mindspore(capsys, "auto_augment_draws.py", rel=0, abs=0)


def test_random_erasing_boxes_as_mindspore(capsys):
    prints_as_mindspore(capsys, "random_erasing_box.py", rel=0, abs=0)


def _pick(name: str) -> float:
    """The RandAugment / TrivialAugmentWide draw that picks ``name``."""
    return (va.SPACE_NAMES.index(name) + 0.5) / 15


def test_a_picked_sub_operation_is_the_op_it_names_at_its_magnitude():
    # RandAugment, 31 bins, magnitude 9: Posterize's bits round(8 - 9 * 4 / 30) = 7, Solarize's
    # threshold 255 - 9 * 8.5 = 178.5, Brightness 1 + 0.27 (negated: the sign's middle outcome)
    ra = vision.RandAugment(num_ops=1)
    np.testing.assert_array_equal(run(ra, X, [_pick("Posterize"), 0.9]), vision.Posterize(7)(X))
    np.testing.assert_array_equal(run(ra, X, [_pick("Solarize"), 0.5]), vision.Solarize(178.5)(X))
    np.testing.assert_array_equal(run(ra, X, [_pick("Brightness"), 0.1]), vision.AdjustBrightness(1.27)(X))
    np.testing.assert_array_equal(run(ra, X, [_pick("Brightness"), 0.5]), vision.AdjustBrightness(0.73)(X))
    np.testing.assert_array_equal(run(ra, X, [0.01, 0.5]), vision.AutoContrast()(X))
    np.testing.assert_array_equal(run(ra, X, [0.99, 0.5]), vision.AutoContrast()(X))   # RandInt's 14 % 14
    # TrivialAugmentWide, 5 bins: Rotate by 135 * 3 / 4 degrees, a shear of 0.99 rad
    ta = vision.TrivialAugmentWide(5, fill_value=(1, 2, 3))
    np.testing.assert_array_equal(run(ta, X, [_pick("Rotate"), 0.6, 0.1]),
                                  vision.Rotate(101.25, fill_value=(1, 3, 2))(X))
    shear = float(np.float32(float(np.float32(0.99) * np.float32(180)) / np.pi))
    np.testing.assert_array_equal(run(ta, X, [_pick("ShearX"), 0.75, 0.1]),
                                  vision.Affine(0, (0, 0), 1.0, (shear, 0), fill_value=(1, 2, 3))(X))
    # AutoAugment IMAGENET's sub-policy 13: Invert (0.6), Equalize (1.0)
    aa = vision.AutoAugment()
    np.testing.assert_array_equal(run(aa, X, [13.5 / 25, 0.6, 0.99, 0, 0]), vision.Equalize()(255 - X))
    np.testing.assert_array_equal(run(aa, X, [13.5 / 25, 0.61, 0.99, 0, 0]), vision.Equalize()(X))


def test_the_picks_follow_mindspores_rand_int():
    """RandInt(0, n) is uniform_int_distribution(0, n) % n: the first of the
    14 ops (AutoContrast) 2/15 of the time, the others 1/15, a sign negated
    1/3 of the time; TrivialAugmentWide's first bin 2/(bins + 1)."""
    u = np.random.default_rng(1).random(150000).astype(np.float32)
    ops = Counter(va._rand_int(x, 14) for x in u)
    assert ops[0] / len(u) == pytest.approx(2 / 15, abs=3e-3)
    assert max(ops[k] for k in range(1, 14)) / len(u) == pytest.approx(1 / 15, abs=3e-3)
    assert np.mean([va._rand_int(x, 2) for x in u[:30000]]) == pytest.approx(1 / 3, abs=1e-2)
    assert np.mean([va._rand_int(x, 31) == 0 for x in u]) == pytest.approx(2 / 32, abs=3e-3)


def test_the_magnitude_tables_are_mindspores_float32_linspace():
    space = va._space(False, 31, 224, 224)
    assert [float(v) for v in space["Posterize"][0][:5]] == [8.0, 8.0, 8.0, 8.0, 7.0]
    assert float(space["TranslateX"][0][-1]) == pytest.approx(150 / 331 * 224, rel=1e-6)
    assert [float(v) for v in va._space(True, 31, 1, 1)["Posterize"][0][-3:]] == [2.0, 2.0, 2.0]
    assert [float(v) for v in va._auto_space(10, 10)["Posterize"][0]] == [8, 8, 7, 7, 6, 6, 5, 5, 4, 4]


def test_they_run_in_a_pipeline_and_print_and_parse_as_ir_text():
    d = ds.NumpySlicesDataset({"image": np.stack([X] * 4)}, shuffle=False)
    d = d.map([vision.AutoAugment(vision.AutoAugmentPolicy.CIFAR10), vision.RandAugment(1, 5, 10),
               vision.TrivialAugmentWide(fill_value=(1, 2, 3)), vision.ToTensor(),
               vision.RandomErasing(value="random")], "image").batch(2)
    rows = [r["image"] for r in d.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert [(r.shape, r.dtype) for r in rows] == [((2, 3, 9, 11), np.float32)] * 2
    text = print_module(d._iteration_module())
    assert "vision.AutoAugment" in text and "vision.RandomErasing" in text
    assert print_module(parse_module(text)) == text


def test_bad_arguments_and_inputs_are_refused_at_the_users_line():
    with pytest.raises(UserError, match=r"magnitude must be in \[0, num_magnitude_bins\)"):
        vision.RandAugment(magnitude=31)
    with pytest.raises(UserError, match="policy='coco'"):
        vision.AutoAugment(policy="coco")
    with pytest.raises(UserError, match="num_magnitude_bins must be >= 2"):
        vision.TrivialAugmentWide(1)
    with pytest.raises(UserError, match="value must be an int, 3 ints or 'random'"):
        vision.RandomErasing(value="noise")
    with pytest.raises(UserError, match="expected an image of dtype u8"):
        vision.RandAugment()(X.astype(np.float32))
    d = ds.NumpySlicesDataset({"image": np.stack([X] * 2)}, shuffle=False).batch(2).map(vision.AutoAugment(), "image")
    with pytest.raises(UserError, match="apply it before batch"):
        list(d.create_dict_iterator(num_epochs=1, output_numpy=True))
