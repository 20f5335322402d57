"""The ``dataset`` dialect: the sources and pipeline operators of ``mindspore.dataset``.

A pipeline graph's values are column streams (see TEAM.md, PIPELINE IR).
Each op is declared once here with its type inference and the parts of its
host meaning that are plain functions:

* sources carry ``reader`` (``reader(attrs) -> SourceReader``: the rows in
  file order, read with numpy) and read the rows their sampler picks
  (:func:`sample_indices`; MindSpore's samplers are :mod:`.samplers`);
* every op carries ``count`` (``count(attrs, child_counts) -> rows``), the
  rule ``get_dataset_size`` follows;
* ``dataset.PyFunc`` carries ``host_sample`` (call the user's function).

The streaming behaviour of the pipeline operators (reservoir shuffle,
batching, repeat ...) is executed by ``backends/host_engine.py``; its
contract is stated on each op's ``doc``.

``dataset.NumpySlicesDataset`` and ``dataset.GeneratorDataset`` keep their
data / Python source, and ``dataset.PyFunc`` its callable, in
``module.objects[key]``; the op's ``data`` / ``source`` / ``fn`` attribute is
that key (a string), and the engine passes the object itself to the reader
or the function in place of the key.  Their result types are attributes
(``column_types`` / ``out_types``) because they come from the user's data,
not from the op.
"""
from __future__ import annotations

import functools
import math
import os
import re
import threading
from typing import Any, Iterator, Optional

import numpy as np

from ..diagnostics import UserError, UserRuntimeError, raised_at
from ..ir.registry import MAP, PIPELINE, REQUIRED, SOURCE, Dialect
from ..ir.traits import Batches, HandsRowsOn, HoldsObjects, Pure, RowCount, RowSource
from ..ir.types import UNKNOWN, TensorType, from_numpy_dtype, is_dtype
from . import mindrecord, samplers, stdrandom, tfrecord
from .samplers import probe_copy  # noqa: F401 -- the frontend's and the dataset API's

FAMILY = "dataset"
DIALECT = Dialect("dataset")
define = DIALECT.define
INFINITE = -1          # repeat/take count meaning "no limit"


# =============================================================================
# helpers
# =============================================================================

_TYPE = re.compile(r"^([a-z0-9]+)\[([^\]]*)\]$")


def parse_type(text: str) -> TensorType:
    """``"f32[2,?]"`` -> TensorType (the spelling the printer uses)."""
    m = _TYPE.match(text.replace(" ", ""))
    if not m or not is_dtype(m.group(1)):
        raise ValueError(f"not a type: {text!r} (expected e.g. 'f32[28,28]')")
    dims = [d for d in m.group(2).split(",") if d]
    return TensorType(m.group(1), tuple(int(d) if d.isdigit() else d for d in dims))


def type_of_value(value) -> TensorType:
    """The IR type of one row's value (bytes objects are ``bytes[]``)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return TensorType("bytes", ())
    a = np.asarray(value)
    if a.dtype.kind in "OSU":
        return TensorType("bytes", a.shape)
    return TensorType(from_numpy_dtype(a.dtype), a.shape)


def _types_attr(attrs) -> list[TensorType]:
    return [parse_type(t) for t in attrs["column_types"]]


def _same_types(attrs, ins):
    return list(ins)


def _child_count(attrs, counts):
    return counts[0]


class SourceReader:
    """The rows of a source in file order.

    ``random_access`` readers serve ``read(indices)``; the others (Python
    iterables) serve ``rows()``.  ``read`` returns one column per output
    column: a stacked array (rows along axis 0) or a list of per-row values.
    ``lazy`` readers may be read from worker threads (file and array reads);
    the others are read where the engine iterates (user code stays on one
    thread).
    """
    random_access = True
    lazy = True
    chunk_rows = 128

    def __len__(self) -> int:
        raise TypeError(f"{type(self).__name__} has no known length")

    def read(self, indices: np.ndarray) -> list:
        raise TypeError(f"{type(self).__name__} is not random-access")

    def origins(self, indices: np.ndarray) -> Optional[list]:
        """Per-row origin (a file name) used in error messages, or None."""
        return None

    def rows(self) -> Iterator[tuple]:
        raise TypeError(f"{type(self).__name__} is random-access")

    def labels(self) -> Optional[np.ndarray]:
        """Each row's class (what PKSampler picks by), or None."""
        return None

    def pick(self, attrs, at: Optional[samplers.Pass]) -> Optional[np.ndarray]:
        """The rows pass ``at`` reads (``at`` None: any pass's, in any order),
        for a source that picks them itself (a file source MindSpore reads
        without a sampler); None: its sampler picks."""
        return None


def sampled_labels(sampler: dict, reader: "SourceReader") -> Optional[np.ndarray]:
    """Each row's class, when the sampler picks by class (PKSampler)."""
    if not samplers.needs_labels(sampler):
        return None
    labels = reader.labels()
    if labels is None:
        raise UserRuntimeError("PKSampler picks rows by class, and this source has no class labels")
    return labels


def sample_indices(attrs, reader: "SourceReader", at: samplers.Pass) -> np.ndarray:
    """The rows pass ``at`` over a random-access source reads, in order (its
    sampler's picks, see :mod:`irc.dialects.samplers`)."""
    own = reader.pick(attrs, at)
    if own is not None:
        return own
    sampler = samplers.sampler_of(attrs)
    return samplers.pick(sampler, len(reader), at, sampled_labels(sampler, reader))


def source_count(reader_of):
    def count(attrs, counts):
        reader = reader_of(attrs)
        if not reader.random_access:
            try:
                n = len(reader)
            except TypeError:
                return None
            limit = attrs.get("num_samples")
            return min(n, int(limit)) if limit else n
        own = reader.pick(attrs, None)
        if own is not None:
            return len(own)
        sampler = samplers.sampler_of(attrs)
        return samplers.count(sampler, len(reader), sampled_labels(sampler, reader))
    return count


# -- file loading, cached by (path, size, mtime) ----------------------------------

_FILE_CACHE: dict[tuple, Any] = {}
_FILE_LOCK = threading.Lock()
_FILE_CACHE_MAX = 8


def _cached(path: str, load, variant=()):
    """``load(path)``, kept while the file is unchanged (``variant``: what
    else the result depends on)."""
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns, getattr(load, "func", load).__name__, variant)
    with _FILE_LOCK:
        if key in _FILE_CACHE:
            return _FILE_CACHE[key]
    value = load(path)
    with _FILE_LOCK:
        if len(_FILE_CACHE) >= _FILE_CACHE_MAX:
            _FILE_CACHE.pop(next(iter(_FILE_CACHE)))
        _FILE_CACHE[key] = value
    return value


def check_dir(op: str, dataset_dir) -> None:
    if not isinstance(dataset_dir, (str, os.PathLike)):
        raise UserError(f"{op}: dataset_dir must be a path, got {dataset_dir!r}",
                        hint="give the data folder (a script's --data_path / --dataset_path "
                             "argument left unset is None)" if dataset_dir is None else None)
    if not os.path.isdir(dataset_dir):
        what = "is not a folder" if os.path.exists(dataset_dir) else "does not exist"
        raise UserError(f"{op}: dataset_dir {str(dataset_dir)!r} {what}",
                        hint="give the folder that holds the dataset's files")


def _usage_parts(op: str, usage, parts: dict) -> list[str]:
    usage = "all" if usage is None else usage
    if usage == "all":
        return list(parts)
    if usage not in parts:
        raise UserError(f"{op}: usage must be one of {', '.join(map(repr, [*parts, 'all']))}, got {usage!r}")
    return [usage]


# =============================================================================
# MnistDataset, FashionMnistDataset, KMnistDataset (MNIST's idx files)
# =============================================================================

# by usage; "all" reads both in MindSpore's order, its sorted file names: t10k-* first
_MNIST_PREFIX = {"test": "t10k", "train": "train"}


