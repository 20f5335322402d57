"""MindSpore's ``SummaryRecord`` and ``SummaryCollector``: MindInsight summary
files as MindSpore 2.10 writes them.  (irc's own run summary, ``run.json``,
is irc/train/summary.py.)

Files.  In ``log_dir``: ``<prefix>.out.events.summary.<time>.<rank>.<host><suffix>``
(scalars, tensors, histograms, images; it opens with the version event
"MindSpore.Event:1") and ``..._lineage`` (train and evaluation lineage,
custom lineage data), each made on its first record, 0o600 while written
and read-only once closed.  A file is a sequence of TFRecord-framed records:
the little-endian uint64 length of the data, the masked CRC-32C of those 8
bytes, the data (a serialised ``mindspore.irpb`` Event or LineageEvent, see
summary_proto.py) and its masked CRC-32C.  One ``record(step)`` writes one
summary event of every value added since, as MindSpore's writer packs them
(tags as given, histograms in MindSpore's buckets).  irc writes in the
training process itself, where MindSpore hands records to writer processes.

``SummaryCollector`` collects what MindSpore's does by default: the loss
("loss/auto") and the optimizer's first five weights as histograms
("<name>/auto") every ``collect_freq`` steps (in sink mode every
``collect_freq`` epochs, at epoch ends) and at the end of each epoch, the
train lineage (network, loss function, optimizer, learning rate, epochs,
batch size, dataset size, final loss) at the end of training, the
evaluation lineage (the metrics) at the end of ``Model.eval``, and the loss
landscape's checkpoints (``ckpt_dir/<Net>_<step>_step.ckpt`` at the steps
of its intervals, and ``train_metadata.json``).  Not written, with a notice:
the computational graph and the dataset graph (irc makes neither of
MindSpore's protos) and the input images (the run does not hand callbacks
the batch).
"""
from __future__ import annotations

import atexit
import io
import json
import os
import platform
import re
import stat
import sys
import time
from collections import defaultdict
from urllib.parse import quote

import numpy as np

from ..capture import register_process_state
from ..common.tensor import Parameter, Tensor
from ..dialects import tfrecord
from ..diagnostics import (
    UnsupportedError,
    UserRuntimeError,
    UserTypeError,
    UserValueError,
    notice_once,
    user_frame,
)
from .callback import Callback
from .summary_proto import DATA_TYPES, message_class

__all__ = ["SummaryCollector", "SummaryRecord"]

EVENT_FILE_NAME_MARK = ".out.events.summary."
VERSION = "MindSpore.Event:1"
_NAME_PATTERN = r"^\w+[0-9a-zA-Z\_\.]*$"       # MindSpore's check_str_by_regular
_SUMMARY_PLUGINS = ("tensor", "scalar", "image", "histogram")
_LINEAGE_PLUGINS = {"train_lineage": ("train_lineage", "TrainLineage"),
                    "eval_lineage": ("evaluation_lineage", "EvaluationLineage"),
                    "custom_lineage_data": ("user_defined_info", "UserDefinedInfo")}
_EXPORT_OPTIONS = {"tensor_format": {"npy", None}}
_READ_ONLY = stat.S_IRUSR                      # MindSpore's FILE_MODE 0o400
F32_MIN, F32_MAX = np.finfo(np.float32).min, np.finfo(np.float32).max


def _warn(message: str) -> None:
    """One of MindSpore's logged warnings."""
    print(f"irc: warning: {message}", file=sys.stderr, flush=True)


# -- checks -----------------------------------------------------------------------------------

def _type_names(types) -> str:
    names = [t.__name__ for t in types]
    return f"one of '{names}'" if len(names) > 1 else f"'{names[0]}'"


def check_value_type(arg_name: str, value, types, where=None, who: str | None = None):
    """MindSpore's ``Validator.check_value_type``: a bool is no int."""
    types = tuple(types) if isinstance(types, (list, tuple)) else (types,)
    if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
        prefix = f"For '{who}', the" if who else "The"
        raise UserTypeError(f"{prefix} type of '{arg_name}' should be {_type_names(types)}, but got "
                            f"type '{type(value).__name__}'.", where=where)


def _check_name(text: str, where) -> None:
    if re.match(_NAME_PATTERN, text, re.ASCII) is None:
        raise UserValueError(f"The '{text}' is illegal, it must be match regular'{_NAME_PATTERN}' by "
                             f"flags'{re.ASCII}'.", where=where)


def make_directory(path, arg_name: str, where) -> str:
    """MindSpore's ``_make_directory``: the real path of a directory, made (0o700) if missing."""
    if not isinstance(path, str):
        raise UserTypeError(f"The {arg_name} is invalid, the type should be string.", where=where)
    if not path.strip():
        raise UserValueError(f"The {arg_name} is invalid, it should be non-blank.", where=where)
    path = os.path.realpath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise UserValueError(f"The path({path}) is a file path, it should be a directory path.",
                             where=where)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as e:
        raise UserRuntimeError(f"cannot make the directory {path!r}: {e.strerror}", where=where) from None
    return path


def _export_options(options, where) -> dict | None:
    """MindSpore's ``process_export_options``: {'tensor_format': 'npy' or None}."""
    if options is None:
        return None
    check_value_type("export_options", options, [dict, type(None)], where)
    for key, value in options.items():
        check_value_type("export_option", key, [str], where)
        check_value_type("export_format", value, [str, type(None)], where)
    unexpected = set(options) - set(_EXPORT_OPTIONS)
    if unexpected:
        raise UserValueError(f'For "SummaryRecord", the keys {unexpected} of "export_options" are '
                             f'unsupported, expect the follow keys: {list(_EXPORT_OPTIONS)}', where=where)
    for key, value in options.items():
        if value not in _EXPORT_OPTIONS[key]:
            raise UserValueError(f'For "SummaryRecord", the export_format {({value})} of "export_options" '
                                 f'are unsupported for {key}, expect the follow values: '
                                 f'{list(_EXPORT_OPTIONS[key])}', where=where)
    return options


