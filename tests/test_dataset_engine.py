"""The host engine: results equal the eager transforms, random draws are
reproducible whatever the chunking and worker count, bad input fails with
the file/column and the user's line, and no thread outlives its iterator."""
from __future__ import annotations

import os
import shutil
import threading
import time

import numpy as np
import pytest

import irc
import irc.dataset as ds
import irc.dataset.transforms as transforms
import irc.dataset.vision as vision
from irc.backends.host_engine import HostEngine, SegmentExec, Step
from irc.dataset import config
from irc.dialects import draws as draws_mod
from irc.dialects import dataset as D
from irc.diagnostics import UserError
from irc.frontend.pipeline import lower_pipeline
from irc.ir.graph import Module
from irc.ir.registry import get
from irc.ir.traits import Random
from dataset_helpers import here, rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "samples", "data")
MNIST = os.path.join(DATA, "mnist", "train")
FOLDER = os.path.join(DATA, "imagefolder")
@pytest.fixture(autouse=True)
def seed():
    config.set_seed(99)
    yield
    config.set_seed(config.DEFAULT_SEED)


def node_of(dataset, op: str):
    module = Module("m")
    graph = lower_pipeline(module, dataset, "host")
    (node,) = graph.find(op)
    return node


def wait_threads(baseline: int, timeout: float = 5.0) -> int:
    end = time.time() + timeout
    while threading.active_count() > baseline and time.time() < end:
        time.sleep(0.02)
    return threading.active_count()


# --- pipeline results equal the eager transforms --------------------------------------

def test_lenet_chain_equals_eager_ops_per_sample():
    ops = [vision.Resize((32, 32)), vision.Rescale(1 / 255, 0.0), vision.Rescale(1 / 0.3081, -0.1307 / 0.3081),
           vision.HWC2CHW()]
    src = ds.MnistDataset(MNIST, shuffle=False, num_samples=300)
    d = src.map(transforms.TypeCast(irc.int32), "label").map(ops, "image", num_parallel_workers=3).batch(32)
    got = rows(d)
    images = np.concatenate([r["image"] for r in got])
    labels = np.concatenate([r["label"] for r in got])
    for i, r in enumerate(rows(src)):
        x = r["image"]
        for op in ops:
            x = op(x)
        assert np.array_equal(images[i], x), i
        assert labels[i] == np.int32(r["label"])
    assert images.dtype == np.float32 and labels.dtype == np.int32 and len(images) == 300


@pytest.mark.parametrize("workers", [1, 2])
def test_tail_run_per_batch_gives_the_per_sample_batches(workers):
    # seed 000's chain: the iterator runs Normalize and HWC2CHW once per batch
    # (maps-after-batch); the uncompiled pipeline runs them per sample
    d = ds.ImageFolder(FOLDER, shuffle=True)
    d = d.map([vision.RandomCropDecodeResize(24), vision.RandomHorizontalFlip(0.5),
               vision.Normalize([120.0, 115.5, 104.0], [58.4, 57.1, 57.4]), vision.HWC2CHW()], "image",
              num_parallel_workers=workers).batch(7)
    it = d.create_dict_iterator(num_epochs=2, output_numpy=True)
    compiled = [r["image"] for _ in range(2) for r in it]
    assert "maps-after-batch" in " ".join(n.prov[-1] for n in d._iteration_module().graph("host").nodes()
                                          if n.prov)
    per_sample = [r["image"] for r in d._engine().rows(2)]
    assert len(compiled) == len(per_sample) == 18
    for a, b in zip(compiled, per_sample):
        assert a.dtype == b.dtype == np.float32 and a.shape == b.shape and np.array_equal(a, b)


def test_decoding_crop_runs_once_a_chunk(monkeypatch):
    # RowsAsList: the chunk's file bytes go to the op's batch form, not row by row
    per_row = []
    run_rows = Step.run_rows
    monkeypatch.setattr(Step, "run_rows", lambda self, *a, **k: per_row.append(self.short) or run_rows(self, *a, **k))
    d = ds.ImageFolder(FOLDER, shuffle=False).map(vision.RandomCropDecodeResize(16), "image").batch(10)
    assert [len(r["image"]) for r in rows(d)] == [10] * 6
    assert "RandomCropDecodeResize" not in per_row


