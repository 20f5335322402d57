"""Random samplers and the shuffle buffer read MindSpore 2.10's rows in
MindSpore's order for the same seed: every case of
tests/fixtures/mindspore_random_orders.json (written by MindSpore, see
mindspore_random_orders.py there) replayed through irc, epoch by epoch; and
the libstdc++ algorithms under them (irc.dialects.stdrandom) against their
definitions."""
import copy
import json
import os

import numpy as np
import pytest
from PIL import Image

import irc.dataset as ds
from fixtures.random_order_cases import build, first_values
from irc.dialects import stdrandom
from irc.dialects.samplers import reshuffled_rows

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "mindspore_random_orders.json")
with open(FIXTURE) as f:
    CASES = json.load(f)


@pytest.fixture(scope="module")
def image_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("folder")
    k = 0
    for c in ("cat", "dog", "eel"):
        (root / c).mkdir()
        for j in range(4):
            Image.fromarray(np.full((2, 2, 3), k, np.uint8)).save(root / c / f"{j:02d}.png")
            k += 1
    return str(root)


# 70,000 rows through a pipeline cost 1.7 s: that case (std::shuffle's one-
# swap-per-draw path, past 65,535 rows) is checked on the sampler's order
LARGE = {"random_70000"}


def checked(case, got):
    if "sizes" in case:
        assert [len(o) for o in got] == case["sizes"]
        assert [sum(i * v for i, v in enumerate(o)) for o in got] == case["checksums"]
        got = [o[:200] + o[-200:] for o in got]
    assert got == case["orders"]


@pytest.mark.parametrize("name", sorted(set(CASES) - LARGE))
def test_orders_match_mindspore(name, image_root):
    case = CASES[name]

    def folder(**kw):
        return ds.ImageFolderDataset(image_root, **kw).map(ds.vision.Decode(), "image")
    ds.config.set_seed(case["seed"])
    checked(case, first_values(build(case, ds, folder), case["epochs"]))


def test_a_large_sources_order_matches_mindspore():
    case = CASES["random_70000"]
    assert case["code"] == "src(70000, shuffle=True)"
    checked(case, [reshuffled_rows(case["seed"], 70000, p).tolist() for p in range(case["epochs"])])


def test_a_resumed_stream_reads_the_same_epochs():
    """A pass's order depends on the pass before it; the kept orders are a
    cache, so asking for epoch 3 first gives what epoch 3 of a run gives."""
    from irc.dialects.samplers import _ORDERS
    run = [reshuffled_rows(5, 1000, p) for p in range(4)]
    _ORDERS.clear()
    assert np.array_equal(reshuffled_rows(5, 1000, 3), run[3])
    assert np.array_equal(reshuffled_rows(5, 1000, 1), run[1])


def test_a_second_run_over_the_same_rows_replays_each_pass_once():
    """Two runs of one pipeline (a second iterator, a second Model.train)
    walk the same pass orders; the second must not replay from the first
    pass at every epoch because the first run's later orders are kept."""
    from irc.dialects.samplers import replayed
    steps = []

    def step(order, at):
        steps.append(at)
        return order + 1

    key = ("test-two-runs", object())
    for _run in range(2):
        for index in range(20):
            assert replayed(key, index, lambda: np.zeros(1), step)[0] == index
    assert len(steps) == 2 * 19


def test_mt19937_and_mt19937_64_are_the_standard_engines():
    # the C++ standard's check values: the 10000th output of a default-seeded engine
    assert int(stdrandom.Mt19937(5489).take(10000)[-1]) == 4123659995
    assert int(stdrandom.Mt19937_64(5489).take(10000)[-1]) == 9981545732273789042


def test_an_engine_made_from_a_dropped_ones_state_starts_afresh():
    # a dropped engine's numpy generator is reseeded for the next one made
    first = stdrandom.Mt19937(5489).take(5000)[-1]
    live = stdrandom.Mt19937(5489)
    live.take(9000)
    copied = copy.deepcopy(live)
    for seed in (1, 2, 3):
        stdrandom.Mt19937(seed).take(4096 * 3)
    assert int(stdrandom.Mt19937(5489).take(5000)[-1]) == int(first)
    assert int(live.take(1000)[-1]) == int(copied.take(1000)[-1]) == 4123659995


def test_uniform_below_rejects_as_libstdcxx_and_realigns():
    # bound 3 * 2**30 + 1: draws of 3 * 2**30 + 1 and above are rejected
    bound = 3 * 2 ** 30 + 1
    gen = stdrandom.Mt19937(1)
    raw = stdrandom.Mt19937(1).take(400).tolist()
    expected, at = [], 0
    for _ in range(200):
        while raw[at] >= bound:     # scaling is 1: past = bound
            at += 1
        expected.append(raw[at])
        at += 1
    assert stdrandom.uniform_below(gen, np.full(200, bound)).tolist() == expected
    assert gen() == raw[at]         # the values after the last draw were handed back
    small = stdrandom.uniform_below(stdrandom.Mt19937(2), np.full(1000, 6))
    assert set(small.tolist()) == set(range(6))


def test_shuffle_order_is_a_permutation_on_both_paths():
    for n in (1, 2, 3, 65535, 65536, 70001):
        order = stdrandom.shuffle_order(stdrandom.Mt19937(n), n)
        assert np.array_equal(np.sort(order), np.arange(n))


def test_config_workers_are_a_maps_workers_for_its_draws(image_root):
    """A map without num_parallel_workers has config's (MindSpore's default
    otherwise), and the workers decide which samples flip."""
    case = dict(CASES["flip_1_worker"], code=CASES["flip_1_worker"]["code"].replace(
        ", num_parallel_workers=1", ""))
    ds.config.set_num_parallel_workers(1)
    ds.config.set_seed(case["seed"])
    assert first_values(build(case, ds, None), case["epochs"]) == case["orders"]
    ds.config.set_num_parallel_workers(2)
    ds.config.set_seed(case["seed"])
    assert first_values(build(case, ds, None), case["epochs"]) == CASES["flip_2_workers"]["orders"]
