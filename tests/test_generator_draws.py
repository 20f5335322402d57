"""A GeneratorDataset whose rows draw from numpy's global random state (the
model zoo's PointNet, and many zoo datasets, augment so): the rows get
MindSpore's draws, and the same draws on every run."""
import time

import numpy as np
import pytest

import irc.dataset as ds


class Rows:
    """Rows (index, a draw from np.random); counts its reads."""

    def __init__(self, n):
        self.n, self.reads = n, 0

    def __getitem__(self, i):
        self.reads += 1
        return np.array(i, np.int32), np.array(np.random.randint(0, 1000), np.int32)

    def __len__(self):
        return self.n


def test_the_first_epoch_gets_mindspores_draws(capsys):
    """irc's type probe read 8 rows before the run: every row then had
    another row's draws (the zoo's PointNet trained on other points)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "generator_draws.py", rel=0, abs=0)


def test_building_a_pipeline_leaves_the_random_state_alone():
    np.random.seed(7)
    before = np.random.get_state()[1].copy()
    rows = Rows(10)
    data = ds.GeneratorDataset(rows, column_names=["i", "r"], shuffle=False).batch(4)
    assert data.get_dataset_size() == 3 and data.get_col_names() == ["i", "r"]
    assert rows.reads > 0                         # the probe read rows for their types...
    assert (np.random.get_state()[1] == before).all()   # ...and put the draws back


def test_output_shapes_and_types_take_the_first_batchs_draws_as_mindspore():
    """MindSpore runs its pipeline for the first batch to answer
    output_shapes() (once) and output_types() (once more): exactly those
    rows, whose draws are taken (the model zoo's PointNet prints its
    output_shapes() before training)."""
    np.random.seed(7)
    rows = Rows(10)
    data = ds.GeneratorDataset(rows, column_names=["i", "r"], shuffle=False).batch(4)
    data.get_col_names()
    start = rows.reads
    assert data.output_shapes() == [[4], [4]] and data.output_shapes() == [[4], [4]]
    assert [t.name for t in data.output_types()] == ["int32", "int32"]
    assert rows.reads - start == 8
    np.random.seed(7)
    [np.random.randint(0, 1000) for _ in range(8)]
    expected_next = np.random.randint(0, 1000)
    np.random.seed(7)
    rows2 = Rows(10)
    again = ds.GeneratorDataset(rows2, column_names=["i", "r"], shuffle=False).batch(4)
    again.output_shapes(), again.output_types()
    assert np.random.randint(0, 1000) == expected_next


@pytest.mark.parametrize("batch", [0, 4])
def test_no_row_of_the_next_epoch_is_read_before_it_is_asked_for(batch):
    """A fresh iterator per epoch (the usual loop) reads exactly the epoch's
    rows: the draws are the same on every run, whatever the threads' timing.
    The engine used to read up to a chunk of the next epoch ahead."""
    np.random.seed(3)
    rows = Rows(10)
    data = ds.GeneratorDataset(rows, column_names=["i", "r"], shuffle=False)
    data = data.batch(batch) if batch else data
    data.get_dataset_size()                          # the type probe's reads, kept apart
    start = rows.reads
    drawn = []
    for epoch in range(3):
        for _, r in data.create_tuple_iterator(output_numpy=True):
            drawn += np.atleast_1d(r).tolist()
        assert rows.reads - start == 10 * (epoch + 1)
    it = data.create_tuple_iterator(output_numpy=True)
    assert len(list(it)) == (3 if batch else 10)
    time.sleep(0.2)                                  # an iterator alive past its epoch's end
    assert rows.reads - start == 40
    np.random.seed(3)
    probe_free = [np.random.randint(0, 1000) for _ in range(30)]
    assert drawn == probe_free


def test_python_multiprocessing_draws_as_mindspores_worker_processes(capsys):
    """tests/mindspore_style/worker_streams.py: a random-access source and
    a map under python_multiprocessing=True with 2 workers draw each row
    from worker (row mod 2)'s random / np.random, seeded with the dataset
    seed + worker, over two epochs, shuffled and not, as MindSpore 2.10's
    processes do; one worker keeps the script's own generators."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "worker_streams.py")


def test_a_per_batch_map_draws_as_mindspores_worker_processes(capsys):
    """tests/mindspore_style/batch_map_processes.py: batch p of every epoch
    on worker p mod 2, each with its own numpy stream (the seed + k)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "batch_map_processes.py", rel=0, abs=0)
