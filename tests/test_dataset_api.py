"""The MindSpore-shaped dataset API: sources, pipeline operators, epochs,
sizes and shapes, run on the host engine."""
from __future__ import annotations

import os

import numpy as np
import pytest

import irc
import irc.dataset as ds
from irc.dataset import config
from irc.diagnostics import UserError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "samples", "data")
MNIST_TRAIN = os.path.join(DATA, "mnist", "train")


@pytest.fixture(autouse=True)
def seed():
    config.set_seed(1234)
    yield
    config.set_seed(config.DEFAULT_SEED)


def rows(dataset, num_epochs=1, **kw):
    """All rows of one epoch as dicts of numpy arrays."""
    it = dataset.create_dict_iterator(num_epochs=num_epochs, output_numpy=True, **kw)
    return list(it)


def col(dataset, name="a"):
    return [r[name].tolist() for r in rows(dataset)]


def slices(n=10, **kw):
    return ds.NumpySlicesDataset({"a": np.arange(n), "b": np.arange(n) * 10}, **kw)


# --- sources ----------------------------------------------------------------------

def test_numpy_slices_forms_and_order():
    assert col(slices(shuffle=False)) == list(range(10))
    d = ds.NumpySlicesDataset((np.arange(4), np.ones((4, 2), np.float32)), shuffle=False)
    assert d.get_col_names() == ["column_0", "column_1"]
    r = rows(d)[3]
    assert r["column_0"].tolist() == 3 and r["column_1"].shape == (2,)
    d = ds.NumpySlicesDataset([[1, 2], [3, 4], [5, 6]], column_names=["x"], shuffle=False)
    assert col(d, "x") == [[1, 2], [3, 4], [5, 6]]
    assert d.output_shapes() == [[2]] and d.output_types() == [np.dtype(np.int64)]
    # default shuffle=None shuffles a random-access source (MindSpore's default)
    got = col(slices())
    assert sorted(got) == list(range(10)) and got != list(range(10))


def test_generator_sources():
    def gen():
        for i in range(5):
            yield np.array([i, i + 1]), np.float32(i)

    d = ds.GeneratorDataset(gen, ["x", "y"])
    assert [r["x"].tolist() for r in rows(d)] == [[i, i + 1] for i in range(5)]
    assert d.get_dataset_size() == 5          # no len(): counted by reading it through
    assert d.output_shapes() == [[2], []] and d.output_types() == [np.int64, np.float32]

    class Table:
        def __getitem__(self, i):
            return (np.array(i * 3),)

        def __len__(self):
            return 7

    assert col(ds.GeneratorDataset(Table(), ["v"], shuffle=False), "v") == [i * 3 for i in range(7)]
    shuffled = col(ds.GeneratorDataset(Table(), ["v"]), "v")
    assert sorted(shuffled) == [i * 3 for i in range(7)]
    # a list is random-access (shuffled by default); an iterable and a one-shot iterator are read in order
    assert sorted(col(ds.GeneratorDataset([(np.int32(i),) for i in range(3)], ["v"]), "v")) == [0, 1, 2]

    class Stream:
        def __iter__(self):
            return iter([(np.int32(i),) for i in range(3)])

    assert col(ds.GeneratorDataset(Stream(), ["v"]), "v") == [0, 1, 2]
    one_shot = ds.GeneratorDataset(iter([(np.int32(i),) for i in range(4)]), ["v"])
    assert col(one_shot, "v") == [0, 1, 2, 3]
    # column_types casts
    typed = ds.GeneratorDataset(lambda: iter([(1,), (2,)]), ["v"], column_types=[irc.int32])
    assert typed.output_types() == [np.int32]
    assert [r["v"].dtype for r in rows(typed)] == [np.int32, np.int32]


