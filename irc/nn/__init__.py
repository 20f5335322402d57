"""``mindspore.nn``: Cells (networks and layers) built from ``irc.ops``."""
from __future__ import annotations

import importlib
import sys

from ..diagnostics import missing_names
from .activation import (  # noqa: F401
    CELU, ELU, GELU, GLU, HShrink, HSigmoid, HSwish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax,
    Mish, PReLU, ReLU, ReLU6, SeLU, Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softsign,
    SoftShrink, Tanh, Tanhshrink, Threshold, get_activation,
)
from .basic import Dense, Dropout, Embedding, EmbeddingLookup, Flatten, Identity, Upsample  # noqa: F401
from .cell import Cell, CellList, SequentialCell  # noqa: F401
from .conv import Conv1d, Conv1dTranspose, Conv2d, Conv2dTranspose, Conv3d, Conv3dTranspose  # noqa: F401
from .learning_rate_schedule import *  # noqa: F401,F403
from .metrics import (  # noqa: F401
    F1, MAE, MSE, ROC, Accuracy, BleuScore, ConfusionMatrix, ConfusionMatrixMetric, CosineSimilarity, Dice,
    Fbeta, HausdorffDistance, Loss, MeanSurfaceDistance, Metric, Perplexity, Precision, Recall,
    RootMeanSquareDistance, Top1CategoricalAccuracy, Top5CategoricalAccuracy, TopKCategoricalAccuracy, auc,
    get_metric_fn, get_metrics, names, rearrange_inputs,
)
from .normalization import (  # noqa: F401
    BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, InstanceNorm2d, InstanceNorm3d, LayerNorm, SyncBatchNorm,
)
from .padding import Pad  # noqa: F401
from .pooling import (  # noqa: F401
    AdaptiveAvgPool2d, AdaptiveAvgPool3d, AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell, RNNCellBase  # noqa: F401

# Modules other parts of irc add to this namespace (losses, optimizers,
# wrappers); a name is looked up in them on first use.
_EXTENSIONS = ("irc.nn.loss", "irc.nn.optim", "irc.nn.wrap", "irc.nn.loss_scale", "irc.nn.transformer",
               "irc.nn.layout", "irc.nn.combined", "irc.nn.layers_more")
_missing = missing_names(__name__)


def __getattr__(name: str):
    if name == "layer":   # MindSpore's nn.layer package: the layers, all here (``nn.layer.CellList``)
        return sys.modules[__name__]
    if not name.startswith("_"):
        for modname in _EXTENSIONS:
            module = importlib.import_module(modname)
            if hasattr(module, name):
                return getattr(module, name)
    return _missing(name)
