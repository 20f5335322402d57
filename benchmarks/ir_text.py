"""Printing and parsing are linear in graph size.

Target (issue 16; was 1 s in issue 2): a 10,000-node graph prints and parses back
in under 0.5 s on
the 2-core reference machine.  Prints a table for several sizes so linearity
is visible; the baseline column is a plain `json.dumps`/`json.loads` of the
same nodes (a lower bound for any text form carrying the same information).
"""
from __future__ import annotations

import json
import time

from irc.dialects import load_all
from irc.ir.graph import Loc, Module
from irc.ir.text import parse_module, print_module
from irc.ir.types import TensorType

load_all()   # the ops the benchmark module uses


def build(n: int) -> Module:
    m = Module("bench")
    g = m.add_graph("device", "device")
    x = g.add("input", [], {"index": 0}, out_types=[TensorType("u8", ("N", 32, 32, 3))],
              names=["image"], column="image").out(0)
    ops = [("vision.Rescale", {"rescale": 1 / 255, "shift": 0.0}),
           ("vision.Normalize", {"mean": [0.5, 0.5, 0.5], "std": [0.2, 0.2, 0.2]}),
           ("vision.RandomHorizontalFlip", {"prob": 0.5})]
    for i in range(n - 2):
        op, attrs = ops[i % len(ops)]
        operands = [x]
        if op == "vision.RandomHorizontalFlip":
            operands = [x]
        x = g.add(op, operands, attrs, column="image", loc=Loc("pipeline.py", 10 + i)).out(0)
    g.add("return", [x], {"names": ["image"]})
    return m


def best_of(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    print(f"{'nodes':>7} {'print s':>9} {'parse s':>9} {'total s':>9} {'json dump+load s':>17}  target")
    for n in (1_000, 5_000, 10_000, 20_000):
        m = build(n)
        text = print_module(m)
        t_print = best_of(lambda: print_module(m))
        t_parse = best_of(lambda: parse_module(text))
        assert print_module(parse_module(text)) == text
        rows = [{"op": nd.op, "attrs": nd.attrs, "types": [str(t) for t in nd.out_types]}
                for nd in m.graph("device").nodes()]
        t_json = best_of(lambda: json.loads(json.dumps(rows)))
        total = t_print + t_parse
        target = ("< 0.5 s: " + ("met" if total < 0.5 else "MISSED")) if n == 10_000 else ""
        print(f"{n:>7} {t_print:>9.3f} {t_parse:>9.3f} {total:>9.3f} {t_json:>17.3f}  {target}")


if __name__ == "__main__":
    main()
