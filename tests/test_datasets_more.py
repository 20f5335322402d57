"""Cifar100Dataset, FashionMnistDataset, KMnistDataset, TextFileDataset and
CSVDataset: MindSpore 2.10's rows, and irc's errors for bad input."""
from __future__ import annotations

import struct
import textwrap

import numpy as np
import pytest

import irc.dataset as ds
from irc.cli import main
from irc.dataset import config
from irc.diagnostics import UserError
from dataset_helpers import here, rows

@pytest.fixture(autouse=True)
def seed():
    config.set_seed(5)
    yield
    config.set_seed(config.DEFAULT_SEED)


def texts(data):
    return [str(r["text"]) for r in rows(data)]


def test_the_new_sources_read_as_under_mindspore(capsys):
    """tests/mindspore_style/datasets_more.py: CIFAR-100 (test.bin), Fashion-MNIST
    and KMNIST idx files, text and CSV files, unshuffled, sharded, with
    num_samples and a map / batch on top: MindSpore 2.10's rows and sizes
    (its text readers' workers taking turns row by row)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "datasets_more.py")


@pytest.fixture
def text_files(tmp_path):
    for name, n in (("a.txt", 3), ("b.txt", 5), ("c.txt", 4)):
        (tmp_path / name).write_text("".join(f"{name[0]}{i}\n" for i in range(n)))
    return [str(tmp_path / n) for n in ("a.txt", "b.txt", "c.txt")]


def test_shuffled_text_files_are_repeatable_and_sharded_apart(text_files):
    plain = texts(ds.TextFileDataset(text_files, shuffle=False))
    first = texts(ds.TextFileDataset(text_files))                      # Shuffle.GLOBAL by default
    assert sorted(first) == sorted(plain) and first != plain
    assert texts(ds.TextFileDataset(text_files)) == first               # the same seed, the same order
    epochs = rows(ds.TextFileDataset(text_files), num_epochs=2)
    assert [str(r["text"]) for r in epochs[:12]] == first and \
        [str(r["text"]) for r in epochs[12:]] != first                  # every epoch reshuffles
    files_only = texts(ds.TextFileDataset(text_files, shuffle=ds.Shuffle.FILES))
    assert sorted(files_only) == sorted(plain)
    # the shards of one shuffle are runs of the same file order: together all rows, each once
    shards = [texts(ds.TextFileDataset(text_files, shuffle=True, num_shards=3, shard_id=k)) for k in range(3)]
    assert sorted(sum(shards, [])) == sorted(plain)
    for mode in (ds.Shuffle.INFILE, ds.Shuffle.PARTIAL, ds.Shuffle.ADAPTIVE):   # MindSpore: unshuffled
        assert texts(ds.TextFileDataset(text_files, shuffle=mode)) == plain
    assert ds.TextFileDataset(text_files, shuffle=True, num_samples=5).get_dataset_size() == 5


def test_sharded_text_files_take_runs_of_rows_round_the_files(text_files):
    # 12 rows in 5 shards of 3: shard 4 reads rows 12..14, i.e. rows 0..2 again
    got = texts(ds.TextFileDataset(text_files, shuffle=False, num_shards=5, shard_id=4,
                                   num_parallel_workers=1))
    assert got == ["a0", "a1", "a2"]
    got = texts(ds.TextFileDataset(text_files, shuffle=False, num_shards=2, shard_id=1,
                                   num_parallel_workers=2))
    assert got == ["b3", "c0", "b4", "c1", "c2", "c3"]    # b.txt's rest and c.txt, workers in turn


def test_csv_types_errors_and_batches(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("a,b,c\n1,2.5,x\n 7junk,+3,\n")
    d = ds.CSVDataset(str(f), column_defaults=[0, 0.0, ""], shuffle=False)
    assert d.output_types() == [np.int32, np.float32, np.dtype("<U")]
    assert [(int(r["a"]), float(r["b"]), str(r["c"])) for r in rows(d)] == [(1, 2.5, "x"), (7, 3.0, "")]
    batch = rows(ds.CSVDataset(str(f), shuffle=False).batch(2))[0]
    assert batch["c"].tolist() == ["x", ""] and batch["a"].tolist() == ["1", " 7junk"]
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3,\n")
    d = ds.CSVDataset(str(bad), column_defaults=[0, 0.0], shuffle=False); where = here()  # noqa: E702
    with pytest.raises(RuntimeError) as e:
        rows(d)
    assert isinstance(e.value, UserError) and e.value.where == where
    assert "bad.csv line 3, column 'b': '' is not a float" in e.value.message
    short = tmp_path / "short.csv"
    short.write_text("a,b\n1\n")
    with pytest.raises(RuntimeError, match="line 2 has 1 fields, but there are 2 columns"):
        ds.CSVDataset(str(short), shuffle=False).get_dataset_size()
    with pytest.raises(RuntimeError, match="size of 'column_defaults': 3"):
        ds.CSVDataset(str(bad), column_defaults=[0, 0, 0])
    with pytest.raises(ValueError, match="field_delim is invalid"):
        ds.CSVDataset(str(bad), field_delim="ab")
    with pytest.raises(TypeError, match="column_names should be a list of str"):
        ds.CSVDataset(str(bad), column_names="a")


def test_missing_files_and_folders_are_located_errors(tmp_path):
    for make in (lambda: ds.TextFileDataset(str(tmp_path / "nope.txt")),
                 lambda: ds.CSVDataset([str(tmp_path / "*.csv")]),
                 lambda: ds.Cifar100Dataset(str(tmp_path / "nope")),
                 lambda: ds.FashionMnistDataset(str(tmp_path / "nope"))):
        with pytest.raises(ValueError) as e:
            make()
        assert isinstance(e.value, UserError)
        assert e.value.where.rsplit(":", 1)[0] == here().rsplit(":", 1)[0]      # this file, the lambda's line
    with pytest.raises(ValueError, match="did not match any files"):
        ds.TextFileDataset([str(tmp_path / "nope.txt")])
    with pytest.raises(TypeError):
        ds.TextFileDataset(3)
    with pytest.raises(RuntimeError, match="requires shard_id"):
        ds.CSVDataset(str(tmp_path), num_shards=2)          # MindSpore checks the files later


def test_cifar100_and_mnist_style_folders(tmp_path):
    cifar = tmp_path / "cifar100"
    cifar.mkdir()
    rec = np.zeros((3, 3074), np.uint8)
    rec[:, 0], rec[:, 1], rec[:, 2] = [4, 5, 6], [40, 50, 60], 9
    (cifar / "train.bin").write_bytes(rec.tobytes())
    (cifar / "test.bin").write_bytes(rec[:1].tobytes())
    d = ds.Cifar100Dataset(str(cifar), shuffle=False)             # all: test.bin first (name order)
    assert [(int(r["coarse_label"]), int(r["fine_label"])) for r in rows(d)] == \
        [(4, 40), (4, 40), (5, 50), (6, 60)]
    assert ds.Cifar100Dataset(str(cifar), usage="train").get_dataset_size() == 3
    pk = ds.Cifar100Dataset(str(cifar), sampler=ds.PKSampler(1))   # classes: the coarse labels
    assert pk.get_dataset_size() == 3
    (cifar / "test.bin").write_bytes(rec.tobytes()[:100])
    d = ds.Cifar100Dataset(str(cifar), usage="test"); where = here()  # noqa: E702
    with pytest.raises(UserError) as e:
        rows(d)
    assert e.value.where == where and "Cifar100Dataset: " in e.value.message
    assert "test.bin is truncated" in e.value.message
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match="KMnistDataset: no MNIST idx files"):
        rows(ds.KMnistDataset(str(empty)))
    mnist = tmp_path / "mnist"
    mnist.mkdir()
    for prefix, label in (("train", 1), ("t10k", 2)):
        head = struct.pack(">IIII", 2051, 1, 28, 28)
        (mnist / f"{prefix}-images-idx3-ubyte").write_bytes(head + bytes(784))
        (mnist / f"{prefix}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, 1) + bytes([label]))
    for cls in (ds.MnistDataset, ds.FashionMnistDataset, ds.KMnistDataset):   # all: t10k-* first
        assert [int(r["label"]) for r in rows(cls(str(mnist), shuffle=False))] == [2, 1]


BAD_SCRIPT = textwrap.dedent("""\
    import mindspore.dataset as ds

    data = ds.TextFileDataset("no/such/file.txt")
    print(data.get_dataset_size())
