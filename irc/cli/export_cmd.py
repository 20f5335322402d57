"""``irc export SCRIPT.py -o model.onnx``: one deployable ONNX model.

The input is the data as the pipeline's source yields it (uint8 NHWC images
for the seed scripts): every map ONNX can express is inside the model,
Resize included, whatever its ``offload`` flag; random augmentation is left
out (an inference model gives one answer per image); what must stay on the
host (Decode, Python functions) is named.  Then the network in inference
mode, class scores out.  Nothing but onnxruntime is needed to use it.

The batch dimension is dynamic when the network runs at any batch size and
fixed, with a warning naming the op, when it does not (LeNet's
``reshape(x, (32, -1))``).  The weights are the checkpoint given with
``--checkpoint``, else whatever the script loaded, else the initial values,
with a warning.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..diagnostics import UserError, display_path
from ..output import check_output_file
from .compile_cmd import add_force_option

if TYPE_CHECKING:
    from irc.passes.batch_analysis import BatchDim

EXPORT_KEY = "irc.export"       # the metadata entry that marks a model irc exported


def add_parser(sub):
    p = sub.add_parser("export", help="write a deployable ONNX model (preprocessing + network)",
                       description="Compile SCRIPT.py's first Model job for inference and write "
                                   "one ONNX model: raw images in, class scores out.")
    p.add_script("script", help="a script that builds a dataset and a Model")
    p.add_argument("-o", "--output", required=True, metavar="MODEL.onnx")
    p.add_argument("--checkpoint", metavar="CKPT",
                   help="trained weights to put in the model (MindSpore .ckpt or .safetensors)")
    add_force_option(p)
    return p


# -- the destination, checked before any work -------------------------------------------

def exported_by_irc(path: Path) -> bool:
    """Whether ``path`` is an ONNX model written by ``irc export``."""
    import onnx
    try:
        with open(path, "rb") as f:
            if f.read(1) != b"\x08":     # a ModelProto starts with its ir_version field
                return False
        model = onnx.load(str(path), load_external_data=False)
    except Exception:   # noqa: BLE001 -- not readable as ONNX: not ours
        return False
    return model.producer_name == "irc" and any(p.key == EXPORT_KEY for p in model.metadata_props)


# -- the script's job and its weights ----------------------------------------------------

def capture_inference_job(script: str, argv: list[str] | None = None):
    """The script's inference, as a predict job: its first eval or predict
    (the network it evaluates, maybe a fresh one given saved weights, and
    the evaluation pipeline), else its first Model job.  The script's own
    printing is dropped: in capture mode its jobs do not run, so what it
    prints about them (metrics) is not true."""
    from ..capture import Job, run_script

    with contextlib.redirect_stdout(io.StringIO()):
        cap = run_script(script, mode="compile", argv=argv)
    jobs = [j for j in cap.jobs if j.model is not None]
    if not jobs:
        raise UserError("the script runs no Model, so there is no network to export",
                        where=display_path(script),
                        hint="export needs model.train/eval/predict on a dataset")
    fed = [j for j in jobs if j.dataset is not None]
    if not fed:
        raise UserError("the script's Model jobs have no dataset to take the input from",
                        where=jobs[0].source, hint="export takes its input from the dataset of "
                                                   "model.train/eval")
    job = next((j for j in fed if j.kind in ("eval", "predict")), fed[0])
    return Job("predict", job.model, job.dataset, {}, job.source)


def load_trained_weights(network, checkpoint: str) -> None:
    """Put the checkpoint's values into ``network``: every parameter of the
    network must be in it (optimizer state beside them is ignored)."""
    from ..train.serialization import load_checkpoint, load_param_into_net

    shown = display_path(checkpoint)
    try:
        values = load_checkpoint(checkpoint)
        missing, _ = load_param_into_net(network, values)
    except UserError as e:      # damaged, or a shape that differs: located at the checkpoint
        raise UserError(e.message, where=shown, hint=e.hint) from None
    if missing:
        raise UserError(f"the checkpoint {shown} has no value for {len(missing)} of the network's "
                        f"{len(network.parameters_dict())} parameters: {_names(missing)}",
                        where=shown,
                        hint=f"was it saved from this network ({type(network).__name__})? "
                             f"it holds {_names(list(values)) or 'nothing'}")


def _names(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def script_set_weights(network) -> bool:
    """Whether the script gave the network values of its own (a checkpoint
    it loaded, set_data) rather than its initial ones.  A checkpoint that a
    recorded training would have written reads the initial values back
    (irc.train.capture_io), so it does not count."""
    from ..train import capture_io
    if getattr(capture_io, "_folder", None) is not None:
        return False
    return any(p._version > 1 for p in network.get_parameters())


def compile_inference(job, script: str):
    """The EXPORT pipeline over the job: every map ONNX can express inside."""
    from irc.passes import CompileOptions

    from .. import compiler
    return compiler.compile([job], compiler.EXPORT, script=script,
                            options=CompileOptions(auto_offload=True, export=True))


def build_inference_module(script: str, argv: list[str] | None = None, *,
                           checkpoint: str | None = None):
    """The script's inference job as one inference model (a Compilation)."""
    job = capture_inference_job(script, argv)
    if checkpoint is not None:
        load_trained_weights(job.model.network, checkpoint)
    return compile_inference(job, script)


