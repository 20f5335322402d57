"""``mindspore.log``: MindSpore's logger (``from mindspore import log as logger``).

Configured, as MindSpore's, from the environment when first used:

* ``GLOG_v``: the level, 0 DEBUG, 1 INFO, 2 WARNING (default), 3 ERROR, 4 CRITICAL;
* ``GLOG_logtostderr``: 1 (default) logs to stderr; 0 logs to files under
  ``GLOG_log_dir/rank_<RANK_ID>/logs/mindspore.log.<pid>`` (rotated at
  ``logger_maxBytes``, keeping ``logger_backupCount``), and to stderr from
  ``GLOG_stderrthreshold`` (default 2) up.

Records read ``[LEVEL] ME(pid:thread,process):time [file:line] message``,
naming the caller's line.  Each script irc runs reads the environment anew.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
from logging.handlers import RotatingFileHandler
from typing import Optional

from .capture import register_process_state
from .diagnostics import UserValueError, missing_names

__all__ = ["debug", "info", "warning", "error", "critical", "get_level", "get_log_config"]

SUB_MODULE = "ME"
FORMAT = ("[%(levelname)s] %(sub_module)s(%(process)d:%(thread)d,%(processName)s):%(asctime)s "
          "[%(filepath)s:%(lineno)d] %(message)s")
GLOG_LEVELS = {"0": logging.DEBUG, "1": logging.INFO, "2": logging.WARNING, "3": logging.ERROR,
               "4": logging.CRITICAL}
DEFAULTS = {"GLOG_v": "2", "GLOG_logtostderr": "1", "GLOG_stderrthreshold": "2",
            "logger_maxBytes": "52428800", "logger_backupCount": "30"}

_lock = threading.Lock()
_logger: Optional[logging.Logger] = None


class _Formatter(logging.Formatter):
    """MindSpore's layout: the sub-module, the caller's full path, and the time
    as %Y-%m-%d-%H:%M:%S.mmm.uuu."""

    def formatTime(self, record, datefmt=None):  # noqa: N802 -- logging's name
        stamp = time.strftime("%Y-%m-%d-%H:%M:%S", self.converter(record.created))
        micros = f"{int(record.created % 1 * 1e6):06d}"
        return f"{stamp}.{micros[:3]}.{micros[3:]}"

    def format(self, record):
        record.sub_module = SUB_MODULE
        record.filepath = record.pathname
        return super().format(record)


def _env(name: str) -> str:
    return (os.environ.get(name) or DEFAULTS.get(name, "")).strip()


def _level(name: str) -> int:
    value = _env(name)
    if value not in GLOG_LEVELS:
        raise UserValueError(f"{name}={value!r} is not a log level",
                             hint="use 4 CRITICAL, 3 ERROR, 2 WARNING, 1 INFO or 0 DEBUG")
    return GLOG_LEVELS[value]


def _count(name: str) -> int:
    value = _env(name)
    if not value.isdigit():
        raise UserValueError(f"{name}={value!r} must be a positive integer")
    return int(value)


def _handler(handler: logging.Handler, level: int = logging.NOTSET) -> logging.Handler:
    handler.setFormatter(_Formatter(FORMAT))
    handler.setLevel(level)
    return handler


def _file_handler() -> logging.Handler:
    directory = _env("GLOG_log_dir")
    if not directory:
        raise UserValueError("GLOG_logtostderr=0 logs to files: GLOG_log_dir must name their "
                             "directory")
    rank = os.environ.get("RANK_ID", "0")
    folder = os.path.join(os.path.realpath(directory), f"rank_{rank}", "logs")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, f"mindspore.log.{os.getpid()}")
    return RotatingFileHandler(path, maxBytes=_count("logger_maxBytes"),
                               backupCount=_count("logger_backupCount"), encoding="utf-8")


def _configured() -> logging.Logger:
    global _logger
    with _lock:
        if _logger is None:
            logger = logging.getLogger(f"{SUB_MODULE}.mindspore.log.{os.getpid()}")
            logger.handlers.clear()
            logger.propagate = False
            logger.setLevel(_level("GLOG_v"))
            to_stderr = _env("GLOG_logtostderr")
            if to_stderr not in ("0", "1"):
                raise UserValueError(f"GLOG_logtostderr={to_stderr!r} must be 0 or 1")
            if to_stderr == "0":
                logger.addHandler(_handler(_file_handler()))
                logger.addHandler(_handler(logging.StreamHandler(sys.stderr),
                                           _level("GLOG_stderrthreshold")))
            else:
                logger.addHandler(_handler(logging.StreamHandler(sys.stderr)))
            _logger = logger
        return _logger


@register_process_state
def reset() -> None:
    """Forget the configuration: the next record reads the environment."""
    global _logger
    with _lock:
        if _logger is not None:
            for handler in _logger.handlers:
                handler.close()
            _logger.handlers.clear()
        _logger = None


def _log(level: int, msg, args, kwargs) -> None:
    # stacklevel: the record names the caller of debug/info/..., not this file
    kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 2
    _configured().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs) -> None:
    _log(logging.DEBUG, msg, args, kwargs)


def info(msg, *args, **kwargs) -> None:
    _log(logging.INFO, msg, args, kwargs)


def warning(msg, *args, **kwargs) -> None:
    _log(logging.WARNING, msg, args, kwargs)


def error(msg, *args, **kwargs) -> None:
    _log(logging.ERROR, msg, args, kwargs)


def critical(msg, *args, **kwargs) -> None:
    _log(logging.CRITICAL, msg, args, kwargs)


def get_level() -> str:
    """The level as GLOG_v spells it: '0' (DEBUG) .. '4' (CRITICAL)."""
    level = _configured().getEffectiveLevel()
    return next(k for k, v in GLOG_LEVELS.items() if v == level)


def get_log_config() -> dict:
    """The configuration in force, keyed by the environment variables."""
    logger = _configured()
    config = {"GLOG_v": get_level(), "GLOG_logtostderr": "1"}
    files = [h for h in logger.handlers if isinstance(h, RotatingFileHandler)]
    if files:
        stderr = next(h for h in logger.handlers if not isinstance(h, RotatingFileHandler))
        config.update(GLOG_logtostderr="0",
                      GLOG_log_dir=os.path.dirname(files[0].baseFilename),
                      logger_maxBytes=files[0].maxBytes, logger_backupCount=files[0].backupCount,
                      GLOG_stderrthreshold=next(k for k, v in GLOG_LEVELS.items()
                                                if v == stderr.level))
    return config


__getattr__ = missing_names(__name__)