""")


def test_irc_run_refuses_a_missing_file_at_the_users_line(tmp_path, capsys):
    script = tmp_path / "bad_text.py"
    script.write_text(BAD_SCRIPT)
    assert main(["run", str(script)]) == 1
    err = capsys.readouterr().err
    assert f"{script}:3: error: The following patterns did not match any files: " \
           f"['no/such/file.txt']" in err and "Traceback" not in err


def test_irc_compile_records_a_text_and_csv_pipeline(tmp_path, capsys):
    (tmp_path / "t.csv").write_text("x,y\n1,a\n2,b\n")
    script = tmp_path / "csv_script.py"
    script.write_text(textwrap.dedent(f"""\
        import numpy as np
        import mindspore.dataset as ds

        data = ds.CSVDataset({str(tmp_path / "t.csv")!r}, column_defaults=[0], shuffle=False)
        data = data.map(lambda x: x + np.int32(1), input_columns="x").batch(2)
        print([r["x"].tolist() for r in data.create_dict_iterator(output_numpy=True)])
    """))
    out = tmp_path / "out"
    assert main(["compile", str(script), "-o", str(out), "--no-render"]) == 0
    assert "[[2, 3]]" in capsys.readouterr().out
    ir = (out / "00_capture.ir").read_text()
    assert "dataset.CSVDataset()" in ir and 'column_types = ["i32[]", "bytes[]"]' in ir


def test_shuffled_text_file_sources_read_as_mindspore(tmp_path, capsys):
    """TextFileDataset, CSVDataset and TFRecordDataset shuffled globally and
    by files, unsharded and sharded both ways, over three epochs, with
    num_samples and repeat, for two seeds: MindSpore 2.10's rows, in order."""
    import os

    from irc.capture import RUN, run_script
    from printout import MINDSPORE_STYLE, assert_prints_as
    capsys.readouterr()
    run_script(os.path.join(MINDSPORE_STYLE, "shuffled_files.py"), mode=RUN, argv=[str(tmp_path)])
    out = [line for line in capsys.readouterr().out.strip().splitlines() if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(MINDSPORE_STYLE, "shuffled_files.mindspore.txt"), rel=0, abs=0)
