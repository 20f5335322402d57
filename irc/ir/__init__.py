"""The IR: typed values, nodes, graphs over networkx, modules, the op
registry, the text form and the verifier."""
from .graph import DEVICE, HOST, Graph, GraphRef, Loc, Module, Node, Value  # noqa: F401
from .types import BATCH, TensorType  # noqa: F401
