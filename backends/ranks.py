"""Running the ranks of a sliced-dataset job on one machine (seed 004).

``irc run SCRIPT --world-size N`` starts N processes, one per rank, each with
RANK_ID/RANK_SIZE set and the same dataset seed.  Every rank records the
first batch it reads (``slice.npz``): its patch and, computed from the same
pipeline with the image left whole, the full batch.  The launcher then
checks that all ranks read the same images in the same order, that each
rank's patch is its part of the full image, and that together the patches
cover the image.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from irc.diagnostics import UserError
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


def launch(script: str, world: int, out: Path, script_args: list[str]) -> list[int]:
    """Run every rank as its own process (one GPU each where present)."""
    procs = []
    gpus = _gpu_count()
    for rank in range(world):
        env = dict(os.environ, RANK_ID=str(rank), RANK_SIZE=str(world),
                   RANK=str(rank), WORLD_SIZE=str(world))
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = str(rank % gpus)
        cmd = [sys.executable, "-m", "irc", "run", script, "--world-size", str(world),
               "--rank", str(rank), "-o", str(out / f"rank{rank}"), *(["--"] + script_args if script_args else [])]
        log = open(out / f"rank{rank}.log", "w")
        procs.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT), log))
    codes = []
    for proc, log in procs:
        codes.append(proc.wait())
        log.close()
    return codes


def _gpu_count() -> int:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip()])
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))