def _find(dataset_dir: str, prefix: str, kind: str, ext: str) -> Optional[str]:
    """``train-images-idx3-ubyte`` (also ``train-images.idx3-ubyte``)."""
    for name in sorted(os.listdir(dataset_dir)):
        if name.startswith(f"{prefix}-{kind}") and ext in name:
            return os.path.join(dataset_dir, name)
    return None


def _read_idx(path: str, magic: int, ndim: int) -> np.ndarray:
    raw = np.fromfile(path, dtype=np.uint8)
    head = 4 + 4 * ndim
    if raw.size < head:
        raise UserError(f"{path} is truncated: {raw.size} bytes, shorter than its {head}-byte header")
    dims = raw[:head].view(">u4")
    if int(dims[0]) != magic:
        raise UserError(f"{path} is not an idx{ndim} file (magic number {int(dims[0])}, expected {magic})")
    shape = tuple(int(d) for d in dims[1:])
    want = head + int(np.prod(shape))
    if raw.size != want:
        state = "truncated" if raw.size < want else "longer than its header says"
        raise UserError(f"{path} is {state}: {raw.size} bytes, expected {want} for shape {list(shape)}")
    return raw[head:].reshape(shape)


def _load_mnist_images(path):
    return _read_idx(path, 2051, 3)[..., None]


def _load_mnist_labels(path):
    return _read_idx(path, 2049, 1).astype(np.uint32)


def _load(op: str, path: str, load):
    """``load(path)``, cached; a bad file's error names the dataset."""
    try:
        return _cached(path, load)
    except UserError as e:
        raise UserError(f"{op}: {e.message}", hint=e.hint) from None


class MnistReader(SourceReader):
    chunk_rows = 128
    op = "MnistDataset"

    def __init__(self, attrs):
        d, op = attrs["dataset_dir"], self.op
        check_dir(op, d)
        images, labels = [], []
        for part in _usage_parts(op, attrs.get("usage"), _MNIST_PREFIX):
            prefix = _MNIST_PREFIX[part]
            img = _find(d, prefix, "images", "idx3")
            lbl = _find(d, prefix, "labels", "idx1")
            if img is None or lbl is None:
                if attrs.get("usage") in (None, "all"):
                    continue
                raise UserError(f"{op}: no {prefix}-images-idx3-ubyte / {prefix}-labels-idx1-ubyte "
                                f"in {d!r}", hint="usage='train' reads train-*, usage='test' reads t10k-*")
            x, y = _load(op, img, _load_mnist_images), _load(op, lbl, _load_mnist_labels)
            if len(x) != len(y):
                raise UserError(f"{op}: {img} has {len(x)} images but {lbl} has {len(y)} labels")
            images.append(x)
            labels.append(y)
        if not images:
            raise UserError(f"{op}: no MNIST idx files in {d!r}",
                            hint="expected train-images-idx3-ubyte and train-labels-idx1-ubyte "
                                 "(or the t10k-* pair)")
        self.images = images[0] if len(images) == 1 else np.concatenate(images)
        self.class_ids = labels[0] if len(labels) == 1 else np.concatenate(labels)

    def __len__(self):
        return len(self.class_ids)

    def read(self, indices):
        return [self.images[indices], self.class_ids[indices]]

    def labels(self):
        return self.class_ids


class FashionMnistReader(MnistReader):
    op = "FashionMnistDataset"


class KMnistReader(MnistReader):
    op = "KMnistDataset"


# how a source samples: its own arguments or a sampler (see .samplers)
_SOURCE_ATTRS = {**dict.fromkeys(samplers.SOURCE_ARGS), "sampler": None}


def _mnist_like(reader, what: str):
    return define(
        f"dataset.{reader.op}", kind=SOURCE, family=FAMILY, operands=(), results=("*columns",),
        attrs={"dataset_dir": REQUIRED, "usage": None, **_SOURCE_ATTRS, "columns": ["image", "label"]},
        infer=lambda attrs, ins: [TensorType("u8", (28, 28, 1)), TensorType("u32", ())],
        traits=(RowSource(reader=reader, count=source_count(reader)),),
        doc=f"{what} idx files (train-* / t10k-* by usage; none = both, t10k-* first); "
            f"image u8[28,28,1], label u32[]")


MNIST = _mnist_like(MnistReader, "MNIST")
FASHION_MNIST = _mnist_like(FashionMnistReader, "Fashion-MNIST (MNIST's format)")
KMNIST = _mnist_like(KMnistReader, "KMNIST (MNIST's format)")


# =============================================================================
# Cifar10Dataset, Cifar100Dataset
# =============================================================================

_CIFAR_IMAGE = 32 * 32 * 3


def _cifar_files(op: str, d: str, usage) -> list[str]:
    """CIFAR-10: data_batch_<n>.bin (train, by n) and test_batch.bin."""
    names = sorted(os.listdir(d))
    train = sorted((n for n in names if re.fullmatch(r"data_batch_\d+\.bin", n)),
                   key=lambda n: int(re.findall(r"\d+", n)[0]))
    parts = {"train": train, "test": [n for n in names if n == "test_batch.bin"]}
    files = [f for part in _usage_parts(op, usage, parts) for f in parts[part]]
    if not files:
        raise UserError(f"{op}: no CIFAR-10 binary batches in {d!r} for usage {usage or 'all'!r}",
                        hint="expected data_batch_1.bin ... data_batch_5.bin and test_batch.bin")
    return [os.path.join(d, f) for f in files]


def _cifar100_files(op: str, d: str, usage) -> list[str]:
    """CIFAR-100: the .bin files whose names hold "test" (test.bin) or
    "train" (train.bin), in name order as MindSpore reads them (test first)."""
    def part(name):
        return "test" if "test" in name else "train" if "train" in name else None
    parts = _usage_parts(op, usage, {"train": None, "test": None})
    files = [n for n in sorted(os.listdir(d)) if n.endswith(".bin") and part(n) in parts]
    if not files:
        raise UserError(f"{op}: no CIFAR-100 binary files in {d!r} for usage {usage or 'all'!r}",
                        hint="expected train.bin and test.bin (CIFAR-100's binary version)")
    return [os.path.join(d, f) for f in files]


