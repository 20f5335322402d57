"""``mindspore.dataset``: data pipelines (sources, pipeline operators, transforms, config).

Sources (``MnistDataset``, ``FashionMnistDataset``, ``KMnistDataset``,
``Cifar10Dataset``, ``Cifar100Dataset``, ``ImageFolderDataset`` / ``ImageFolder``,
``TextFileDataset``, ``CSVDataset``, ``MindDataset``, ``NumpySlicesDataset``, ``GeneratorDataset``,
``PaddedDataset``, ``TFRecordDataset``), their
samplers (:mod:`irc.dataset.samplers`) and the pipeline methods (``map``,
``batch``, ``shuffle`` ...) build lazy Dataset nodes
(:mod:`irc.dataset.engine_api`); iterating one lowers it to the
pipeline IR and runs it on the host engine.  Transforms live in
:mod:`irc.dataset.vision`, :mod:`irc.dataset.text` and :mod:`irc.dataset.transforms`, global settings
in :mod:`irc.dataset.config`.
"""
from . import audio, config, samplers, text, transforms, vision  # noqa: F401
from ..dialects.dataset import BatchInfo  # noqa: F401  (a per_batch_map's argument)
from .engine_api import (  # noqa: F401
    BatchDataset, BatchMapDataset, Cifar10Dataset, Cifar100Dataset, ConcatDataset, CSVDataset, Dataset,
    DictIterator, FashionMnistDataset, GeneratorDataset, ImageFolder, ImageFolderDataset, KMnistDataset,
    MapDataset, MappableDataset, MindDataset, MnistDataset, NumpySlicesDataset, PaddedDataset, ProjectDataset,
    RenameDataset, Schema, TFRecordDataset,
    RepeatDataset, ShuffleDataset, SkipDataset, TakeDataset, TextFileDataset, TupleIterator, ZipDataset,
    zip,
)
from .samplers import (  # noqa: F401
    BuiltinSampler, DistributedSampler, PKSampler, RandomSampler, Sampler, SequentialSampler, Shuffle,
    SubsetRandomSampler, SubsetSampler, WeightedRandomSampler,
)

# ``from mindspore.dataset import engine as de`` (OCRNet's eval.py; older
# scripts): MindSpore's engine package is this module's API
engine = __import__("sys").modules[__name__]
