"""Checkpoints as MindSpore 2.x: ``save_checkpoint``, ``load_checkpoint``,
``load_param_into_net``.

Two formats, as MindSpore: its protobuf ``.ckpt`` (the default; the layout is
in ``ckpt_format.py``, and MindSpore reads irc's files and irc MindSpore's)
and safetensors (``format="safetensors"``).  ``load_checkpoint`` tells them
apart by their content, not their name.

irc's resume information (``irc.*`` keys, JSON values) travels with a
training checkpoint: in safetensors as string metadata beside MindSpore's
``format: ms``; in a ``.ckpt`` as one more entry, ``irc.metadata``, a UInt8
tensor of the JSON's UTF-8 bytes, written last.  MindSpore loads it as a
Parameter no network has, so ``load_param_into_net`` lists it among the
checkpoint's unused names and loads everything else; irc's
``load_checkpoint`` leaves it out (``checkpoint_metadata`` reads it).
"""
from __future__ import annotations

import binascii
import io
import json
import zlib
import os
import sys
from typing import Any, Callable, Optional, Union

import numpy as np

from ..common.tensor import Parameter, Tensor
from ..diagnostics import (
    UnsupportedError, UserRuntimeError, UserTypeError, UserValueError, user_frame,
)
from ..output import write_file_atomically
from . import capture_io, ckpt_format
from .ckpt_format import Entry, FormatError

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "checkpoint_metadata",
           "merge_sliced_parameter", "build_searched_strategy"]

FORMATS = ("ckpt", "safetensors")
METADATA_TAG = "irc.metadata"

# The dtypes MindSpore's load_param_into_net converts between when not strict.
_FLOATS = {np.dtype(t) for t in (np.float16, np.float32, np.float64)}
_INTS = {np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)}


# =============================================================================================
# saving
# =============================================================================================

def _array(value) -> np.ndarray:
    return np.asarray(value.asnumpy() if isinstance(value, Tensor) else value)


def _file_name(ckpt_file_name, format: str) -> str:
    """MindSpore's rule: the absolute path, ``.{format}`` appended unless the
    name already ends with the format's name."""
    if not isinstance(ckpt_file_name, (str, os.PathLike)):
        raise UserTypeError(f"save_checkpoint: ckpt_file_name must be a str, got "
                            f"{type(ckpt_file_name).__name__}", where=user_frame())
    path = os.path.realpath(os.fspath(ckpt_file_name))
    if os.path.isdir(path):
        raise UserValueError(f"save_checkpoint: {path} is a directory; give a file name",
                             where=user_frame())
    return path if path.endswith(format) else f"{path}.{format}"


def _list_entries(items: list, choice_func) -> dict[str, Entry]:
    """``net.trainable_params()``, or ``[{"name": ..., "data": Tensor}, ...]``."""
    out: dict[str, Entry] = {}
    dicts = bool(items) and isinstance(items[0], dict)
    for item in items:
        if dicts:
            if not (isinstance(item, dict) and isinstance(item.get("name"), str)
                    and isinstance(item.get("data"), Tensor)):
                raise UserTypeError("save_checkpoint: a list must hold {'name': str, 'data': Tensor} "
                                    f"dicts, got {item!r:.80}", where=user_frame())
            name, data = item["name"], item["data"]
        else:
            if not isinstance(item, Parameter):
                raise UserTypeError(f"save_checkpoint: a list must hold Parameters, got "
                                    f"{type(item).__name__}", where=user_frame())
            name, data = item.name, item
        if choice_func is None or choice_func(name):
            out[name] = _array(data)
    return out


