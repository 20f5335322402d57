"""The op registry: every operator is declared exactly once, here-shaped.

An :class:`OpDef` holds everything the compiler knows about one operator: its
attribute signature, its type/shape inference, whether the offload passes may
move it to the device, and the implementations that later stages attach with
decorators next to the declaration (so an op's whole meaning sits in one
block of one dialect module)::

    RESCALE = define("vision.Rescale", kind=MAP, family="vision",
                     attrs={"rescale": REQUIRED, "shift": 0.0},
                     offloadable=True,
                     infer=lambda attrs, ins: [ins[0].with_dtype("f32")])

    @RESCALE.host_batch          # numpy, on a batch (leading axis N)
    def _(inputs, attrs, draws): ...

    @RESCALE.lower_onnx          # ONNX nodes, through an emitter
    def _(emit, inputs, attrs, draws): ...

Implementation signatures
-------------------------
``host_sample(inputs, attrs, draws) -> list[np.ndarray]``
    one sample (an HWC image, a scalar label ...); ``draws`` is a float64
    vector of ``num_draws(attrs)`` uniform [0, 1) numbers or ``None``.
``host_batch(inputs, attrs, draws) -> list[np.ndarray]``
    a batch with a leading axis; ``draws`` has shape ``[N, num_draws]``.
``lower_onnx(emit, inputs, attrs, draws) -> list[str]``
    ``inputs`` are ONNX value names of batched tensors; ``draws`` is the
    name of a ``[N, num_draws]`` float32 graph input or ``None``; ``emit`` is
    the backend's emitter (``emit.op(op_type, inputs, **attrs)``,
    ``emit.const(array)``; see ``backends/onnx_lowering.py``).
``grad(emit_or_builder, ...)``
    reverse-mode rule, attached by the training issue.
``verify(graph, node) -> list[str]``
    the op's own well-formedness rules beyond types (allowed attribute
    values, what its graph must hold); the verifier reports what it returns.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .types import TensorType


class _Required:
    def __repr__(self):
        return "REQUIRED"


REQUIRED = _Required()

# Op kinds: where an op may appear and how the engine treats it.
SOURCE = "source"      # dataset source: no inputs, one output per column
PIPELINE = "pipeline"  # dataset structure: batch, shuffle, repeat, project ...
MAP = "map"            # a per-sample data transform applied by dataset.map
TENSOR = "tensor"      # a network / device tensor op
IO = "io"              # graph inputs, parameters, constants, return

# Attributes every MAP op carries, describing the map() call it came from.
MAP_ATTRS = {"map": None, "offload": None, "workers": None}

InferFn = Callable[[dict, list[TensorType]], list[TensorType]]


@dataclass
class OpDef:
    name: str
    kind: str
    family: str
    attrs: dict[str, Any]
    infer: Optional[InferFn]
    num_inputs: Optional[int] = 1          # None: variadic
    offloadable: bool = False
    num_draws: Callable[[dict], int] = field(default=lambda attrs: 0)
    doc: str = ""
    host_sample_fn: Optional[Callable] = None
    host_batch_fn: Optional[Callable] = None
    lower_onnx_fn: Optional[Callable] = None
    grad_fn: Optional[Callable] = None
    verify_fn: Optional[Callable] = None
    extra: dict[str, Any] = field(default_factory=dict)

    # -- decorators attaching implementations ---------------------------------
    def host_sample(self, fn):
        self.host_sample_fn = fn
        return fn

    def host_batch(self, fn):
        self.host_batch_fn = fn
        return fn

    def lower_onnx(self, fn):
        self.lower_onnx_fn = fn
        return fn

    def grad(self, fn):
        self.grad_fn = fn
        return fn

    def verify(self, fn):
        self.verify_fn = fn
        return fn

    # -- queries ----------------------------------------------------------------
    @property
    def is_random(self) -> bool:
        return self.num_draws is not _no_draws

    @property
    def signature(self) -> dict[str, Any]:
        """All attributes the op accepts, with defaults (REQUIRED if none)."""
        if self.kind == MAP:
            return {**self.attrs, **MAP_ATTRS}
        return self.attrs

    def takes_draws_operand(self, num_operands: int) -> bool:
        """On the device a random op takes its draws as one extra operand."""
        return (self.is_random and self.num_inputs is not None
                and num_operands == self.num_inputs + 1)

    def infer_types(self, attrs: dict, in_types: list[TensorType]) -> list[TensorType]:
        """Result types, ignoring a draws operand."""
        if self.takes_draws_operand(len(in_types)):
            in_types = in_types[:-1]
        return list(self.infer(attrs, in_types))

    def normalize_attrs(self, attrs: dict) -> dict:
        """Attributes with defaults filled in; raises on unknown or missing ones."""
        sig = self.signature
        unknown = sorted(set(attrs) - set(sig))
        if unknown and not self.extra.get("open_attrs"):
            raise KeyError(f"{self.name} has no attribute {', '.join(unknown)} "
                           f"(it takes: {', '.join(sig) or 'none'})")
        out = {}
        for key, default in sig.items():
            if key in attrs:
                out[key] = attrs[key]
            elif default is REQUIRED:
                raise KeyError(f"{self.name} needs attribute {key!r}")
            else:
                out[key] = default
        for key in unknown:
            out[key] = attrs[key]
        return out


def _no_draws(attrs: dict) -> int:
    return 0


_REGISTRY: dict[str, OpDef] = {}


def define(name: str, *, kind: str, family: str, attrs: dict | None = None,
           infer: InferFn | None = None, num_inputs: int | None = 1,
           offloadable: bool = False, num_draws: Callable[[dict], int] | None = None,
           doc: str = "", **extra) -> OpDef:
    """Declare an op. Declaring the same name twice is a programming error."""
    if name in _REGISTRY:
        raise ValueError(f"op {name} is already defined")
    op = OpDef(name=name, kind=kind, family=family, attrs=dict(attrs or {}),
               infer=infer, num_inputs=num_inputs, offloadable=offloadable,
               num_draws=num_draws or _no_draws, doc=doc, extra=extra)
    _REGISTRY[name] = op
    return op


def lookup(name: str) -> OpDef | None:
    _load_dialects()
    return _REGISTRY.get(name)


def get(name: str) -> OpDef:
    op = lookup(name)
    if op is None:
        raise KeyError(f"unknown op {name!r}")
    return op


def all_ops() -> dict[str, OpDef]:
    _load_dialects()
    return dict(_REGISTRY)


_loaded = False


def _load_dialects() -> None:
    """Import every dialect module once so that lookups see all ops."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    from .. import dialects  # noqa: F401  (registers on import)
