"""Builtin ops every graph uses: its inputs, parameters, constants and return.

A graph's interface is typed: each ``input`` has a ``role`` (what the
runtime feeds it) and the ``return`` a ``roles`` list (what each result is),
so passes and the runtime ask :func:`graph_inputs` / :func:`graph_results`
instead of guessing from names, columns or provenance.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ir.registry import IO, REQUIRED, Dialect
from ..ir.traits import Pure
from ..ir.types import TensorType, to_numpy_dtype

DIALECT = Dialect("core")
define = DIALECT.define


# What an input carries.  Loop bodies (loop-sink) add the last three.
DATA = "data"                     # a batch of the dataset column 'col'
DRAWS = "draws"                   # per-sample uniform draws of the random op 'draws_for'
LEARNING_RATE = "learning_rate"   # the step's learning rate (one per step)
ITERATION = "iteration"           # a Loop body's iteration number
PARAMETER = "parameter"           # a trainable parameter's current value
STATE = "state"                   # optimiser or network state's current value
# A value an earlier piece of the same step computed: the runtime cuts a step
# that communicates at its collectives (irc.backends.staged).
ACTIVATION = "activation"
INPUT_ROLES = (DATA, DRAWS, LEARNING_RATE, ITERATION, PARAMETER, STATE, ACTIVATION)

# What a result is.  PARAMETER / STATE: the next value of the parameter the
# result is named after.
OUTPUT = "output"
LOSS = "loss"
RESULT_ROLES = (OUTPUT, LOSS, PARAMETER, STATE)


def _const_type(attrs, ins):
    array = np.asarray(attrs["value"], dtype=to_numpy_dtype(attrs["dtype"]))
    return [TensorType(attrs["dtype"], array.shape)]


INPUT = define("input", kind=IO, family="io", operands=(),
               attrs={"index": REQUIRED, "role": DATA, "draws_for": None, "rows": None, "columns": None},
               doc="A graph input; its type is given, not inferred.  'role' says what "
                   f"it carries ({', '.join(INPUT_ROLES)}); 'draws_for' names the random "
                   "op whose per-sample draws ([N, k] uniform floats made on the host) a "
                   "'draws' input carries; 'rows' their fixed count where it is not the "
                   "batch's (a random tensor of a fixed shape); 'columns' the rates a "
                   "'learning_rate' input carries a step (parameter groups with their own).")
PARAM = define("param", kind=IO, family="param", operands=(), traits=(Pure(),),
               attrs={"name": REQUIRED, "init": None, "trainable": True},
               doc="A parameter (weight); its value lives in Module.weights[name].")
CONST = define("const", kind=IO, family="io", operands=(), traits=(Pure(),),
               attrs={"value": REQUIRED, "dtype": REQUIRED}, infer=_const_type,
               doc="A small constant written inline.")
RETURN = define("return", kind=IO, family="io", operands=("*values",), results=(),
                attrs={"names": None, "roles": None}, infer=lambda attrs, ins: [],
                doc="The graph's results; 'names' labels them (e.g. columns), 'roles' says "
                    f"what each is ({', '.join(RESULT_ROLES)}; none: all outputs).  A "
                    "'parameter' or 'state' result is the next value of the parameter "
                    "it is named after (in a Loop body: of the loop-carried value in "
                    "its position).")


@INPUT.verify
def _verify_input(graph, node) -> list[str]:
    role, draws_for, index = node.attrs["role"], node.attrs["draws_for"], node.attrs["index"]
    if type(index) is not int or index < 0:    # the graph's interface is ordered by it
        return [f"input index must be a whole number >= 0, got {index!r}"]
    if role not in INPUT_ROLES:
        return [f"input role {role!r} is not one of {', '.join(INPUT_ROLES)}"]
    if (role == DRAWS) != (draws_for is not None):
        return ["a 'draws' input names its random op in 'draws_for', and only it does"]
    return []


@RETURN.verify
def _verify_return(graph, node) -> list[str]:
    roles, names = node.attrs["roles"], node.attrs["names"]
    if roles is None:
        return []
    operands = len(node.in_types)
    if len(roles) != operands:
        return [f"{len(roles)} roles for {operands} results"]
    unknown = sorted({r for r in roles if r not in RESULT_ROLES})
    if unknown:
        return [f"result role {', '.join(map(repr, unknown))} is not one of {', '.join(RESULT_ROLES)}"]
    if names is None and any(r in (PARAMETER, STATE) for r in roles):
        return ["'parameter' and 'state' results need names (the parameter each updates)"]
    return []


# =============================================================================
# the interface, by role
# =============================================================================

def graph_inputs(graph: Graph, *roles: str) -> list[Node]:
    """The graph's inputs in index order; only those of ``roles`` if given."""
    nodes = sorted(graph.find("input"), key=lambda n: int(n.attrs["index"]))
    return [n for n in nodes if not roles or n.attrs["role"] in roles]


@dataclass(frozen=True)
class Result:
    """One entry of a graph's ``return``."""
    name: str
    role: str
    value: Value

    @property
    def updates(self) -> bool:
        """Whether this is a parameter's (or state's) next value."""
        return self.role in (PARAMETER, STATE)


def graph_results(graph: Graph) -> list[Result]:
    """The graph's results with their names and roles ([] without a return)."""
    ret = _return_node(graph)
    if ret is None:
        return []
    values = graph.operands(ret)
    names = ret.attrs["names"] or [graph.value_name(v) for v in values]
    roles = ret.attrs["roles"] or [OUTPUT] * len(values)
    return [Result(str(n), r, v) for n, r, v in zip(names, roles, values)]


def _return_node(graph: Graph) -> Optional[Node]:
    rets = graph.find("return")
    return rets[0] if rets else None


def return_attrs(results: list[tuple[str, str]]) -> dict:
    """``return``'s attributes for (name, role) pairs; roles are left out
    when every result is an output (the default)."""
    names = [n for n, _ in results]
    roles = [r for _, r in results]
    return {"names": names, "roles": None if all(r == OUTPUT for r in roles) else roles}


@CONST.host_batch
def _const_host(inputs, attrs, draws):
    return [np.asarray(attrs["value"], dtype=to_numpy_dtype(attrs["dtype"]))]