def _dict_entries(items: dict, choice_func) -> dict[str, Entry]:
    """``load_checkpoint``'s result, or any {name: Parameter, Tensor, array or str}."""
    out: dict[str, Entry] = {}
    for name, value in items.items():
        if not isinstance(name, str):
            raise UserTypeError(f"save_checkpoint: a dict's keys must be names (str), got "
                                f"{type(name).__name__}", where=user_frame())
        if not isinstance(value, (Tensor, np.ndarray, str)):
            raise UserTypeError(f"save_checkpoint: {name!r} is a {type(value).__name__}; a dict's "
                                f"values must be Parameters, Tensors or str", where=user_frame())
        if choice_func is None or choice_func(name):
            out[name] = value if isinstance(value, str) else _array(value)
    return out


def _entries_of(save_obj, choice_func) -> dict[str, Entry]:
    """name -> value, in order, of what MindSpore saves for ``save_obj``: a
    Cell's parameters, a list, a dict, or irc's training state (an object with
    ``checkpoint_dict()``: the run's parameters and optimiser state)."""
    from ..nn.cell import Cell
    if hasattr(save_obj, "checkpoint_dict"):
        return _dict_entries(save_obj.checkpoint_dict(), choice_func)
    if isinstance(save_obj, Cell):
        # each Parameter's own name, as MindSpore saves (a sub-cell's
        # ``weight`` is ``head.weight``, the name its network loads)
        return {p.name: _array(p) for _, p in save_obj.parameters_and_names()
                if choice_func is None or choice_func(p.name)}
    if isinstance(save_obj, (list, tuple)):
        return _list_entries(list(save_obj), choice_func)
    if isinstance(save_obj, dict):
        return _dict_entries(save_obj, choice_func)
    raise UserTypeError(f"save_checkpoint: save_obj must be a network (nn.Cell), a list or a dict, "
                        f"got {type(save_obj).__name__}", where=user_frame(),
                        hint="pass net, net.trainable_params(), the dict load_checkpoint returned, "
                             "or a list of {'name': ..., 'data': ...} dicts")


def _appended(append_dict) -> dict[str, Entry]:
    """``append_dict``'s values as MindSpore stores them: str as a string,
    anything else as ``Tensor(value)`` (int -> Int64, float -> Float32)."""
    if append_dict is None:
        return {}
    if not isinstance(append_dict, dict):
        raise UserTypeError(f"save_checkpoint: append_dict must be a dict, got "
                            f"{type(append_dict).__name__}", where=user_frame())
    check_appended(append_dict, "save_checkpoint: append_dict")
    return {key: value if isinstance(value, str) else Tensor(value).asnumpy()
            for key, value in append_dict.items()}


def check_appended(values: dict, what: str) -> None:
    """MindSpore's rule for the values saved beside the parameters
    (``append_dict``, ``CheckpointConfig``'s ``append_info``): str keys;
    int, float, bool, str or Tensor values."""
    for key, value in values.items():
        if not isinstance(key, str) or not isinstance(value, (int, float, bool, str, Tensor)):
            raise UserTypeError(f"{what} must map str to int, float, bool, str or Tensor, got "
                                f"{key!r}: {type(value).__name__}", where=user_frame())


def _metadata_strings(metadata: Optional[dict]) -> dict[str, str]:
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in (metadata or {}).items()}


def _safetensors_crc(tensors: dict[str, np.ndarray]) -> int:
    """MindSpore's CRC of a safetensors checkpoint: each name then its bytes, by name."""
    crc = 0
    for name in sorted(tensors):
        crc = binascii.crc32(name.encode(), crc)
        crc = binascii.crc32(np.ascontiguousarray(tensors[name]).tobytes(), crc)
    return crc


def _safetensors_bytes(entries: dict[str, Entry], metadata: dict[str, str],
                       crc_check: bool) -> bytes:
    from safetensors.numpy import save
    strings = [k for k, v in entries.items() if isinstance(v, str)]
    if strings:
        raise UserValueError(f"save_checkpoint: a safetensors file holds tensors only, and "
                             f"{strings[0]!r} is a str", where=user_frame(),
                             hint="save with format='ckpt', which keeps strings")
    tensors = {k: np.ascontiguousarray(v) for k, v in entries.items()}
    meta = {"format": "ms", **metadata}
    if crc_check:
        meta["crc_num"] = str(_safetensors_crc(tensors))
    return save(tensors, metadata=meta if tensors else None)