def _rank() -> int:
    """The number in the file names: the rank in a distributed run, else the device id."""
    from ..communication import GlobalComm, get_rank
    if GlobalComm.INITED:
        return get_rank()
    from ..context import get_context
    return int(get_context("device_id") or 0)


def event_file_name(prefix: str, suffix: str, time_second: str) -> str:
    return f"{prefix}{EVENT_FILE_NAME_MARK}{time_second}.{_rank()}.{platform.node()}{suffix}"


# -- the file format --------------------------------------------------------------------------

class _EventFile:
    """One event file, made on its first record (the summary file then
    begins with the version event); with ``max_file_size`` it takes records
    while they fit, then none (MindSpore's writer drops a full file)."""

    def __init__(self, path: str, max_file_size: int | None, version_first: bool):
        self.path, self.budget, self.version_first = path, max_file_size, version_first
        self.file = None
        self.dropped = False

    def write(self, data: bytes) -> None:
        if self.dropped:
            return
        if self.file is None:
            self.file = open(self.path, "wb")  # noqa: SIM115 (open until close())
            os.chmod(self.path, stat.S_IWUSR | stat.S_IRUSR)
            if self.version_first:
                self._append(_version_event())
        if not self.dropped:
            self._append(data)

    def _append(self, data: bytes) -> None:
        record = tfrecord.frame(data)   # TFRecord's framing, as MindSpore writes event files
        if self.budget is not None:
            if self.budget < len(record):
                _warn(f"'max_file_size' reached: There are {self.budget} bytes remaining, but the "
                      f"'{self.path}' requires to write {len(record)} bytes.")
                self.close()
                self.dropped = True
                return
            self.budget -= len(record)
        self.file.write(record)

    def flush(self) -> None:
        if self.file is not None:
            self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
            os.chmod(self.path, _READ_ONLY)


def _version_event() -> bytes:
    return message_class("Event")(wall_time=time.time(), version=VERSION).SerializeToString()


# -- values as MindSpore's _summary_adapter packs them ----------------------------------------

def _to_numpy(plugin: str, tensor) -> np.ndarray:
    """MindSpore's ``_check_to_numpy``: a copy, of the rank the plugin takes."""
    value = np.array(tensor.asnumpy(), copy=True)
    if plugin == "scalar" and value.size != 1:
        raise ValueError(f'For "SummaryRecord", the v rank must be less than or equal to 1, but got '
                         f'{len(value)}.')
    if plugin == "image" and value.ndim != 4:
        raise ValueError('For "SummaryRecord", the tensor seems not to hold a valid image.')
    if plugin in ("tensor", "histogram") and value.ndim == 0:
        raise ValueError('For "SummaryRecord", the value should not be empty.')
    return value


def _fill_tensor(value: np.ndarray, proto) -> None:
    names = {np.bool_: "DT_BOOL", np.int8: "DT_INT8", np.int16: "DT_INT16", np.int32: "DT_INT32",
             np.int64: "DT_INT64", np.uint8: "DT_UINT8", np.uint16: "DT_UINT16", np.uint32: "DT_UINT32",
             np.uint64: "DT_UINT64", np.float16: "DT_FLOAT16", np.float32: "DT_FLOAT32",
             np.float64: "DT_FLOAT64"}
    if value.dtype.type not in names:
        raise TypeError(f"Transform numpy type failed in Summary: {value.dtype} is none of MindSpore's types")
    proto.data_type = DATA_TYPES[names[value.dtype.type]]
    proto.float_data.extend(value.reshape(-1).tolist())
    proto.dims.extend(value.shape)


def histogram_bins(count: int) -> int:
    """MindSpore's bin count: about 10 values a bin, 90 bins at most."""
    if not count:
        return 1
    if count <= 5:
        return 2
    if count <= 10:
        return 3
    if count <= 880:
        return count // 10 + 1
    return 90


def fill_histogram(value: np.ndarray, proto) -> None:
    """MindSpore's ``_fill_histogram_summary``: counts of NaN and infinities,
    min, max and sum of the finite values and their buckets (edges by a
    linspace in the value's dtype, from min to max)."""
    masked = np.ma.masked_invalid(value)
    total, valid = value.size, masked.count()
    invalids = []
    for isfn in np.isnan, np.isposinf, np.isneginf:
        invalids.append(np.count_nonzero(isfn(value)) if total - valid > sum(invalids) else 0)
    proto.count = total
    proto.nan_count, proto.pos_inf_count, proto.neg_inf_count = invalids
    if not valid:
        _warn(f"There are no valid values in the ndarray(size={total}, shape={value.shape})")
        return
    if issubclass(value.dtype.type, np.floating):
        proto.min, proto.max = masked.min(fill_value=np.inf), masked.max(fill_value=-np.inf)
        if proto.min < F32_MIN or proto.max > F32_MAX:
            _warn(f"Values({proto.min}, {proto.max}) are too large, you may encounter some undefined "
                  f"behaviours hereafter.")
    else:
        proto.min, proto.max = masked.min(), masked.max()
    proto.sum = masked.sum(dtype=np.float64)
    first, last = proto.min, proto.max      # read back as the proto's doubles, as MindSpore does
    if not first < last:
        first, last = first - 0.5, last + 0.5
    edges = np.linspace(first, last, histogram_bins(valid) + 1, dtype=value.dtype)
    counts, edges = np.histogram(value, bins=edges)
    for count, left, right in zip(counts, edges, edges[1:]):
        proto.buckets.add(left=left, width=right - left, count=count)