def test_mnist_cifar_imagefolder_read_the_files():
    d = ds.MnistDataset(MNIST_TRAIN, shuffle=False)
    assert d.get_dataset_size() == 1500 and d.get_col_names() == ["image", "label"]
    raw = np.fromfile(os.path.join(MNIST_TRAIN, "train-images-idx3-ubyte"), np.uint8)[16:]
    labels = np.fromfile(os.path.join(MNIST_TRAIN, "train-labels-idx1-ubyte"), np.uint8)[8:]
    first = rows(d.take(3))
    assert first[2]["image"].shape == (28, 28, 1) and first[2]["image"].dtype == np.uint8
    assert np.array_equal(first[2]["image"][..., 0], raw[2 * 784:3 * 784].reshape(28, 28))
    assert first[2]["label"].dtype == np.uint32 and first[2]["label"] == labels[2]
    assert ds.MnistDataset(os.path.join(DATA, "mnist", "test"), usage="test").get_dataset_size() == 297

    c = ds.Cifar10Dataset(os.path.join(DATA, "cifar10"), usage="train", shuffle=False)
    assert c.get_dataset_size() == 1000
    assert ds.Cifar10Dataset(os.path.join(DATA, "cifar10")).get_dataset_size() == 1200
    rec = np.fromfile(os.path.join(DATA, "cifar10", "data_batch_1.bin"), np.uint8)[:3073]
    r0 = rows(c.take(1))[0]
    assert r0["image"].shape == (32, 32, 3) and r0["label"] == rec[0]
    assert np.array_equal(r0["image"], rec[1:].reshape(3, 32, 32).transpose(1, 2, 0))

    f = ds.ImageFolder(os.path.join(DATA, "imagefolder"), shuffle=False)
    assert f.get_dataset_size() == 60
    got = rows(f)
    assert [int(r["label"]) for r in got] == [0] * 20 + [1] * 20 + [2] * 20
    path = os.path.join(DATA, "imagefolder", "bars", "bars_000.jpg")
    assert got[0]["image"].dtype == np.uint8 and got[0]["image"].tobytes() == open(path, "rb").read()
    assert f.output_types() == [np.uint8, np.int32]
    decoded = rows(ds.ImageFolderDataset(os.path.join(DATA, "imagefolder"), decode=True, num_samples=2))
    assert decoded[0]["image"].ndim == 3 and decoded[0]["image"].shape[2] == 3
    sub = ds.ImageFolder(os.path.join(DATA, "imagefolder"), class_indexing={"disc": 7}, shuffle=False)
    assert {int(r["label"]) for r in rows(sub)} == {7} and sub.get_dataset_size() == 20


def test_sharding_and_num_samples():
    shards = [col(slices(shuffle=False, num_shards=3, shard_id=i)) for i in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]       # padded by wrapping
    shards = [col(slices(num_shards=2, shard_id=i)) for i in range(2)]
    assert sorted(shards[0] + shards[1]) == list(range(10))           # one permutation for all shards
    assert slices(num_shards=3, shard_id=0).get_dataset_size() == 4
    assert col(slices(shuffle=False, num_samples=4)) == [0, 1, 2, 3]
    assert slices(num_samples=4).get_dataset_size() == 4


# --- pipeline operators --------------------------------------------------------------

