"""Checkpoints: ``save_checkpoint``, ``load_checkpoint``, ``load_param_into_net``.

A checkpoint is a safetensors file holding one tensor per parameter under
its MindSpore name (``conv1.weight``, ``fc1.bias``, optimizer state such as
``moments.conv1.weight``, and ``global_step``), so any safetensors reader
opens it.  The file keeps MindSpore's ``.ckpt`` name so scripts that load
``CKP-1_1875.ckpt`` work unchanged.  String metadata (safetensors'
``__metadata__``) carries irc's resume information (``irc.*`` keys).
"""
from __future__ import annotations

import json
import os
from typing import Any, Optional

import numpy as np

from ..common.tensor import Parameter, Tensor
from ..diagnostics import UserError, user_frame

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "checkpoint_metadata"]


def _array(value) -> np.ndarray:
    if isinstance(value, Tensor):
        return np.asarray(value.asnumpy())
    return np.asarray(value)


def _tensors_of(save_obj) -> dict[str, np.ndarray]:
    """name -> array for a Cell, a {name: value} dict, a list of
    {"name": ..., "data": ...} dicts (MindSpore's form), or an object with
    ``checkpoint_dict()`` (a training run's parameters and optimizer state)."""
    from ..nn.cell import Cell
    if hasattr(save_obj, "checkpoint_dict"):
        return {k: _array(v) for k, v in save_obj.checkpoint_dict().items()}
    if isinstance(save_obj, Cell):
        return {name: _array(p) for name, p in save_obj.parameters_and_names()}
    if isinstance(save_obj, dict):
        return {str(k): _array(v) for k, v in save_obj.items()}
    if isinstance(save_obj, (list, tuple)):
        out = {}
        for item in save_obj:
            if not isinstance(item, dict) or "name" not in item or "data" not in item:
                raise UserError("save_checkpoint: a list must hold {'name': ..., 'data': ...} dicts",
                                where=user_frame())
            out[str(item["name"])] = _array(item["data"])
        return out
    raise UserError(f"save_checkpoint: cannot save a {type(save_obj).__name__}", where=user_frame(),
                    hint="pass a network (nn.Cell), a dict of Tensors or a list of "
                         "{'name', 'data'} dicts")


def save_checkpoint(save_obj, ckpt_file_name, integrated_save: bool = True, async_save: bool = False,
                    append_dict: Optional[dict] = None, enc_key=None, enc_mode="AES-GCM",
                    choice_func=None, metadata: Optional[dict] = None, **kwargs) -> str:
    """Write ``save_obj``'s parameters to ``ckpt_file_name`` (safetensors);
    returns the path written.  ``append_dict`` adds scalars (MindSpore's
    ``epoch_num`` ...); ``choice_func(name)`` keeps only the names it accepts."""
    from safetensors.numpy import save_file
    if enc_key is not None:
        raise UserError("save_checkpoint: encrypted checkpoints are not supported by irc",
                        where=user_frame())
    path = os.fspath(ckpt_file_name)
    if not path.endswith((".ckpt", ".safetensors")):
        path += ".ckpt"
    tensors = _tensors_of(save_obj)
    for key, value in (append_dict or {}).items():
        tensors[str(key)] = np.asarray(value)
    if choice_func is not None:
        tensors = {k: v for k, v in tensors.items() if choice_func(k)}
    tensors = {k: np.ascontiguousarray(v) for k, v in tensors.items()}
    for k, v in tensors.items():
        if v.dtype.kind not in "biuf":
            raise UserError(f"save_checkpoint: {k!r} is not numeric ({v.dtype})", where=user_frame())
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    meta = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in (metadata or {}).items()}
    save_file(tensors, tmp, metadata=meta or None)
    os.replace(tmp, path)   # a crash mid-write never leaves a half checkpoint
    return path


def _read(path: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    from safetensors import safe_open
    if not os.path.isfile(path):
        raise UserError(f"no checkpoint file {path}", where=user_frame())
    try:
        with safe_open(path, framework="numpy") as f:
            meta = dict(f.metadata() or {})
            return {k: f.get_tensor(k) for k in f.keys()}, meta
    except UserError:
        raise
    except Exception as e:  # a MindSpore protobuf .ckpt, or a damaged file
        raise UserError(f"{path} is not a safetensors checkpoint ({type(e).__name__}: {e})",
                        where=user_frame(),
                        hint="irc reads checkpoints written by irc (safetensors); convert "
                             "MindSpore .ckpt files with MindSpore's ckpt_to_safetensors") from None


def checkpoint_metadata(path) -> dict[str, Any]:
    """The metadata stored with a checkpoint (values JSON-decoded when they parse)."""
    _, meta = _read(os.fspath(path))
    out = {}
    for k, v in meta.items():
        try:
            out[k] = json.loads(v)
        except ValueError:
            out[k] = v
    return out


def load_checkpoint(ckpt_file_name, net=None, strict_load: bool = False, filter_prefix=None,
                    dec_key=None, dec_mode="AES-GCM", specify_prefix=None, choice_func=None,
                    **kwargs) -> dict[str, Parameter]:
    """{name: Parameter} from a checkpoint; with ``net``, also loaded into it."""
    tensors, _ = _read(os.fspath(ckpt_file_name))
    prefixes = (filter_prefix,) if isinstance(filter_prefix, str) else tuple(filter_prefix or ())
    keep = (specify_prefix,) if isinstance(specify_prefix, str) else tuple(specify_prefix or ())
    params = {}
    for name, value in tensors.items():
        if prefixes and name.startswith(prefixes):
            continue
        if keep and not name.startswith(keep):
            continue
        if choice_func is not None and not choice_func(name):
            continue
        params[name] = Parameter(value, name=name)
    if net is not None:
        load_param_into_net(net, params, strict_load)
    return params


def load_param_into_net(net, parameter_dict: dict, strict_load: bool = False):
    """Copy matching values into ``net``'s parameters; returns
    (parameters not loaded, checkpoint entries not used), as MindSpore 2.x."""
    from ..nn.cell import Cell
    if not isinstance(net, Cell):
        raise UserError(f"load_param_into_net: expected a network (nn.Cell), got "
                        f"{type(net).__name__}", where=user_frame())
    if not isinstance(parameter_dict, dict):
        raise UserError("load_param_into_net: parameter_dict must be a dict (from load_checkpoint)",
                        where=user_frame())
    not_loaded, used = [], set()
    for name, p in net.parameters_and_names():
        if name not in parameter_dict:
            not_loaded.append(name)
            continue
        value = _array(parameter_dict[name])
        if tuple(value.shape) != tuple(p.shape):
            raise UserError(f"load_param_into_net: {name} has shape {list(p.shape)} in the network "
                            f"but {list(value.shape)} in the checkpoint", where=user_frame())
        p.set_data(value)
        used.add(name)
    unused = [k for k in parameter_dict if k not in used]
    if strict_load and not_loaded:
        raise UserError(f"load_param_into_net: the checkpoint has no value for "
                        f"{', '.join(not_loaded[:5])}", where=user_frame())
    return not_loaded, unused