def test_random_ops_draw_by_position_whatever_the_chunking_and_workers(monkeypatch):
    def pipeline(workers):
        d = ds.ImageFolder(FOLDER, shuffle=False, decode=True)
        d = d.map([vision.RandomResizedCrop(24), vision.RandomHorizontalFlip(0.5),
                   vision.RandomColorAdjust(0.4, 0.4, 0.4, 0.1)], "image", num_parallel_workers=workers)
        return d

    # (MindSpore's flips depend on num_parallel_workers: each worker has its
    # own generator, tests/test_random_orders.py; the rest do not)
    references = {workers: rows(pipeline(workers)) for workers in (1, 4)}
    reference = references[1]
    monkeypatch.setattr(D.ImageFolderReader, "chunk_rows", 5)
    # the first 3 pieces (15 rows) run in the producer's thread, the rest on the workers
    monkeypatch.setattr(SegmentExec, "PROBE_ROWS", 10)
    monkeypatch.setattr(SegmentExec, "WIDE_ROW_SECONDS", 0.0)
    for workers in (1, 4):
        again = rows(pipeline(workers))
        assert all(np.array_equal(a["image"], b["image"]) for a, b in zip(references[workers], again))
    # ... and they are exactly host_sample with draws(seed, node, epoch,
    # position), MindSpore's stream for the ops that have one
    d = pipeline(1)
    decoded = rows(ds.ImageFolder(FOLDER, shuffle=False, decode=True))
    module = Module("m")
    graph = lower_pipeline(module, d, "host")
    chain = [n for n in graph.topo_order() if n.op.startswith("vision.")]
    for pos in (0, 7, 59):
        x = decoded[pos]["image"]
        for node in chain:
            opdef = get(node.op)
            k = opdef.num_draws(node.attrs)
            stream = draws_mod.stream_for(opdef.trait(Random), node.attrs, node.in_types[0],
                                          node.attrs.get("workers"), len(decoded))
            (x,) = opdef.host_sample_fn([x], node.attrs,
                                        draws_mod.draws(99, node.name, 0, [pos], k, stream)[0])
        assert np.array_equal(reference[pos]["image"], x)
    # a different seed changes the draws
    config.set_seed(100)
    assert not all(np.array_equal(a["image"], b["image"]) for a, b in zip(reference, rows(pipeline(1))))


def test_random_op_after_shuffle_and_epochs():
    d = ds.NumpySlicesDataset({"img": np.zeros((40, 2, 3, 1), np.uint8) + np.arange(3)[None, None, :, None]})
    d = d.shuffle(8).map(vision.RandomHorizontalFlip(0.5), "img").batch(10)
    it = d.create_dict_iterator(num_epochs=2, output_numpy=True)
    e1 = np.concatenate([r["img"] for r in it])
    e2 = np.concatenate([r["img"] for r in it])
    flipped1 = e1[:, 0, 0, 0] == 2
    flipped2 = e2[:, 0, 0, 0] == 2
    assert 5 < flipped1.sum() < 35 and not np.array_equal(flipped1, flipped2)   # fresh draws per epoch
    it = d.create_dict_iterator(num_epochs=1, output_numpy=True)
    assert np.array_equal(np.concatenate([r["img"] for r in it]), e1)          # same seed, same run


def test_draws_are_a_function_of_position():
    a = draws_mod.draws(1, "image.3", 0, np.arange(2000, 2600), 3)
    b = draws_mod.draws(1, "image.3", 0, np.array([2599, 2000, 2300]), 3)
    assert np.array_equal(b, a[[599, 0, 300]])
    assert not np.array_equal(draws_mod.draws(1, "image.3", 1, [5], 3), draws_mod.draws(1, "image.3", 0, [5], 3))
    assert ((a >= 0) & (a < 1)).all()
    # row p is row p % BLOCK of its block's PCG64 table, however far the
    # table was made before (a block is made only as far as it is read)
    def table(block):
        seq = np.random.SeedSequence([7, draws_mod.node_key("image.9"), 2, block, 0xD4A5])
        return np.random.Generator(np.random.PCG64(seq)).random((draws_mod.BLOCK, 4))
    first = draws_mod.draws(7, "image.9", 2, np.arange(3, 40), 4)
    later = draws_mod.draws(7, "image.9", 2, np.arange(1000, 1100), 4)
    scattered = draws_mod.draws(7, "image.9", 2, np.array([900, 5, 1030]), 4)
    assert np.array_equal(first, table(0)[3:40])
    assert np.array_equal(later, np.concatenate([table(0)[1000:], table(1)[:76]]))
    assert np.array_equal(scattered, np.stack([table(0)[900], table(0)[5], table(1)[6]]))