def save_checkpoint(save_obj, ckpt_file_name, integrated_save: bool = True, async_save=False,
                    append_dict: Optional[dict] = None, enc_key=None, enc_mode="AES-GCM",
                    choice_func=None, crc_check: bool = False, format: str = "ckpt",
                    metadata: Optional[dict] = None, **kwargs) -> str:
    """Write ``save_obj``'s parameters, then ``append_dict``'s values, to
    ``ckpt_file_name`` in MindSpore's ``format`` ("ckpt" or "safetensors"; a
    name ending in ``.safetensors`` chooses safetensors too);
    ``choice_func(name)`` keeps only the parameters it accepts; ``crc_check``
    adds MindSpore's CRC-32.  ``metadata`` (irc's) is stored as the module
    docstring says.  Returns the path written.  Saving is synchronous
    (``async_save`` gives the same file)."""
    if enc_key is not None:
        raise UnsupportedError("save_checkpoint: encrypted checkpoints (enc_key) are not supported "
                               "by irc", where=user_frame())
    if format not in FORMATS:
        raise UserValueError(f"save_checkpoint: format must be 'ckpt' or 'safetensors', got "
                             f"{format!r}", where=user_frame())
    if not isinstance(crc_check, bool):
        raise UserTypeError(f"save_checkpoint: crc_check must be a bool, got {crc_check!r}",
                            where=user_frame())
    if str(ckpt_file_name).endswith(".safetensors"):
        format = "safetensors"   # the name asks for it (MindSpore would append .ckpt)  # noqa: A001
    path = _file_name(ckpt_file_name, format)
    entries = _entries_of(save_obj, choice_func)
    entries.update(_appended(append_dict))
    meta = _metadata_strings(metadata)
    for k, v in entries.items():
        if not isinstance(v, str) and v.dtype.kind not in "biuf":
            raise UserTypeError(f"save_checkpoint: {k!r} holds {v.dtype}, not numbers",
                                where=user_frame())
    # written whole or not at all: a crash mid-write never leaves a half checkpoint
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if format == "safetensors":
        write_file_atomically(path, _safetensors_bytes(entries, meta, crc_check))
        return path
    if meta:
        entries[METADATA_TAG] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    write_file_atomically(path, lambda f: ckpt_format.write(f, entries, crc_check))
    return path


# =============================================================================================
# reading
# =============================================================================================

def _nearby_checkpoints(path: str) -> str:
    """A hint for a checkpoint that is not there: what its folder holds."""
    shown = os.path.dirname(path) or "."
    if not os.path.isdir(shown):
        return f"there is no folder {shown}: check the path (relative paths start at {os.getcwd()})"
    found = sorted(n for n in os.listdir(shown) if n.endswith((".ckpt", ".safetensors")))
    if not found:
        return f"{shown} holds no .ckpt or .safetensors file"
    return f"{shown} holds {', '.join(found)}" if len(found) <= 3 else \
        f"{shown} holds {len(found)} checkpoints: ... {', '.join(found[-3:])}"


def _content(source) -> tuple[bytes, str]:
    """The file's bytes and the name errors give it (a path, or BytesIO)."""
    if isinstance(source, io.BytesIO):
        return source.getvalue(), "the BytesIO checkpoint"
    if not isinstance(source, (str, os.PathLike)):
        raise UserTypeError(f"load_checkpoint: ckpt_file_name must be a str, got "
                            f"{type(source).__name__}", where=user_frame(),
                            hint="give the .ckpt file's path (a script's --checkpoint_path "
                                 "argument left unset is None)" if source is None else None)
    path = os.fspath(source)
    if not os.path.isfile(path):
        raise UserValueError(f"load_checkpoint: the checkpoint file {path!r} does not exist",
                             where=user_frame(), hint=_nearby_checkpoints(path))
    with open(path, "rb") as f:
        return f.read(), path


