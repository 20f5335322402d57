"""``mindspore.common.parameter``: where MindSpore defines Parameter."""
from ..diagnostics import missing_names
from .tensor import Parameter, ParameterTuple  # noqa: F401

__getattr__ = missing_names(__name__)
