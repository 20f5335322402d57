"""``mindspore.nn.Cell`` and the containers ``SequentialCell`` / ``CellList``.

A Cell registers the sub-cells and Parameters assigned to its attributes,
in assignment order.  When a Cell becomes an attribute of another, its
parameters' names get the attribute name as a prefix (MindSpore's
``auto_prefix``), so LeNet's first weight is ``conv1.weight`` and ResNet's
``layer1.0.conv1.weight``.

Calling a Cell runs ``construct``: eagerly on Tensors, or, while
``irc.frontend.network`` traces the network, recording graph nodes whose
``scope`` is the Cell's path.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Iterator, Optional

import numpy as np

from ..common.tensor import Parameter, ParameterTuple, Tensor
from ..diagnostics import (
    UnsupportedError, UserAttributeError, UserKeyError, UserNotImplementedError, UserTypeError,
    user_frame,
)
from ..ops import _dispatch


class Cell:
    """Base class of every network and layer."""

    def __init__(self, auto_prefix: bool = True, flags: Optional[dict] = None):
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "_phase", "train")     # MindSpore's: what a graph is cached by
        object.__setattr__(self, "requires_grad", False)
        object.__setattr__(self, "_auto_prefix", auto_prefix)
        object.__setattr__(self, "cls_name", type(self).__name__)
        object.__setattr__(self, "flags", dict(flags or {}))

    # -- attribute registration -------------------------------------------------------
    def _registry(self, what: str) -> OrderedDict:
        try:
            return object.__getattribute__(self, what)
        except AttributeError:
            raise UserAttributeError(f"{type(self).__name__}.__init__ must call "
                                     f"super().__init__() before assigning sub-cells or "
                                     f"parameters", where=user_frame()) from None

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, Parameter):
            self._forget(name, keep="_params")
            self._registry("_params")[name] = value
            if value.name is None:
                value.name = name
        elif isinstance(value, Cell):
            self._forget(name, keep="_cells")
            self._registry("_cells")[name] = value
            if self._auto_prefix:
                value.update_parameters_name(name + ".")
        elif isinstance(value, ParameterTuple):
            # MindSpore's: the cell holds each one too, keyed by its name
            # (a TrainOneStepCell's ``weights`` come first in its checkpoints)
            self._forget(name)
            params = self._registry("_params")
            for p in value:
                params.setdefault(p.name, p)
            object.__setattr__(self, name, value)
        else:
            params = self.__dict__.get("_params", {})
            if name in params and value is not None:
                if _dispatch.is_tensor(value):
                    # MindSpore's: the Parameter takes the value (an Assign in a traced construct)
                    if _dispatch.tracer() is not None:
                        _dispatch.assign(params[name], value)
                    else:
                        params[name].set_data(value)
                    return
                raise UserTypeError(f"Parameter '{name}' already exists in network, can not "
                                    f"assign this type: '{type(value)}' as a parameter.",
                                    where=user_frame())
            self._forget(name)
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str | None = None) -> None:
        # a registry re-assigned under the same name keeps the slot, as MindSpore's
        # dicts do: the order fixes parameter order and initialisers' draws
        for reg in ("_params", "_cells"):
            if reg != keep:
                self.__dict__.get(reg, {}).pop(name, None)
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str):
        d = self.__dict__
        if name in d.get("_params", ()):
            return d["_params"][name]
        if name in d.get("_cells", ()):
            return d["_cells"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self.__dict__.get("_params", ()) or name in self.__dict__.get("_cells", ()):
            self._forget(name)
        else:
            object.__delattr__(self, name)

    def insert_child_to_cell(self, child_name: str, child_cell: "Cell") -> None:
        if not isinstance(child_cell, Cell):
            raise UserTypeError(f"insert_child_to_cell: {child_name!r} is not a Cell",
                                where=user_frame())
        setattr(self, child_name, child_cell)

    def insert_param_to_cell(self, param_name: str, param: Parameter,
                             check_name: bool = True) -> None:
        if not isinstance(param, Parameter):
            raise UserTypeError(f"insert_param_to_cell: {param_name!r} is not a Parameter",
                                where=user_frame())
        setattr(self, param_name, param)

    def update_parameters_name(self, prefix: str = "", recurse: bool = True) -> None:
        """Name every parameter ``prefix`` + its attribute path (MindSpore's
        auto_prefix): a parameter made with a name of its own (BatchNorm's
        "mean") is known by its path once its cell has a parent."""
        for path, p in self.parameters_and_names(expand=recurse):
            p.name = prefix + path

    # -- running ---------------------------------------------------------------------
    def construct(self, *inputs, **kwargs):
        raise UserAttributeError(f"{type(self).__name__} has no construct method",
                                 where=user_frame(),
                                 hint="a Cell subclass defines construct(self, x) with its "
                                      "computation")

    def __call__(self, *args, **kwargs):
        hooks = self.__dict__.get("_irc_hooks")
        if hooks:
            for hook in list(hooks["pre"].values()):     # MindSpore's: may replace the inputs
                changed = hook(self, args)
                if changed is not None:
                    args = changed if isinstance(changed, tuple) else (changed,)
        tracer = _dispatch.tracer()
        if tracer is not None:
            out = tracer.call_cell(self, args, kwargs)
        elif not kwargs and (compiled := _compiled_step(self)) is not None:
            out = compiled(*args)
        else:
            args = tuple(Tensor(a) if isinstance(a, np.ndarray) else a for a in args)
            with _dispatch.running_cell():
                out = self.construct(*args, **kwargs)
        if hooks:
            for hook in list(hooks["post"].values()):    # may replace the output
                changed = hook(self, args, out)
                if changed is not None:
                    out = changed
        return out

    # -- hooks (MindSpore's PyNative hooks; irc runs them traced too) ----------------------
    def _add_hook(self, kind: str, hook_fn, prepend: bool) -> "HookHandle":
        if not callable(hook_fn):
            raise UserTypeError(f"register_forward_{'pre_' if kind == 'pre' else ''}hook: the hook "
                                f"must be callable, got {type(hook_fn).__name__}", where=user_frame())
        hooks = self.__dict__.setdefault("_irc_hooks", {"pre": OrderedDict(), "post": OrderedDict()})
        handle = HookHandle(hooks[kind])
        hooks[kind][handle.handle_id] = hook_fn
        if prepend:
            hooks[kind].move_to_end(handle.handle_id, last=False)
        return handle

    def register_forward_pre_hook(self, hook_fn, *, prepend=False, with_kwargs=False) -> "HookHandle":
        """``hook_fn(cell, inputs)`` before every call; a value it returns replaces the inputs."""
        return self._add_hook("pre", hook_fn, prepend)

    def register_forward_hook(self, hook_fn, *, prepend=False, with_kwargs=False,
                              always_call=False) -> "HookHandle":
        """``hook_fn(cell, inputs, output)`` after every call; a value it returns replaces the output."""
        return self._add_hook("post", hook_fn, prepend)

    def apply(self, fn) -> "Cell":
        """``fn`` on every sub-cell (children first), then on this cell (weight initialisation)."""
        for cell in self.cells():
            cell.apply(fn)
        fn(self)
        return self

    def recompute(self, **kwargs) -> "Cell":
        """MindSpore's gradient checkpointing mark: irc keeps every forward
        value for the backward pass (the same gradients, more memory)."""
        return self

    def set_inputs(self, *inputs, **kwargs) -> "Cell":
        """MindSpore's dynamic-shape declaration: irc traces each input
        signature (its batch axis symbolic) without one."""
        object.__setattr__(self, "_inputs", inputs)
        return self

    def get_inputs(self):
        return self.__dict__.get("_inputs")

    def set_jit_config(self, jit_config) -> "Cell":
        object.__setattr__(self, "jit_config_dict", getattr(jit_config, "jit_config_dict", {}))
        return self

    def add_flags_recursive(self, **flags) -> "Cell":
        for _, cell in self.cells_and_names():
            cell.add_flags(**flags)
        return self

    def get_flags(self) -> dict:
        return self.flags

    def state_dict(self, *args, **kwargs) -> OrderedDict:
        """name -> Parameter, MindSpore 2.x's torch-style view of parameters_dict."""
        return OrderedDict(self.parameters_and_names())

    def load_state_dict(self, state_dict, strict: bool = True):
        """Each named value into the Parameter of that name; ``strict``: the
        names must be this cell's exactly."""
        own = OrderedDict(self.parameters_and_names())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise UserKeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}",
                               where=user_frame())
        for name, value in state_dict.items():
            if name in own:
                own[name].set_data(value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value))
        return _LoadResult(missing, unexpected)

    def set_train(self, mode: bool = True) -> "Cell":
        """Every cell's ``training`` flag; this cell's own phase ("train" or
        "predict"), which a graph-mode compile of it is cached by."""
        object.__setattr__(self, "_phase", "train" if mode else "predict")
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", bool(mode))
        return self

    @property
    def phase(self) -> str:
        return self.__dict__.get("_phase", "train")

    @phase.setter
    def phase(self, value: str) -> None:
        if not isinstance(value, str):
            raise UserTypeError(f"For 'Cell', the property 'phase' must be string type, but got "
                                f"type {type(value)}.", where=user_frame())
        object.__setattr__(self, "_phase", value)

    def set_grad(self, requires_grad: bool = True) -> "Cell":
        object.__setattr__(self, "requires_grad", bool(requires_grad))
        return self

    def to_float(self, dst_type) -> "Cell":
        """MindSpore's mixed precision by Cell: irc computes in float32, so a
        float16 cell stays float32 (a notice once, as for ``amp_level``)."""
        from ..common import dtype as mstype
        from ..diagnostics import notice_once
        if mstype.to_ir(dst_type) not in ("f32", "f16", "bf16"):
            raise UnsupportedError(f"to_float: {dst_type} is not a float type", where=user_frame())
        if mstype.to_ir(dst_type) != "f32":
            notice_once(f"to_float({dst_type}) is ignored: irc trains in float32")
        return self

    def add_flags(self, **flags) -> "Cell":
        self.flags.update(flags)
        return self

    # -- traversal --------------------------------------------------------------------
    def cells_and_names(self, cells=None, name_prefix: str = "") -> Iterator[tuple[str, "Cell"]]:
        """(path, cell) for this cell ('' or name_prefix) and every descendant, once each."""
        seen = set() if cells is None else cells
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, cell in self._cells.items():
            if cell is not None:
                path = f"{name_prefix}.{name}" if name_prefix else name
                yield from cell.cells_and_names(seen, path)

    def cells(self):
        return [c for c in self._cells.values() if c is not None]

    def name_cells(self) -> OrderedDict:
        return OrderedDict((n, c) for n, c in self._cells.items() if c is not None)

    def parameters_and_names(self, name_prefix: str = "", expand: bool = True
                             ) -> Iterator[tuple[str, Parameter]]:
        """(path, parameter) for each parameter once, in registration order."""
        seen: set[int] = set()
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        for path, cell in cells:
            for name, p in cell._named_parameters_here():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{path}.{name}" if path else name), p

    def _named_parameters_here(self):
        """(key, Parameter) this cell holds itself, not its sub-cells'
        (an optimizer adds the state it holds)."""
        return self._params.items()

    def get_parameters(self, expand: bool = True) -> Iterator[Parameter]:
        for _, p in self.parameters_and_names(expand=expand):
            yield p

    def trainable_params(self, recurse: bool = True) -> list[Parameter]:
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse: bool = True) -> list[Parameter]:
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse: bool = True) -> OrderedDict:
        return OrderedDict((p.name, p) for p in self.get_parameters(expand=recurse))

    def init_parameters_data(self, auto_parallel_mode: bool = False) -> dict:
        """Materialise every parameter; returns {original: initialised}.  irc
        fills parameters when they are made, so each maps to itself."""
        return {p: p.init_data() for p in self.get_parameters()}

    # -- printing ---------------------------------------------------------------------
    def extend_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        head = f"{type(self).__name__}<{self.extend_repr()}"
        children = [f"  ({name}): " + repr(cell).replace("\n", "\n  ")
                    for name, cell in self._cells.items() if cell is not None]
        if not children:
            return head + ">"
        return head + "\n" + "\n".join(children) + "\n  >"


