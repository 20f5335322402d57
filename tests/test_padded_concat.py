"""``ds.PaddedDataset`` and ``ConcatDataset.use_sampler``: the model zoo's
distributed evaluations (ViT, BERT) pad a dataset so that every shard gets
as many rows, then deal the concatenation over the shards.  Rows, sizes and
errors as MindSpore 2.10's (``tests/mindspore_style/padded_concat.py``)."""
import os
import sys

import numpy as np
import pytest

import irc.dataset as ds
from irc.diagnostics import UnsupportedError, UserError, display_path
from irc.frontend.pipeline import lower_pipeline
from irc.ir.graph import Module
from irc.ir.text import parse_module, print_module
from irc.ir.verifier import verify

HERE = display_path(__file__)


def test_rows_sizes_and_errors_as_mindspore(tmp_path, capsys):
    """Nine layouts of mappable, mapped and iterable children over 2-4
    shards and two epochs (an iterable child is dealt by a counter that runs
    on across epochs), ViT's white JPEGs before an ImageFolderDataset through
    Decode/Resize/Normalize, BERT's zero rows after a MindDataset (MindRecord
    shards are runs of rows), and MindSpore's refusals."""
    from irc.capture import RUN, run_script
    from printout import MINDSPORE_STYLE, assert_prints_as
    capsys.readouterr()
    run_script(os.path.join(MINDSPORE_STYLE, "padded_concat.py"), mode=RUN, argv=[str(tmp_path)])
    out = [line for line in capsys.readouterr().out.strip().splitlines() if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(MINDSPORE_STYLE, "padded_concat.mindspore.txt"), rel=1e-4, abs=1e-4)


def _padded_pair(shard: int):
    data = ds.NumpySlicesDataset({"x": np.arange(5, dtype=np.int32)}, shuffle=False)
    d = data + ds.PaddedDataset([{"x": np.int32(-1)}])
    d.use_sampler(ds.DistributedSampler(num_shards=3, shard_id=shard, shuffle=False))
    return d


def test_every_shard_gets_as_many_rows_and_together_all_of_them():
    got = [[int(r[0]) for r in _padded_pair(s).create_tuple_iterator(output_numpy=True)] for s in range(3)]
    assert [len(g) for g in got] == [2, 2, 2]
    assert sorted(x for g in got for x in g) == [-1, 0, 1, 2, 3, 4]
    assert [_padded_pair(s).get_dataset_size() for s in range(3)] == [2, 2, 2]


def _round_trip(dataset) -> str:
    module = Module("m")
    lower_pipeline(module, dataset, "host")
    verify(module)
    text = print_module(module)
    again = parse_module(text, "m.ir")
    verify(again)
    assert print_module(again) == text
    return text


def test_sharded_concat_and_padded_minddataset_print_and_parse(tmp_path):
    text = _round_trip(_padded_pair(1).batch(2))
    assert "dataset.concat" in text and "shards" in text and "offset" in text
    from irc.mindrecord import FileWriter
    path = str(tmp_path / "d.mindrecord")
    w = FileWriter(path)
    w.add_schema({"label": {"type": "int32"}, "data": {"type": "bytes"}, "ids": {"type": "int64", "shape": [2]}}, "d")
    w.write_raw_data([{"label": i, "data": b"ab", "ids": np.array([i, i])} for i in range(3)])
    w.commit()
    d = ds.MindDataset(path, columns_list=["label", "data", "ids"], num_shards=2, shard_id=1, shuffle=False,
                       padded_sample={"label": -1, "data": b"\x00\xff", "ids": np.array([7, 8])}, num_padded=1)
    text = _round_trip(d)
    assert "num_padded = 1" in text and "[0, 255]" in text
    rows = [(int(r[0]), bytes(r[1][0]), r[2].tolist()) for r in d.create_tuple_iterator(output_numpy=True)]
    assert rows == [(1, b"ab", [1, 1]), (-1, b"\x00\xff", [7, 8])]


def test_refusals_are_located():
    line = sys._getframe().f_lineno
    with pytest.raises(UnsupportedError) as e:
        (ds.NumpySlicesDataset([1, 2]) + ds.PaddedDataset([{"column_0": 3}])).use_sampler(ds.RandomSampler())
    assert f"{HERE}:{line + 2}" in str(e.value) and "shuffle(buffer_size)" in str(e.value)
    with pytest.raises(TypeError) as e:
        (ds.NumpySlicesDataset([1, 2]) + ds.PaddedDataset([{"column_0": 3}])).use_sampler(ds.SequentialSampler())
    assert isinstance(e.value, UserError) and f"{HERE}:{line + 5}" in str(e.value)


def test_padding_that_leaves_shards_uneven_is_a_located_error(tmp_path, capsys):
    """MindSpore's run-time check (rows + num_padded a multiple of num_shards),
    at the user's MindDataset line, exit 1, no traceback."""
    from irc.cli import main
    from irc.mindrecord import FileWriter
    path = str(tmp_path / "d.mindrecord")
    w = FileWriter(path)
    w.add_schema({"label": {"type": "int32"}}, "d")
    w.write_raw_data([{"label": i} for i in range(7)])
    w.commit()
    script = tmp_path / "job.py"
    script.write_text("import mindspore.dataset as ds\n"
                      f"d = ds.MindDataset({path!r}, columns_list=['label'], num_shards=2, shard_id=0,\n"
                      "                   padded_sample={'label': -1}, num_padded=2)\n"
                      "print(sum(1 for _ in d.create_tuple_iterator()))\n")
    assert main(["run", str(script)]) == 1
    err = capsys.readouterr().err
    assert "job.py:2" in err and "9 can not be divisible by the value of 'num_shards': 2" in err
    assert "num_padded" in err and "Traceback" not in err
