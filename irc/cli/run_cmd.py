"""``irc run SCRIPT.py|OUT/bundle [-o DIR] [--world-size N] [--] [ARGS]``: execute.

A script runs as ``__main__`` with its jobs executed (``Model.train`` trains,
through the same compiler as ``irc compile``); ``DIR/run.json`` summarises
the run.  A bundle runs without the user's script.  With ``--world-size N``
the ranks run as N processes and irc checks that each read its own slice of
the data and that together they cover it (seed 004).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

from ..diagnostics import UserError, display_path
from .compile_cmd import add_force_option, positive_int


def add_parser(sub):
    p = sub.add_parser("run", help="run a script (or a compiled bundle) and summarise it",
                       description="Run SCRIPT.py with its training/evaluation executed, or a "
                                   "bundle written by irc compile; DIR/run.json gets the summary.")
    p.add_script("target", help="a script, or an OUT/bundle folder from irc compile")
    p.add_argument("-o", "--output", metavar="DIR", help="write DIR/run.json (and rank folders)")
    add_force_option(p)
    p.add_argument("--world-size", type=positive_int, metavar="N",
                   help="run N ranks as processes on this machine (seed 004)")
    p.add_argument("--unroll", type=positive_int, metavar="U",
                   help="training steps per Loop iteration in sink mode (default 1; "
                        "U = sink_size removes the Loop)")
    p.add_argument("--rank", type=int, help=argparse.SUPPRESS)   # one rank, set by hand
    p.add_argument("--launched", action="store_true", help=argparse.SUPPRESS)  # started by irc's launcher
    return p


def main(args) -> int:
    target = Path(args.target)
    script_args = args.script_args
    if args.output:
        check_output_dir(Path(args.output), args.force)   # before any training, not after it
    if args.launched:
        return run_launched_rank(args, script_args)
    if target.is_dir():
        if script_args:
            raise UserError(f"{target} is a bundle, which runs without its script, so it takes "
                            f"no script arguments (got {' '.join(script_args)})",
                            hint="run the script itself to pass it arguments")
        return run_bundle(target, args)
    if launches_ranks(args):
        return run_ranks(args, script_args)
    return run_script_job(args, script_args)


def launches_ranks(args) -> bool:
    """This process starts the ranks (under mpirun) and waits for them."""
    return bool(args.world_size and args.world_size > 1 and args.rank is None
                and not args.launched and not Path(args.target).is_dir())


def uses_ir(args) -> bool:
    """Whether the command needs irc's dialects: all but the launcher do."""
    return not launches_ranks(args)


def check_output_dir(out: Path, force: bool = False) -> None:
    """-o must name a folder irc can write (or create), whose run.json, if
    any, irc wrote: refused before the run, not after it."""
    from ..output import check_output_file, check_output_folder
    check_output_folder(out)
    check_output_file(out / "run.json", force=force, ours=_is_run_summary, suffix=".json")