class SequentialCell(Cell):
    """Cells run in order; built from cells, a list of cells or an OrderedDict."""

    def __init__(self, *args):
        super().__init__()
        one = len(args) == 1 and isinstance(args[0], (list, tuple, OrderedDict))
        items = args[0] if one else args
        if isinstance(items, OrderedDict):
            for name, cell in items.items():
                self._append_named(name, cell)
        else:
            for cell in items:
                self.append(cell)

    def _append_named(self, name: str, cell) -> None:
        if not isinstance(cell, Cell):
            raise UserTypeError(f"SequentialCell holds Cells, got {type(cell).__name__}",
                                where=user_frame())
        setattr(self, str(name), cell)

    def append(self, cell: Cell) -> "SequentialCell":
        self._append_named(str(len(self._cells)), cell)
        return self

    def __len__(self) -> int:
        return len(self._cells)

    def __getitem__(self, index):
        cells = list(self._cells.values())
        if isinstance(index, slice):
            return _view(SequentialCell, cells[index])
        return cells[index]

    def __iter__(self):
        return iter(self._cells.values())

    def construct(self, x):
        for cell in self._cells.values():
            x = cell(x)
        return x


class CellList(Cell):
    """A list of Cells (registered as children ``0``, ``1`` ...); not callable."""

    def __init__(self, args=None):
        super().__init__()
        for cell in args or ():
            self.append(cell)

    def append(self, cell: Cell) -> "CellList":
        if not isinstance(cell, Cell):
            raise UserTypeError(f"CellList holds Cells, got {type(cell).__name__}",
                                where=user_frame())
        setattr(self, str(len(self._cells)), cell)
        return self

    def extend(self, cells) -> "CellList":
        for c in cells:
            self.append(c)
        return self

    def insert(self, index: int, cell: Cell) -> None:
        if not isinstance(cell, Cell):
            raise UserTypeError(f"CellList holds Cells, got {type(cell).__name__}",
                                where=user_frame())
        cells = list(self._cells.values())
        cells.insert(index, cell)
        # Renumber without prefixing the parameters of the cells already in.
        self._cells.clear()
        self._cells.update((str(i), c) for i, c in enumerate(cells))

    def __len__(self) -> int:
        return len(self._cells)

    def __getitem__(self, index):
        cells = list(self._cells.values())
        return _view(CellList, cells[index]) if isinstance(index, slice) else cells[index]

    def __iter__(self):
        return iter(self._cells.values())

    def construct(self, *inputs):
        raise UserNotImplementedError("a CellList is not callable: call its cells "
                                      "(for cell in self.cells: ...)", where=user_frame())


