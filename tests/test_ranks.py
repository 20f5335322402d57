"""Seed 004 end to end: per-rank compiles, ranks that do not cover the
image, and the bad inputs of the dataset-slicing issue.  Ranks that cover it
(and train the model of one process) are in test_distributed.py."""
import json
import textwrap
from pathlib import Path

import pytest

from irc.cli import main

pytestmark = pytest.mark.xdist_group("ranks")   # rank processes: one such test at a time

SCRIPT = textwrap.dedent("""\
    import os
    import mindspore as ms
    import mindspore.dataset as ds
    import mindspore.dataset.vision as vision
    import mindspore.dataset.transforms as transforms
    import mindspore.nn as nn
    from mindspore.communication import init, get_rank, get_group_size

    init()
    ds.config.set_seed(1000)
    SLICES = int(os.getenv("SLICES", "0")) or get_group_size()
    PROJECT = os.getenv("PROJECT")


    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.fc = nn.Dense(3 * 32 * 32, 10)   # written for whole images (seed 004)

        def construct(self, x):
            return self.fc(self.flatten(x))


    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL,
                                 dataset_strategy=((1, 1, 1, SLICES), (1,)))
    data = ds.Cifar10Dataset(os.environ["DATA"], usage="train", num_samples=64, shuffle=True)
    data = data.map(transforms.TypeCast(ms.int32), input_columns="label")
    data = data.map([vision.RandomHorizontalFlip(), vision.Rescale(1 / 255, 0)], input_columns="image")
    cols = ["img" + str(i) for i in range(SLICES)]
    data = data.map(vision.SlicePatches(1, SLICES), input_columns="image", output_columns=cols)
    data = data.project([PROJECT or cols[get_rank() % SLICES], "label"])
    data = data.map(vision.HWC2CHW(), input_columns=PROJECT or cols[get_rank() % SLICES])
    data = data.batch(8, drop_remainder=True)
    net = Net()
    model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                     nn.Momentum(net.trainable_params(), 0.01, 0.9))
    model.train(1, data, dataset_sink_mode=True, sink_size=2)
""")


@pytest.fixture
def script(tmp_path, monkeypatch):
    path = tmp_path / "sliced.py"
    path.write_text(SCRIPT)
    monkeypatch.setenv("DATA", str(Path(__file__).resolve().parent.parent / "samples" / "data" / "cifar10"))
    monkeypatch.delenv("SLICES", raising=False)
    monkeypatch.delenv("PROJECT", raising=False)
    return path


def test_compile_once_per_rank(script, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["compile", str(script), "--world-size", "4", "-o", str(out), "--no-render"]) == 0
    for rank in range(4):
        capture = (out / f"rank{rank}" / "00_capture.ir").read_text()
        assert f"# rank: {rank}" in capture and "# world_size: 4" in capture
        assert f'dataset.project(%img{rank}, %label' in capture
        assert "parallel.dataset_strategy" in capture
        remarks = json.loads((out / f"rank{rank}" / "remarks.json").read_text())["remarks"]
        assert any(f"its patch {rank} of 4" in r["message"] for r in remarks)
        # the step communicates: its pieces between the collectives, one model each
        assert (out / f"rank{rank}" / "bundle" / "device.piece0.onnx").is_file()
    assert "rank3/index.html" in (out / "index.html").read_text()


def test_ranks_that_do_not_cover_the_image_are_reported(script, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SLICES", "2")
    monkeypatch.setenv("PROJECT", "img0")          # every rank reads patch 0
    assert main(["run", str(script), "--world-size", "2", "-o", str(tmp_path / "r")]) == 1
    assert "do not cover the image: patches [1] of 2" in capsys.readouterr().err


def test_world_size_must_share_the_slices(script, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SLICES", "2")
    assert main(["compile", str(script), "--world-size", "3", "-o", str(tmp_path / "o"), "--no-render"]) == 1
    err = capsys.readouterr().err
    assert "sliced.py:" in err and "dataset_strategy ((1, 1, 1, 2), (1,)) breaks the rule" in err
    assert "world size must be a multiple of the slice count (3 rank(s), 2 slices)" in err


def test_rank_outside_the_world(script, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RANK_ID", "5")
    monkeypatch.setenv("RANK_SIZE", "2")
    assert main(["compile", str(script), "-o", str(tmp_path / "o"), "--no-render"]) == 1
    assert "rank 5 is outside the world of 2 rank(s)" in capsys.readouterr().err


def test_slice_counts_are_checked(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("import mindspore.dataset.vision as vision\nop = vision.SlicePatches(0, 2)\n")
    assert main(["compile", str(bad), "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "bad.py:2" in err and "SlicePatches" in err


def test_project_to_a_column_slicepatches_did_not_make(script, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SLICES", "2")
    monkeypatch.setenv("PROJECT", "img7")
    assert main(["compile", str(script), "-o", str(tmp_path / "o"), "--no-render"]) == 1
    err = capsys.readouterr().err
    assert "sliced.py:" in err and "img7" in err


def test_failed_ranks_name_the_cause_first(tmp_path):
    """A rank that reported its own error comes first, then one the launcher
    saw killed, then the ranks stopped because of them."""
    from irc.backends.ranks import STATUS_FILE, failed_ranks
    for r in range(4):
        (tmp_path / f"rank{r}").mkdir()
    (tmp_path / "rank0" / STATUS_FILE).write_text("0")
    (tmp_path / "launcher.log").write_text(
        "prterun noticed that process rank 3 with PID 77 on node vm exited on\nsignal 9 (Killed).\n")
    assert failed_ranks(tmp_path, 4) == [(3, "was killed by signal 9"), (1, None), (2, None)]
    (tmp_path / "rank2" / STATUS_FILE).write_text("1")
    assert failed_ranks(tmp_path, 4)[0] == (2, "exited with status 1")
    (tmp_path / "rank1" / STATUS_FILE).write_text("")     # read while being written (was an internal error)
    assert (1, None) in failed_ranks(tmp_path, 4)


def _job_in_its_own_session():
    """A stand-in for mpirun: a process in a session of its own that ends on SIGINT."""
    import subprocess
    import sys
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                            start_new_session=True)


def test_ctrl_c_while_ranks_run_reaches_the_mpi_job(tmp_path, monkeypatch):
    """mpirun runs in a session of its own, out of reach of the terminal's
    Ctrl-C: the launcher passes it on, and no rank outlives `irc run`."""
    from irc.backends import ranks

    def interrupted(_seconds):
        raise KeyboardInterrupt
    job = _job_in_its_own_session()
    monkeypatch.setattr(ranks.time, "sleep", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            ranks._wait_mpi_job(job, tmp_path, 2)
        assert job.poll() is not None
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()


def test_an_mpi_job_that_outlives_a_failed_rank_is_ended(tmp_path, monkeypatch):
    from irc.backends import ranks
    monkeypatch.setattr(ranks, "GRACE_S", 0.2)
    (tmp_path / "rank1").mkdir()
    (tmp_path / "rank1" / ranks.STATUS_FILE).write_text("1")
    job = _job_in_its_own_session()
    try:
        assert ranks._wait_mpi_job(job, tmp_path, 2) != 0
        assert job.poll() is not None
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()


def test_a_missing_script_is_refused_before_any_rank_starts(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["run", str(tmp_path / "nope.py"), "--world-size", "2", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "no such script" in err and "rank" not in err and not out.exists()
