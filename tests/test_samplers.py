"""MindSpore's samplers in irc: deterministic orders equal MindSpore 2.10's
(baked in tests/fixtures/mindspore_sampler_orders.json and below), random
ones have MindSpore's multiset semantics and are reproducible under
config.set_seed; the sampler lives in the IR and survives its text form."""
import json
import os
from collections import Counter

import numpy as np
import pytest

import irc.dataset as ds
from irc.frontend.pipeline import lower_pipeline
from irc.ir.graph import Module
from irc.ir.text import parse_module, print_module

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "mindspore_sampler_orders.json")
with open(FIXTURE) as f:
    MINDSPORE_CASES = json.load(f)


def build(spec):
    sampler = getattr(ds, spec["kind"])(**spec["args"])
    if spec.get("child"):
        sampler.add_child(build(spec["child"]))
    return sampler


def rows(d, column=0):
    return [int(r[column]) for r in d.create_tuple_iterator(output_numpy=True)]


def slices(n, **kw):
    return ds.NumpySlicesDataset(np.arange(n), column_names=["x"], **kw)


def describe(case):
    return json.dumps(case["sampler"], separators=(",", ":")) + f" n={case['n']}"


@pytest.mark.parametrize("case", MINDSPORE_CASES, ids=describe)
def test_deterministic_orders_match_mindspore(case):
    if "error" in case:
        expected = {"RuntimeError": RuntimeError, "ValueError": ValueError,
                    "TypeError": TypeError}[case["error"]]
        with pytest.raises(expected):
            d = slices(case["n"], sampler=build(case["sampler"]))
            rows(d)
        return
    d = slices(case["n"], sampler=build(case["sampler"]))
    assert rows(d) == case["ids"]
    assert d.get_dataset_size() == case["size"] == len(case["ids"])


# -- random samplers: MindSpore's multisets, reproducible ---------------------------

def epochs(d, n=2, seed=7):
    ds.config.set_seed(seed)
    it = d.create_tuple_iterator(num_epochs=n, output_numpy=True)
    return [[int(r[0]) for r in it] for _ in range(n)]


def test_random_sampler_is_a_fresh_permutation_every_epoch_and_reproducible():
    d = slices(50, sampler=ds.RandomSampler())
    first, second = epochs(d)
    assert sorted(first) == sorted(second) == list(range(50))
    assert first != second
    assert epochs(d) == [first, second]                 # same seed, same draws
    assert epochs(d, seed=8) != [first, second]
    part = slices(50, sampler=ds.RandomSampler(num_samples=7))
    got = epochs(part)[0]
    assert len(got) == len(set(got)) == 7 and part.get_dataset_size() == 7


def test_random_sampler_with_replacement_draws_independently():
    d = slices(10, sampler=ds.RandomSampler(replacement=True, num_samples=20))
    got = epochs(d, n=1)[0]
    assert d.get_dataset_size() == len(got) == 10       # capped at the rows, as MindSpore
    assert len(set(got)) < 10 and all(0 <= i < 10 for i in got)


def test_shuffle_with_num_samples_draws_with_replacement_as_mindspore():
    # MindSpore's select_sampler: shuffle + num_samples -> RandomSampler(replacement=True);
    # MindSpore 2.10 read [4, 1, 1, 2, 9, 3, 9, 2, 0, 3] for this dataset
    d = slices(10, num_samples=10)
    got = [epochs(d, n=1, seed=s)[0] for s in range(5)]
    assert any(len(set(g)) < 10 for g in got)
    ordered = slices(10, num_samples=4, shuffle=False)
    assert rows(ordered) == [0, 1, 2, 3]


def test_subset_random_sampler_permutes_its_first_num_samples_indices():
    d = slices(10, sampler=ds.SubsetRandomSampler([1, 5, 7, 9], num_samples=3))
    first, second = epochs(d)
    assert sorted(first) == sorted(second) == [1, 5, 7]
    assert d.get_dataset_size() == 3


def test_weighted_random_sampler_follows_the_weights():
    d = slices(3000, sampler=ds.WeightedRandomSampler([1, 0, 3]))
    counts = Counter(epochs(d, n=1)[0])
    assert d.get_dataset_size() == 3000 and set(counts) <= {0, 2}
    assert abs(counts[2] / 3000 - 0.75) < 0.04
    once = slices(10, sampler=ds.WeightedRandomSampler([5, 0, 1, 1], num_samples=3, replacement=False))
    picks = [epochs(once, n=1, seed=s)[0] for s in range(40)]
    assert all(len(set(p)) == 3 and 1 not in p for p in picks)
    assert Counter(p[0] for p in picks).most_common(1)[0][0] == 0


