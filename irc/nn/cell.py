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

from ..common.tensor import Parameter, Tensor
from ..diagnostics import (
    UnsupportedError, UserAttributeError, UserNotImplementedError, UserTypeError, user_frame,
)
from ..ops import _dispatch


class Cell:
    """Base class of every network and layer."""

    def __init__(self, auto_prefix: bool = True, flags: Optional[dict] = None):
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "training", False)
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
            self._forget(name)
            self._registry("_params")[name] = value
            if value.name is None:
                value.name = name
        elif isinstance(value, Cell):
            self._forget(name)
            self._registry("_cells")[name] = value
            if self._auto_prefix:
                value.update_parameters_name(name + ".")
        else:
            if name in self.__dict__.get("_params", ()) and value is not None:
                raise UserTypeError(f"{type(self).__name__}.{name} is a Parameter; assign a "
                                    f"Parameter (or use {name}.set_data(...))", where=user_frame())
            self._forget(name)
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        for reg in ("_params", "_cells"):
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
        tracer = _dispatch.tracer()
        if tracer is not None:
            return tracer.call_cell(self, args, kwargs)
        args = tuple(Tensor(a) if isinstance(a, np.ndarray) else a for a in args)
        return self.construct(*args, **kwargs)

    def set_train(self, mode: bool = True) -> "Cell":
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", bool(mode))
        return self

    def set_grad(self, requires_grad: bool = True) -> "Cell":
        object.__setattr__(self, "requires_grad", bool(requires_grad))
        return self

    def to_float(self, dst_type) -> "Cell":
        from ..common import dtype as mstype
        if mstype.to_ir(dst_type) != "f32":
            raise UnsupportedError("to_float: irc computes in float32 only", where=user_frame())
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
            for name, p in cell._params.items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{path}.{name}" if path else name), p

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