def _read_safetensors(content: bytes, crc_check: bool) -> tuple[dict[str, Entry], dict[str, str]]:
    from safetensors import SafetensorError
    from safetensors.numpy import load
    try:
        tensors = load(content)
    except SafetensorError as e:
        raise FormatError(f"its safetensors data cannot be read ({e}); the file is truncated or "
                          f"damaged") from None
    size = int.from_bytes(content[:8], "little")
    meta = json.loads(content[8:8 + size]).get("__metadata__") or {}
    if crc_check and "crc_num" in meta and int(meta["crc_num"]) != _safetensors_crc(tensors):
        raise FormatError("its CRC-32 does not match its contents (the file is damaged)")
    return {k: tensors[k] for k in sorted(tensors)}, meta


def _read_ckpt(content: bytes, crc_check: bool) -> tuple[dict[str, Entry], dict[str, str]]:
    entries = ckpt_format.read(content, crc_check)
    packed = entries.get(METADATA_TAG)
    if packed is None:
        return entries, {}
    try:
        meta = json.loads(np.asarray(packed, np.uint8).tobytes())
    except (TypeError, ValueError):
        raise FormatError(f"its {METADATA_TAG} entry is not irc's JSON (the file is damaged)") \
            from None
    return entries, meta


def _parse(content: bytes, name: str, crc_check: bool = False, require_crc: bool = False
           ) -> tuple[dict[str, Entry], dict[str, str]]:
    """(name -> array or str in the file's order, irc's string metadata) of a
    MindSpore ``.ckpt`` or a safetensors checkpoint.  ``require_crc``: a
    ``.ckpt`` must end with a matching CRC footer (irc's training checkpoints
    do), so a copy cut short between two entries counts as damaged too."""
    is_safetensors = ckpt_format.is_safetensors(content)
    try:
        if is_safetensors:
            return _read_safetensors(content, crc_check or require_crc)
        if require_crc and not ckpt_format.has_footer(content):
            raise FormatError("it has no CRC footer, which every training checkpoint irc writes "
                              "ends with: it was cut short, or irc did not write it")
        if crc_check and not ckpt_format.has_footer(content):
            print(f"irc: warning: load_checkpoint: {name} has no CRC to check",
                  file=sys.stderr, flush=True)
        return _read_ckpt(content, crc_check or require_crc)
    except FormatError as e:
        kind = "safetensors" if is_safetensors else "MindSpore .ckpt"
        raise UserValueError(f"cannot read the {kind} checkpoint {name}: {e}", where=user_frame(),
                             hint="irc reads MindSpore's protobuf .ckpt files (not encrypted) and "
                                  "safetensors files") from None


def _read(source, crc_check: bool = False, require_crc: bool = False
          ) -> tuple[dict[str, Entry], dict[str, str]]:
    """``_parse`` of a file (or BytesIO)."""
    return _parse(*_content(source), crc_check=crc_check, require_crc=require_crc)


def _decoded(meta: dict[str, str]) -> dict[str, Any]:
    """irc's metadata with its values JSON-decoded (those that parse)."""
    out = {}
    for k, v in meta.items():
        try:
            out[k] = json.loads(v)
        except (TypeError, ValueError):
            out[k] = v
    return out


def checkpoint_metadata(path) -> dict[str, Any]:
    """irc's metadata stored with a checkpoint."""
    return _decoded(_read(os.fspath(path))[1])


def read_training_checkpoint(path: str) -> tuple[dict[str, Entry], dict[str, Any]]:
    """A training checkpoint irc wrote, to resume from: its entries and its
    metadata.  It must end with its CRC footer, so a copy cut short is
    refused as damaged (a located UserError)."""
    tensors, meta = _read(path, require_crc=True)
    return tensors, _decoded(meta)


