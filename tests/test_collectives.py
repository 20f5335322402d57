"""The collective engine: one process, and 2 MPI ranks on loopback."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from irc.backends import collectives
from irc.backends.collectives import MPI, SINGLE, TORCH, SingleProcess, launcher
from irc.backends.ranks import find_mpirun, mpirun_command, one_node_mpi_env

pytestmark = pytest.mark.xdist_group("ranks")   # rank processes: one such test at a time


def test_launcher_follows_the_rank_variables():
    assert launcher({}) == SINGLE
    assert launcher({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}) == MPI
    assert launcher({"PMI_RANK": "1"}) == MPI
    assert launcher({"TORCHELASTIC_RUN_ID": "x", "RANK": "0", "WORLD_SIZE": "2"}) == TORCH
    assert launcher({"MASTER_ADDR": "127.0.0.1", "RANK": "1", "WORLD_SIZE": "2"}) == TORCH
    assert launcher({"RANK_ID": "0", "RANK_SIZE": "2"}) == SINGLE   # MindSpore's variables alone


def test_one_process_is_the_identity():
    comm = SingleProcess()
    x = np.arange(6, dtype=np.float32)
    assert comm.all_reduce(x) is x and comm.all_reduce_mean(x) is x
    assert comm.all_gather(x).shape == (1, 6) and comm.all_to_all(x) is not None
    assert comm.broadcast(x) is x
    with pytest.raises(ValueError, match="unknown reduction"):
        comm.all_reduce(x, "prod")


WORKER = textwrap.dedent("""
    import sys
    import numpy as np
    import onnxruntime as ort
    from irc.backends.collectives import communicator
    comm = communicator()
    r, n = comm.rank, comm.size
    assert (comm.backend, n) == (sys.argv[1], 2), (comm.backend, n)

    # all-reduce in place on an OrtValue's memory: no copy of the buffer
    grads = ort.OrtValue.ortvalue_from_numpy(np.full(61706, r + 1, np.float32))
    view = grads.numpy()
    assert comm.all_reduce(view) is view
    assert np.all(grads.numpy() == 3), grads.numpy()[:4]
    comm.all_reduce_mean(view)          # (3 + 3) / 2
    assert np.all(grads.numpy() == 3)
    mean = np.array([float(r)], np.float32)
    assert comm.all_reduce_mean(mean).tolist() == [0.5]

    m = np.array([r, 10 * r], np.int64)
    assert comm.all_reduce(m, "max").tolist() == [1, 10]
    assert comm.all_gather(np.array([r, r + 10], np.int32)).tolist() == [[0, 10], [1, 11]]
    # rank r sends row j to rank j: rank r receives row r of every rank
    sent = np.array([[10 * r + 0], [10 * r + 1]], np.float32)
    assert comm.all_to_all(sent)[:, 0].tolist() == [r, 10 + r], comm.all_to_all(sent)
    b = np.array([7.0 if r == 0 else -1.0])
    assert comm.broadcast(b, root=0).tolist() == [7.0]
    comm.barrier()
    print("rank", r, "ok")
    if comm.backend == "torch":
        import torch.distributed
        torch.distributed.destroy_process_group()
""")


def _mpirun():
    pytest.importorskip("mpi4py")
    found = find_mpirun()
    if found is None:
        pytest.skip("mpirun not installed (pip install 'irc-compiler[dist]')")
    return found


def test_two_mpi_ranks_on_loopback(tmp_path):
    mpirun = _mpirun()
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    done = subprocess.run(mpirun_command(mpirun, 2, [sys.executable, str(script), "mpi"]),
                          env=one_node_mpi_env(dict(os.environ)),
                          capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(l for l in done.stdout.splitlines() if l.startswith("rank")) == \
        ["rank 0 ok", "rank 1 ok"]


def test_two_torch_ranks_on_loopback(tmp_path):
    """The same collectives when torchrun-style variables launched the ranks (gloo)."""
    pytest.importorskip("torch")
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29517", "WORLD_SIZE": "2"}
    procs = [subprocess.Popen([sys.executable, str(script), "torch"], env={**env, "RANK": str(r)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[1]) for r in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert sorted(o.strip() for o, _ in outs) == ["rank 0 ok", "rank 1 ok"]


def test_mpi_yields_only_when_oversubscribed(monkeypatch):
    monkeypatch.delenv("OMPI_MCA_mpi_yield_when_idle", raising=False)
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "1")
    collectives._yield_when_oversubscribed()
    assert "OMPI_MCA_mpi_yield_when_idle" not in os.environ
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", str((os.cpu_count() or 1) + 1))
    collectives._yield_when_oversubscribed()
    assert os.environ["OMPI_MCA_mpi_yield_when_idle"] == "1"