def test_engine_runs_a_parsed_module_and_reports_positions():
    from irc.ir.text import parse_module, print_module
    module = Module("m")
    lower_pipeline(module, ds.MnistDataset(MNIST, num_samples=64).batch(16), "host")
    parsed = parse_module(print_module(module))
    engine = HostEngine(parsed, keep_positions=True)
    run = engine.run(1)
    chunk = run.next_chunk()
    keys = sorted(k for k in chunk.extra if k.startswith("#pos:"))
    assert keys == ["#pos:image", "#pos:image.1"]   # source and batch nodes
    assert chunk.cols[0][0].shape == (16, 28, 28, 1) and len(chunk.extra["#pos:image"][0]) == 16
    run.close()
    assert engine.size() == 4


# --- bad input --------------------------------------------------------------------------

def test_missing_dataset_folder():
    with pytest.raises(UserError) as e:
        ds.MnistDataset("no/such/folder")
    assert e.value.where == here(-1) and "'no/such/folder' does not exist" in e.value.message
    with pytest.raises(UserError) as e:
        ds.ImageFolder(os.path.join(FOLDER, "bars", "bars_000.jpg"))
    assert "is not a folder" in e.value.message


def test_an_image_folder_of_no_images_is_refused_with_why(tmp_path):
    """MindSpore's "no data found", said in words: files with no class
    folders (a path one level too deep), empty class folders, other extensions."""
    import shutil
    image = os.path.join(FOLDER, "bars", "bars_000.jpg")
    shutil.copy(image, tmp_path / "a.jpg")
    with pytest.raises(UserError) as e:
        ds.ImageFolderDataset(str(tmp_path)).get_dataset_size()
    assert "no images in" in e.value.message and "lie in the folder itself" in e.value.hint
    (tmp_path / "a.jpg").unlink()
    (tmp_path / "cat").mkdir()
    with pytest.raises(UserError) as e:
        list(ds.ImageFolderDataset(str(tmp_path)).create_dict_iterator())
    assert "class folders (cat) hold no files" in e.value.hint
    shutil.copy(image, tmp_path / "cat" / "a.jpg")
    with pytest.raises(UserError) as e:
        ds.ImageFolderDataset(str(tmp_path), extensions=[".png"]).get_dataset_size()
    assert "with the extensions ['.png']" in e.value.hint
    assert ds.ImageFolderDataset(str(tmp_path)).get_dataset_size() == 1


def test_truncated_mnist_and_cifar(tmp_path):
    mnist = tmp_path / "mnist"
    mnist.mkdir()
    raw = open(os.path.join(MNIST, "train-images-idx3-ubyte"), "rb").read()
    (mnist / "train-images-idx3-ubyte").write_bytes(raw[:16 + 784 * 10 + 100])
    shutil.copy(os.path.join(MNIST, "train-labels-idx1-ubyte"), mnist)
    d = ds.MnistDataset(str(mnist)); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        rows(d)
    assert e.value.where == where and "train-images-idx3-ubyte is truncated" in e.value.message
    with pytest.raises(UserError):
        d.get_dataset_size()

    cifar = tmp_path / "cifar"
    cifar.mkdir()
    (cifar / "data_batch_1.bin").write_bytes(b"\0" * (3073 * 2 + 5))
    d = ds.Cifar10Dataset(str(cifar)); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        rows(d.batch(2))
    assert e.value.where == where and "data_batch_1.bin is truncated" in e.value.message
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError) as e:
        rows(ds.MnistDataset(str(empty)))
    assert "no MNIST idx files" in e.value.message


def test_file_that_is_not_an_image(tmp_path):
    root = tmp_path / "folder"
    (root / "cat").mkdir(parents=True)
    shutil.copy(os.path.join(FOLDER, "bars", "bars_000.jpg"), root / "cat" / "a.jpg")
    (root / "cat" / "b.jpg").write_text("not a jpeg")
    d = ds.ImageFolder(str(root), shuffle=False)
    d = d.map([vision.Decode(), vision.Resize((8, 8))], "image", num_parallel_workers=2); where = here()  # noqa
    with pytest.raises(UserError) as e:
        rows(d)
    assert e.value.where == where
    assert "Decode failed on column 'image'" in e.value.message and "b.jpg" in e.value.message
    # the fused op decodes a chunk's rows in one call (RowsAsList): still the row's file
    fused = ds.ImageFolder(str(root), shuffle=False).map(vision.RandomCropDecodeResize(8), "image")
    with pytest.raises(UserError, match=r"RandomCropDecodeResize failed on column 'image' of .*b\.jpg"):
        rows(fused)
    decoded = ds.ImageFolder(str(root), shuffle=False, decode=True); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        rows(decoded)
    assert e.value.where == where and "b.jpg is not an image" in e.value.message


