"""ONNX lowering rules, attached to the dialects' ops from the backend side
(as xDSL attaches interpreter implementations with ``@impl(Op)``): the
dialects declare what an op means and never import onnx; each module here
holds one dialect's rules.

A rule is ``rule(emit, inputs, attrs, draws) -> list[str]``: ``inputs`` are
the ONNX names of the operands (batched tensors), ``draws`` the name of a
random op's ``[N, k]`` float32 draws input or None, ``emit`` the lowering's
:class:`~irc.backends.onnx_emitter.Emitter`; it returns the ONNX names of
the op's results.
"""
from __future__ import annotations

from typing import Callable, Optional, Union

from irc.ir.registry import OpDef

LowerFn = Callable[..., list]

_RULES: dict[str, LowerFn] = {}


def lowering(op: Union[OpDef, str]) -> Callable[[LowerFn], LowerFn]:
    """Decorator: ``@lowering(vision.RESCALE)`` makes the function the ONNX
    rule of that op."""
    name = op if isinstance(op, str) else op.name

    def attach(fn: LowerFn) -> LowerFn:
        if name in _RULES:
            raise ValueError(f"op {name} has two ONNX lowering rules")
        _RULES[name] = fn
        return fn
    return attach


def rule_for(op_name: str) -> Optional[LowerFn]:
    """The ONNX rule of an op, or None if it has none."""
    return _RULES.get(op_name)


def lowered_ops() -> frozenset[str]:
    return frozenset(_RULES)


# The rule modules, one per dialect, loaded here and only here.
from . import core, nn, nn_grad, parallel, train, transforms, vision  # noqa: E402,F401