def _is_run_summary(path: Path) -> bool:
    """A run.json irc wrote (a run's or a multi-rank launch's summary)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and ("device_calls" in data or "world_size" in data)


def run_script_job(args, script_args: list[str]) -> int:
    from irc.backends.signals import sigterm_as_interrupt
    from ..capture import RUN, run_script
    from ..dataset import config  # noqa: F401 -- imported, it registers its reset (below)
    from ..train.summary import summary_for, write_run_json
    # run_script resets the registered settings: the script starts from the default
    # seed like a new process, numpy's generator included (initialisers draw from it)
    env = None
    if args.rank is not None:   # communication.init checks it against the world size
        env = {"RANK_ID": args.rank, "RANK_SIZE": args.world_size or 1}
    started = time.perf_counter()
    options = {"unroll": args.unroll} if args.unroll else {}
    # SIGTERM as Ctrl-C, except in a rank of a multi-rank job: there it must
    # end the process (the launcher stops the other ranks with it)
    on_sigterm = sigterm_as_interrupt() if args.rank is None else contextlib.nullcontext()
    try:
        with on_sigterm:
            cap = run_script(args.target, mode=RUN, argv=script_args, env=env, options=options)
    except KeyboardInterrupt as e:    # SIGINT or SIGTERM: run.json says what ran so far
        cap, status = getattr(e, "capture", None), getattr(e, "exit_status", 130)
        if args.output and cap is not None:
            summary_for(cap).interrupted = True
            data = write_run_json(Path(args.output) / "run.json", cap)
            print(f"irc: interrupted after {data['steps']} step(s) -> "
                  f"{display_path(str(Path(args.output) / 'run.json'))}", file=sys.stderr)
        else:
            print("irc: interrupted", file=sys.stderr)
        return status
    summary = summary_for(cap)
    if summary.wall_s == 0.0:
        summary.wall_s = time.perf_counter() - started
    if args.output:
        out = Path(args.output)
        extra = {"weights_sha256": _weights_digest(cap)} if args.rank is not None else {}
        data = write_run_json(out / "run.json", cap, extra)
        if args.rank is not None:
            _record_slice(cap, out, args.rank, args.world_size)
        calls = sum(f["calls"] for f in data.get("functions", {}).values())
        jitted = f", {calls} compiled function call(s)" if calls else ""
        print(f"irc: ran {display_path(args.target)}: {data['steps']} step(s), "
              f"{data['device_calls']} device call(s){jitted} -> "
              f"{display_path(str(out / 'run.json'))}", file=sys.stderr)
    return 0


def run_ranks(args, script_args: list[str]) -> int:
    """Launch the ranks (MPI, else torch.distributed), wait, and check them:
    a failed rank is named with its error and log; the ranks of a sliced
    dataset must have read their own patches and covered the image."""
    from irc.backends.ranks import SLICE_FILE, check_coverage, failed_ranks, launch
    from ..capture import check_script
    check_script(args.target)          # here, not in every rank after their start
    out = Path(args.output or "run-out")
    out.mkdir(parents=True, exist_ok=True)
    world = args.world_size
    print(f"irc: starting {world} rank(s) of {display_path(args.target)}; logs in "
          f"{display_path(str(out))}/rankR.log", file=sys.stderr)
    started = time.perf_counter()
    code = launch(args.target, world, out, script_args, unroll=args.unroll)
    failed = failed_ranks(out, world)
    if code != 0 or failed:
        rank, how = failed[0] if failed else (0, f"exited with status {code}")
        log = out / f"rank{rank}.log"
        lines = log.read_text(errors="replace").strip().splitlines() if log.is_file() else []
        said = [line for line in lines if "error" in line.lower()] or lines[-3:]
        how = how or "was stopped"
        raise UserError(f"rank {rank} of {world} {how}; it said:\n    " +
                        "\n    ".join(said[-3:] or ["(nothing)"]) +
                        ("\n  the other rank(s) were stopped" if world > 1 else ""),
                        hint=f"see {display_path(str(log))} (launcher: "
                             f"{display_path(str(out / 'launcher.log'))})")
    ranks = [json.loads((out / f"rank{r}" / "run.json").read_text()) for r in range(world)]
    summary = {"world_size": world, "wall_s": round(time.perf_counter() - started, 3),
               "ranks": ranks}
    digests = {r.get("weights_sha256") for r in ranks}     # trainable parameters
    summary["weights_identical"] = len(digests) == 1 and None not in digests
    text = ""
    if all((out / f"rank{r}" / SLICE_FILE).is_file() for r in range(world)):
        report = check_coverage([out / f"rank{r}" for r in range(world)])
        summary["slicing"] = report
        text = (f"; each read its own patch of {report['patches']} (patch "
                f"{report['patch_shape']} of {report['image_shape']}), together covering the image")
    (out / "run.json").write_text(json.dumps(summary, indent=1) + "\n")
    if all(r.get("weights_sha256") is None for r in ranks):
        same = "ran, none of them trained"      # no optimizer: no weights to compare
    elif summary["weights_identical"]:
        same = "trained one model (identical trainable weights on every rank)"
    else:
        same = "trained trainable weights that differ between ranks"
    print(f"irc: {world} rank(s) {same}{text} -> "
          f"{display_path(str(out / 'run.json'))}", file=sys.stderr)
    return 0


def run_launched_rank(args, script_args: list[str]) -> int:
    """One rank started by :func:`run_ranks`: its rank from the launcher's
    environment, its output in OUT/rankR and OUT/rankR.log, its exit status
    written for the launcher; on an error it stops the other ranks."""
    from irc.backends.ranks import STATUS_FILE, gpu_count
    from ..communication import launched_rank
    launched = launched_rank()
    if launched is None:
        raise UserError("--launched is for the ranks irc run --world-size starts")
    rank, _world = launched
    gpus = gpu_count()
    if gpus and "CUDA_VISIBLE_DEVICES" not in os.environ:   # one GPU per rank where there are some
        os.environ["CUDA_VISIBLE_DEVICES"] = str(rank % gpus)
    out = Path(args.output or "run-out")
    rank_dir = out / f"rank{rank}"
    rank_dir.mkdir(parents=True, exist_ok=True)
    log = open(out / f"rank{rank}.log", "w", buffering=1)
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    args.output = str(rank_dir)
    args.rank = rank
    code = 1
    try:
        from ..cli import run_guarded
        code = run_guarded(lambda: run_script_job(args, script_args), args)
    finally:
        # whole or absent: the launcher may read it while a rank still writes
        from ..output import write_file_atomically
        write_file_atomically(rank_dir / STATUS_FILE, str(code))
        sys.stdout.flush()
        sys.stderr.flush()
        if code != 0:
            from irc.backends.collectives import abort
            abort(code)
    return code


def run_bundle(path: Path, args) -> int:
    """``irc run BUNDLE``: the bundle checked whole (irc.backends.bundle), then
    its training, the trained weights written to DIR/weights.ckpt, and its
    recorded evaluations; a bundle with no job runs its pipeline once."""
    from irc.backends.bundle import load_bundle
    from ..train.bundle_job import (WEIGHTS_CHECKPOINT, plan_bundle_job, recorded_script,
                                    run_bundle_job)
    module, info = load_bundle(path)
    where = display_path(str(path / "job.json"))
    if info["needs_script"]:
        objects = ", ".join(o if o.isprintable() else ascii(o) for o in info["python_objects"])
        raise UserError(f"the bundle's pipeline calls Python functions ({objects}), which a "
                        f"bundle does not carry",
                        where=display_path(str(path / "pipeline.json")),
                        hint=f"run the script instead: irc run {recorded_script(info)}")
    plan = plan_bundle_job(module, info, where)   # every argument checked before anything runs
    out = Path(args.output) if args.output else None
    if out is not None and plan.training is not None:
        from ..output import check_output_file
        check_output_file(out / WEIGHTS_CHECKPOINT, force=getattr(args, "force", False),
                         ours=_is_bundle_weights, suffix=".ckpt")
    started = time.perf_counter()
    if plan.training is None and not plan.evaluations:
        summary = _run_pipeline_bundle(module)
    else:
        summary = run_bundle_job(module, info, weights_to=out, where=where)
    summary["wall_s"] = round(time.perf_counter() - started, 4)
    said = [f"{summary['steps']} step(s), {summary['device_calls']} device call(s)"]
    said += [f"{k if k.isprintable() else ascii(k)} {v:.4f}"
             for k, v in summary.get("metrics", {}).items()]
    if out is not None:
        from ..output import write_file_atomically
        out.mkdir(parents=True, exist_ok=True)
        write_file_atomically(out / "run.json", json.dumps(summary, indent=1) + "\n")
        if "weights" in summary:
            said.append(f"weights -> {display_path(str(out / summary['weights']))}")
        said.append(f"-> {display_path(str(out / 'run.json'))}")
    elif plan.training is not None:
        said.append("trained weights not kept (give -o DIR to write DIR/weights.ckpt)")
    print(f"irc: ran bundle {display_path(str(path))}: {', '.join(said)}", file=sys.stderr)
    return 0


def _is_bundle_weights(path: Path) -> bool:
    """A weights.ckpt a bundle run wrote: the run.json beside it names it."""
    summary = path.parent / "run.json"
    return _is_run_summary(summary) and json.loads(summary.read_text()).get("weights") == path.name


def _run_pipeline_bundle(module) -> dict:
    """A pipeline-only bundle: one epoch through the host engine and the
    device graph (the offloaded tail), reporting throughput."""
    import numpy as np

    from irc.backends.host_engine import HostEngine
    from irc.backends.offload_runner import OffloadEngine
    if "host" not in module.graphs:
        raise UserError("the bundle has no job and no pipeline (@host) to run",
                        hint="compile a script that builds a dataset or calls Model.train/eval")
    engine = (OffloadEngine(module, "host", "device") if "device" in module.graphs
              else HostEngine(module, "host"))
    start = time.perf_counter()
    batches = images = 0
    for row in engine.rows(1):
        batches += 1
        images += len(np.asarray(next(iter(row.values()))))
    wall = time.perf_counter() - start
    return {"epochs": 1, "steps": batches, "device_calls": batches if "device" in module.graphs else 0,
            "images": images, "images_per_s": round(images / wall, 1) if wall else 0.0}


def _weights_digest(cap):
    """A digest of the trained weights, for the rank's run.json: the launcher
    checks that the ranks trained one model.  Trainable parameters only:
    in data parallel mode BatchNorm's moving statistics are per rank, as in
    MindSpore."""
    import hashlib
    import numpy as np
    weights = {}
    for job in cap.jobs:
        net = getattr(job.model, "_network", None) if job.model is not None else None
        if net is not None and hasattr(net, "trainable_params"):
            weights.update({p.name: np.asarray(p.asnumpy()) for p in net.trainable_params()})
    for optimizer in cap.optimizers:      # functional steps: what the optimizers updated
        weights.update({p.name: np.asarray(p.asnumpy()) for p in optimizer.param_list})
    if not weights:
        return None
    h = hashlib.sha256()
    for name in sorted(weights):
        h.update(name.encode())
        h.update(np.ascontiguousarray(weights[name]).tobytes())
    return h.hexdigest()


def _record_slice(cap, out: Path, rank: int, world: int) -> None:
    """What this rank read, for the launcher's coverage check (seed 004)."""
    from irc.backends.ranks import record_slice
    from ..frontend.pipeline import lower_pipeline
    from ..ir.graph import Module
    datasets = [job.dataset for job in cap.jobs if job.dataset is not None] or \
        cap.terminal_datasets()
    if datasets:
        module = Module("rank")
        lower_pipeline(module, datasets[0], "host")
        record_slice(module, out, rank, world)