def _view(cls, cells):
    """A container over cells that already belong to another one: their
    parameters keep their names."""
    view = cls()
    object.__setattr__(view, "_auto_prefix", False)
    for c in cells:
        view.append(c)
    return view


class HookHandle:
    """What ``register_forward_hook`` returns: ``remove()`` takes the hook off."""

    _ids = iter(range(1 << 62))

    def __init__(self, hooks: OrderedDict):
        self.hooks = hooks
        self.handle_id = next(HookHandle._ids)

    def remove(self) -> None:
        self.hooks.pop(self.handle_id, None)


class _LoadResult(tuple):
    """``load_state_dict``'s (missing_keys, unexpected_keys)."""

    def __new__(cls, missing, unexpected):
        out = super().__new__(cls, (missing, unexpected))
        out.missing_keys, out.unexpected_keys = missing, unexpected
        return out

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys}"



def _takes_gradients(cell: Cell) -> bool:
    """A Cell holding a GradOperation: in GRAPH_MODE its forward and the
    gradient's are one call (BatchNorm's statistics updated once), as
    MindSpore compiles it, so it is compiled whole even without an optimizer."""
    from ..train.functional import GradOperation
    return any(isinstance(v, GradOperation) for v in cell.__dict__.values())


def _compiled_step(cell: Cell):
    """The compiled form of a training step called at the top level, as
    MindSpore runs it, or None to run ``cell`` eagerly.  In GRAPH_MODE a
    Cell holding an optimizer (nn.TrainOneStepCell, the model zoo's GAN
    steps) or a GradOperation is compiled whole, cached by its phase: the train/eval modes of
    its first compile stay.  In PyNative only a step that asks for it
    (``compiled_in_pynative``) is, reading the modes on every call."""
    from ..context import in_graph_mode
    from .optim import Optimizer
    graph = in_graph_mode()
    if not (graph or getattr(cell, "compiled_in_pynative", False)):
        return None
    if not any(isinstance(c, Optimizer) for c in cell.__dict__.get("_cells", {}).values()) and \
            not (graph and _takes_gradients(cell)):
        return _compiled_forward(cell) if graph else None
    slot = "_irc_graph_step" if graph else "_irc_pynative_step"
    compiled = cell.__dict__.get(slot)
    if compiled is None:
        from ..train.functional import JitFunction
        compiled = JitFunction(lambda *inputs: Cell.__call__(cell, *inputs),
                               f"{type(cell).__name__}.construct",
                               phase=(lambda: cell.phase) if graph else None)
        object.__setattr__(cell, slot, compiled)
    return compiled