def _read_cifar(path, labels: int):
    """Records of ``labels`` label bytes and a 3x32x32 image (R, G, B
    planes): images u8[N,32,32,3] (HWC), labels u32[N, labels]."""
    record = labels + _CIFAR_IMAGE
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size == 0 or raw.size % record:
        raise UserError(f"{path} is truncated: {raw.size} bytes is not a whole number of "
                        f"{record}-byte records")
    rec = raw.reshape(-1, record)
    images = np.ascontiguousarray(rec[:, labels:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
    return images, rec[:, :labels].astype(np.uint32)


def _load_cifar10(path):
    return _read_cifar(path, 1)


def _load_cifar100(path):
    return _read_cifar(path, 2)


class Cifar10Reader(SourceReader):
    """The records of the usage's files in order; one label column per label byte."""
    chunk_rows = 128
    op, files, load = "Cifar10Dataset", staticmethod(_cifar_files), staticmethod(_load_cifar10)

    def __init__(self, attrs):
        d = attrs["dataset_dir"]
        check_dir(self.op, d)
        loaded = [_load(self.op, f, self.load) for f in self.files(self.op, d, attrs.get("usage"))]
        self.images = np.concatenate([x for x, _ in loaded]) if len(loaded) > 1 else loaded[0][0]
        self.label_bytes = np.concatenate([y for _, y in loaded]) if len(loaded) > 1 else loaded[0][1]

    def __len__(self):
        return len(self.label_bytes)

    def read(self, indices):
        picked = self.label_bytes[indices]
        return [self.images[indices], *(picked[:, j] for j in range(picked.shape[1]))]

    def labels(self):
        return self.label_bytes[:, 0]     # PKSampler's class: CIFAR-100's coarse label


class Cifar100Reader(Cifar10Reader):
    op, files, load = "Cifar100Dataset", staticmethod(_cifar100_files), staticmethod(_load_cifar100)


CIFAR10 = define(
    "dataset.Cifar10Dataset", kind=SOURCE, family=FAMILY, operands=(), results=("*columns",),
    attrs={"dataset_dir": REQUIRED, "usage": None, **_SOURCE_ATTRS, "columns": ["image", "label"]},
    infer=lambda attrs, ins: [TensorType("u8", (32, 32, 3)), TensorType("u32", ())],
    traits=(RowSource(reader=Cifar10Reader, count=source_count(Cifar10Reader)),),
    doc="CIFAR-10 binary batches (data_batch_*.bin = train, test_batch.bin = test); "
        "image u8[32,32,3] HWC, label u32[]")
CIFAR100 = define(
    "dataset.Cifar100Dataset", kind=SOURCE, family=FAMILY, operands=(), results=("*columns",),
    attrs={"dataset_dir": REQUIRED, "usage": None, **_SOURCE_ATTRS,
           "columns": ["image", "coarse_label", "fine_label"]},
    infer=lambda attrs, ins: [TensorType("u8", (32, 32, 3)), TensorType("u32", ()), TensorType("u32", ())],
    traits=(RowSource(reader=Cifar100Reader, count=source_count(Cifar100Reader)),),
    doc="CIFAR-100 binary files (*test*.bin = test, *train*.bin = train; all: name order, test "
        "first); records of a coarse and a fine label byte and the image: image u8[32,32,3] HWC, "
        "coarse_label u32[], fine_label u32[]")


# =============================================================================
# ImageFolderDataset
# =============================================================================

def image_folder_classes(d: str, class_indexing=None) -> list[tuple[str, int]]:
    """The class folders and their labels, as MindSpore lists them: every
    sub-folder (hidden ones aside, empty ones included) in name order,
    labelled 0, 1, ...; with ``class_indexing`` (a list of [name, label]
    pairs) only the folders it names, still in name order, with its labels
    (any int, negative ones too); a named folder that does not exist is
    skipped, as MindSpore does."""
    if class_indexing:
        return sorted((str(name), int(label)) for name, label in class_indexing)
    folders = sorted(n for n in os.listdir(d)
                     if os.path.isdir(os.path.join(d, n)) and not n.startswith("."))
    return [(name, i) for i, name in enumerate(folders)]


def image_folder_listing(d: str, extensions=None, class_indexing=None) -> tuple[list[str], np.ndarray]:
    """(files, labels): the files of each class folder (see
    :func:`image_folder_classes`), sorted within it, hidden files skipped."""
    exts = tuple(e.lower() for e in extensions) if extensions else None
    files, labels = [], []
    for name, label in image_folder_classes(d, class_indexing):
        folder = os.path.join(d, name)
        if not os.path.isdir(folder):
            continue
        for f in sorted(os.listdir(folder)):
            path = os.path.join(folder, f)
            if f.startswith(".") or not os.path.isfile(path):
                continue
            if exts is None or f.lower().endswith(exts):
                files.append(path)
                labels.append(label)
    return files, np.asarray(labels, dtype=np.int32)


def _no_images(d: str, extensions, class_indexing) -> UserError:
    """Why an image folder gave no files, and what to give instead."""
    classes = [name for name, _ in image_folder_classes(d, class_indexing)]
    loose = [f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f)) and not f.startswith(".")]
    if not classes and loose:
        hint = (f"its {len(loose)} files lie in the folder itself, but ImageFolderDataset reads one "
                f"subfolder per class: give the folder above the class folders, or move the files "
                f"into one")
    elif not classes:
        hint = "it has no class subfolders: give the folder whose subfolders are the classes"
    else:
        shown = ", ".join(classes[:4]) + (" ..." if len(classes) > 4 else "")
        only = f" with the extensions {list(extensions)}" if extensions else ""
        hint = f"its class folders ({shown}) hold no files{only}"
    return UserError(f"ImageFolderDataset: no images in {d!r}", hint=hint)


class FileBytesCache:
    """Files' bytes kept across the epochs of one run, up to ``budget``
    bytes in all (the files read first; the rest are read every epoch).
    Thread-safe: the engine's workers read files."""

    def __init__(self, budget: int):
        self.budget, self.used = budget, 0
        self.files: dict[str, bytes] = {}
        self.lock = threading.Lock()

    def read(self, path: str) -> bytes:
        data = self.files.get(path)
        if data is None:
            with open(path, "rb") as f:
                data = f.read()
            with self.lock:
                if self.used + len(data) <= self.budget and path not in self.files:
                    self.files[path] = data
                    self.used += len(data)
        return data


class ImageFolderReader(SourceReader):
    # decoding is slow: chunks small enough to spread over the workers, big
    # enough that handing one over is cheap (measured, 2 workers, seed 000's
    # chain: 32 rows a chunk, a piece per worker, 13-36% more images a
    # second than 16 rows in four pieces, at 224 and 32 pixels)
    chunk_rows = 32
    cache_bytes = 1 << 30    # a reader lives for one run: its epochs after the first read no file

    def __init__(self, attrs):
        d = attrs["dataset_dir"]
        check_dir("ImageFolderDataset", d)
        self.files, self.class_ids = image_folder_listing(d, attrs.get("extensions"),
                                                          attrs.get("class_indexing"))
        if not self.files:      # MindSpore's "no data found": reading nothing is a mistake
            raise _no_images(d, attrs.get("extensions"), attrs.get("class_indexing"))
        self.decode = bool(attrs.get("decode"))
        self.cache = FileBytesCache(self.cache_bytes)

    def __len__(self):
        return len(self.files)

    def _read_file(self, path):
        try:
            data = self.cache.read(path)
        except OSError as e:
            raise UserError(f"ImageFolderDataset: cannot read {path}: {e.strerror}") from None
        if self.decode:
            from .vision import decode
            try:
                return decode(data)
            except ValueError as e:
                raise UserError(f"ImageFolderDataset: {path} is not an image: {e}") from None
        return data

    def read(self, indices):
        return [[self._read_file(self.files[i]) for i in indices], self.class_ids[indices]]

    def labels(self):
        return self.class_ids

    def origins(self, indices):
        return [self.files[i] for i in indices]


def _infer_image_folder(attrs, ins):
    image = TensorType("u8", (UNKNOWN, UNKNOWN, 3)) if attrs["decode"] else TensorType("bytes", ())
    return [image, TensorType("i32", ())]


IMAGE_FOLDER = define(
    "dataset.ImageFolderDataset", kind=SOURCE, family=FAMILY, operands=(), results=("*columns",),
    attrs={"dataset_dir": REQUIRED, **_SOURCE_ATTRS, "extensions": None, "class_indexing": None,
           "decode": False, "columns": ["image", "label"]},
    infer=_infer_image_folder,
    traits=(RowSource(reader=ImageFolderReader, count=source_count(ImageFolderReader)),),
    doc="one sub-folder per class (sorted names -> label 0, 1, ...; class_indexing: [name, label] "
        "pairs); image = the file's bytes (decode=True: RGB u8[?,?,3]), label i32[]")


# =============================================================================
# TextFileDataset, CSVDataset: rows of text files
# =============================================================================

