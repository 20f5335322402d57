"""Op traits: typed facts an op declares about itself, queried by passes.

A trait is a small frozen object listed in the op's declaration
(``traits=(Pure(), Offloadable())``) and asked for by type
(``opdef.has_trait(Pure)``, ``opdef.trait(Random).draws(attrs)``), in the
manner of xDSL's op traits.  Passes read these instead of keeping per-op
tables of their own, so adding an op means declaring it, not editing passes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional


class OpTrait:
    """Base class of every trait; ``OpDef.trait(T)`` finds instances of ``T``.

    A trait that changes how the op reads its operands wraps the op's type
    rule and host implementations (``around_infer``, ``around_host``); the
    registry applies them as the implementations are attached."""

    def around_infer(self, infer):
        return infer

    def around_host(self, fn, batched: bool):
        return fn


@dataclass(frozen=True)
class Pure(OpTrait):
    """No effect beyond its results: dead-code elimination may drop the op
    when nobody uses them."""


@dataclass(frozen=True)
class Offloadable(OpTrait):
    """A map op with a device implementation: offload-legality may move it
    from the host pipeline to the device graph."""


@dataclass(frozen=True)
class Exportable(OpTrait):
    """A map op MindSpore keeps on the host whose device form is exact:
    ``irc export`` computes it inside the model (offload-legality under the
    export option), for the attributes ``accepts`` allows."""
    accepts: Callable[[dict], bool] = lambda attrs: True


@dataclass(frozen=True)
class Random(OpTrait):
    """The op consumes ``draws(attrs)`` uniform [0, 1) numbers per sample
    (made on the host, so the device can be fed the same ones).

    ``mindspore(gen, m, attrs, hw)``, where given, makes the draws that take
    MindSpore's decisions: its op's choices for ``m`` consecutive samples of
    one ``std::mt19937`` (``gen``, an :class:`irc.dialects.stdrandom.Mt19937`)
    on images of size ``hw`` ((H, W), None when not static), as ``[m, k]``
    draws in this op's convention, or None where it cannot."""
    draws: Callable[[dict], int]
    mindspore: Optional[Callable] = None


@dataclass(frozen=True)
class OneChannelHW(OpTrait):
    """An image given as [H, W] (no channel axis) is one channel, as
    MindSpore's image ops take ``<H, W>``: the op runs on [H, W, 1] and its
    image result comes back as [H, W, ...] without the axis.  (A host batch
    of such images is [N, H, W]; a batch of HWC images is rank 4.)"""

    def around_infer(self, infer):
        def infer_hw(attrs, ins):
            if not ins or ins[0].rank != 2:
                return infer(attrs, ins)
            out = infer(attrs, [ins[0].with_shape((*ins[0].shape, 1)), *ins[1:]])
            return [_channel_dropped(out[0]), *out[1:]]
        return infer_hw

    def around_host(self, fn, batched: bool):
        hw_rank = 3 if batched else 2

        def run_hw(inputs, *rest):
            if not inputs or getattr(inputs[0], "ndim", None) != hw_rank:
                return fn(inputs, *rest)
            out = fn(type(inputs)([inputs[0][..., None], *inputs[1:]]), *rest)
            return [out[0][..., 0] if out[0].shape[-1:] == (1,) else out[0], *out[1:]]
        return run_hw


def _channel_dropped(t):
    return t.with_shape(t.shape[:-1]) if t.shape[-1:] == (1,) else t


@dataclass(frozen=True)
class CommutesWithHWC2CHW(OpTrait):
    """``op(x) -> HWC2CHW`` may become ``HWC2CHW(x) -> op'``.

    ``rewrite_attrs(attrs)`` gives the attribute updates that keep the op's
    meaning on the channels-first input, or ``None`` when this instance cannot
    move (say, Normalize already in its CHW form); without it the attributes
    stay as they are.
    """
    rewrite_attrs: Optional[Callable[[dict], Optional[dict]]] = None

    def moved_attrs(self, attrs: dict) -> Optional[dict]:
        """Attribute updates for the moved op, or None if it cannot move."""
        return {} if self.rewrite_attrs is None else self.rewrite_attrs(attrs)


@dataclass(frozen=True)
class RowCount(OpTrait):
    """A dataset op's rows per epoch, from its attributes and its children's
    counts: ``count(attrs, child_counts) -> int | math.inf | None``."""
    count: Callable[[dict, list], Any]


@dataclass(frozen=True)
class RowSource(RowCount):
    """A dataset source: ``reader(attrs)`` opens its rows (a
    ``dialects.dataset.SourceReader``); ``count`` as for :class:`RowCount`."""
    reader: Callable[[dict], Any] = None


@dataclass(frozen=True)
class Batches(OpTrait):
    """A pipeline op making batches of rows.  ``size_attr``: the attribute
    every batch's size is (None: sizes vary, bucket_batch's); with
    ``rewrites_rows`` the rows change on the way (a per_batch_map, padding):
    a map before it cannot move after it, and walks back through the
    pipeline stop there."""
    size_attr: Optional[str] = "batch_size"
    rewrites_rows: bool = False

    def size(self, attrs: dict) -> Optional[int]:
        """The batch size, if there is one."""
        return None if self.size_attr is None else int(attrs[self.size_attr])

    def fixed_size(self, attrs: dict) -> Optional[int]:
        """The size of every batch (the last, smaller one dropped), else None."""
        return self.size(attrs) if attrs.get("drop_remainder") else None


@dataclass(frozen=True)
class HandsRowsOn(OpTrait):
    """A pipeline op whose results are its operands' rows as they came:
    picked, reordered, repeated or renamed, no value read by a kernel of
    irc's.  ``stacks``: handed on stacked into batches (one dtype and shape a
    column)."""
    stacks: bool = False


@dataclass(frozen=True)
class RowsAsList(OpTrait):
    """A map op whose batch form takes its operand as a chunk's rows in a
    list (encoded bytes of their own lengths, images of their own sizes)
    and stacks its results: the engine calls it on such columns too, one
    call a chunk instead of one a row."""


def rewrites_rows(opdef) -> bool:
    """Whether a pipeline op changes the rows it batches (see :class:`Batches`)."""
    batches = opdef.trait(Batches) if opdef is not None else None
    return batches is not None and batches.rewrites_rows


@dataclass(frozen=True)
class HoldsObjects(OpTrait):
    """Attributes naming Python objects (data arrays, callables) that the
    module keeps in ``module.objects``; the IR holds only their keys."""
    attrs: tuple[str, ...]


@dataclass(frozen=True)
class OpenAttrs(OpTrait):
    """The op accepts attributes beyond its signature (an imported ONNX node
    carries its operator's own)."""


@dataclass(frozen=True)
class Collective(OpTrait):
    """The op communicates between ranks (all-reduce, all-to-all): no device
    graph can run it, so the runtime cuts the graph there and the collective
    engine runs it between the pieces.  Every rank must reach the same
    collectives in the same order."""