def _fill_image(tag: str, value: np.ndarray, proto) -> bool:
    """MindSpore's ``_fill_image_summary``: an NCHW batch (1 or 3 channels)
    on one canvas of 8 columns, scaled to uint8, as PNG."""
    if value.ndim != 4 or value.shape[1] not in (1, 3) or 0 in value.shape:
        _warn(f"The dimension of Summary tensor should be 4 or second dimension should be 1 or 3, but "
              f"got tag = {tag}, ndim = {value.ndim}, shape={value.shape}, which means Summary tensor "
              f"is not Image.")
        return False
    if value.shape[1] == 1:
        value = np.concatenate([value, value, value], 1)
    n, _, h, w = value.shape
    cols = min(n, 8)
    rows = int(np.ceil(float(n) / cols))
    canvas = np.zeros((3, h * rows, w * cols))
    for i in range(n):
        y, x = divmod(i, cols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = value[i]
    image = canvas.transpose(1, 2, 0)
    scale, shift = 1, 0
    top, bottom = np.max(image), np.min(image)
    if top <= 1 and bottom >= 0:
        scale = 255
    else:
        if top != bottom:
            scale = 255 / (top - bottom + 1)     # mapped linearly onto [0, 255]
        shift = bottom
    image = ((image.astype(np.float32) - shift) * scale).astype(np.uint8)
    from PIL import Image
    height, width, channels = image.shape
    picture = Image.fromarray(image).resize((width, height), Image.LANCZOS)
    out = io.BytesIO()
    picture.save(out, format="PNG")
    proto.height, proto.width, proto.colorspace, proto.encoded_image = height, width, channels, out.getvalue()
    return True


def summary_event(values: list, step: int, wall_time: float) -> bytes:
    """One Event of (plugin, tag, numpy value)s: MindSpore's ``package_summary_event``."""
    event = message_class("Event")(wall_time=wall_time, step=int(step))
    summary = event.summary
    summary.SetInParent()
    for plugin, tag, value in values:
        proto = summary.value.add(tag=tag)
        if plugin == "scalar":
            proto.scalar_value = value.item() if value.size == 1 else next(value.flat).item()
        elif plugin == "tensor":
            _fill_tensor(value, proto.tensor)
        elif plugin == "histogram":
            fill_histogram(value, proto.histogram)
        elif not _fill_image(tag, value, proto.image):
            del summary.value[-1]
    return event.SerializeToString()


def lineage_event(plugin: str, message) -> bytes:
    field, _ = _LINEAGE_PLUGINS[plugin]
    event = message_class("LineageEvent")(wall_time=time.time())
    getattr(event, field).CopyFrom(message)
    return event.SerializeToString()


# -- SummaryRecord ----------------------------------------------------------------------------

_OPEN: list = []        # the SummaryRecords not yet closed


@register_process_state
def _close_open_records() -> None:
    """A script run after another starts with no SummaryRecord open, as a new process."""
    while _OPEN:
        _OPEN[-1].close()
    SummaryRecord.count = 0


class SummaryRecord:
    """MindSpore's ``SummaryRecord(log_dir, file_prefix="events",
    file_suffix="_MS", num_process=32, network=None, max_file_size=None,
    raise_exception=False, export_options=None)``: ``add_value`` keeps
    values, ``record(step)`` writes them.  One may be open at a time."""

    count = 0

    def __init__(self, log_dir, file_prefix="events", file_suffix="_MS", num_process=32,
                 network=None, max_file_size=None, raise_exception=False, export_options=None):
        where = user_frame()
        self._check_count(where)
        log_path = make_directory(log_dir, "log_dir", where)
        if not isinstance(max_file_size, (int, type(None))):
            raise UserTypeError(f"For 'SummaryRecord', the 'max_file_size' should be int type, but got "
                                f"type {type(max_file_size)}", where=where)
        if not isinstance(file_prefix, str) or not isinstance(file_suffix, str):
            raise UserTypeError(f"For 'SummaryRecord', `file_prefix` and `file_suffix`  should be str, "
                                f"but got type {type(file_prefix)}", where=where)
        _check_name(file_prefix, where)
        _check_name(file_suffix, where)
        if max_file_size is not None and max_file_size < 0:
            _warn(f"For 'SummaryRecord', the 'max_file_size' should be greater than 0. but got value "
                  f"{max_file_size}.")
            max_file_size = None
        check_value_type("raise_exception", raise_exception, bool, where)
        self._export_options = _export_options(export_options, where)
        if network is not None:
            notice_once("SummaryRecord: the computational graph (network=...) is not written: irc "
                        "does not make MindSpore's graph proto")
        time_second = str(int(time.time()))
        name = event_file_name(file_prefix, file_suffix, time_second)
        self.file_info = {"file_name": name, "file_path": os.path.join(log_path, name)}
        self.base_log_dir, self.file_prefix, self.file_suffix = log_dir, file_prefix, file_suffix
        self.network, self.max_file_size, self.raise_exception = network, max_file_size, raise_exception
        self._files = {
            "summary": _EventFile(os.path.join(log_dir, name), max_file_size, version_first=True),
            "lineage": _EventFile(os.path.join(log_dir, event_file_name(file_prefix, "_lineage", time_second)),
                                  max_file_size, version_first=False)}
        self._export_dir = os.path.join(log_dir, f"export_{time_second}")
        self._mode, self._data_pool = "train", defaultdict(list)
        from ..ops import operations
        operations.SUMMARY_CACHE.clear()    # values from before the record opened are not written
        self._closed = False
        SummaryRecord.count += 1
        _OPEN.append(self)
        atexit.register(self.close)

    @classmethod
    def _check_count(cls, where) -> None:
        if cls.count > 0:
            raise UserRuntimeError(
                f"For '{cls.__name__}', only one instance is supported in a training process, you are "
                f"trying to create a new one when the existing instance number is {cls.count}. Please "
                f"check your scripts.", where=where)

    def __enter__(self):
        if self._closed:
            raise UserValueError('For "SummaryRecord", SummaryRecord has been closed, please check if '
                                 'close() method is called', where=user_frame())
        return self

    def __exit__(self, *err):
        self.close()

    @property
    def log_dir(self) -> str:
        """The summary file's full path (MindSpore's name for it)."""
        return self.file_info["file_path"]

    def set_mode(self, mode) -> None:
        if mode not in ("train", "eval"):
            raise UserValueError(f'For "SummaryRecord.set_mode", {mode!r} is not a recognized mode, expect '
                                 f'the parameter "mode" is "train" or "eval"', where=user_frame())
        self._mode = mode

    def add_value(self, plugin, name, value) -> None:
        """Keep ``value`` for the next ``record``: a Tensor for 'scalar',
        'tensor', 'histogram' or 'image' (NCHW), a lineage message for
        'train_lineage', 'eval_lineage' or 'custom_lineage_data'."""
        where = user_frame()
        if plugin in _SUMMARY_PLUGINS:
            if not name or not isinstance(name, str):
                raise UserValueError(f'For "SummaryRecord", the parameter "name" type should be str, but '
                                     f'got {type(name)}.', where=where)
            if not isinstance(value, Tensor):
                raise UserTypeError(f'For "SummaryRecord", the parameter "value" expect to be Tensor, but '
                                    f'got {type(value).__name__}', where=where)
            try:
                array = _to_numpy(plugin, value)
            except ValueError as e:
                raise UserValueError(str(e), where=where) from None
            if name in {item["tag"] for item in self._data_pool[plugin]}:
                _warn(f"For \"SummaryRecord.add_value\", {f'{name}/{plugin}'!r} has duplicate values. Only "
                      f"the newest one will be recorded.")
            data = {"tag": name, "value": array}
            export = self._export_options and self._export_options.get(f"{plugin}_format")
            if export:
                data["export_option"] = export
            self._data_pool[plugin].append(data)
        elif plugin in _LINEAGE_PLUGINS:
            kind = _LINEAGE_PLUGINS[plugin][1]
            if getattr(getattr(value, "DESCRIPTOR", None), "full_name", None) != f"mindspore.irpb.{kind}":
                raise UserTypeError(f"Plugin {plugin!r} expects a {kind} value.", where=where)
            self._data_pool[plugin].append({"value": value})
        elif plugin in ("graph", "dataset_graph", "landscape"):
            raise UnsupportedError(f"SummaryRecord.add_value: irc does not write the {plugin!r} plugin",
                                   where=where, hint="irc writes scalar, tensor, histogram, image and lineage")
        else:
            raise UserValueError(f'For "SummaryRecord.add_value", no such "plugin" of {plugin!r} , expect '
                                 f'value is one of [tensor, scalar, image, histogram, train_lineage, '
                                 f'eval_lineage, dataset_graph, custom_lineage_data, graph, landscape]',
                                 where=where)

    def record(self, step, train_network=None, plugin_filter=None) -> bool:
        """Write the values added since the last record: each lineage value
        as its own event, the others as one summary event of ``step``."""
        from ..nn.cell import Cell
        where = user_frame()
        check_value_type("step", step, int, where)
        check_value_type("train_network", train_network, [Cell, type(None)], where)
        if self._closed:
            _warn("For 'SummaryRecord', The record writer is closed, please check if close() method is called")
            return False
        if self._mode == "train":
            self._add_summary_ops()
        pool, self._data_pool = self._data_pool, defaultdict(list)
        if plugin_filter:
            pool = {plugin: items for plugin, items in pool.items() if plugin_filter(plugin)}
        self._write(pool, step)
        return True

    def _add_summary_ops(self) -> None:
        """The values the network's summary ops (ops.ScalarSummary...) took
        since the last record, the last one of each tag, as MindSpore keeps them."""
        from ..ops import operations
        latest = {(op, tag): value for op, tag, value in operations.SUMMARY_CACHE}
        operations.SUMMARY_CACHE.clear()
        for (op, tag), value in latest.items():
            self.add_value(op[:-len("Summary")].lower(), tag, value)

    def _write(self, pool: dict, step: int) -> None:
        wall_time = time.time()
        summaries = []
        for plugin, items in pool.items():
            for item in items:
                if plugin in _LINEAGE_PLUGINS:
                    self._to_file("lineage", lineage_event, plugin, item["value"])
                else:
                    summaries.append((plugin, item["tag"], item["value"]))
                if item.get("export_option") == "npy":
                    self._export_npy(item["tag"], step, item["value"])
        if summaries:
            self._to_file("summary", summary_event, summaries, step, wall_time)

    def _to_file(self, name: str, event, *args) -> None:
        """Writes ``event(*args)``.  A write that fails is dropped with an error (the
        file takes no more), or raised with ``raise_exception``, as MindSpore's writer."""
        file = self._files[name]
        try:
            file.write(event(*args))
        except (RuntimeError, OSError) as e:
            file.close()
            file.dropped = True
            if self.raise_exception:
                raise
            _warn(str(e))

    def _export_npy(self, tag: str, step: int, value: np.ndarray) -> None:
        folder = os.path.join(self._export_dir, "tensor")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        path = os.path.join(folder, f"{quote(tag, safe='')}_{int(step)}.npy")
        np.save(path, value)
        os.chmod(path, _READ_ONLY)

    def flush(self) -> None:
        if self._closed:
            _warn("For 'SummaryRecord', the record writer is closed and can not flush, please check if "
                  "close() method is called")
            return
        for file in self._files.values():
            file.flush()

    def close(self) -> None:
        if self._closed:
            return
        for file in self._files.values():
            file.close()
        self._closed = True
        atexit.unregister(self.close)
        SummaryRecord.count -= 1
        if self in _OPEN:
            _OPEN.remove(self)


# -- SummaryCollector -------------------------------------------------------------------------

_DEFAULT_LANDSCAPE = {"landscape_size": 40, "unit": "step", "num_samples": 2048,
                      "create_landscape": {"train": True, "result": True},
                      "intervals": [[1, 2, 3, 4, 5, 6, 7, 8, 9],
                                    [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]]}
HYPER_CONFIG_ENV_NAME = "MINDINSIGHT_HYPER_CONFIG"
HYPER_CONFIG_LEN_LIMIT = 100000
_DIR_DATASETS = ("ImageFolderDataset", "MnistDataset", "Cifar10Dataset", "Cifar100Dataset",
                 "VOCDataset", "CelebADataset")
_FILE_DATASETS = ("TFRecordDataset", "TextFileDataset")


class SummaryCollector(Callback):
    """MindSpore's ``SummaryCollector(summary_dir, collect_freq=10,
    num_process=32, collect_specified_data=None, keep_default_action=True,
    custom_lineage_data=None, collect_tensor_freq=None, max_file_size=None,
    export_options=None)``: a SummaryRecord in ``summary_dir`` for each
    Model.train or Model.eval it is given to (see the module docstring for
    what it collects)."""

    _DEFAULT_SPECIFIED_DATA = {
        "collect_metric": True, "collect_graph": True, "collect_train_lineage": True,
        "collect_eval_lineage": True, "collect_input_data": True, "collect_dataset_graph": True,
        "histogram_regular": None, "collect_landscape": _DEFAULT_LANDSCAPE}

    def __init__(self, summary_dir, collect_freq=10, num_process=32, collect_specified_data=None,
                 keep_default_action=True, custom_lineage_data=None, collect_tensor_freq=None,
                 max_file_size=None, export_options=None):
        super().__init__()
        where = self._where = user_frame()
        self._summary_dir = make_directory(summary_dir, "summary_dir", where)
        self._record: SummaryRecord | None = None
        self._own_record = False
        self._check_positive("collect_freq", collect_freq, where)
        self._check_positive("collect_tensor_freq", collect_tensor_freq, where, allow_none=True)
        self._check_positive("max_file_size", max_file_size, where, allow_none=True)
        self._collect_freq, self._collect_tensor_freq = collect_freq, collect_tensor_freq
        self._max_file_size, self._tensor_collect_range = max_file_size, None
        self._export_options = _export_options(export_options, where)
        check_value_type("keep_default_action", keep_default_action, bool, where)
        self._collect_specified_data = self._specified_data(collect_specified_data, keep_default_action, where)
        landscape = self._collect_specified_data.get("collect_landscape")
        check_value_type("collect_landscape", landscape, [dict, type(None)], where)
        self._is_collect_landscape = bool(landscape)
        if self._is_collect_landscape:
            self._check_landscape(landscape, where)
            self._ckpt_dir = make_directory(os.path.join(self._summary_dir, "ckpt_dir"), "path", where)
            self._model_params_file_map: dict = {}
            self._epoch_group = {i: list(interval) for i, interval in enumerate(landscape["intervals"])}
        self._custom_lineage_data = self._custom_lineage(custom_lineage_data, where)
        self._temp_optimizer = None
        self._has_saved_graph = self._has_saved_custom_data = False
        self._is_parse_loss_success = True
        self._first_step, self._dataset_sink_mode = True, True
        self._num_process = num_process
        self._training = False

    # -- arguments (MindSpore's checks and messages) -------------------------------------------
    def _check_positive(self, name, value, where, allow_none=False) -> None:
        if allow_none and value is None:
            return
        check_value_type(name, value, int, where)
        if value <= 0:
            raise UserValueError(f'For "SummaryCollector", the value of `{name}` should be greater than 0, '
                                 f'but got `{value}`.', where=where)

    def _specified_data(self, specified, keep_default: bool, where) -> dict:
        check_value_type("collect_specified_data", specified, [dict, type(None)], where)
        if specified is None:
            return dict(self._DEFAULT_SPECIFIED_DATA) if keep_default else {}
        for key in specified:
            check_value_type(key, key, [str], where)
        unexpected = set(specified) - set(self._DEFAULT_SPECIFIED_DATA)
        if unexpected:
            raise UserValueError(f'For "SummaryCollector", the keys {unexpected} of `collect_specified_data` '
                                 f'are unsupported, expect the follow keys: '
                                 f'{list(self._DEFAULT_SPECIFIED_DATA)}', where=where)
        if "histogram_regular" in specified:
            regular = specified["histogram_regular"]
            check_value_type("histogram_regular", regular, (str, type(None)), where)
            if isinstance(regular, str):
                try:
                    re.match(regular, "")
                except re.error as exc:
                    raise UserValueError(f"For `collect_specified_data`, the value of `histogram_regular` is "
                                         f"not a valid regular expression. Detail: {exc}.", where=where) from None
        for key in set(self._DEFAULT_SPECIFIED_DATA) - {"histogram_regular", "collect_landscape"}:
            if key in specified:
                check_value_type(key, specified[key], bool, where)
        return {**self._DEFAULT_SPECIFIED_DATA, **specified} if keep_default else dict(specified)

    @staticmethod
    def _check_landscape(landscape: dict, where) -> None:
        unexpected = set(landscape) - set(_DEFAULT_LANDSCAPE)
        if unexpected:
            raise UserValueError(f'For "SummaryCollector", the keys {unexpected} of `collect_landscape` are '
                                 f'unsupported, expect the follow keys: {list(_DEFAULT_LANDSCAPE)}', where=where)
        size = landscape.get("landscape_size", 40)
        check_value_type("landscape_size", size, int, where)
        if size < 3 or size > 256:
            raise UserValueError(f'For "SummaryCollector", the "landscape_size" in collect_specified_data should '
                                 f'be less than 256 and more than 3, but got the: {size}', where=where)
        unit = landscape.get("unit", "step")
        check_value_type("unit", unit, str, where)
        if unit not in ("step", "epoch"):
            raise UserValueError(f'For "SummaryCollector", unit in collect_specified_data should be step or '
                                 f'epoch, but got the: {unit}.', where=where)
        check_value_type("num_samples", landscape.get("num_samples", 2048), int, where)
        create = landscape.get("create_landscape", {"train": True, "result": True})
        check_value_type("create_landscape", create, dict, where)
        for key, value in create.items():
            if key not in ("train", "result"):
                raise UserValueError(f'For "SummaryCollector", the key to create landscape should be in '
                                     f'["train", "result"], but got the: {key}.', where=where)
            check_value_type(key, value, bool, where)
        intervals = landscape.get("intervals")
        check_value_type("intervals", intervals, list, where)
        for interval in intervals:
            check_value_type("each interval inintervals", interval, list, where)
            if len(interval) < 3:
                raise UserValueError(f'For "SummaryCollector", the length of each list in "intervals" should '
                                     f'not be less than three, but got the: {interval}', where=where)
            if not all(isinstance(j, int) for j in interval):
                raise UserTypeError('For "SummaryCollector", the value of each list in "intervals" should be '
                                    'int', where=where)

    @staticmethod
    def _custom_lineage(custom, where) -> dict:
        """The user's custom lineage data over MindInsight's hyper config (the environment's)."""
        def check(name, data):
            check_value_type(name, data, [dict, type(None)], where)
            for key, value in data.items():
                check_value_type(f"{name} -> {key}", key, str, where)
                check_value_type(f"the value of {name} -> {key}", value, (int, str, float), where)
        custom = {} if custom is None else custom
        check("custom_lineage_data", custom)
        auto = {}
        config = os.environ.get(HYPER_CONFIG_ENV_NAME)
        if config is not None and len(config) <= HYPER_CONFIG_LEN_LIMIT:
            try:
                auto = json.loads(config).get("custom_lineage_data") or {}
            except (TypeError, ValueError, AttributeError) as exc:
                _warn(f"The 'MINDINSIGHT_HYPER_CONFIG' of environment variable decode error. Detail: {exc}.")
        check("auto_custom_lineage_data", auto)
        return {**auto, **custom}

    # -- the record, one for each Model.train / Model.eval (MindSpore's __enter__/__exit__) -----
    def __enter__(self):
        self._open(own=False)
        return self

    def __exit__(self, *err):
        if self._record is not None:
            self._record.close()

    def _open(self, own: bool) -> None:
        if self._record is not None and not self._record._closed:
            if not (own and self._own_record):
                return
            self._record.close()        # a run that raised before its end hook
        self._record = SummaryRecord(log_dir=self._summary_dir, max_file_size=self._max_file_size,
                                     raise_exception=False, export_options=self._export_options)
        self._own_record = own
        self._first_step, self._dataset_sink_mode = True, True

    def _close(self) -> None:
        if self._own_record and self._record is not None:
            self._record.close()

    def on_train_begin(self, run_context):
        self._open(own=True)
        self._training = True
        self.begin(run_context)

    def on_train_end(self, run_context):
        try:
            self.end(run_context)
        finally:
            self._training = False
            self._close()

    # MindSpore's Model.fit does not hand its own callbacks (this one) to its evaluations
    def on_eval_begin(self, run_context):
        if not self._training:
            self._open(own=True)
            self.begin(run_context)

    def on_eval_step_end(self, run_context):
        if not self._training:
            self.step_end(run_context)

    def on_eval_epoch_end(self, run_context):
        if not self._training:
            self.epoch_end(run_context)

    def on_eval_end(self, run_context):
        if not self._training:
            try:
                self.end(run_context)
            finally:
                self._close()

    # -- MindSpore's hooks ------------------------------------------------------------------------
    def begin(self, run_context):
        cb = run_context.original_args()
        self._check_callbacks(cb)
        if cb.mode not in ("train", "eval"):
            raise UserValueError(f"Only support `train` (model.train) and `eval` (model.eval) mode, but got "
                                 f"`{cb.mode}` mode.", where=self._where)
        self._record.set_mode(cb.mode)
        self._dataset_sink_mode = cb.dataset_sink_mode

    def step_end(self, run_context):
        cb = run_context.original_args()
        if cb.mode != "train":
            return
        if not self._has_saved_graph:
            self._collect_graphs()
            self._has_saved_graph = True
            self._record.record(cb.cur_step_num)
        if self._custom_lineage_data and not self._has_saved_custom_data:
            self._record.add_value("custom_lineage_data", "custom_lineage_data",
                                   self._custom_lineage_message(self._custom_lineage_data))
            self._has_saved_custom_data = True
            self._record.record(cb.cur_step_num)
        if not self._dataset_sink_mode:
            self._collect_tensor_data(cb)
        landscape = self._collect_specified_data.get("collect_landscape")
        if landscape and landscape.get("unit", "step") == "step" and \
                any(cb.cur_step_num in interval for interval in landscape["intervals"]):
            self._save_model_params_for_landscape(cb)

    def epoch_end(self, run_context):
        cb = run_context.original_args()
        self._collect_tensor_data(cb)
        landscape = self._collect_specified_data.get("collect_landscape")
        if landscape and landscape.get("unit", "step") == "epoch" and \
                any(cb.cur_epoch_num in interval for interval in landscape["intervals"]):
            self._save_model_params_for_landscape(cb)
        self._record.flush()

    def end(self, run_context):
        cb = run_context.original_args()
        if cb.mode == "train":
            self._collect_train_lineage(cb)
        else:
            self._collect_eval_lineage(cb)
        self._record.set_mode("eval")
        self._record.record(step=0)      # the lineage (MindSpore's step 0)
        landscape = self._collect_specified_data.get("collect_landscape")
        if cb.mode == "train" and landscape:
            self._save_metadata(cb.batch_num, landscape)

    def _check_callbacks(self, cb) -> None:
        """One SummaryCollector a run (irc's runs that list their callbacks)."""
        mine = [c for c in cb.get("list_callback") or () if type(c).__name__ == type(self).__name__]
        if len(mine) > 1:
            raise UserValueError("There are more than one SummaryCollector instance in callback list,but "
                                 "expected only one SummaryCollector instance.", where=self._where)

    # -- what is collected ----------------------------------------------------------------------
    def _collect_graphs(self) -> None:
        if self._collect_specified_data.get("collect_graph"):
            notice_once("SummaryCollector: the computational graph (graph_def) is not written: irc does "
                        "not make MindSpore's graph proto")
        if self._collect_specified_data.get("collect_dataset_graph"):
            notice_once("SummaryCollector: the dataset graph (lineage dataset_graph) is not written by irc")

    def _collect_tensor_data(self, cb) -> None:
        """Every collect_freq steps (epochs in sink mode) and the first."""
        if cb.mode != "train":
            return
        if self._first_step:
            self._tensor_collect_range = self._get_tensor_collect_range(cb)
            self._collect_at_step_end(cb, None)
            self._first_step = False
            self._record.flush()
            return
        current = cb.cur_epoch_num if self._dataset_sink_mode else cb.cur_step_num
        due, tensors = current % self._collect_freq == 0, current in self._tensor_collect_range
        if due and tensors:
            self._collect_at_step_end(cb, None)
        elif tensors:
            self._collect_at_step_end(cb, lambda plugin: plugin == "tensor")
        elif due:
            self._collect_at_step_end(cb, lambda plugin: plugin != "tensor")

    def _get_tensor_collect_range(self, cb) -> range:
        total = cb.epoch_num if self._dataset_sink_mode else cb.epoch_num * cb.batch_num
        if self._collect_tensor_freq is not None:
            return range(0, total + 1, self._collect_tensor_freq)
        limit = 20      # MindSpore's default cap on the steps with tensor summaries
        if len(range(0, total + 1, self._collect_freq)) > limit:
            freq = total // (limit - 1)
            if freq > 1:
                return range(0, total + 1, freq)[:limit]
            return range(total + 1)[:limit + 1]
        return range(0, total + 1, self._collect_freq)

    def _collect_at_step_end(self, cb, plugin_filter) -> None:
        self._collect_input_data()
        self._collect_metric(cb)
        self._collect_histogram(cb)
        self._record.record(cb.cur_step_num, plugin_filter=plugin_filter)

    def _collect_input_data(self) -> None:
        if self._collect_specified_data.get("collect_input_data"):
            notice_once("SummaryCollector: the input images (input_data/auto) are not collected: irc's "
                        "run does not hand callbacks the batch")

    def _collect_metric(self, cb) -> None:
        if not self._collect_specified_data.get("collect_metric"):
            return
        loss = self._get_loss(cb)
        if loss is None:
            return
        try:
            self._record.add_value("scalar", "loss/auto", loss)
        except ValueError:
            _warn("The output of network is not a scalar, so SummaryCollector will not collect loss.")
            self._collect_specified_data["collect_metric"] = False

    def _get_loss(self, cb) -> Tensor | None:
        """The mean of the network's (first) output."""
        if not self._is_parse_loss_success:
            return None
        output = cb.get("net_outputs")
        if isinstance(output, (list, tuple)) and output:
            output = output[0]
        if output is None or not isinstance(output, (int, float, Tensor)):
            _warn("Can not find the loss in the output of the network, so SummaryCollector will not collect "
                  "loss.")
            self._is_parse_loss_success = False
            return None
        value = output.asnumpy() if isinstance(output, Tensor) else np.asarray(output, np.float32)
        return Tensor(np.mean(value))

    def _get_optimizer(self, cb):
        """The run's optimizer, or the one its network holds (found once)."""
        from ..nn.optim import Optimizer
        if self._temp_optimizer == "Failed":
            return None
        if self._temp_optimizer is not None:
            return self._temp_optimizer
        optimizer = cb.get("optimizer")
        if optimizer is None:
            network = cb.get("train_network") if cb.mode == "train" else cb.get("eval_network")
            for _, cell in network.cells_and_names() if network is not None else ():
                found = cell if isinstance(cell, Optimizer) else getattr(cell, "optimizer", None)
                if isinstance(found, Optimizer):
                    optimizer = found
                    break
        if not isinstance(optimizer, Optimizer):
            _warn("Can not find optimizer in network, or the optimizer does not inherit MindSpore's "
                  "optimizer, so we will not collect data about optimizer in SummaryCollector.")
            optimizer = None
        self._temp_optimizer = optimizer if optimizer is not None else "Failed"
        return optimizer

    def _collect_histogram(self, cb) -> None:
        """The optimizer's parameters matching histogram_regular; by default its first five."""
        if "histogram_regular" not in self._collect_specified_data:
            return
        optimizer = self._get_optimizer(cb)
        if optimizer is None:
            return
        parameters = optimizer.parameters
        regular = self._collect_specified_data.get("histogram_regular")
        chosen = [p for p in parameters if re.match(regular, p.name)] if regular is not None else parameters[:5]
        for parameter in chosen:
            self._record.add_value("histogram", parameter.name + "/auto", parameter.data)

    # -- lineage ----------------------------------------------------------------------------------
    @staticmethod
    def _custom_lineage_message(data: dict):
        info = message_class("UserDefinedInfo")()
        for key, value in data.items():
            field = "map_int32" if isinstance(value, int) else "map_double" if isinstance(value, float) else "map_str"
            getattr(info.user_info.add(), field)[key] = value
        return info

    def _collect_train_lineage(self, cb) -> None:
        if not self._collect_specified_data.get("collect_train_lineage"):
            return
        message = message_class("TrainLineage")()
        loss = self._get_loss(cb)
        if loss is not None:
            message.algorithm.loss = float(np.atleast_1d(loss.asnumpy())[0])
        optimizer = self._get_optimizer(cb)
        rate = _learning_rate(optimizer) if optimizer is not None else None
        hyper = message.hyper_parameters
        if rate is not None:
            hyper.learning_rate = rate
        if optimizer is not None:
            hyper.optimizer = type(optimizer).__name__
        network = cb.get("network")
        if network is not None:
            message.algorithm.network = type(network).__name__
        loss_fn = self._get_loss_fn(cb)
        if loss_fn is not None:
            hyper.loss_function = type(loss_fn).__name__
        hyper.parallel_mode, hyper.device_num = _parallel_mode(), _device_num()
        hyper.epoch = cb.epoch_num
        ckpt = self._ckpt_file_path(cb)
        message.model.path = json.dumps({"ckpt": ckpt})
        message.model.size = os.path.getsize(ckpt) if ckpt else 0
        path, size, batch_size = self._parse_dataset(cb.get("train_dataset"))
        hyper.batch_size = batch_size
        if path is not None:
            message.train_dataset.train_dataset_path = path
        message.train_dataset.train_dataset_size = size
        self._record.add_value("train_lineage", "train_lineage", message)

    def _collect_eval_lineage(self, cb) -> None:
        if not self._collect_specified_data.get("collect_eval_lineage"):
            return
        message = message_class("EvaluationLineage")()
        try:
            message.metric = json.dumps(cb.get("metrics"))
        except TypeError as exc:
            _warn(f"Summary cannot collect the type of metrics, currently support type: dict, list, tuple, "
                  f"str, int, float, bool and None. {exc}.")
        path, size, _ = self._parse_dataset(cb.get("valid_dataset"))
        if path is not None:
            message.valid_dataset.valid_dataset_path = path
        message.valid_dataset.valid_dataset_size = size
        self._record.add_value("eval_lineage", "eval_lineage", message)

    @staticmethod
    def _parse_dataset(dataset):
        """(directory of its files or None, rows, batch size), as MindSpore's ``_parse_dataset``."""
        path = _dataset_path(dataset)
        if path and os.path.isfile(path):
            path = os.path.dirname(path)
        batches, batch_size = dataset.get_dataset_size(), dataset.get_batch_size()
        return path or None, int(batches * batch_size), batch_size

    @staticmethod
    def _ckpt_file_path(cb) -> str | None:
        """The newest checkpoint of the run's ModelCheckpoint (runs that list their callbacks)."""
        from .callback import ModelCheckpoint
        path = None
        for callback in cb.get("list_callback") or ():
            if isinstance(callback, ModelCheckpoint):
                path = callback.latest
        return os.path.realpath(path) if path else None

    @staticmethod
    def _get_loss_fn(cb):
        from ..nn.loss import LossBase
        if cb.get("loss_fn") is not None:
            return cb.loss_fn
        network = cb.get("train_network") if cb.mode == "train" else cb.get("eval_network")
        for _, cell in network.cells_and_names() if network is not None else ():
            if isinstance(cell, LossBase):
                return cell
        return None

    # -- loss landscape ------------------------------------------------------------------------------
    def _save_model_params_for_landscape(self, cb) -> None:
        """The backbone's parameters at this step (epoch): the checkpoints
        MindInsight's SummaryLandscape computes the loss landscape from."""
        from .serialization import save_checkpoint
        if cb.mode != "train":
            return
        backbone = _backbone(cb.train_network)
        while "network" in backbone.name_cells():
            had_optimizer = "optimizer" in backbone.name_cells()
            backbone = backbone.network
            if had_optimizer:
                break
        landscape = self._collect_specified_data["collect_landscape"]
        unit = landscape.get("unit", "step")
        number = cb.cur_epoch_num if unit == "epoch" else cb.cur_step_num
        path = os.path.join(self._ckpt_dir, f"{type(backbone).__name__}_{number}_{unit}.ckpt")
        self._model_params_file_map[str(number)] = path
        if not os.path.isfile(path):
            save_checkpoint([{"name": p.name, "data": p} for p in backbone.get_parameters()], path)
            os.chmod(path, _READ_ONLY)

    def _save_metadata(self, steps_per_epoch: int, landscape: dict) -> None:
        path = os.path.join(self._ckpt_dir, "train_metadata.json")
        if os.path.isfile(path):
            return
        data = {"epoch_group": self._epoch_group, "model_params_file_map": self._model_params_file_map,
                "step_per_epoch": steps_per_epoch, "unit": landscape.get("unit", "step"),
                "num_samples": landscape.get("num_samples", 2048),
                "landscape_size": landscape.get("landscape_size", 40),
                "create_landscape": landscape.get("create_landscape", {"train": True, "result": True})}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.chmod(path, _READ_ONLY)


def _backbone(network):
    """The first ``_backbone`` a cell holds (WithLossCell's), else the network."""
    for _, cell in network.cells_and_names():
        if hasattr(cell, "_backbone"):
            return cell._backbone
    return network


def _learning_rate(optimizer) -> float | None:
    """The optimizer's rate (the first of a list of rates); None for a schedule."""
    rate = optimizer.learning_rate
    if isinstance(rate, (Parameter, np.ndarray)):
        return float(np.atleast_1d(np.asarray(rate))[0])
    _warn(f"The learning rate detected in the optimizer is not a Parameter type, so it is not recorded. "
          f"Its type is {type(rate).__name__!r}.")
    return None


def _parallel_mode() -> str:
    from ..parallel import get_auto_parallel_context
    return str(get_auto_parallel_context("parallel_mode"))


def _device_num() -> int:
    from ..communication import GlobalComm, get_group_size
    from ..parallel import get_auto_parallel_context
    if _parallel_mode() == "stand_alone":
        return 1
    return get_group_size() if GlobalComm.INITED else int(get_auto_parallel_context("device_num"))


def _dataset_path(dataset) -> str | None:
    """MindSpore's ``_get_dataset_path``: the directory or first file of the
    pipeline's source, following each operation's first input."""
    while dataset is not None:
        name, params = type(dataset).__name__, getattr(dataset, "params", {})
        path = None
        if name == "ManifestDataset":
            path = params.get("dataset_file")
        elif name == "MindDataset" or name in _FILE_DATASETS:
            path = params.get("dataset_files")
        elif name in _DIR_DATASETS:
            path = params.get("dataset_dir")
        if path:
            return path if isinstance(path, str) else next(iter(path))
        children = getattr(dataset, "children", ())
        dataset = children[0] if children else None
    return None