def test_distributed_shuffle_partitions_the_rows_with_one_permutation():
    shards = [epochs(slices(12, sampler=ds.DistributedSampler(3, i)), n=1)[0] for i in range(3)]
    assert sorted(sum(shards, [])) == list(range(12))
    assert shards[0] != [0, 3, 6, 9]
    again = epochs(slices(12, num_shards=3, shard_id=0), n=1)[0]    # the same sampler, via arguments
    assert again == shards[0]


# -- ImageFolderDataset: class_indexing, get_class_indexing, PKSampler -------------

LAYOUT = {"cat": 3, "dog": 1, "ant": 4, "empty": 0, "zebra": 2}


@pytest.fixture
def folder(tmp_path):
    for cls, n in LAYOUT.items():
        (tmp_path / cls).mkdir()
        for i in range(n):
            (tmp_path / cls / f"{cls}_{i}.jpg").write_bytes(f"{cls}_{i}".encode())
    (tmp_path / "cat" / "notes.txt").write_bytes(b"notes")
    return str(tmp_path)


def files_and_labels(d):
    return [(bytes(r["image"]).decode(), int(r["label"]))
            for r in d.create_dict_iterator(output_numpy=True)]


ANT = [(f"ant_{i}", 0) for i in range(4)]
CAT = [("cat_0", 1), ("cat_1", 1), ("cat_2", 1), ("notes", 1)]


def relabel(pairs, label):
    return [(f, label) for f, _ in pairs]


def test_image_folder_order_and_class_indexing_match_mindspore(folder):
    plain = ds.ImageFolderDataset(folder, shuffle=False)
    assert files_and_labels(plain) == ANT + CAT + [("dog_0", 2), ("zebra_0", 4), ("zebra_1", 4)]
    assert plain.get_class_indexing() == {"ant": 0, "cat": 1, "dog": 2, "empty": 3, "zebra": 4}
    assert plain.map(lambda x: x, ["image"]).batch(2).get_class_indexing() == plain.get_class_indexing()
    assert ds.ImageFolderDataset(folder, shuffle=False, extensions=[".txt"]).get_dataset_size() == 1
    # MindSpore 2.10: the folders named in class_indexing, in name order, with its labels
    given = {"cat": -1, "dog": -5, "ant": 7}
    d = ds.ImageFolderDataset(folder, shuffle=False, class_indexing=given)
    assert files_and_labels(d) == relabel(ANT, 7) + relabel(CAT, -1) + [("dog_0", -5)]
    assert list(d.get_class_indexing().items()) == list(given.items())
    d = ds.ImageFolderDataset(folder, shuffle=False, class_indexing={"cat": 5, "dog": -2, "zebra": 0})
    assert files_and_labels(d) == relabel(CAT, 5) + [("dog_0", -2), ("zebra_0", 0), ("zebra_1", 0)]
    d = ds.ImageFolderDataset(folder, shuffle=False, class_indexing={"cat": 1, "nope": 2})
    assert files_and_labels(d) == CAT
    # MindSpore reports 11 here (every file of every folder); irc counts what is read
    assert d.get_dataset_size() == 4
    assert ds.NumpySlicesDataset(np.arange(3), ["x"]).get_class_indexing() == {}


def test_image_folder_samplers_match_mindspore(folder):
    d = ds.ImageFolderDataset(folder, sampler=[3, 0])
    assert files_and_labels(d) == [("ant_3", 0), ("ant_0", 0)]
    d = ds.ImageFolderDataset(folder, sampler=ds.DistributedSampler(3, 1, shuffle=False))
    assert files_and_labels(d) == [("ant_1", 0), ("cat_0", 1), ("notes", 1), ("zebra_1", 4)]