def test_batch_and_drop_remainder():
    b = slices(shuffle=False).batch(4)
    got = [r["a"].tolist() for r in rows(b)]
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert b.get_dataset_size() == 3 and b.get_batch_size() == 4
    d = slices(shuffle=False).batch(4, drop_remainder=True)
    assert [r["a"].tolist() for r in rows(d)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert d.get_dataset_size() == 2 and d.output_shapes() == [[4], [4]]
    # batches span source chunks (NumpySlices chunks are 128 rows)
    big = ds.NumpySlicesDataset({"a": np.arange(300)}, shuffle=False).batch(7)
    got = [r["a"] for r in rows(big)]
    assert np.array_equal(np.concatenate(got), np.arange(300)) and [len(g) for g in got][-1] == 300 % 7


def test_shuffle_is_deterministic_under_set_seed():
    base = slices(50, shuffle=False)
    config.set_seed(7)
    first = col(base.shuffle(8))
    config.set_seed(7)
    again = col(base.shuffle(8))
    config.set_seed(8)
    other = col(base.shuffle(8))
    assert first == again and first != other
    assert sorted(first) == list(range(50)) and first != list(range(50))
    # a buffer bigger than the data is a full shuffle
    assert sorted(col(base.shuffle(1000))) == list(range(50))


def test_epochs_reshuffle_and_stop_between_epochs():
    it = slices(20).shuffle(5).create_dict_iterator(num_epochs=2, output_numpy=True)
    e1 = [int(r["a"]) for r in it]
    e2 = [int(r["a"]) for r in it]
    e3 = [int(r["a"]) for r in it]
    assert sorted(e1) == sorted(e2) == list(range(20)) and e1 != e2 and e3 == []
    # a fresh iterator starts again at epoch 0
    assert [int(r["a"]) for r in slices(20).shuffle(5).create_dict_iterator(output_numpy=True)] == e1


def test_repeat_take_skip():
    d = slices(5, shuffle=False)
    assert col(d.repeat(3)) == list(range(5)) * 3
    assert d.repeat(3).get_dataset_size() == 15 and d.repeat(3).get_repeat_count() == 3
    assert col(d.repeat().take(12)) == (list(range(5)) * 3)[:12]
    assert col(d.take(2)) == [0, 1] and col(d.skip(3)) == [3, 4] and col(d.skip(9)) == []
    assert d.skip(3).get_dataset_size() == 2 and d.take(-1).get_dataset_size() == 5
    # repeat before batch batches across passes; after batch it replays batches
    assert [r["a"].tolist() for r in rows(d.repeat(2).batch(4))] == [[0, 1, 2, 3], [4, 0, 1, 2], [3, 4]]
    assert [r["a"].tolist() for r in rows(d.batch(4).repeat(2))] == [[0, 1, 2, 3], [4]] * 2
    # every pass of a shuffled source reshuffles
    passes = col(slices(8).repeat(2))
    assert passes[:8] != passes[8:] and sorted(passes[:8]) == sorted(passes[8:])


def test_project_rename_concat_zip():
    d = slices(4, shuffle=False)
    p = d.project(["b", "a"])
    assert p.get_col_names() == ["b", "a"] and list(rows(p)[1]) == ["b", "a"]
    r = d.rename(["a"], ["x"])
    assert r.get_col_names() == ["x", "b"] and col(r, "x") == [0, 1, 2, 3]
    c = d + d.skip(2)
    assert col(c) == [0, 1, 2, 3, 2, 3] and c.get_dataset_size() == 6
    assert col(d.concat([d.take(1), d.take(2)])) == [0, 1, 2, 3, 0, 0, 1]
    z = ds.zip((d.project("a"), d.rename(["a", "b"], ["c", "e"]).skip(1)))
    assert z.get_col_names() == ["a", "c", "e"] and z.get_dataset_size() == 3
    assert [(int(x["a"]), int(x["c"]), int(x["e"])) for x in rows(z)] == [(0, 1, 10), (1, 2, 20), (2, 3, 30)]
    assert d.project("a").zip(d.project("b").rename("b", "q")).get_col_names() == ["a", "q"]


def test_map_columns_python_callables_and_column_order():
    d = slices(4, shuffle=False)
    m = d.map(lambda a: a * 2, input_columns="a")
    assert col(m) == [0, 2, 4, 6] and m.get_col_names() == ["a", "b"]
    m = d.map(lambda a, b: (a + b, a - b, a), input_columns=["a", "b"], output_columns=["s", "t", "u"])
    assert m.get_col_names() == ["s", "t", "u"]
    assert [(int(x["s"]), int(x["t"])) for x in rows(m)][1] == (11, -9)
    m = d.map(lambda a: (a, a), input_columns="a", output_columns=["a1", "a2"])
    assert m.get_col_names() == ["a1", "a2", "b"]           # outputs first, then the rest
    m = d.map([lambda a: a + 1, lambda a: a * 10], input_columns="a", column_order=["b", "a"])
    assert m.get_col_names() == ["b", "a"] and col(m) == [10, 20, 30, 40]
    m = d.map(lambda b: b + 1, "b", num_parallel_workers=3)      # default input: first column
    assert col(m, "b") == [1, 11, 21, 31]


def test_queries_and_tensor_output():
    d = ds.MnistDataset(MNIST_TRAIN).batch(32, drop_remainder=True)
    assert d.get_dataset_size() == 1500 // 32
    assert d.output_shapes() == [[32, 28, 28, 1], [32]]
    assert d.output_types() == [np.uint8, np.uint32]
    assert d.get_batch_size() == 32 and d.get_repeat_count() == 1
    assert d.repeat(3).shuffle(4).get_batch_size() == 32 and d.shuffle(4).repeat(3).get_repeat_count() == 3
    image, label = next(iter(d))                     # __iter__: tuple iterator of Tensors
    assert isinstance(image, irc.Tensor) and image.shape == (32, 28, 28, 1)
    (only,) = next(d.create_tuple_iterator(columns=["label"], output_numpy=True))
    assert isinstance(only, np.ndarray) and only.shape == (32,)
    assert ds.ImageFolder(os.path.join(DATA, "imagefolder")).batch(2).repeat().get_dataset_size() == -1


def test_capture_records_datasets():
    from irc import capture
    cap = capture.Capture(script="x.py")
    saved, capture._current = capture._current, cap
    try:
        a = slices(4)
        b = a.batch(2)
    finally:
        capture._current = saved
    assert cap.datasets == [a, b] and cap.terminal_datasets() == [b]
    assert b.children == (a,) and a.children == ()
    assert b.source.endswith(f"test_dataset_api.py:{test_capture_records_datasets.__code__.co_firstlineno + 6}")


def test_to_tensor_is_chw_values_in_0_1():
    """vision.ToTensor as MindSpore's: HWC uint8 -> CHW float32 / 255 (its
    MNIST pipeline's batches are bit-identical to MindSpore 2.10's), the
    same as Rescale(1/255) + HWC2CHW, in a pipeline and called eagerly."""
    import irc.dataset.vision as vision
    image = np.random.default_rng(0).integers(0, 256, (5, 4, 3), dtype=np.uint8)
    out = vision.ToTensor()(image)
    assert out.dtype == np.float32 and out.shape == (3, 5, 4)
    np.testing.assert_array_equal(out, vision.HWC2CHW()(vision.Rescale(1 / 255, 0)(image)))
    assert np.abs(out - image.transpose(2, 0, 1) / 255).max() < 1e-7
    assert vision.ToTensor(np.float16)(image).dtype == np.float16
    d = ds.NumpySlicesDataset({"image": image[None].repeat(2, 0)}, shuffle=False)
    rows = list(d.map(vision.ToTensor(), "image").create_tuple_iterator(output_numpy=True))
    np.testing.assert_array_equal(rows[1][0], out)


def test_flat_map_is_refused_at_the_users_line():
    with pytest.raises(irc.diagnostics.UnsupportedError, match="flat_map") as e:
        ds.NumpySlicesDataset({"a": np.arange(4)}).flat_map(lambda a: a)
    assert "test_dataset_api.py" in e.value.where


def test_apply_runs_a_function_of_the_pipeline():
    data = ds.NumpySlicesDataset({"a": np.arange(8)}, shuffle=False).apply(lambda d: d.batch(3))
    assert [r[0].tolist() for r in data.create_tuple_iterator(output_numpy=True)] == [
        [0, 1, 2], [3, 4, 5], [6, 7]]                         # MindSpore 2.10's rows
    with pytest.raises(TypeError, match="must return a dataset"):
        data.apply(lambda d: 3)


def test_mindspore_methods_irc_lacks_are_refused_at_the_users_line():
    data = ds.NumpySlicesDataset({"a": np.arange(4)})
    with pytest.raises(irc.diagnostics.UnsupportedError, match="Dataset.flat_map") as e:
        data.flat_map(lambda a: a)
    assert "test_dataset_api.py" in e.value.where and "GeneratorDataset" in e.value.hint
    assert not hasattr(data, "flat_map") and hasattr(data, "batch")    # still an AttributeError
    with pytest.raises(AttributeError, match="no attribute 'not_mindspores'"):
        data.not_mindspores


def test_filter_keeps_rows_and_reports_a_failing_predicate_at_its_line():
    from irc.diagnostics import UserError
    d = ds.NumpySlicesDataset({"x": np.arange(10)}, shuffle=False).filter(lambda x: x % 3 == 0)
    assert [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)] == [0, 3, 6, 9]
    assert d.get_dataset_size() == 4
    bad = ds.NumpySlicesDataset({"x": np.arange(3)}, shuffle=False).filter(lambda x: x.no_such)
    with pytest.raises(UserError, match="filter: the predicate raised AttributeError") as e:
        list(bad.create_tuple_iterator(output_numpy=True))
    assert "test_dataset_api.py" in str(e.value.where)
    with pytest.raises(TypeError, match="predicate must be a function"):
        ds.NumpySlicesDataset({"x": np.arange(3)}).filter(3)


