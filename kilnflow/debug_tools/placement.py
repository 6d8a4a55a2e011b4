"""kf.debugging.set_log_device_placement: log every eager op with the device it runs on.

Eagerly each kernel is wrapped while logging is on (the way enable_check_numerics wraps
them) and writes TF's line to stderr, `Executing op AddV2 in device
/job:localhost/replica:0/task:0/device:CPU:0`; kernels run by a compiled function's
generated code are not logged one by one. Nothing is wrapped, and nothing costs, while
logging is off.
"""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable, Dict

from kilnflow.core.opdef import REGISTRY

DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
_plain_kernels: Dict[Any, Callable] = {}   # OpDef -> its kernel, while logging is on
_wrappers: Dict[Any, Callable] = {}


def _logged(opdef: Any, kernel: Callable) -> Callable:
    @functools.wraps(kernel)
    def run(*arrays: Any, **attrs: Any) -> Any:
        # generated code of compiled functions has "<kilnflow..." file names: not eager ops
        if _plain_kernels and not sys._getframe(1).f_code.co_filename.startswith("<kilnflow"):
            sys.stderr.write(f"Executing op {opdef.name} in device {DEVICE}\n")
        return kernel(*arrays, **attrs)
    return run


def set_log_device_placement(enabled: bool) -> None:
    """Turn logging of eager ops' device placement on or off (tf.debugging's)."""
    if enabled and not _plain_kernels:
        for opdef in REGISTRY.values():
            _plain_kernels[opdef] = opdef.kernel
            opdef.kernel = _wrappers[opdef] = _logged(opdef, opdef.kernel)
    elif not enabled:
        for opdef, kernel in _plain_kernels.items():
            if opdef.kernel is _wrappers.get(opdef):  # another debugger may have rewrapped it
                opdef.kernel = kernel
        _plain_kernels.clear()
        _wrappers.clear()


def get_log_device_placement() -> bool:
    """Whether device placement logging is on."""
    return bool(_plain_kernels)