# -- the batch dimension ----------------------------------------------------------------

def fix_batch(model, size: int) -> None:
    """Write ``size`` for the batch N in the model's inputs and outputs."""
    from ..ir.types import BATCH
    for vi in [*model.graph.input, *model.graph.output]:
        for dim in vi.type.tensor_type.shape.dim:
            if dim.dim_param == BATCH:
                dim.dim_value = size


# -- the command ------------------------------------------------------------------------

def main(args) -> int:
    from irc.backends.onnx_lowering import lower_graph
    from irc.passes.batch_analysis import batch_dim

    from ..output import write_file_atomically

    out = Path(args.output)
    check_output_file(out, force=args.force, ours=exported_by_irc, suffix=".onnx")
    if args.checkpoint is not None and not os.path.isfile(args.checkpoint):
        raise UserError(f"--checkpoint {display_path(args.checkpoint)}: no such file",
                        hint="give the .ckpt or .safetensors file the training wrote")
    job = capture_inference_job(args.script, args.script_args)
    network = job.model.network
    untrained = args.checkpoint is None and not script_set_weights(network)
    if args.checkpoint is not None:
        load_trained_weights(network, args.checkpoint)
    result = compile_inference(job, args.script)
    module = result.module
    batch = batch_dim(module)
    model = lower_graph(module, "device", model_name=module.name)
    if batch.size is not None:
        fix_batch(model, batch.size)
    _mark_exported(model, args.script)
    write_file_atomically(out, model.SerializeToString())
    _report(args, model, result, batch, untrained)
    return 0


def _mark_exported(model, script: str) -> None:
    from onnx import helper

    from irc import __version__
    props = {p.key: p.value for p in model.metadata_props}
    props.update({EXPORT_KEY: __version__, "irc.script": display_path(script)})
    helper.set_model_props(model, props)


def _report(args, model, result, batch: BatchDim, untrained: bool) -> None:
    err = sys.stderr
    for r in result.remarks:
        if r.pass_name == "tail-extraction" and r.kind == "analysis":
            print(f"{r.source + ': ' if r.source else 'irc: '}note: {r.message}", file=err)
    inputs = {i.name for i in model.graph.input}
    outside = {r.column: r for r in result.remarks if r.pass_name == "offload-legality"
               and r.kind == "missed" and r.column in inputs}      # the last one per column
    for column, r in outside.items():
        print(f"{r.source + ': ' if r.source else 'irc: '}note: the model's input '{column}' is "
              f"the data after {r.op}, which stays outside the model: {r.reason}", file=err)
    if batch.size is not None:
        print(f"{batch.where + ': ' if batch.where else 'irc: '}warning: the network fixes the "
              f"batch size at {batch.size} ({batch.op}), so the model takes exactly "
              f"{batch.size} samples per call\n  hint: write the shape from the input "
              f"(ops.reshape(x, (x.shape[0], -1)) or nn.Flatten()) for a model that takes any "
              f"batch", file=err)
    if untrained:
        print("irc: warning: the model holds untrained weights (the network's initial values: "
              "under export the script's training is not run)\n  hint: pass --checkpoint CKPT, "
              "the .ckpt or .safetensors its training wrote", file=err)
    moved = [r.op for r in result.remarks if r.pass_name == "offload-legality"
             and r.kind == "passed" and r.column in inputs and not _left_out(result, r)]
    print(f"irc: exported {display_path(args.script)} -> {display_path(args.output)} "
          f"(inputs: {_signature(model.graph.input)}; outputs: {_signature(model.graph.output)}; "
          f"inside: {', '.join(moved) + ' and ' if moved else ''}the network)", file=err)


def _left_out(result, remark) -> bool:
    """Whether tail-extraction left the op of this remark out (random)."""
    return any(r.pass_name == "tail-extraction" and r.op == remark.op and
               r.source == remark.source for r in result.remarks)


def _signature(values) -> str:
    from onnx import helper
    parts = []
    for vi in values:
        t = vi.type.tensor_type
        dims = ",".join(d.dim_param or str(d.dim_value) for d in t.shape.dim)
        parts.append(f"{vi.name} {helper.tensor_dtype_to_np_dtype(t.elem_type)}[{dims}]")
    return ", ".join(parts)
