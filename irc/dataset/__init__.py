"""``mindspore.dataset``: data pipelines (sources, pipeline operators, transforms, config).

Sources (``MnistDataset``, ``Cifar10Dataset``, ``ImageFolderDataset`` /
``ImageFolder``, ``NumpySlicesDataset``, ``GeneratorDataset``), their
samplers (:mod:`irc.dataset.samplers`) and the pipeline methods (``map``,
``batch``, ``shuffle`` ...) build lazy Dataset nodes
(:mod:`irc.dataset.engine_api`); iterating one lowers it to the
pipeline IR and runs it on the host engine.  Transforms live in
:mod:`irc.dataset.vision`, :mod:`irc.dataset.text` and :mod:`irc.dataset.transforms`, global settings
in :mod:`irc.dataset.config`.
"""
from . import config, samplers, text, transforms, vision  # noqa: F401
from ..dialects.dataset import BatchInfo  # noqa: F401  (a per_batch_map's argument)
from .engine_api import (  # noqa: F401
    BatchDataset, BatchMapDataset, Cifar10Dataset, ConcatDataset, Dataset, DictIterator, GeneratorDataset,
    ImageFolder, ImageFolderDataset, MapDataset, MappableDataset, MnistDataset, NumpySlicesDataset,
    ProjectDataset, RenameDataset, RepeatDataset, ShuffleDataset, SkipDataset, TakeDataset,
    TupleIterator, ZipDataset, zip,
)
from .samplers import (  # noqa: F401
    BuiltinSampler, DistributedSampler, PKSampler, RandomSampler, SequentialSampler, Shuffle,
    SubsetRandomSampler, SubsetSampler, WeightedRandomSampler,
)
