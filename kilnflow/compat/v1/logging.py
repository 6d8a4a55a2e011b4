"""kf.compat.v1.logging: TF1's logging calls (set_verbosity, info, warning, ...) over
Python's logging, on a logger named 'kilnflow'."""
from __future__ import annotations

import logging as _logging
from typing import Any

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARNING
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_logger = _logging.getLogger("kilnflow")


def set_verbosity(v: int) -> None:
    _logger.setLevel(v)


def get_verbosity() -> int:
    return _logger.getEffectiveLevel()


def debug(msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.debug(msg, *args, **kwargs)


def info(msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.info(msg, *args, **kwargs)


def warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.warning(msg, *args, **kwargs)


def error(msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.error(msg, *args, **kwargs)


def fatal(msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.critical(msg, *args, **kwargs)


warn = warning
