"""``TFRecordDataset``: TFRecord files of ``tf.train.Example`` records (the
model zoo's BERT and other TensorFlow-born datasets).  The fixture files
were written with irc's framing and read by MindSpore 2.10 for the
reference output; damaged files are located errors."""
import os
import shutil

import numpy as np
import pytest

import irc.dataset as ds
from irc.cli import main
from irc.dialects import tfrecord
from irc.frontend.pipeline import lower_pipeline
from irc.ir.graph import Module
from irc.ir.text import parse_module, print_module
from irc.ir.verifier import verify

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "tfrecord")


def test_columns_types_shards_and_compression_as_mindspore(capsys):
    from irc.capture import RUN, run_script
    from printout import MINDSPORE_STYLE, assert_prints_as
    capsys.readouterr()
    run_script(os.path.join(MINDSPORE_STYLE, "tfrecord_rows.py"), mode=RUN, argv=[FIXTURE])
    out = [line for line in capsys.readouterr().out.strip().splitlines() if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(MINDSPORE_STYLE, "tfrecord_rows.mindspore.txt"), rel=0, abs=0)


def test_examples_round_trip_through_irc_framing(tmp_path):
    Example = tfrecord.Example()
    records = []
    for i in range(3):
        e = Example()
        e.features.feature["ids"].int64_list.value.extend([i, 2 * i])
        e.features.feature["score"].float_list.value.append(i / 4)
        e.features.feature["blob"].bytes_list.value.append(bytes([i, 7]))
        records.append(tfrecord.frame(e.SerializeToString()))
    (tmp_path / "a.tfrecord").write_bytes(b"".join(records))
    d = ds.TFRecordDataset(str(tmp_path / "a.tfrecord"), shuffle=False)
    assert d.get_col_names() == ["blob", "ids", "score"]
    rows = [(r[0].tolist(), r[1].tolist(), r[2].tolist()) for r in d.create_tuple_iterator(output_numpy=True)]
    assert rows == [([0, 7], [0, 0], [0.0]), ([1, 7], [1, 2], [0.25]), ([2, 7], [2, 4], [0.5])]
    module = Module("m")
    lower_pipeline(module, d.batch(3), "host")
    verify(module)
    text = print_module(module)
    assert "dataset.TFRecordDataset" in text
    assert print_module(parse_module(text, "m.ir")) == text


def _damaged(tmp_path, how: str) -> str:
    data = open(os.path.join(FIXTURE, "part1.tfrecord"), "rb").read()
    path = tmp_path / "part1.tfrecord"
    if how == "junk":
        data = b"not a tfrecord file at all" * 4
    elif how == "cut":
        data = data[:-30]
    elif how == "flipped":
        data = data[:40] + bytes([data[40] ^ 0xFF]) + data[41:]
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("how, message", [
    ("junk", "is not a TFRecord file"),
    ("cut", "is cut short"),
    ("flipped", "has a damaged record"),
])
def test_a_damaged_file_is_a_located_error(tmp_path, capsys, how, message):
    shutil.copy(os.path.join(FIXTURE, "part0.tfrecord"), tmp_path / "part0.tfrecord")
    damaged = _damaged(tmp_path, how)
    script = tmp_path / "job.py"
    script.write_text("import mindspore.dataset as ds\n"
                      f"d = ds.TFRecordDataset({[str(tmp_path / 'part0.tfrecord'), damaged]!r}, shuffle=False)\n"
                      "print(sum(1 for _ in d.create_tuple_iterator()))\n")
    assert main(["run", str(script)]) == 1
    err = capsys.readouterr().err
    assert "job.py:2" in err and message in err and damaged in err and "Traceback" not in err


def test_wrong_compression_and_a_bad_schema_column_are_located(tmp_path):
    with pytest.raises(ValueError, match="compression_type can only be"):
        ds.TFRecordDataset(os.path.join(FIXTURE, "part0.tfrecord"), compression_type="LZ4")
    with pytest.raises(RuntimeError, match="is not GZIP-compressed"):
        ds.TFRecordDataset(os.path.join(FIXTURE, "part0.tfrecord"), compression_type="GZIP", shuffle=False)
    with pytest.raises(RuntimeError, match="has no feature 'nope'"):
        ds.TFRecordDataset(os.path.join(FIXTURE, "part0.tfrecord"), columns_list=["nope"])
    schema = ds.Schema()
    schema.add_column("input_ids", de_type="int64", shape=[3])      # the records hold 4
    d = ds.TFRecordDataset(os.path.join(FIXTURE, "part0.tfrecord"), schema=schema, shuffle=False)
    with pytest.raises(RuntimeError, match="has 4 values, its column is i64\\[3\\]"):
        list(d.create_tuple_iterator())
    assert np.array_equal(next(ds.TFRecordDataset(os.path.join(FIXTURE, "part0.tfrecord"), shuffle=False)
                               .create_dict_iterator(output_numpy=True))["input_ids"], [0, 1, 2, 3])
