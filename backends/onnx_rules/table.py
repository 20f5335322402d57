"""The table of ONNX lowering rules, by op name (filled by the rule modules)."""
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
