"""``batch(per_batch_map=...)``, ``padded_batch`` and
``bucket_batch_by_length``: MindSpore 2.10's
semantics (column order, BatchInfo, stacking, padding and cutting,
drop_remainder), training over them, and located errors.

``tests/mindspore_style/per_batch_map.py``, ``padded_batch.py`` and ``bucket_batch.py`` ran
unchanged under MindSpore 2.10 (CPU) to make their ``.mindspore.txt``.
"""
from __future__ import annotations

import os
import textwrap

import pytest

from irc.capture import RUN, run_script
from irc.diagnostics import UserError
from printout import assert_prints_as, prints_as_mindspore

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")


@pytest.mark.parametrize("script", ["per_batch_map", "padded_batch", "bucket_batch"])
def test_pipelines_and_training_as_under_mindspore(script, capsys):
    capsys.readouterr()
    run_script(os.path.join(HERE, f"{script}.py"), mode=RUN, argv=[])
    out = [line for line in capsys.readouterr().out.strip().splitlines()
           if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(HERE, f"{script}.mindspore.txt"))


def _iterate(tmp_path, body: str) -> None:
    script = tmp_path / "pipeline.py"
    script.write_text(textwrap.dedent('''\
        import numpy as np
        import mindspore.dataset as ds

        def rows():
            for i in range(5):
                yield np.full((i + 1,), i, np.float32), np.int32(i)

        data = ds.GeneratorDataset(rows, ["a", "b"], shuffle=False)
    ''') + textwrap.dedent(body) + "for _ in data.create_tuple_iterator():\n    pass\n")
    run_script(str(script), mode=RUN, argv=[])


@pytest.mark.parametrize("body, message", [
    ('data = data.batch(2, per_batch_map=lambda a, info: (a, a), input_columns=["a"])\n',
     "returned 2 columns, expected 1"),
    ('data = data.batch(2, per_batch_map=lambda a, info: (a,), input_columns=["a"])\n',
     "rows of different shapes"),
    ('data = data.batch(2, per_batch_map=lambda a, info: (a,), input_columns=["z"])\n',
     "batch input_columns"),
    ('data = data.batch(2, per_batch_map=lambda a, info: 1 / 0, input_columns=["a"])\n',
     "raised ZeroDivisionError"),
    ('data = data.batch(2, input_columns=["a"])\n', "need a per_batch_map"),
    ('data = data.batch(2, per_batch_map=lambda a, info: (a[:1],), input_columns=["a"])\n',
     "has 1 rows; the batch has 2"),
    ('data = data.padded_batch(2, pad_info={"z": (None, 0)})\n', "padded_batch pad_info"),
    ('data = data.padded_batch(2, pad_info={"a": ([2, 2], 0)})\n', "dimensions"),
    ('data = data.padded_batch(2, pad_info={"a": ([0], 0)})\n', "positive ints"),
    ('data = data.bucket_batch_by_length(["a"], [2, 2], [1, 1, 1])\n', "increasing"),
    ('data = data.bucket_batch_by_length(["a"], [2], [1])\n', "2 positive ints"),
    ('data = data.bucket_batch_by_length(["a", "b"], [2], [1, 1])\n', "name one column"),
    ('data = data.bucket_batch_by_length(["a"], [2], [1, 1], pad_info={"a": ([None], 0)}, '
     'pad_to_bucket_boundary=True)\n', "falls in the last bucket"),
])
def test_a_broken_per_batch_map_is_a_located_error(tmp_path, body, message):
    with pytest.raises(UserError, match=message) as e:
        _iterate(tmp_path, body)
    assert "pipeline.py:9" in str(e.value.where)


def test_callable_objects_keep_their_own_state_as_under_mindspore(capsys):
    """irc's look-ahead (result types, the pipeline's size) calls copies of a
    map's and a per_batch_map's callable objects: their counters and caches,
    and YOLOv3's cached-size draws after them, are MindSpore 2.10's."""
    prints_as_mindspore(capsys, "stateful_callables.py", rel=0, abs=0)