def _prefixes(prefix, argument: str) -> tuple[str, ...]:
    """``specify_prefix`` / ``filter_prefix`` checked as MindSpore does."""
    if prefix is None:
        return ()
    if not isinstance(prefix, (str, list, tuple)):
        raise UserTypeError(f"load_checkpoint: {argument} must be a str, list[str] or tuple[str], "
                            f"got {type(prefix).__name__}", where=user_frame())
    prefixes = (prefix,) if isinstance(prefix, str) else tuple(prefix)
    if not prefixes:
        raise UserValueError(f"load_checkpoint: {argument} is empty", where=user_frame())
    for p in prefixes:
        if not isinstance(p, str):
            raise UserTypeError(f"load_checkpoint: {argument} must hold str, got "
                                f"{type(p).__name__}", where=user_frame())
        if not p:
            raise UserValueError(f"load_checkpoint: {argument} cannot include ''",
                                 where=user_frame())
    return prefixes


def _selector(specify: tuple, filter_: tuple, choice_func) -> Callable[[str], bool]:
    """Which names load_checkpoint keeps: MindSpore's prefixes, when given,
    replace ``choice_func``."""
    if specify or filter_:
        return lambda name: ((not specify or name.startswith(specify))
                             and not (filter_ and name.startswith(filter_)))
    if choice_func is not None:
        return lambda name: bool(choice_func(name))
    return lambda name: True


def load_checkpoint(ckpt_file_name, net=None, strict_load: bool = False, filter_prefix=None,
                    dec_key=None, dec_mode="AES-GCM", specify_prefix=None, choice_func=None,
                    crc_check: bool = False, remove_redundancy: bool = False, format: str = "ckpt",
                    **kwargs) -> dict[str, Union[Parameter, str]]:
    """{name: Parameter, or str for a string entry} from a checkpoint of either
    format (told by its content; ``format`` is accepted as MindSpore's); with
    ``net``, also loaded into it (``load_param_into_net``)."""
    ckpt_file_name = capture_io.stand_in_for(ckpt_file_name)   # irc compile: training not run
    if dec_key is not None:
        raise UnsupportedError("load_checkpoint: encrypted checkpoints (dec_key) are not supported "
                               "by irc", where=user_frame())
    specify = _prefixes(specify_prefix, "specify_prefix")
    filter_ = _prefixes(filter_prefix, "filter_prefix")
    content, name = _content(ckpt_file_name)
    if ckpt_format.is_safetensors(content):
        specify = filter_ = ()         # MindSpore's safetensors reader honours choice_func only
    keep = _selector(specify, filter_, choice_func)
    entries, _ = _parse(content, name, crc_check)
    # irc's resume entry is not the user's: the dict is what MindSpore's
    # load_checkpoint gives for the checkpoint MindSpore would have written
    # (len(), load_param_into_net's unused names)
    params: dict[str, Union[Parameter, str]] = {
        k: v if isinstance(v, str) else Parameter(v, name=k) for k, v in entries.items()
        if keep(k) and k != METADATA_TAG}
    if not params:
        raise UserValueError(f"load_checkpoint: nothing was loaded from {name}: the parameter dict "
                             f"is empty after filter or specify", where=user_frame(),
                             hint="check filter_prefix, specify_prefix and choice_func")
    if net is not None:
        load_param_into_net(net, params, strict_load)
    return params


# =============================================================================================
# into a network
# =============================================================================================

def _extra_ones(new_shape: tuple, shape: tuple) -> bool:
    """MindSpore loads (12, 2048, 1, 1) into (12, 2048): only trailing 1s extra."""
    return len(new_shape) > len(shape) and new_shape[:len(shape)] == shape and \
        all(d == 1 for d in new_shape[len(shape):])


