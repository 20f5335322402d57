"""irc: a compiler and graph visualiser for deep-learning data pipelines and models.

The top level mirrors ``mindspore``: scripts that ``import mindspore as ms``
compile unchanged under ``irc compile``, where ``mindspore`` resolves to this
package.  Every name is loaded on first use (PEP 562 module ``__getattr__``),
so ``import irc`` or ``import irc.ir.text`` loads nothing the caller does not
need: ``irc opt`` on a text file never pays for the MindSpore-shaped API.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_DTYPES = (
    "bool_", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
    "float16", "float32", "float64", "half", "single", "double",
)
# MindSpore 2.x's short dtype names (not defined in irc.common.dtype, where
# they would shadow Python's builtins)
_DTYPE_ALIASES = {"float": "float32", "int": "int32", "bool": "bool_", "long": "int64",
                  "short": "int16", "byte": "int8", "ubyte": "uint8"}
_CONTEXT = ("GRAPH_MODE", "PYNATIVE_MODE", "get_context", "set_context", "set_deterministic",
            "set_device", "JitConfig")
_METRICS = ("Accuracy", "F1", "Fbeta", "Loss", "MAE", "MSE", "Metric", "Precision", "Recall",
            "Top1CategoricalAccuracy", "Top5CategoricalAccuracy", "TopKCategoricalAccuracy",
            "rearrange_inputs", "BleuScore", "ConfusionMatrix", "ConfusionMatrixMetric",
            "CosineSimilarity", "Dice", "HausdorffDistance", "MeanSurfaceDistance", "Perplexity",
            "ROC", "RootMeanSquareDistance", "auc", "get_metric_fn", "names")
_CALLBACKS = ("LossMonitor", "TimeMonitor", "ModelCheckpoint", "CheckpointConfig", "Callback",
              "EarlyStopping", "History", "LambdaCallback", "RunContext", "LearningRateScheduler",
              "ReduceLROnPlateau", "BackupAndRestore", "OnRequestExit")

# name -> module that defines it
_LAZY = {
    **dict.fromkeys(_DTYPES, "irc.common.dtype"),
    **dict.fromkeys(_CONTEXT, "irc.context"),
    "Model": "irc.train.model",
    "Tensor": "irc.common.tensor",
    "Parameter": "irc.common.tensor",
    **dict.fromkeys(_METRICS, "irc.nn.metrics"),
    **dict.fromkeys(_CALLBACKS, "irc.train.callback"),
    **dict.fromkeys(("SummaryRecord", "SummaryCollector"), "irc.train.summary_record"),
    **dict.fromkeys(("mutable", "jit_class", "is_tensor", "from_numpy", "tensor", "dtype_to_nptype"),
                    "irc.common.api"),
    "manual_seed": "irc.dataset.config",
    "build_train_network": "irc.amp",
    "get_seed": "irc.seed",
    "save_checkpoint": "irc.train.serialization",
    "load_checkpoint": "irc.train.serialization",
    "load_param_into_net": "irc.train.serialization",
    "merge_sliced_parameter": "irc.train.serialization",
    "build_searched_strategy": "irc.train.serialization",
    "export": "irc.train.export",
    "set_auto_parallel_context": "irc.parallel",
    "get_auto_parallel_context": "irc.parallel",
    "reset_auto_parallel_context": "irc.parallel",
    "ParallelMode": "irc.parallel",
    "set_seed": "irc.seed",
    "set_algo_parameters": "irc.parallel",
    "get_algo_parameters": "irc.parallel",
    "reset_algo_parameters": "irc.parallel",
    "get_level": "irc.log",
    "get_log_config": "irc.log",
    "Profiler": "irc.profiler",
    "ParameterTuple": "irc.common.tensor",
    "RowTensor": "irc.common.tensor",
    **dict.fromkeys(("LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"),
                    "irc.train.loss_scale_manager"),
    "jit": "irc.train.functional",
    "ms_function": "irc.train.functional",
    "value_and_grad": "irc.train.functional",
    "grad": "irc.train.functional",
    **dict.fromkeys(("DatasetHelper", "connect_network_with_dataset", "data_sink"),
                    "irc.train.dataset_helper"),
}
# The MindSpore API's submodules (``mindspore.X``); irc's other packages
# (ir, passes, backends, the CLI ...) are its own, not MindSpore's.
_API_MODULES = ("dataset", "nn", "ops", "common", "train", "communication", "context", "parallel",
                "log", "profiler", "numpy", "amp", "mint", "mindrecord")
# name -> submodule it stands for (``from mindspore import dtype as mstype``)
_SUBMODULES = {
    **{name: f"irc.{name}" for name in _API_MODULES},
    "dtype": "irc.common.dtype",
}


def __getattr__(name: str):
    if name in _DTYPE_ALIASES:
        return getattr(importlib.import_module("irc.common.dtype"), _DTYPE_ALIASES[name])
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name])
    if name in _LAZY:
        try:
            module = importlib.import_module(_LAZY[name])
        except ModuleNotFoundError:
            module = None
        if module is not None and hasattr(module, name):
            value = getattr(module, name)
            globals()[name] = value  # later lookups skip __getattr__
            return value
    from .diagnostics import missing_names
    return missing_names(__name__)(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_SUBMODULES, *_DTYPE_ALIASES})
