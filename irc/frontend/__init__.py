"""Frontends: from what a captured script built to an IR module.

``build_module`` names the graphs by role: for the script's main job (its
first ``Model.train``, else its first ``eval``/``predict``) ``host`` is the
data pipeline and ``network`` the traced network; further jobs get ``eval.host``,
``eval.network`` and so on; pipelines no job consumed get ``host``,
``host.1`` ...
"""
from __future__ import annotations

import os
from typing import Sequence

from ..capture import Job
from ..diagnostics import UserError
from ..dialects import load_all
from ..ir.graph import Module

load_all()   # the frontend builds nodes of every dialect


def module_name(script: str) -> str:
    stem = os.path.splitext(os.path.basename(script))[0]
    return "".join(c if c.isalnum() or c in "_." else "_" for c in stem) or "module"


def build_module(jobs: Sequence[Job], datasets: Sequence = (), *, script: str,
                 functions: Sequence = ()) -> Module:
    """The module of a script's ``jobs`` (Model.train/eval/predict calls, in
    order), of the further ``datasets`` it built that no job consumed, and of
    the ``functions`` it compiled ((name, traced module) of each jitted
    function: a training step written functionally)."""
    from .network import lower_job
    from .pipeline import lower_pipeline
    from .training import append_training, mark_evaluation

    module = Module(module_name(script))
    lowered: dict[int, str] = {}

    def graph_name(base: str) -> str:
        name, i = base, 1
        while name in module.graphs:
            name, i = f"{base}.{i}", i + 1
        return name

    for job in jobs:
        prefix = "" if not lowered else f"{job.kind}."
        host = None
        if job.dataset is not None and id(job.dataset) not in lowered:
            host = graph_name(f"{prefix}host")
            lower_pipeline(module, job.dataset, host)
            lowered[id(job.dataset)] = host
        elif job.dataset is not None:
            host = lowered[id(job.dataset)]
        network = lower_job(module, job, host, graph_name(f"{prefix}network"))
        if job.kind == "train":
            # the loss and the train.minimize marker autodiff and loop-sink read
            append_training(module, network, job)
        elif job.kind == "eval" and host is not None:
            # the eval config telling loop-sink to sink the fused eval graph
            mark_evaluation(module, job, network)
    for ds in datasets:
        if id(ds) not in lowered:
            name = graph_name("host")
            lower_pipeline(module, ds, name)
            lowered[id(ds)] = name
    for name, traced in functions:
        graph = traced.graph("step").copy()
        graph.name = graph_name(name)
        module.graphs[graph.name] = graph
        module.weights.update(traced.weights)
        for key, objects in traced.objects.items():
            module.objects.setdefault(key, {}).update(objects)
    _annotate_dataset_strategy(module)
    if not module.graphs:
        raise UserError("the script built no dataset pipeline and ran no model",
                        where=script,
                        hint="irc compiles the pipelines a script builds with irc.dataset "
                             "(or mindspore.dataset) and the networks it passes to Model")
    return module


def _annotate_dataset_strategy(module: Module) -> None:
    """set_auto_parallel_context(dataset_strategy=(...)) applies to every
    pipeline's outputs: record it as a node the dataset-strategy pass checks."""
    from .. import parallel
    strategy = parallel.get_auto_parallel_context("dataset_strategy")
    if isinstance(strategy, str):
        return  # "data_parallel"/"full_batch": nothing to slice
    where = parallel.source_of("dataset_strategy")
    from ..ir.graph import HOST, Loc
    loc = Loc.parse(where) if where else None
    for graph in list(module.graphs.values()):
        rets = graph.find("return")
        if graph.placement != HOST or not rets:
            continue
        graph.add("parallel.dataset_strategy", graph.operands(rets[0]),
                  {"strategy": [list(e) for e in strategy],
                   "mode": parallel.get_auto_parallel_context("parallel_mode")}, loc=loc)