def test_python_map_op_wrong_columns_or_raising():
    d = ds.NumpySlicesDataset({"a": np.arange(10)}, shuffle=False)

    def sometimes_two(a):
        return (a, a) if a > 4 else a

    bad = d.map(sometimes_two, "a"); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        rows(bad)
    assert e.value.where == where and "sometimes_two returned 2 column(s)" in e.value.message

    def fails_late(a):
        if a == 7:
            raise KeyError("seven")
        return a

    bad = d.map(fails_late, "a", num_parallel_workers=3); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        rows(bad)
    assert e.value.where == where and "fails_late raised KeyError" in e.value.message
    # ... and names the line that raised, as MindSpore's traceback does
    assert f"(raised at tests/test_dataset_engine.py:{fails_late.__code__.co_firstlineno + 2})" in e.value.message
    two = d.map(lambda a: (a, a), "a"); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        rows(two)
    assert e.value.where == where and "produce 2 column(s)" in e.value.message

    def bad_source():
        yield (np.int32(1),)
        raise RuntimeError("disk gone")

    g = ds.GeneratorDataset(bad_source, ["a"]); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        rows(g)
    assert e.value.where == where and "raised RuntimeError: disk gone" in e.value.message
    assert f"(raised at tests/test_dataset_engine.py:{bad_source.__code__.co_firstlineno + 2})" in e.value.message
    g = ds.GeneratorDataset(lambda: iter([(1, 2)]), ["a"]); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        rows(g)
    assert e.value.where == where and "2 column(s) but column_names names 1" in e.value.message


def test_ragged_batch_names_the_column_and_line():
    d = ds.GeneratorDataset(lambda: iter([(np.zeros(3),), (np.zeros(3),), (np.zeros(4),)]), ["vec"])
    b = d.batch(3); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        rows(b)
    assert e.value.where == where and "column 'vec' has rows of different shapes: [3] and [4]" in e.value.message
    folder = ds.ImageFolder(FOLDER).map(vision.Decode(), "image").batch(4); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        rows(folder)
    assert e.value.where == where and "'image' has rows of different shapes" in e.value.message


# --- threads ----------------------------------------------------------------------------

def test_no_thread_outlives_its_iterator():
    baseline = threading.active_count()
    d = ds.MnistDataset(MNIST).map(vision.Rescale(0.5, 0.0), "image", num_parallel_workers=4).repeat()
    it = d.create_dict_iterator(output_numpy=True)
    for _ in range(5):
        next(it)
    assert threading.active_count() > baseline
    del it
    assert wait_threads(baseline) == baseline
    it = d.batch(8).create_tuple_iterator(num_epochs=3)
    next(it)
    it.stop()
    assert wait_threads(baseline) == baseline

    def consume():
        for i, _ in enumerate(d):
            if i == 3:
                break
    consume()
    assert wait_threads(baseline) == baseline


def test_workers_run_rows_in_parallel(monkeypatch):
    monkeypatch.setattr(SegmentExec, "PROBE_ROWS", 8)      # timed in one thread, before the workers

    def slow(a):
        time.sleep(0.004)     # releases the GIL, as Pillow decoding and big numpy ops do
        return a

    def timed(workers):
        d = ds.NumpySlicesDataset({"a": np.arange(64)}, shuffle=False).map(slow, "a",
                                                                            num_parallel_workers=workers)
        it = d.create_dict_iterator(num_epochs=1, output_numpy=True)
        start = time.perf_counter()
        out = [int(r["a"]) for r in it]
        return time.perf_counter() - start, out

    serial, out1 = timed(1)
    parallel, out8 = timed(8)
    assert out1 == out8 == list(range(64))
    # 7x alone here; 2x measured with the whole suite running beside it on
    # 2 cores, 1.35x with four other jobs' test suites too: serial workers
    # would be 1x
    assert parallel < 0.8 * serial, (serial, parallel)