def test_a_map_drawing_from_numpy_draws_what_it_draws_in_mindspore():
    """A Python map that draws from numpy's global generator (the GAN
    tutorial's latent codes): the type probe leaves the generator as it was,
    and ``for row in dataset`` reads one epoch (MindSpore's num_epochs=1), so
    the rows and the next draw after the loop are MindSpore 2.10's."""
    ds.config.set_num_parallel_workers(1)
    np.random.seed(0)
    calls = []

    def latent(x):
        calls.append(1)
        return x, np.random.normal(size=2).astype("float32")

    data = ds.GeneratorDataset([(np.float32(i),) for i in range(8)], ["x"], shuffle=False)
    data = data.map(operations=latent, input_columns=["x"], output_columns=["x", "z"]).batch(4)
    assert data.get_dataset_size() == 2
    sums = [float(z.asnumpy().sum()) for _, z in data]
    assert sums == pytest.approx([7.072852, 3.565947], abs=1e-6)
    assert np.random.random() == pytest.approx(0.978618, abs=1e-6)
    assert len(calls) == 8 + 1        # every row once, and the probe of the first


def test_numa_enable_is_kept_and_checked():
    """The FCN-8s tutorial calls set_numa_enable(True) (irc leaves thread
    placement to the OS): it is read back, and a non-bool is a TypeError."""
    ds.config.set_numa_enable(True)
    assert ds.config.get_numa_enable() is True
    with pytest.raises(TypeError):
        ds.config.set_numa_enable(1)