def _update(param: Parameter, name: str, new: Parameter, strict_load: bool) -> None:
    """``param.set_data(new)`` under MindSpore's checks of shape and dtype."""
    value = new.asnumpy()
    if value.shape != param.shape:
        if not _extra_ones(value.shape, param.shape):
            raise UserRuntimeError(f"load_param_into_net: {name} has shape {param.shape} in the "
                                   f"network but {value.shape} in the checkpoint",
                                   where=user_frame(),
                                   hint="check that the checkpoint belongs to this network")
        value = value.reshape(param.shape)
    have, want = value.dtype, param.asnumpy().dtype
    if have != want:
        convertible = {have, want} <= _FLOATS or {have, want} <= _INTS
        if strict_load or not convertible:
            type_of = ckpt_format.tensor_type_of
            raise UserRuntimeError(f"load_param_into_net: {name} is {type_of(want)} in the network "
                                   f"but {type_of(have)} in the checkpoint", where=user_frame(),
                                   hint="strict_load=False converts between float types and "
                                        "between int types" if convertible else None)
    param.set_data(value)
    # what was loaded, for the training job's fingerprint: a run that starts
    # from other weights (train.py --resume OTHER.ckpt) is another job
    param.__dict__["_irc_loaded"] = zlib.crc32(np.ascontiguousarray(value).view(np.uint8).reshape(-1))


def _load_by_suffix(params: dict, parameter_dict: dict, not_loaded: list, strict_load: bool) -> None:
    """MindSpore's second chance when not strict: a checkpoint name that ends
    with an unloaded parameter's name gives a prefix (``net.`` of a
    ``WithLossCell``'s checkpoint); every unloaded parameter found under that
    prefix loads; repeated while prefixes are found."""
    while not_loaded:
        prefix = next((key[:-len(name)] for name in not_loaded for key in parameter_dict
                       if key.endswith(name) and key != name), None)
        if prefix is None:
            return
        for name in [n for n in not_loaded if prefix + n in parameter_dict]:
            _update(params[name], name, parameter_dict[prefix + name], strict_load)
            not_loaded.remove(name)


def load_param_into_net(net, parameter_dict: dict, strict_load: bool = False,
                        remove_redundancy: bool = False) -> tuple[list, list]:
    """Copy the checkpoint's values into ``net``'s parameters of the same
    names, as MindSpore 2.x: returns (parameters of the net not loaded,
    checkpoint names not loaded).  A shape mismatch is an error; a dtype
    mismatch between float types (or between int types) converts unless
    ``strict_load``; without ``strict_load`` a name missing may be found
    under a prefix (``network.conv1.weight`` for ``conv1.weight``)."""
    from ..nn.cell import Cell
    if not isinstance(net, Cell):
        raise UserTypeError(f"load_param_into_net: net must be a network (nn.Cell), got "
                            f"{type(net).__name__}", where=user_frame())
    if not isinstance(parameter_dict, dict):
        raise UserTypeError(f"load_param_into_net: parameter_dict must be a dict (from "
                            f"load_checkpoint), got {type(parameter_dict).__name__}",
                            where=user_frame())
    for key, value in parameter_dict.items():
        if not isinstance(key, str) or not isinstance(value, (Parameter, str)):
            raise UserTypeError(f"load_param_into_net: parameter_dict must map names to Parameters, "
                                f"got {key!r}: {type(value).__name__}", where=user_frame(),
                                hint="wrap values in mindspore.Parameter, or use load_checkpoint's "
                                     "dict")
    # by each Parameter's own name, as MindSpore matches (a sub-cell's
    # ``weight`` is ``head.weight`` in the checkpoint of its network)
    params = {param.name: param for _, param in net.parameters_and_names()}
    not_loaded: list[str] = []
    unused = list(parameter_dict)
    for name, param in params.items():
        value = parameter_dict.get(name)
        if value is None:
            if not name.startswith("accu_grads"):    # MindSpore's gradient accumulators
                not_loaded.append(name)
        elif not isinstance(value, str):             # a string entry is no parameter
            _update(param, name, value, strict_load)
            unused.remove(name)
    if not_loaded and not strict_load:
        tensors = {k: v for k, v in parameter_dict.items() if not isinstance(v, str)}
        _load_by_suffix(params, tensors, not_loaded, strict_load)
    if not_loaded:      # MindSpore's two warnings (a backbone-only checkpoint says what it left)
        from .. import log
        log.warning("For 'load_param_into_net', %d parameters in the 'net' are not loaded, because they "
                    "are not in the 'parameter_dict', please check whether the network structure is "
                    "consistent when training and loading checkpoint.", len(not_loaded))
        log.warning("%s are not loaded.", not_loaded)
    return not_loaded, unused