def test_one_interrupted_probe_does_not_send_cheap_rows_to_the_threads(monkeypatch):
    """Cheap rows stay in one thread (threads lose on them: the GIL); a probe
    piece that reads slow because the machine was busy must not decide."""
    monkeypatch.setattr(SegmentExec, "PROBE_ROWS", 8)
    decided = []
    probe = SegmentExec._probe

    def watched(self, piece, state):
        out = probe(self, piece, state)
        if self.wide is not None and not decided:
            decided.append(self.wide)
        return out

    monkeypatch.setattr(SegmentExec, "_probe", watched)

    def cheap(a):
        if int(a) == 12:        # in the second probe piece: the machine was busy
            time.sleep(0.05)
        return a

    d = ds.NumpySlicesDataset({"a": np.arange(64)}, shuffle=False).map(cheap, "a", num_parallel_workers=2)
    assert [int(r["a"]) for r in d.create_dict_iterator(num_epochs=1, output_numpy=True)] == list(range(64))
    assert decided == [False]


def _map_segments(executor):
    """The SegmentExecs of a plan that run map ops, outermost first."""
    found = []
    while executor is not None:
        if isinstance(executor, SegmentExec) and executor.steps:
            found.append(executor)
        executor = getattr(executor, "child", None)
    return found


@pytest.mark.parametrize("nap, wide", [(0.002, True), (0.0, False)])
def test_workers_are_used_where_rows_are_long_enough(nap, wide):
    """Rows that sleep 2 ms (the GIL released, as in a large decode) run on
    the 4 workers after the probe; rows with no work at all stay in the
    producer's thread (threads would only hand the GIL around).  The rows
    are the same either way."""
    def work(a):
        if nap:
            time.sleep(nap)
        return a

    d = ds.NumpySlicesDataset({"a": np.arange(300)}, shuffle=False).map(work, "a", num_parallel_workers=4)
    engine = d._engine()
    assert [int(r["a"]) for r in engine.rows(1)] == list(range(300))
    (segment,) = _map_segments(engine.plan.root)
    assert segment.wide is wide


@pytest.mark.parametrize("nap, wide", [(0.004, True), (0.0005, False)])
def test_batches_go_to_the_workers_when_a_batch_is_long_enough(nap, wide):
    """After ``batch`` a row is a batch, handed over as one piece: 0.5 ms of
    work a batch (a 150 us row's worth) stays in the producer's thread."""
    def work(a):
        time.sleep(nap)
        return a

    d = ds.NumpySlicesDataset({"a": np.arange(384)}, shuffle=False).batch(16)
    d = d.map(work, "a", num_parallel_workers=2)
    engine = d._engine()
    assert np.concatenate([r["a"] for r in engine.rows(1)]).tolist() == list(range(384))
    (segment,) = _map_segments(engine.plan.root)
    assert segment.batch_rows and segment.wide is wide


def test_errors_in_workers_do_not_hang():
    baseline = threading.active_count()

    def explode(a):
        raise ValueError("boom")

    d = ds.NumpySlicesDataset({"a": np.arange(1000)}).map(explode, "a", num_parallel_workers=4)
    # the probe at lowering already meets the error
    start = time.time()
    with pytest.raises(UserError):
        rows(d)
    assert time.time() - start < 5
    assert wait_threads(baseline) == baseline


def test_image_folder_reads_each_file_once_per_run_within_its_cache_budget(tmp_path, monkeypatch):
    root = tmp_path / "folder"
    (root / "cat").mkdir(parents=True)
    for name in ("a.jpg", "b.jpg"):
        shutil.copy(os.path.join(FOLDER, "bars", "bars_000.jpg"), root / "cat" / name)
    opened = []
    real_open = open

    def counting_open(path, *args, **kwargs):
        opened.append(os.path.basename(str(path)))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    size = os.path.getsize(root / "cat" / "a.jpg")
    for budget, reads in ((1 << 20, 2), (size, 4), (0, 6)):     # 3 epochs, 2 files
        monkeypatch.setattr(D.ImageFolderReader, "cache_bytes", budget)
        opened.clear()
        it = ds.ImageFolder(str(root), shuffle=False).create_tuple_iterator(num_epochs=3, output_numpy=True)
        assert [len(list(it)) for _ in range(3)] == [2, 2, 2]
        it.stop()
        assert len([f for f in opened if f.endswith(".jpg")]) == reads, budget