# A forward Cell called in GRAPH_MODE is compiled per input signature, from
# its first call, as MindSpore runs it (an eval loop over a ResNet: 3-7x
# faster than the host kernels; OpenPose's VGG at 232x184: 11 s eager
# against 1.3 s to compile and run).  A construct the tracer cannot follow
# (asnumpy, numpy on tensors, a Python branch on a value) stays eager.
# EAGER_FORWARD_CALLS calls may run eagerly first.
EAGER_FORWARD_CALLS = 0


def _compiled_forward(cell: Cell):
    if _dispatch.in_network():      # a layer of a Cell running eagerly: its parent decides
        return None
    calls = cell.__dict__.get("_irc_forward_calls", 0)
    if calls < EAGER_FORWARD_CALLS:
        object.__setattr__(cell, "_irc_forward_calls", calls + 1)
        return None
    compiled = cell.__dict__.get("_irc_graph_forward")
    if compiled is None:
        from ..train.functional import JitFunction
        # The traced body is construct alone: Cell.__call__ runs the forward
        # hooks around the compiled call, so tracing them too would run them twice.
        jit = JitFunction(lambda *inputs: _dispatch.tracer().call_cell(cell, inputs, {}),
                          f"{type(cell).__name__}.construct", phase=lambda: cell.phase)
        compiled = _ForwardOrEager(cell, jit)
        object.__setattr__(cell, "_irc_graph_forward", compiled)
    return None if compiled.eager else compiled


class _ForwardOrEager:
    """The compiled forward, or, once compiling it failed or its construct
    printed (MindSpore prints on every call: a compiled graph would not),
    eager for good."""

    def __init__(self, cell: Cell, jit):
        self.cell, self.jit, self.eager = cell, jit, False

    # A forward fed many input shapes (sentences of their own lengths) would
    # compile for each: after this many it runs eagerly.
    MAX_SIGNATURES = 8

    def __call__(self, *args):
        if self.jit.compiles:
            out = self.jit(*args)
            self.eager = self.jit.compiles >= self.MAX_SIGNATURES
            return out
        import builtins
        printed, real_print = [], builtins.print

        def watched_print(*a, **k):
            printed.append(True)
            real_print(*a, **k)
        builtins.print = watched_print
        try:
            out = self.jit(*args)
        except Exception:   # noqa: BLE001 -- the eager run says what is wrong, if anything
            self.eager = True
            builtins.print = real_print
            with _dispatch.running_cell():
                return self.cell.construct(*(Tensor(a) if isinstance(a, np.ndarray) else a for a in args))
        finally:
            builtins.print = real_print
        self.eager = bool(printed)      # this call printed once, while traced
        return out