# =============================================================================================
# distributed inference (the model zoo's Wide&Deep eval.py imports these)
# =============================================================================================

def merge_sliced_parameter(sliced_parameters, strategy=None) -> Parameter:
    """MindSpore's: the slices of one Parameter, in rank order, joined along
    axis 0.  irc trains data parallel, so its ranks' checkpoints hold whole
    Parameters; a slicing ``strategy`` (from an auto-parallel run) is refused."""
    what = "For 'merge_sliced_parameter'"
    if not isinstance(sliced_parameters, list):
        raise UserTypeError(f"{what}, the argument 'sliced_parameters' should be list, but got "
                            f"{type(sliced_parameters)}.", where=user_frame())
    if not sliced_parameters:
        raise UserValueError(f"{what}, the argument 'sliced_parameters' should not be empty.",
                             where=user_frame())
    if strategy and not isinstance(strategy, dict):
        raise UserTypeError(f"{what}, the argument 'strategy' should be dict, but got {type(strategy)}.",
                            where=user_frame())
    for index, p in enumerate(sliced_parameters):
        if not isinstance(p, Parameter):
            raise UserTypeError(f"{what}, the element in 'sliced_parameters' should be 'Parameter', "
                                f"but got {type(p)} at index {index}.", where=user_frame())
    first = sliced_parameters[0]
    for index, p in enumerate(sliced_parameters):
        if p.name != first.name or p.shape[1:] != first.shape[1:] or len(p.shape) != len(first.shape):
            raise UserValueError(f"{what}, please make sure that the elements in 'slice_parameters' have "
                                 f"the same name, dimension length and shape except 0 axis. The name, "
                                 f"dimension length, shape except 0 axis should be {first.name}, "
                                 f"{len(first.shape)}, {tuple(first.shape[1:])}, but got name: {p.name}, "
                                 f"dimension length: {len(p.shape)}, shape except 0 axis: "
                                 f"{tuple(p.shape[1:])} at index {index}.", where=user_frame())
    if strategy:
        if first.name not in strategy:
            raise UserValueError(f"{what}, the parameter name {first.name} should be a key in the "
                                 f"'strategy'. Please check 'sliced_parameter' and 'strategy'.",
                                 where=user_frame())
        raise UnsupportedError(f"{what}: slices laid out by an auto-parallel strategy are not "
                               f"supported by irc", where=user_frame(),
                               hint="irc trains data parallel: every rank's checkpoint holds the "
                                    "whole Parameter, so load one rank's checkpoint")
    merged = np.concatenate([np.asarray(p.asnumpy()) for p in sliced_parameters])
    return Parameter(Tensor(merged), first.name, first.requires_grad)


def build_searched_strategy(strategy_filename):
    """MindSpore's: the slicing strategy an auto-parallel run saved (None
    for None).  irc's runs are data parallel and save none, so a strategy
    file is refused with a hint."""
    if strategy_filename is None:
        return None
    if not isinstance(strategy_filename, str):
        raise UserTypeError(f"For 'build_searched_strategy', the argument 'strategy_filename' should "
                            f"be str, but got {type(strategy_filename)}.", where=user_frame())
    raise UnsupportedError(f"build_searched_strategy: auto-parallel strategy files "
                           f"({strategy_filename}) are not supported by irc", where=user_frame(),
                           hint="irc trains data parallel: every rank's checkpoint holds the whole "
                                "network, so load one rank's checkpoint")
