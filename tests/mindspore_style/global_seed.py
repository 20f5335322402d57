"""The global seed as MindSpore 2.10 keeps it: ``get_seed()`` is None until
a script sets one (the data pipeline's own seed, ``dataset.config``, has its
default), ``mindspore.common.seed``'s (graph, op) seed pairs for random ops,
each call moving the op's counter, reset by ``set_seed``.  MindSpore's
output is in global_seed.mindspore.txt."""
import mindspore as ms
import mindspore.dataset as ds
from mindspore.common.seed import _get_graph_seed, _get_op_seed, get_seed, set_seed

print("unset", ms.get_seed(), get_seed(), ds.config.get_seed())
print("no seeds", _get_graph_seed(None, "normal"), _get_graph_seed(0, "dropout"))
ms.set_seed(5)
print("set", ms.get_seed(), get_seed(), ds.config.get_seed())
print("pairs", _get_graph_seed(None, "normal"), _get_graph_seed(3, "normal"), _get_graph_seed(3, "normal"))
print("op seed", _get_op_seed(0, "normal"), _get_op_seed(3, "normal"))
set_seed(7)
print("reset", ms.get_seed(), _get_graph_seed(3, "normal"), _get_graph_seed(0, "dropout"))
ms.set_seed(0)
print("zero", _get_graph_seed(0, "uniform"), _get_graph_seed(2 ** 31 + 5, "uniform"))
# MindSpore 2.x's mindspore.common.seed is its generator's seed(), a function
print("common.seed", callable(ms.common.seed), type(ms.common.seed()).__name__)