def file_rows_order(counts: list[int], order, workers: int, num_shards: int, shard_id: int) -> np.ndarray:
    """The rows (numbered file after file, in ``counts``' order) one pass of
    MindSpore's text-file readers reads, files taken in ``order``: shard
    ``shard_id`` takes rows [s*m, (s+1)*m) of the files read round and round
    (m = ceil(rows / num_shards)), in blocks (a file's part; a file of no
    rows inside the range still is a block); the blocks are dealt to the
    ``workers`` in turn, each reads its own in order, and the rows come one
    from each worker in turn (a worker with none left is skipped)."""
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    total = sum(counts[f] for f in order)       # the files read (a shard of whole files: its own)
    m = -(-int(total) // num_shards)
    lo, hi = shard_id * m, (shard_id + 1) * m
    blocks, pre = [], 0
    while True:
        for f in order:
            c = counts[f]
            if pre <= lo < pre + c or lo <= pre < hi:
                blocks.append(starts[f] + np.arange(max(0, lo - pre), min(c, hi - pre), dtype=np.int64))
            pre += c
        if pre >= hi or not total:
            break
    queues = [np.concatenate(blocks[w::workers] or [np.zeros(0, np.int64)]) for w in range(workers)]
    turn = np.concatenate([np.arange(len(q)) for q in queues])
    worker = np.concatenate([np.full(len(q), w) for w, q in enumerate(queues)])
    return np.concatenate(queues)[np.lexsort((worker, turn))]


def file_keys_order(seed: int, files: int, index: int, sharded: bool) -> np.ndarray:
    """The file order of pass ``index`` of a shuffled text-file reader, as
    MindSpore's NonMappableLeafOp shuffles its file keys: every pass
    shuffles the previous pass's order with ``std::mt19937`` seeded with the
    run's seed (the same permutation again each pass) or, sharded, with the
    pass number + 1 (every shard draws the same orders, whatever the seed)."""
    def step(order: np.ndarray, at: int) -> np.ndarray:
        return order[stdrandom.shuffle_order(stdrandom.Mt19937(at + 1 if sharded else seed), files)]
    return samplers.replayed(("file keys", None if sharded else seed, files), index,
                             lambda: step(np.arange(files, dtype=np.int64), 0), step)


def file_shuffle_size(num_files: int, num_shards: int, num_rows: int) -> int:
    """The buffer of the shuffle MindSpore puts after a globally shuffled
    text-file source (ComputeShuffleSize): four times a shard's rows per
    file, at most 10,000 (measured: 16 for 18 rows in 4 files, 20 for a
    shard of 23 of them)."""
    per_shard = -(-num_rows // max(num_shards, 1))
    return max(1, min(per_shard // num_files * 4, 10000))


def _text_lines(path: str) -> list[str]:
    """A text file's lines (split at line feeds, a carriage return kept), empty ones left out."""
    with open(path, "rb") as f:
        data = f.read()
    return [line.decode("utf-8", "replace") for line in data.split(b"\n") if line]


_INT = re.compile(r"\s*[+-]?\d+")
_F32_MAX = float(np.finfo(np.float32).max)
_FLOAT = re.compile(r"\s*[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf(inity)?|nan)", re.I)


def _csv_value(text: str, dtype: str):
    """A field as MindSpore's CSV reader converts it: std::stoi / std::stof,
    which read the longest number at the start and ignore the rest."""
    if dtype == "bytes":
        return text
    m = (_INT if dtype == "i32" else _FLOAT).match(text)
    if not m:
        raise ValueError("type does not match")
    value = int(m.group()) if dtype == "i32" else float(m.group())
    if (dtype == "i32" and not -2**31 <= value < 2**31) or \
            (dtype == "f32" and np.isfinite(value) and abs(value) > _F32_MAX):
        raise ValueError("value out of range")
    return value


def csv_records(path: str, delim: str):
    """``(line, fields)`` of a CSV file's records (blank lines left out);
    quoted fields may hold the delimiter, doubled quotes and line breaks."""
    import csv
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            reader = csv.reader(f, delimiter=delim, quotechar='"', doublequote=True, strict=True)
            for fields in reader:
                if fields:
                    yield reader.line_num, fields
    except csv.Error as e:
        raise UserError(f"CSVDataset: {path} is not a valid CSV file: {e}") from None


def _load_csv(path: str, attrs) -> list:
    """One column per column (a list of its values), the file's header left out."""
    dtypes = [parse_type(t).dtype for t in attrs["column_types"]]
    columns: list[list] = [[] for _ in dtypes]
    records = csv_records(path, attrs["field_delim"])
    if attrs["header"]:
        next(records, None)
    for line, fields in records:
        if len(fields) != len(dtypes):
            raise UserError(f"CSVDataset: {path} line {line} has {len(fields)} fields, but there are "
                            f"{len(dtypes)} columns {list(attrs['columns'])}")
        for j, (text, dtype) in enumerate(zip(fields, dtypes)):
            try:
                columns[j].append(_csv_value(text, dtype))
            except ValueError as e:
                raise UserError(f"CSVDataset: {path} line {line}, column {attrs['columns'][j]!r}: "
                                f"{text!r} is not {'an int' if dtype == 'i32' else 'a float'} ({e})",
                                hint="column_defaults gives each column's type") from None
    return columns


class TextFileReader(SourceReader):
    """The rows of ``dataset_files`` (file after file); each pass reads them
    in MindSpore's order (:func:`file_rows_order`), its files shuffled as
    MindSpore's (``shuffle`` "files" or "global"; "global" rows by the
    shuffle after the source: :meth:`shuffle_size`)."""
    op = "TextFileDataset"
    workers_per_file = False      # at most a worker a file (MindSpore's CSV reader: yes)

    def __init__(self, attrs):
        self.attrs = attrs
        columns: list[list] = [[] for _ in attrs["columns"]]
        self.counts = []
        for path in attrs["dataset_files"]:
            try:
                cols = self.load(path)
            except OSError as e:
                raise UserError(f"{self.op}: cannot read {path}: {e.strerror}") from None
            self.counts.append(len(cols[0]))
            for column, values in zip(columns, cols):
                column.extend(values)
        if not sum(self.counts):
            raise UserError(f"{self.op}: no rows in {list(attrs['dataset_files'])}",
                            hint="every file is empty (or only a header)")
        self.columns = self.stacked(columns)

    def stacked(self, columns: list[list]) -> list:
        """The columns read whole: arrays of their values, strings kept as a list."""
        return [c if t.dtype == "bytes" else np.asarray(c, _np_dtype(t.dtype))
                for c, t in zip(columns, self.types(self.attrs))]

    def types(self, attrs) -> list[TensorType]:
        return [TensorType("bytes", ())]

    def load(self, path: str) -> list[list]:
        return [_cached(path, _text_lines)]

    def __len__(self):
        return sum(self.counts)

    def read(self, indices):
        return [c[indices] if isinstance(c, np.ndarray) else [np.asarray(c[i]) for i in indices]
                for c in self.columns]

    def whole_file_shard(self, attrs) -> bool:
        """Whether a shard is whole files (else a run of rows)."""
        return False

    def shuffle_size(self, attrs) -> Optional[int]:
        """The buffer of the row shuffle a "global" shuffle puts after this
        source (the frontend adds it as a ``dataset.shuffle``); None: none."""
        if attrs["shuffle"] != "global":
            return None
        return file_shuffle_size(len(self.counts), int(attrs["num_shards"] or 1), sum(self.counts))

    def pick(self, attrs, at):
        """The rows of pass ``at``: files in MindSpore's order (shuffled,
        "global" or "files", by :func:`file_keys_order`), dealt to the
        workers; a "global" shuffle's rows are then shuffled by the
        ``dataset.shuffle`` after the source."""
        from .draws import mindspore_workers
        mode, files = attrs["shuffle"] if at is not None else "false", len(self.counts)
        shards, shard = int(attrs["num_shards"] or 1), int(attrs["shard_id"] or 0)
        order = np.arange(files) if mode == "false" else file_keys_order(at.seed, files, at.index, shards > 1)
        if self.whole_file_shard(attrs):
            # a shard of whole files: every num_shards-th file of this pass's order
            order, shards, shard = list(order)[shard::shards], 1, 0
        workers = int(attrs["num_parallel_workers"] or mindspore_workers())
        if self.workers_per_file:
            workers = min(workers, len(order))
        rows = file_rows_order(self.counts, order, workers, shards, shard)
        if attrs["num_samples"]:
            rows = rows[:int(attrs["num_samples"])]
        return rows


class CSVReader(TextFileReader):
    op = "CSVDataset"
    workers_per_file = True

    def load(self, path: str) -> list[list]:
        return _load_csv(path, self.attrs)

    def types(self, attrs) -> list[TensorType]:
        return _types_attr(attrs)


# how a text-file source reads: MindSpore's non-mappable file arguments
_FILE_ATTRS = {"dataset_files": REQUIRED, "shuffle": "global", "num_samples": None,
               "num_shards": None, "shard_id": None, "num_parallel_workers": None}

TEXT_FILE = define(
    "dataset.TextFileDataset", kind=SOURCE, family=FAMILY, operands=(), results=("*columns",),
    attrs={**_FILE_ATTRS, "columns": ["text"]},
    infer=lambda attrs, ins: [TensorType("bytes", ())],
    traits=(RowSource(reader=TextFileReader, count=source_count(TextFileReader)),),
    doc="the lines of dataset_files (sorted; empty lines left out), one string a row, in MindSpore's "
        "order (file_rows_order); shuffle 'files' / 'global' shuffles the files as MindSpore does "
        "(file_keys_order), 'global' with a dataset.shuffle after the source for the rows")
CSV = define(
    "dataset.CSVDataset", kind=SOURCE, family=FAMILY, operands=(), results=("*columns",),
    attrs={**_FILE_ATTRS, "field_delim": ",", "header": REQUIRED, "columns": REQUIRED,
           "column_types": REQUIRED},
    infer=lambda attrs, ins: _types_attr(attrs),
    traits=(RowSource(reader=CSVReader, count=source_count(CSVReader)),),
    doc="the records of CSV dataset_files (sorted; with header, every file's first record left "
        "out), one column a field typed by column_types (i32 / f32 / bytes: a string); order as "
        "TextFileDataset's, a worker a file at most")


# =============================================================================
# TFRecordDataset: tf.train.Example records (irc.dialects.tfrecord)
# =============================================================================

def _load_tfrecord(path: str, attrs) -> list[list]:
    return tfrecord.load_columns(path, attrs["compression_type"], list(attrs["columns"]), _types_attr(attrs),
                                 attrs["schema"])


class TFRecordReader(TextFileReader):
    """The records of TFRecord files, a column a feature; read in
    MindSpore's order as the text files are (:func:`file_rows_order`).
    Without ``shard_equal_rows`` a shard is whole files (file i to shard
    i % num_shards), as MindSpore's TFReaderOp deals them."""
    op = "TFRecordDataset"
    workers_per_file = True

    def load(self, path: str) -> list[list]:
        attrs = self.attrs
        return _cached(path, functools.partial(_load_tfrecord, attrs=attrs),
                       (attrs["compression_type"], tuple(attrs["columns"]), tuple(attrs["column_types"]),
                        attrs["schema"]))

    def stacked(self, columns: list[list]) -> list:
        """Rows of one shape stacked; a column whose rows differ (no schema) stays a list."""
        return [np.stack(c) if c[0].dtype.kind != "U" and len({v.shape for v in c}) == 1 else c
                for c in columns]

    def whole_file_shard(self, attrs) -> bool:
        shards = int(attrs["num_shards"] or 1)
        if shards == 1 or attrs["shard_equal_rows"]:
            return False
        if len(self.counts) < shards:
            raise UserError(f"TFRecordDataset: {len(self.counts)} files cannot be dealt to {shards} shards",
                            hint="give at least num_shards files, or shard_equal_rows=True")
        return True


TFRECORD = define(
    "dataset.TFRecordDataset", kind=SOURCE, family=FAMILY, operands=(), results=("*columns",),
    attrs={**_FILE_ATTRS, "shard_equal_rows": False, "compression_type": None, "schema": False,
           "columns": REQUIRED, "column_types": REQUIRED},
    infer=lambda attrs, ins: _types_attr(attrs),
    traits=(RowSource(reader=TFRecordReader, count=source_count(TFRecordReader)),),
    doc="the tf.train.Example records of TFRecord dataset_files (sorted), a column a feature typed by "
        "column_types (``schema``: a schema's, its shapes enforced; else the first records', a row's "
        "length free); order as TextFileDataset's, a worker a file at most; without shard_equal_rows "
        "a shard is whole files")


# =============================================================================
# MindDataset: MindRecord files (irc.dialects.mindrecord)
# =============================================================================

class MindRecordReader(SourceReader):
    """The rows of MindRecord shard files, shard after shard in ROW_ID
    order; each pass picks them as MindSpore's shard operators do
    (:func:`mindrecord.pass_order`)."""

    def __init__(self, attrs):
        self.shards = [mindrecord.ShardFile(p, self._index(p)) for p in attrs["dataset_files"]]
        self.counts = [len(s) for s in self.shards]
        by_name = {f.name: f for f in self.shards[0].fields}
        self.wanted = [by_name[c] for c in attrs["columns"]]
        self.starts = np.concatenate([[0], np.cumsum(self.counts)]).astype(np.int64)
        # padded rows (num_padded copies of padded_sample) come after the files' rows
        self.padded = int(attrs.get("num_padded") or 0)
        if self.padded:
            sample = attrs["padded_sample"]
            self.padded_row = [mindrecord.padded_value(f, sample[f.name]) for f in self.wanted]

    @staticmethod
    def _index(path: str):
        """The shard's index, kept across the readers of a run (its count, passes, evaluations)."""
        try:
            return _cached(path, mindrecord.load_index)
        except OSError as e:
            raise UserError(f"MindDataset: cannot read {path}: {e.strerror}") from None

    def __len__(self):
        return int(self.starts[-1]) + self.padded

    def read(self, indices):
        indices = np.asarray(indices, np.int64)
        shard_of = np.searchsorted(self.starts, indices, side="right") - 1
        columns: list[list] = [[None] * len(indices) for _ in self.wanted]
        for k in np.flatnonzero(indices >= self.starts[-1]).tolist():
            for column, value in zip(columns, self.padded_row):
                column[k] = value.copy()
        shard_of[indices >= self.starts[-1]] = -1
        for s in np.unique(shard_of[shard_of >= 0]).tolist():       # a shard's rows at once, put back in order
            at = np.flatnonzero(shard_of == s)
            for column, values in zip(columns, self.shards[s].rows((indices[at] - self.starts[s]).tolist(),
                                                                    self.wanted)):
                for k, v in zip(at.tolist(), values):
                    column[k] = v
        return columns

    def origins(self, indices):
        shard_of = np.searchsorted(self.starts, indices, side="right") - 1
        return [self.shards[s].path if i < self.starts[-1] else "padded_sample"
                for s, i in zip(shard_of.tolist(), np.asarray(indices).tolist())]

    def pick(self, attrs, at):
        counts = self.counts + [self.padded] if self.padded else self.counts
        spec = mindrecord.sampler_spec(attrs)
        if self.padded and spec["kind"] == "DistributedSampler" and sum(counts) % int(spec["num_shards"]):
            raise UserRuntimeError(f"Invalid data, the size of dataset and padded samples: {sum(counts)} can "
                                   f"not be divisible by the value of 'num_shards': {spec['num_shards']}.",
                                   hint="Please adjust the value of 'num_padded'.")
        return mindrecord.pass_order(spec, attrs["shuffle"], counts, at)


MIND_DATASET = define(
    "dataset.MindDataset", kind=SOURCE, family=FAMILY, operands=(), results=("*columns",),
    attrs={"dataset_files": REQUIRED, "shuffle": "global", "num_samples": None, "num_shards": None,
           "shard_id": None, "sampler": None, "num_parallel_workers": None, "columns": REQUIRED,
           "column_types": REQUIRED, "padded_sample": None, "num_padded": 0},
    infer=lambda attrs, ins: _types_attr(attrs),
    traits=(RowSource(reader=MindRecordReader, count=source_count(MindRecordReader)),),
    doc="the rows of MindRecord shard files (every file's own index), shard after shard; "
        "columns typed from the header's schema; shuffle 'global' / 'files' / 'infile' / 'false' and "
        "samplers as MindSpore's shard operators (irc.dialects.mindrecord.pass_order); num_padded "
        "copies of padded_sample (a value per column) after the files' rows")


# =============================================================================
# NumpySlicesDataset / GeneratorDataset (data in module.objects)
# =============================================================================

class NumpySlicesReader(SourceReader):
    """``data``: a tuple of arrays, one per column, sliced along axis 0."""

    def __init__(self, attrs):
        self.columns = attrs["data"]
        if isinstance(self.columns, str):
            raise UserError(f"NumpySlicesDataset: the data {self.columns!r} is not available "
                            f"(an IR module parsed from text holds no data)")

    def __len__(self):
        return len(self.columns[0]) if self.columns else 0

    def read(self, indices):
        return [c[indices] for c in self.columns]


NUMPY_SLICES = define(
    "dataset.NumpySlicesDataset", kind=SOURCE, family=FAMILY, operands=(), results=("*columns",),
    attrs={"data": REQUIRED, **_SOURCE_ATTRS, "columns": REQUIRED, "column_types": REQUIRED},
    infer=lambda attrs, ins: _types_attr(attrs),
    traits=(RowSource(reader=NumpySlicesReader, count=source_count(NumpySlicesReader)),
            HoldsObjects(("data",))),
    doc="rows sliced from in-memory arrays (module.objects[data]: one array per column)")


def row_columns(row, ncols: int, where: str) -> list:
    """One row from a user's Python source as a list of ncols values."""
    values = list(row) if isinstance(row, (tuple, list)) else [row]
    if isinstance(row, np.ndarray) and ncols > 1 and len(row) == ncols:
        values = list(row)
    if len(values) != ncols:
        raise UserError(f"{where}: a row has {len(values)} column(s) but column_names names {ncols}")
    return [v if isinstance(v, (bytes, np.ndarray)) else np.asarray(v) for v in values]


def stack_rows(rows: list[list], ncols: int) -> list:
    """Row-major values -> columns (stacked when shapes and dtypes agree)."""
    cols = []
    for j in range(ncols):
        vals = [r[j] for r in rows]
        first = vals[0] if vals else None
        if isinstance(first, np.ndarray) and first.dtype.kind not in "OSU" and all(
                isinstance(v, np.ndarray) and v.shape == first.shape and v.dtype == first.dtype
                for v in vals):
            cols.append(np.stack(vals))
        else:
            cols.append(vals)
    return cols


class GeneratorReader(SourceReader):
    """``source``: a random-accessible object (``__getitem__`` + ``__len__``),
    a callable returning an iterator, or an iterable."""
    lazy = False
    chunk_rows = 64

    def __init__(self, attrs):
        self.source = attrs["source"]
        if isinstance(self.source, str):
            raise UserError(f"GeneratorDataset: the source {self.source!r} is not available "
                            f"(an IR module parsed from text holds no Python objects)")
        self.ncols = len(attrs["columns"])
        self.random_access = is_random_access(self.source)
        # the declared dtypes are the IR's: rows are cast to them
        self.dtypes = [parse_type(t).dtype for t in attrs["column_types"]]
        self.names = list(attrs["columns"])
        # columns only Python functions read (the plan says which): a row keeps its own dtype
        self.free_dtypes = set(attrs.get("read_by_python_only", ()))
        # python_multiprocessing: the engine sets ``on_worker(position, fn, *args)``
        # (MindSpore's worker processes' random streams) and the next row's position
        self.processes = int(attrs.get("processes") or 0)
        self.on_worker = None
        self.next_position = 0

    def _row(self, row) -> list:
        values = row_columns(row, self.ncols, "GeneratorDataset")
        for j, (v, d) in enumerate(zip(values, self.dtypes)):
            if isinstance(v, np.ndarray) and d != "bytes" and v.dtype.kind not in "OSU" \
                    and v.dtype != _np_dtype(d):
                values[j] = self._cast(j, v, _np_dtype(d))
        return values

    def _cast(self, column: int, v: np.ndarray, to: np.dtype) -> np.ndarray:
        """A row's value in its column's dtype (the first rows'): floats may
        round, but a cast that changes other values (uint8 200 as int8 -56)
        is an error, where MindSpore would keep the row's own dtype."""
        cast = v.astype(to)
        if (v.dtype.kind == "f" and to.kind == "f") or np.array_equal(cast, v):     # compared by value
            return cast
        if column in self.free_dtypes:
            return v
        raise UserError(f"GeneratorDataset: column {self.names[column]!r} gets a {v.dtype} row where "
                        f"its first rows were {to}; irc gives a column one dtype, and this row's "
                        f"values do not fit it",
                        hint=f"return one dtype for the column (e.g. value.astype(np.{v.dtype}) in "
                             f"every row)")

    def __len__(self):
        if self.random_access:
            n = len(self.source)
            if n == 0:      # MindSpore refuses it when the pipeline starts (GeneratorNode)
                raise UserRuntimeError(
                    f"GeneratorDataset: data row of input source must not be 0: the source's "
                    f"__len__ ({callable_name(type(self.source))}) returned 0",
                    hint="the source found nothing to read: check the paths and file names it "
                         "lists (a wrong data folder?)")
            return n
        if hasattr(self.source, "__len__"):
            return len(self.source)
        raise TypeError("the source has no length")

    def _call(self, what, fn, *args):
        return call_user(fn, args, lambda e: f"GeneratorDataset: the source raised "
                                             f"{type(e).__name__} while {what}: {e}")

    def read(self, indices):
        rows = []
        for i in indices:
            what = f"reading row {i}"
            if self.on_worker is None:
                row = self._call(what, self.source.__getitem__, int(i))
            else:
                row = self.on_worker(self.next_position, self._call, what, self.source.__getitem__, int(i))
                self.next_position += 1
            rows.append(self._row(row))
        return stack_rows(rows, self.ncols)

    def rows(self):
        src = self.source
        it = self._call("starting", lambda: iter(src() if callable(src) and not hasattr(src, "__iter__")
                                                 else src))
        try:
            while True:
                try:
                    row = next(it)
                except StopIteration:
                    return
                except Exception as e:
                    raise UserError(f"GeneratorDataset: the source raised {type(e).__name__}: {e}"
                                    f"{raised_at(e)}") from e
                yield self._row(row)
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()


def _np_dtype(name: str) -> np.dtype:
    from ..ir.types import to_numpy_dtype
    return to_numpy_dtype(name)


def is_random_access(source) -> bool:
    return hasattr(source, "__getitem__") and hasattr(source, "__len__")


GENERATOR = define(
    "dataset.GeneratorDataset", kind=SOURCE, family=FAMILY, operands=(), results=("*columns",),
    attrs={"source": REQUIRED, **_SOURCE_ATTRS, "columns": REQUIRED, "column_types": REQUIRED,
           "processes": None},
    infer=lambda attrs, ins: _types_attr(attrs),
    traits=(RowSource(reader=GeneratorReader, count=source_count(GeneratorReader)),
            HoldsObjects(("source",))),
    doc="rows from a Python source (module.objects[source]); random-accessible sources "
        "are sampled like files (shuffled by default), iterables are read in order; processes N "
        "(python_multiprocessing): its random draws as MindSpore's N worker processes'")


# =============================================================================
# pipeline operators
# =============================================================================

def _batch_count(attrs, counts):
    n = counts[0]
    if n is None:
        return None
    bs = int(attrs["batch_size"])
    return n // bs if attrs["drop_remainder"] else -(-n // bs)


def _repeat_count(attrs, counts):
    n, c = counts[0], attrs["count"]
    if n is None:
        return None
    if c is None or c == INFINITE:
        return math.inf if n else 0
    return n * int(c)


def _take_count(attrs, counts):
    n, c = counts[0], int(attrs["count"])
    if c == INFINITE:
        return n
    return c if n is None else min(n, c)


def _skip_count(attrs, counts):
    n = counts[0]
    return None if n is None else max(0, n - int(attrs["count"]))


def _infer_concat(attrs, ins):
    k = len(attrs["columns"])
    if k == 0 or len(ins) % k:
        raise ValueError(f"concat: {len(ins)} operands are not whole groups of {k} columns")
    groups = [ins[i:i + k] for i in range(0, len(ins), k)]
    out = []
    for j, name in enumerate(attrs["columns"]):
        types = [g[j] for g in groups]
        if any(_is_blob(t) for t in types) and all(_is_blob(t) or _is_byte_vector(t) for t in types):
            # a file's bytes beside a uint8 vector (the model zoo pads an
            # ImageFolderDataset with an encoded image as np.uint8): both are
            # MindSpore's uint8 tensors; the vectors become blobs
            out.append(TensorType("bytes", ()))
            continue
        first = types[0]
        for t in types[1:]:
            if t.dtype != first.dtype or t.rank != first.rank:
                raise TypeError(f"concat: column {name!r} is {first} in the first dataset "
                                f"but {t} in another")
        dims = [d if all(t.shape[i] == d for t in types) else UNKNOWN for i, d in enumerate(first.shape)]
        out.append(TensorType(first.dtype, dims))
    return out


def _is_blob(t) -> bool:
    return t.dtype == "bytes" and t.rank == 0


def _is_byte_vector(t) -> bool:
    return t.dtype == "u8" and t.rank == 1


def _sum_counts(attrs, counts):
    return None if any(c is None for c in counts) else sum(counts)


def _concat_count(attrs, counts):
    """Rows of a concat; dealt over shards (``use_sampler``), MindSpore's
    ConcatNode size: the children's whole sizes, split as evenly as a
    DistributedSampler would, whatever each shard then reads."""
    shards = attrs.get("shards")
    if shards is None:
        return _sum_counts(attrs, counts)
    total, n, r = sum(shards["rows"]), int(shards["num_shards"]), int(shards["shard_id"])
    return total // n + (r < total % n)


def concat_keeps(shards: dict, child: int, shard: int) -> bool:
    """Whether ``shard`` keeps the row a child with its own offset sampler
    gave it.  A child smaller than the shard count gives an empty shard its
    row 0 as a placeholder; only the shards in the child's [start, end)
    range (wrapping around) hold a real row (MindSpore's ConcatOp)."""
    start, end = shards["ranges"][child]
    if start == -1 and end == -1:
        return True
    if start < end:
        return start <= shard < end
    return shard >= start or shard < end


def _min_counts(attrs, counts):
    known = [c for c in counts if c is not None]
    return min(known) if len(known) == len(counts) else None


SHUFFLE = define("dataset.shuffle", kind=PIPELINE, family=FAMILY,
                 operands=("*columns",), results=("*columns",),
                 attrs={"buffer_size": REQUIRED, "reshuffle_each_epoch": True}, infer=_same_types,
                 traits=(RowCount(_child_count), HandsRowsOn()),
                 doc="MindSpore's shuffle buffer: fill buffer_size rows; then per incoming row emit "
                     "slot draw % buffer_size, move the last row into it and append the new row; "
                     "drain the same way at the end (one mt19937_64 stream over the run, or "
                     "restarted every pass without reshuffle_each_epoch)")
BATCH = define("dataset.batch", kind=PIPELINE, family=FAMILY,
               operands=("*columns",), results=("*columns",),
               attrs={"batch_size": REQUIRED, "drop_remainder": False},
               infer=lambda attrs, ins: [t.batched("N") for t in ins],
               traits=(RowCount(_batch_count), Batches(), HandsRowsOn(stacks=True)),
               doc="stack batch_size rows per column (rows must agree in shape); the last, "
                   "smaller batch is dropped when drop_remainder")
def batch_map_columns(names: list[str], input_columns: Optional[list[str]],
                      output_columns: Optional[list[str]]) -> list[str]:
    """The columns after ``batch(per_batch_map=...)`` of columns ``names``:
    unchanged when the function's outputs keep the input columns' names,
    else its outputs first, then the columns it did not take (MindSpore 2.10)."""
    ins = list(input_columns or names)
    outs = list(output_columns or ins)
    if outs == ins:
        return list(names)
    return outs + [n for n in names if n not in ins]


class BatchInfo:
    """The last argument MindSpore gives a ``per_batch_map``: which batch of
    which epoch it is (both from 0)."""

    def __init__(self, batch_num: int, epoch_num: int):
        self._batch_num, self._epoch_num = int(batch_num), int(epoch_num)

    def get_batch_num(self) -> int:
        return self._batch_num

    def get_epoch_num(self) -> int:
        return self._epoch_num


def callable_name(fn) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return str(name)


def call_per_batch_map(fn, lists: list[list], batch_num: int, epoch_num: int, count: int,
                       where) -> list[np.ndarray]:
    """``fn(*lists, BatchInfo)`` as MindSpore calls a per_batch_map, each of
    its ``count`` results (a list of rows, or an array of them) stacked."""
    try:
        out = fn(*lists, BatchInfo(batch_num, epoch_num))
    except UserError:
        raise
    except Exception as e:
        raise UserRuntimeError(f"batch: per_batch_map {callable_name(fn)} raised "
                               f"{type(e).__name__}: {e}", where=where) from None
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(out) != count:
        raise UserRuntimeError(f"batch: per_batch_map {callable_name(fn)} returned {len(out)} "
                               f"columns, expected {count} (output_columns)", where=where,
                               hint="return a tuple with one list of rows per output column")
    expected = len(lists[0]) if lists else None
    columns = []
    for j, rows in enumerate(out):
        rows = [np.asarray(r) for r in rows]
        if expected is not None and len(rows) != expected:
            raise UserRuntimeError(f"batch: per_batch_map {callable_name(fn)}'s result {j} has "
                                   f"{len(rows)} rows; the batch has {expected}", where=where,
                                   hint="return one row per row of the batch in every column "
                                        "(MindSpore refuses it too)")
        shapes = {r.shape for r in rows}
        if len(shapes) > 1:
            raise UserRuntimeError(f"batch: per_batch_map {callable_name(fn)}'s result {j} has "
                                   f"rows of different shapes: {sorted(shapes)}", where=where,
                                   hint="rows of one batch are stacked: give them one shape")
        columns.append(np.stack(rows) if rows else np.zeros((0,), np.float32))
    return columns



BATCH_MAP = define("dataset.batch_map", kind=PIPELINE, family=FAMILY,
                   operands=("*columns",), results=("*columns",),
                   attrs={"batch_size": REQUIRED, "drop_remainder": False, "fn": REQUIRED,
                          "name": "", "input_columns": REQUIRED, "output_columns": REQUIRED,
                          "out_types": REQUIRED, "processes": None},
                   infer=lambda attrs, ins: [parse_type(t) for t in attrs["out_types"]],
                   traits=(RowCount(_batch_count), HoldsObjects(("fn",)), Batches(rewrites_rows=True)),
                   doc="batch(per_batch_map=fn): batch_size rows, then fn(*lists, BatchInfo) on "
                       "the lists of input_columns' rows gives output_columns' rows, and every "
                       "column is stacked; results in batch_map_columns' order; processes: "
                       "MindSpore's worker processes (python_multiprocessing), batch p of an "
                       "epoch on worker p mod processes with its own numpy stream")
def _infer_padded_batch(attrs, ins):
    out = []
    for t, pad in zip(ins, attrs["pad"]):
        if pad is None:
            out.append(t.batched("N"))
            continue
        shape = pad["shape"]
        if shape is None:
            shape = [None] * t.rank
        if len(shape) != t.rank:
            raise TypeError(f"padded_batch: the pad shape {list(shape)} has {len(shape)} "
                            f"dimensions, the column's rows {t.rank}")
        out.append(TensorType(t.dtype, ("N", *[UNKNOWN if d is None else int(d) for d in shape])))
    return out


PADDED_BATCH = define("dataset.padded_batch", kind=PIPELINE, family=FAMILY,
                      operands=("*columns",), results=("*columns",),
                      attrs={"batch_size": REQUIRED, "drop_remainder": False, "pad": REQUIRED},
                      infer=_infer_padded_batch,
                      traits=(RowCount(_batch_count), Batches(rewrites_rows=True)),
                      doc="batch with padding: pad[i] (none: stack as batch does) gives column i's "
                          "shape (a none dimension: the batch's longest row) and fill value; a "
                          "row longer than a fixed dimension is cut to it (MindSpore 2.10)")
def _infer_bucket_batch(attrs, ins):
    if attrs["pad"] is None:
        return [t.batched("N") for t in ins]
    return _infer_padded_batch(attrs, ins)


BUCKET_BATCH = define("dataset.bucket_batch", kind=PIPELINE, family=FAMILY,
                      operands=("*columns",), results=("*columns",),
                      attrs={"boundaries": REQUIRED, "batch_sizes": REQUIRED, "length_fn": None,
                             "length_columns": REQUIRED, "pad": None, "pad_to_boundary": False,
                             "drop_remainder": False},
                      infer=_infer_bucket_batch,
                      traits=(RowCount(lambda attrs, counts: None), HoldsObjects(("length_fn",)),
                              Batches(size_attr=None, rewrites_rows=True)),
                      doc="bucket_batch_by_length: a row goes to bucket bisect(boundaries, its "
                          "length) (length_fn of the length_columns, else the first dimension), "
                          "a full bucket (batch_sizes) is padded as padded_batch pads (with "
                          "pad_to_boundary, a listed shape's none dimensions to the bucket's "
                          "boundary less one) and emitted; at the end the partial buckets in order")
REPEAT = define("dataset.repeat", kind=PIPELINE, family=FAMILY,
                operands=("*columns",), results=("*columns",),
                attrs={"count": INFINITE}, infer=_same_types, traits=(RowCount(_repeat_count), HandsRowsOn()),
                doc="replay the child count times (-1: forever); every pass reshuffles")
TAKE = define("dataset.take", kind=PIPELINE, family=FAMILY,
              operands=("*columns",), results=("*columns",),
              attrs={"count": REQUIRED}, infer=_same_types, traits=(RowCount(_take_count), HandsRowsOn()),
              doc="the first count rows (-1: all)")
SKIP = define("dataset.skip", kind=PIPELINE, family=FAMILY,
              operands=("*columns",), results=("*columns",),
              attrs={"count": REQUIRED}, infer=_same_types, traits=(RowCount(_skip_count), HandsRowsOn()),
              doc="all rows but the first count")
FILTER = define("dataset.filter", kind=PIPELINE, family=FAMILY,
                operands=("*columns",), results=("*columns",),
                attrs={"predicate": REQUIRED, "input_columns": None}, infer=_same_types,
                traits=(RowCount(lambda attrs, counts: None), HoldsObjects(("predicate",)), HandsRowsOn()),
                doc="the rows for which module.objects[predicate](*input_columns) is true (all "
                    "columns when input_columns is none); how many, only reading tells")
PROJECT = define("dataset.project", kind=PIPELINE, family=FAMILY,
                 operands=("*columns",), results=("*columns",),
                 attrs={"columns": REQUIRED}, infer=_same_types, traits=(RowCount(_child_count), HandsRowsOn()),
                 doc="keep the operand columns, in operand order")
RENAME = define("dataset.rename", kind=PIPELINE, family=FAMILY,
                operands=("*columns",), results=("*columns",),
                attrs={"input_columns": REQUIRED, "output_columns": REQUIRED},
                infer=_same_types, traits=(RowCount(_child_count), HandsRowsOn()),
                doc="the same rows; the results carry the new column names")
CONCAT = define("dataset.concat", kind=PIPELINE, family=FAMILY,
                operands=("*columns",), results=("*columns",),
                attrs={"columns": REQUIRED, "shards": None}, infer=_infer_concat,
                traits=(RowCount(_concat_count),),
                doc="the rows of each child in turn (operands: the columns of child 1, then child 2 ...); "
                    "with ``shards`` (ConcatDataset.use_sampler(DistributedSampler)) the rows of the "
                    "concatenation are dealt over num_shards: a child marked ``dealt`` row by row by "
                    "a counter that runs on over the run, the others read through their own offset "
                    "samplers (``rows``: each child's whole size; ``ranges``: where a small child's "
                    "rows are real)")
ZIP = define("dataset.zip", kind=PIPELINE, family=FAMILY,
             operands=("*columns",), results=("*columns",),
             attrs={"columns": REQUIRED}, infer=_same_types, traits=(RowCount(_min_counts),),
             doc="rows side by side; as many rows as the shortest child")


# =============================================================================
# dataset.PyFunc: a Python callable in map()
# =============================================================================

class PyFuncError(UserError):
    """A Python map function misbehaved (raised, or returned the wrong columns)."""


PYFUNC = define("dataset.PyFunc", kind=MAP, family=FAMILY,
                operands=("*inputs",), results=("*outputs",),
                attrs={"fn": REQUIRED, "name": "", "input_columns": REQUIRED,
                       "output_columns": REQUIRED, "out_types": REQUIRED, "processes": None},
                infer=lambda attrs, ins: [parse_type(t) for t in attrs["out_types"]],
                traits=(Pure(), HoldsObjects(("fn",))),
                doc="call the user's function (module.objects[fn]) on one row's input columns; "
                    "a tuple result gives one column per element; processes N (map's "
                    "python_multiprocessing): its random draws as MindSpore's N worker processes' "
                    "(row p of an epoch drawing from worker p mod N's streams)")


class PyChain:
    """Consecutive Python operations of one map, called in turn on one row
    as MindSpore's Compose runs them: a result passes to the next function
    as it is (``ToPIL()``'s PIL image to a PIL augmentation), a tuple as
    that many arguments; only the last result becomes columns."""

    def __init__(self, functions):
        self.functions = list(functions)
        self.__qualname__ = ", ".join(callable_name(f) for f in self.functions)

    def __call__(self, *args):
        out = args
        for fn in self.functions:
            out = call_python(fn, out)
            if not isinstance(out, tuple):
                out = (out,)
        return out if len(out) != 1 else out[0]


def call_user(fn, args, describe, error=UserError):
    """``fn(*args)``: an exception of the user's code becomes
    ``error(describe(exception))``, chained to it; the message names the
    user's line that raised it (the error itself is located where the
    pipeline was built: the map or the source)."""
    try:
        return fn(*args)
    except UserError:
        raise
    except Exception as e:
        raise error(describe(e) + raised_at(e)) from e



def call_python(fn, args, when: str = "", name: str | None = None):
    """A map's Python function on a row: an exception becomes a PyFuncError
    naming the function (``when``: " on the first row")."""
    return call_user(fn, args, lambda e: f"the Python function {name or callable_name(fn)} raised "
                                         f"{type(e).__name__}{when}: {e}", PyFuncError)


def python_runs(operations: list) -> list:
    """A map's operations with each run of consecutive Python callables as
    one PyChain (a lone one stays as it is)."""
    grouped, run = [], []
    for op in operations:
        if callable(op) and not is_transform(op):
            run.append(op)
            continue
        if run:
            grouped.append(run[0] if len(run) == 1 else PyChain(run))
            run = []
        grouped.append(op)
    if run:
        grouped.append(run[0] if len(run) == 1 else PyChain(run))
    return grouped


def is_transform(op) -> bool:
    """One of irc's transforms (an op of the IR), not a Python callable."""
    return isinstance(getattr(op, "op_name", None), str) and isinstance(getattr(op, "attrs", None), dict)


def to_user(value):
    """A value as Python functions and iterators see it: encoded bytes become
    u8[L] (MindSpore's form), everything else an ndarray."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(value), dtype=np.uint8)
    return value if isinstance(value, np.ndarray) else np.asarray(value)


# A Python function sees one row at a time: its own host_sample, no host_batch.
@PYFUNC.host_sample
def _pyfunc_sample(inputs, attrs, draws):
    fn = attrs["fn"]
    name = attrs["name"] or "function"
    if not callable(fn):
        raise PyFuncError(f"the Python function {name} is not available (key {fn!r}): "
                          f"an IR module parsed from text holds no Python objects")
    out = call_python(fn, [to_user(x) for x in inputs], name=name)
    outs = list(out) if isinstance(out, tuple) else [out]
    want = len(attrs["out_types"])
    if len(outs) != want:
        raise PyFuncError(f"the Python function {name} returned {len(outs)} column(s), but the map "
                          f"expects {want} (output_columns {list(attrs['output_columns'])})",
                          hint="return a tuple with one array per output column")
    try:
        return [o if isinstance(o, np.ndarray) else np.asarray(o) for o in outs]
    except Exception as e:
        raise PyFuncError(f"the Python function {name} returned a value that is not an array: {e}") from e