def test_pk_sampler_picks_num_val_per_class_in_label_order(folder):
    d = ds.ImageFolderDataset(folder, sampler=ds.PKSampler(5))
    got = files_and_labels(d)
    assert d.get_dataset_size() == 20
    assert [label for _, label in got] == [0] * 5 + [1] * 5 + [2] * 5 + [4] * 5
    assert [f for f, _ in got[10:15]] == ["dog_0"] * 5        # drawn with replacement
    assert {f for f, _ in got[:5]} <= {f for f, _ in ANT}
    capped = ds.ImageFolderDataset(folder, sampler=ds.PKSampler(2, num_samples=3))
    assert [label for _, label in files_and_labels(capped)] == [0, 0, 1]
    labelled = ds.ImageFolderDataset(folder, sampler=ds.PKSampler(1),
                                     class_indexing={"cat": -1, "dog": -5, "ant": 7})
    assert [label for _, label in files_and_labels(labelled)] == [-5, -1, 7]
    shuffled = ds.ImageFolderDataset(folder, sampler=ds.PKSampler(2, shuffle=True))
    labels = [label for _, label in files_and_labels(shuffled)]
    assert sorted(labels) == [0, 0, 1, 1, 2, 2, 4, 4] and labels[::2] == labels[1::2]
    with pytest.raises(RuntimeError, match="num_val must be greater than 0"):
        rows(ds.ImageFolderDataset(folder, sampler=ds.PKSampler(0)), 1)
    with pytest.raises(ValueError, match="doesn't support PKSampler"):
        slices(10, sampler=ds.PKSampler(2))


def test_pk_sampler_on_mnist_labels():
    d = ds.MnistDataset("samples/data/mnist/train", sampler=ds.PKSampler(2))
    assert d.get_dataset_size() == 20
    assert rows(d, 1) == [c for c in range(10) for _ in range(2)]    # MindSpore 2.10: the same


# -- argument errors: MindSpore's exception types --------------------------------------

@pytest.mark.parametrize("kwargs, error, message", [
    (dict(sampler=ds.SequentialSampler(), shuffle=False), RuntimeError, "sampler and shuffle"),
    (dict(sampler=ds.SequentialSampler(), num_samples=2), RuntimeError, "sampler and num_samples"),
    (dict(sampler=ds.SequentialSampler(), num_shards=2, shard_id=0), RuntimeError, "sampler and sharding"),
    (dict(num_shards=2), RuntimeError, "requires shard_id as well"),
    (dict(shard_id=0), RuntimeError, "shard_id is specified but num_shards is not"),
    (dict(num_shards=2, shard_id=2), ValueError, r"interval of \[0, 1\]"),
    (dict(sampler="abc"), TypeError, "Unsupported sampler object"),
    (dict(sampler=3.5), TypeError, r"Unsupported sampler object of type \(<class 'float'>\)"),
])
def test_file_source_argument_errors(folder, kwargs, error, message):
    with pytest.raises(error, match=message):
        ds.ImageFolderDataset(folder, **kwargs)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(sampler=ds.SequentialSampler(), shuffle=False), ValueError, "Conflicting arguments"),
    (dict(num_shards=2), ValueError, "passed in together"),
    (dict(num_shards=2, shard_id=2), ValueError, "less than num_shards"),
    (dict(sampler=4), TypeError, "either iterable or from mindspore.dataset.samplers"),
])
def test_python_source_argument_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        slices(10, **kwargs)


@pytest.mark.parametrize("make, error", [
    (lambda: ds.RandomSampler(replacement="x"), TypeError),
    (lambda: ds.RandomSampler(num_samples=-1), ValueError),
    (lambda: ds.SequentialSampler(start_index=1.5), TypeError),
    (lambda: ds.DistributedSampler("2", 0), TypeError),
    (lambda: ds.DistributedSampler(2, 0, shuffle=1), TypeError),
    (lambda: ds.PKSampler(2, num_class=3), NotImplementedError),
    (lambda: ds.WeightedRandomSampler(["a"]), TypeError),
    (lambda: ds.SubsetSampler([1, 0.5]), TypeError),
])
def test_sampler_argument_errors(make, error):
    with pytest.raises(error):
        make()


# -- children, add_sampler, use_sampler --------------------------------------------

def test_child_samplers_and_num_samples():
    # every value below is what MindSpore 2.10 gives for the same calls
    parent = ds.SequentialSampler(start_index=1, num_samples=2)
    parent.add_child(ds.SubsetSampler([9, 7, 5, 3]))
    assert parent.get_num_samples() == 2 and parent.get_child().indices == [9, 7, 5, 3]
    with pytest.raises(RuntimeError, match="already has a child"):
        parent.add_child(ds.SequentialSampler())
    d = slices(10, sampler=parent)
    assert rows(d) == [7, 5]
    d.add_sampler(ds.SequentialSampler(start_index=1))            # samples the old sampler's picks
    assert rows(d) == [5] and d.get_dataset_size() == 1
    d.use_sampler(ds.SubsetSampler([1, 0]))                       # replaces it, keeps its child
    assert rows(d) == [5, 7] and d.get_dataset_size() == 2       # MindSpore 2.10: the same
    late = ds.SequentialSampler(num_samples=3)
    d = slices(10, sampler=late)
    late.add_child(ds.SubsetSampler([4, 4, 8, 1]))                # read when iterated, as MindSpore
    assert rows(d) == [4, 4, 8]
    assert isinstance(slices(10, shuffle=False).sampler, ds.SequentialSampler)
    assert slices(10, num_shards=2, shard_id=1).is_sharded()


