"""``irc export SCRIPT.py -o model.onnx``: one deployable ONNX model.

Raw batches as the host pipeline yields them go in (uint8 NHWC images for
the seed scripts), the preprocessing the pipeline ends with (its offloadable
tail, forced on as by ``set_auto_offload(True)``; an explicit
``offload=False`` still wins) and the network in inference mode are inside,
class scores come out.  Nothing but onnxruntime is needed to use it.
"""
from __future__ import annotations

import sys

from ..diagnostics import UserError, display_path


def add_parser(sub):
    p = sub.add_parser("export", help="write a deployable ONNX model (preprocessing + network)",
                       description="Compile SCRIPT.py's first Model job for inference and write "
                                   "one ONNX model: raw images in, class scores out.")
    p.add_script("script", help="a script that builds a dataset and a Model")
    p.add_argument("-o", "--output", required=True, metavar="MODEL.onnx")
    return p


def build_inference_module(script: str, argv: list[str] | None = None):
    """The script's first Model job as one inference model: the EXPORT
    pipeline over its pipeline and network, every offloadable map inside."""
    from .. import compiler
    from ..capture import Job, run_script
    from irc.passes import CompileOptions

    cap = run_script(script, mode="compile", argv=argv)
    jobs = [j for j in cap.jobs if j.model is not None]
    if not jobs:
        raise UserError("the script runs no Model, so there is no network to export",
                        where=display_path(script),
                        hint="export needs model.train/eval/predict on a dataset")
    job = jobs[0]
    if job.dataset is None:
        raise UserError("the script's first Model job has no dataset to take the input from",
                        where=job.source)
    predict = Job("predict", job.model, job.dataset, {}, job.source)
    return compiler.compile([predict], compiler.EXPORT, script=script,
                            options=CompileOptions(auto_offload=True))


def main(args) -> int:
    from irc.backends.onnx_lowering import lower_graph
    from ..output import write_file_atomically

    result = build_inference_module(args.script, args.script_args)
    module = result.module
    model = lower_graph(module, "device", model_name=module.name)
    write_file_atomically(args.output, model.SerializeToString())
    ins = ", ".join(f"{i.name}" for i in model.graph.input)
    outs = ", ".join(o.name for o in model.graph.output)
    moved = sum(r.kind == "passed" for r in result.remarks if r.pass_name == "offload-legality")
    print(f"irc: exported {display_path(args.script)} -> {display_path(args.output)} "
          f"(inputs: {ins}; outputs: {outs}; {moved} preprocessing op(s) inside)", file=sys.stderr)
    return 0