def test_probe_copies_only_what_it_can_and_should():
    """A callable object is copied for irc's look-ahead; a plain function, an
    object holding what cannot be copied (a lock) or a large array is itself."""
    import threading

    from irc.dialects.dataset import probe_copy

    class Keeps:
        def __init__(self, payload=None):
            self.seen, self.payload = [], payload

        def __call__(self, x):
            self.seen.append(x)
            return x

        def method(self, x):
            return self(x)

    keeps = Keeps()
    probe_copy(keeps)(1)
    probe_copy(keeps.method)(2)
    assert keeps.seen == []
    plain = len
    assert probe_copy(plain) is plain and probe_copy(test_probe_copies_only_what_it_can_and_should) \
        is test_probe_copies_only_what_it_can_and_should
    locked = Keeps(threading.Lock())
    assert probe_copy(locked) is locked
    large = Keeps(np.zeros(40_000_000, np.float64))       # 320 MB
    assert probe_copy(large) is large



def test_a_source_row_the_sampler_never_reads_may_fail(capsys):
    """tests/mindspore_style/unsampled_bad_row.py: the column types come
    from the rows that read (YOLOv5 with an image missing stopped at
    construction, where MindSpore ran)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "unsampled_bad_row.py", rel=0, abs=0)


def test_a_source_none_of_whose_first_rows_read_is_reported_with_the_row():
    class Broken:
        def __getitem__(self, i):
            raise OSError(f"cannot open image {i}")

        def __len__(self):
            return 3

    with pytest.raises(UserError, match="raised OSError while reading row 0: cannot open image 0"):
        ds.GeneratorDataset(Broken(), column_names=["x"]).map(lambda x: x, "x").get_col_names()


def test_generic_transforms_as_mindspore(capsys):
    """tests/mindspore_style/generic_transforms.py: Fill, Mask, Slice,
    Concatenate and Unique (irc refused them: "not supported") give MindSpore
    2.10's rows, eager and in a pipeline; a pipeline of them prints and
    parses back as IR text."""
    from printout import prints_as_mindspore

    import irc.dataset.transforms as T
    from irc.ir.text import parse_module, print_module
    prints_as_mindspore(capsys, "generic_transforms.py", rel=0, abs=0)
    d = ds.NumpySlicesDataset({"x": np.arange(12, dtype=np.int32).reshape(4, 3)}, shuffle=False)
    d = d.map([T.Slice(..., [2, 0]), T.Mask(T.Relational.GE, 5, irc.int32), T.Fill(3),
               T.Concatenate(0, [1], [2, 2])], "x")
    assert [r["x"].tolist() for r in d.create_dict_iterator(output_numpy=True)][0] == [1, 3, 3, 2, 2]
    text = print_module(d._iteration_module())
    assert "transforms.Slice" in text and "transforms.Concatenate" in text
    assert print_module(parse_module(text)) == text
    with pytest.raises(UserError, match="Unique: input must be at least 2-D"):
        list(ds.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False).map(T.Unique(), "x", ["u", "i", "c"])
             .create_dict_iterator())
    with pytest.raises(TypeError, match="Mask: operator must be a Relational"):
        T.Mask("EQ", 1)
