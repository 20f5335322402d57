"""The offload passes are linear in pipeline size.

Target (issue 16; was 1 s in issue 4): 10,000 maps legalise and extract in
under 0.5 s (best of 3 runs, each on a fresh module).  Prints a
table for growing pipelines (a map per operator on one column, a second
column with a TypeCast, then shuffle and batch); the baseline column is the
verifier's walk over the same module, a lower bound for any pass that looks
at every node once.
"""
from __future__ import annotations

import time

from irc import passes
from irc.ir.graph import Loc, Module
from irc.ir.verifier import verify


def build(maps: int) -> Module:
    m = Module("bench")
    g = m.add_graph("host")
    image, label = g.add("dataset.MnistDataset", [], {"dataset_dir": "d"},
                         names=["image", "label"]).outs
    label = g.add("transforms.TypeCast", [label], {"dtype": "i32", "map": 0, "offload": True},
                  column="label").out(0)
    x = g.add("vision.Resize", [image], {"size": [32, 32], "map": 1}, column="image").out(0)
    x = g.add("vision.Rescale", [x], {"rescale": 1 / 255, "map": 2}, column="image").out(0)
    for i in range(maps - 3):
        op, attrs = (("vision.RandomHorizontalFlip", {"prob": 0.5}) if i % 2
                     else ("vision.Rescale", {"rescale": 1.0, "shift": 0.0}))
        x = g.add(op, [x], {**attrs, "map": 3 + i, "offload": True}, column="image",
                  loc=Loc("pipeline.py", 10 + i)).out(0)
    x, label = g.add("dataset.shuffle", [x, label], {"buffer_size": 100}, names=["image", "label"]).outs
    x, label = g.add("dataset.batch", [x, label], {"batch_size": 32}, names=["image", "label"]).outs
    g.add("return", [x, label], {"names": ["image", "label"]})
    return m


def main() -> None:
    print(f"{'maps':>7} {'legality s':>11} {'extraction s':>13} {'total s':>9} {'moved':>6} "
          f"{'verify s (baseline)':>20}  target")
    for n in (1_000, 5_000, 10_000, 20_000):
        # best of 3, as benchmarks/ir_text.py: each run on a fresh module
        t_legal = t_extract = t_verify = float("inf")
        for _ in range(3):
            m = build(n)
            t0 = time.perf_counter()
            verify(m)
            t_verify = min(t_verify, time.perf_counter() - t0)
            ctx = passes.PassContext()
            pm = passes.PassManager(["offload-legality", "tail-extraction"], ctx, verify_each=False)
            pm.run(m)
            t_legal = min(t_legal, pm.records[0].seconds)
            t_extract = min(t_extract, pm.records[1].seconds)
            moved = len(m.graph("offload")) if "offload" in m.graphs else 0
            del m, pm
        total = t_legal + t_extract
        target = ("< 0.5 s: " + ("met" if total < 0.5 else "MISSED")) if n == 10_000 else ""
        print(f"{n:>7} {t_legal:>11.3f} {t_extract:>13.3f} {total:>9.3f} {moved:>6} "
              f"{t_verify:>20.3f}  {target}")


if __name__ == "__main__":
    main()
