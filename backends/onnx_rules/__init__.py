"""ONNX lowering rules, attached to the dialects' ops from the backend side
(as xDSL attaches interpreter implementations with ``@impl(Op)``): the
dialects declare what an op means and never import onnx; each module here
holds one dialect's rules (``recurrent`` the recurrences' and their
gradients': their Scan bodies share one builder).

A rule is ``rule(emit, inputs, attrs, draws) -> list[str]``: ``inputs`` are
the ONNX names of the operands (batched tensors), ``draws`` the name of a
random op's ``[N, k]`` float32 draws input or None, ``emit`` the lowering's
:class:`~irc.backends.onnx_emitter.Emitter`; it returns the ONNX names of
the op's results.
"""
from .table import lowered_ops, lowering, rule_for  # noqa: F401

# The rule modules, one per dialect, loaded here and only here.
from . import core, detection, nn, nn_grad, parallel, recurrent, train, transforms, vision  # noqa: E402,F401
