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

import functools
from typing import Callable, Optional

from irc.ir.registry import OpDef

LowerFn = Callable[..., list]

_RULES: dict[str, LowerFn] = {}


def lowering(op: OpDef) -> Callable[[LowerFn], LowerFn]:
    """Decorator: ``@lowering(vision.RESCALE)`` makes the function the ONNX
    rule of that op; it gets the op's operands by position and by name
    (``inputs.weight``: :class:`irc.ir.registry.Operands`)."""
    bind = op.bind

    def attach(fn: LowerFn) -> LowerFn:
        if op.name in _RULES:
            raise ValueError(f"op {op.name} has two ONNX lowering rules")

        @functools.wraps(fn)
        def rule(emit, inputs, attrs, draws):
            return fn(emit, bind(inputs), attrs, draws)
        _RULES[op.name] = rule
        return fn
    return attach


def rule_for(op_name: str) -> Optional[LowerFn]:
    """The ONNX rule of an op, or None if it has none."""
    return _RULES.get(op_name)


def lowered_ops() -> frozenset[str]:
    return frozenset(_RULES)


# The rule modules, one per dialect, loaded here and only here.
from . import core, nn, nn_grad, parallel, train, transforms, vision  # noqa: E402,F401