# -- the sampler is in the IR --------------------------------------------------------

def test_the_sampler_is_printed_parsed_and_run_from_the_ir(folder):
    sampler = ds.DistributedSampler(3, 1, shuffle=False)
    sampler.add_child(ds.SubsetSampler([10, 9, 8, 7, 6, 5, 4]))
    d = ds.ImageFolderDataset(folder, sampler=sampler)
    module = Module("pipeline")
    lower_pipeline(module, d, "host")
    text = print_module(module)
    assert ('sampler = {child = {indices = [10, 9, 8, 7, 6, 5, 4], kind = "SubsetSampler", '
            'num_samples = none}, kind = "DistributedSampler"') in text
    parsed = parse_module(text)
    assert print_module(parsed) == text
    from irc.backends.host_engine import HostEngine
    engine = HostEngine(parsed, "host")
    got = [bytes(r["image"]).decode() for r in engine.rows(1)]
    assert got == [bytes(r[0]).decode() for r in d.create_tuple_iterator(output_numpy=True)]
    assert got == ["zebra_0", "cat_2", "zebra_1"] and engine.size() == 3   # rows 9, 6, 10


def test_samplers_the_user_writes_pick_as_mindspores(capsys):
    """tests/mindspore_style/user_sampler.py: the model zoo's DistributedSampler
    pattern and a ds.Sampler subclass, two epochs, sizes and batches, as
    MindSpore 2.10 reads them (irc refused them before)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "user_sampler.py", rel=0, abs=0)


def test_each_iterator_has_its_own_copy_of_a_users_sampler():
    """MindSpore copies a dataset, its sampler too, for each iterator: a
    sampler reshuffling by its own epoch counter (the model zoo's
    DistributedSampler) gives a loop making an iterator per epoch (MelGAN's)
    the same order each time, and its own counter is left as it was
    (MindSpore 2.10 prints these orders and 2)."""
    class EpochSampler:
        def __init__(self, n):
            self.n, self.epoch = n, 0

        def __iter__(self):
            order = np.random.RandomState(seed=self.epoch).permutation(self.n).tolist()
            self.epoch += 1
            return iter(order)

        def __len__(self):
            return self.n

    class Source:
        def __getitem__(self, i):
            return np.array([i], np.int32)

        def __len__(self):
            return 6

    sampler = EpochSampler(6)
    data = ds.GeneratorDataset(Source(), ["x"], sampler=sampler, shuffle=False)
    for _ in range(3):
        assert [int(x[0]) for (x,) in data.create_tuple_iterator(output_numpy=True)] == [4, 1, 3, 2, 5, 0]
    assert sampler.epoch == 2
    # one iterator over three epochs: its copy's counter goes on (MindSpore 2.10's orders)
    rows = data.create_tuple_iterator(output_numpy=True, num_epochs=3)
    assert [[int(x[0]) for (x,) in rows] for _ in range(3)] == [
        [4, 1, 3, 2, 5, 0], [3, 5, 4, 1, 0, 2], [4, 5, 3, 0, 1, 2]]
    assert sampler.epoch == 2


def test_a_users_sampler_without_a_length_is_counted_on_a_copy():
    """Tacotron2's sampler has no __len__ and reshuffles by a counter of its
    own: its size is read through a copy, as MindSpore counts it, so the
    epochs take the orders MindSpore 2.10's take (MindSpore 2.10 prints
    these calls and orders)."""
    class Rotating:
        def __init__(self):
            self.calls = 0

        def __iter__(self):
            self.calls += 1
            return iter([(self.calls + k) % 4 for k in range(4)])

    class Source:
        def __getitem__(self, i):
            return np.array([i], np.int32)

        def __len__(self):
            return 4

    sampler = Rotating()
    data = ds.GeneratorDataset(Source(), ["x"], sampler=sampler, num_parallel_workers=1)
    assert sampler.calls == 2                   # MindSpore's checks of the iterable
    assert data.get_dataset_size() == 4 and sampler.calls == 2
    rows = data.create_tuple_iterator(output_numpy=True, num_epochs=2)
    assert [[int(x[0]) for (x,) in rows] for _ in range(2)] == [[3, 0, 1, 2], [0, 1, 2, 3]]
    assert sampler.calls == 2
