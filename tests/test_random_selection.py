"""transforms.RandomChoice, transforms.RandomApply,
vision.RandomSelectSubpolicy and vision.UniformAugment: ops that run other ops, picked per sample by
their draws (the pick's first, then each step's own), printed and parsed as
IR text with their steps, run eagerly and in a pipeline."""
from __future__ import annotations

import numpy as np
import pytest

import irc.dataset as ds
import irc.dataset.transforms as T
import irc.dataset.vision as vision
from irc.diagnostics import UserError
from irc.ir.registry import get
from irc.ir.text import parse_module, print_module

X = np.random.default_rng(0).integers(0, 256, (9, 11, 3)).astype(np.uint8)


def run(op, x, u):
    opdef = get(op.op_name)
    assert opdef.num_draws(op.attrs) == len(u)
    (y,) = opdef.host_sample_fn([x], op.attrs, np.asarray(u, np.float64))
    return y


def test_random_choice_runs_the_picked_sequence_with_the_draws_after_the_pick():
    rc = T.RandomChoice([vision.HorizontalFlip(), vision.RandomColor((0.2, 1.8)),
                         T.Compose([vision.Invert(), vision.VerticalFlip()])])
    assert get("transforms.RandomChoice").num_draws(rc.attrs) == 2        # the pick + RandomColor's one
    np.testing.assert_array_equal(run(rc, X, [0.1, 0.9]), X[:, ::-1])
    np.testing.assert_array_equal(run(rc, X, [0.5, 0.0]), vision.RandomColor((0.2, 0.2))(X))
    np.testing.assert_array_equal(run(rc, X, [0.9, 0.3]), (255 - X)[::-1])


def test_random_apply_applies_its_sequence_below_prob():
    ra = T.RandomApply([vision.Invert(), vision.HorizontalFlip()], prob=0.3)
    np.testing.assert_array_equal(run(ra, X, [0.29]), (255 - X)[:, ::-1])
    np.testing.assert_array_equal(run(ra, X, [0.31]), X)


def test_a_subpolicy_step_applies_by_its_probability_and_keeps_its_draws_in_place():
    policy = [[(vision.Invert(), 0.5), (vision.RandomColor((0.0, 2.0)), 0.5)],
              [(vision.HorizontalFlip(), 1.0)]]
    sp = vision.RandomSelectSubpolicy(policy)
    assert get("vision.RandomSelectSubpolicy").num_draws(sp.attrs) == 1 + (1 + 0) + (1 + 1)
    # sub-policy 0: Invert skipped (0.6 >= 0.5), RandomColor applied with its draw 0.25 -> factor 0.5
    np.testing.assert_array_equal(run(sp, X, [0.2, 0.6, 0.1, 0.25]), vision.RandomColor((0.5, 0.5))(X))
    np.testing.assert_array_equal(run(sp, X, [0.2, 0.1, 0.9, 0.25]), 255 - X)
    np.testing.assert_array_equal(run(sp, X, [0.7, 0.0, 0.0, 0.0]), X[:, ::-1])


def test_they_run_in_a_pipeline_and_their_steps_print_and_parse_as_ir_text():
    d = ds.NumpySlicesDataset({"image": np.stack([X] * 6)}, shuffle=False)
    d = d.map([T.RandomChoice([vision.HorizontalFlip(), vision.VerticalFlip()]),
               T.RandomApply([vision.Invert()], 0.5),
               vision.RandomSelectSubpolicy([[(vision.Equalize(), 0.8)], [(vision.Posterize(3), 0.4)]])],
              "image").batch(3)
    rows = [r["image"] for r in d.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert [r.shape for r in rows] == [(3, 9, 11, 3)] * 2
    module = d._iteration_module()
    text = print_module(module)
    assert "transforms.RandomChoice" in text and "vision.Equalize" in text
    assert print_module(parse_module(text)) == text


def test_a_python_function_or_an_empty_list_is_refused_at_its_line():
    with pytest.raises(UserError, match="RandomChoice: transforms must be MindSpore's transforms"):
        T.RandomChoice([lambda a: a])
    with pytest.raises(UserError, match="RandomApply: transforms must be a non-empty list"):
        T.RandomApply([])
    with pytest.raises(UserError, match=r"policy\[0\]\[0\] must be a \(transform, prob\) pair"):
        vision.RandomSelectSubpolicy([[vision.Invert()]])
    mixed = T.RandomChoice([vision.Invert(), vision.ConvertColor(vision.ConvertMode.COLOR_RGB2GRAY)])
    d = ds.NumpySlicesDataset({"image": np.stack([X] * 2)}, shuffle=False).map(mixed, "image")
    with pytest.raises(UserError, match="rows of different types"):
        list(d.create_dict_iterator(num_epochs=1, output_numpy=True))


def test_uniform_augment_applies_the_picked_transforms_whose_coin_says_so_in_list_order():
    ua = vision.UniformAugment([vision.HorizontalFlip(), vision.Invert(), vision.VerticalFlip()], num_ops=2)
    assert get("vision.UniformAugment").num_draws(ua.attrs) == 6          # a rank and a coin per transform
    # ranks 0.9, 0.1, 0.2: Invert and VerticalFlip picked, applied in the list's order
    np.testing.assert_array_equal(run(ua, X, [0.9, 0.1, 0.2, 0.0, 0.0, 0.0]), (255 - X)[::-1])
    np.testing.assert_array_equal(run(ua, X, [0.3, 0.8, 0.1, 0.0, 0.0, 0.0]), X[::-1, ::-1])
    # a picked transform whose coin is 0.5 or more is not applied (MindSpore's half of the picks)
    np.testing.assert_array_equal(run(ua, X, [0.9, 0.1, 0.2, 0.0, 0.7, 0.2]), X[::-1])
    np.testing.assert_array_equal(run(ua, X, [0.9, 0.1, 0.2, 0.0, 0.5, 0.5]), X)
    with pytest.raises(UserError, match="num_ops .2. is greater than the 1 transforms"):
        vision.UniformAugment([vision.Invert()], num_ops=2)
