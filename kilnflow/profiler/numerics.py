"""kf.debugging.enable_check_numerics: the first op whose output holds NaN or Inf raises
InvalidArgumentError naming it and the user line. Eagerly every kernel checks its outputs
(the OpDefs' kernels are wrapped, and restored when checks go off); compiled functions run
a checked twin with fusion off (runtime/profile.py), whose observer names the op and the
line that created it. Nothing is checked, and nothing costs, while it is off.
"""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable, Dict, Optional

import numpy as np

from kilnflow import errors
from kilnflow.profiler.modes import unfused
from kilnflow.runtime import profile


def _check_outputs(site: Any, outputs: tuple) -> None:
    """The observer of checked twins: raise at the first op with NaN or Inf outputs."""
    bad = _nonfinite(outputs)
    if bad:
        where = f" (created at {site.location[0]}:{site.location[1]})" if site.location else ""
        raise errors.InvalidArgumentError(
            f"check_numerics: {bad} in the output of op {site.name} ({site.type}) of "
            f"function {site.function}{where}")


_plain_kernels: Dict[Any, Callable] = {}   # OpDef -> its kernel, while checks are on


def _nonfinite(outputs: tuple) -> Optional[str]:
    for array in outputs:
        if isinstance(array, (np.ndarray, np.generic)) and array.dtype.kind in "fc" and \
                not np.all(np.isfinite(array)):
            return "NaN" if np.isnan(array).any() else "Inf"
    return None


def _checked(opdef: Any, kernel: Callable) -> Callable:
    """`kernel` followed by a NaN/Inf check of its outputs, for eager execution."""
    @functools.wraps(kernel)
    def run(*arrays: Any, **attrs: Any) -> Any:
        out = kernel(*arrays, **attrs)
        if not _plain_kernels:   # checks are off again (code generated meanwhile keeps us)
            return out
        bad = _nonfinite(tuple(out) if opdef.multi_output else (out,))
        # generated code (a checked twin) reports through its observer, with the op's line
        if bad and not sys._getframe(1).f_code.co_filename.startswith("<kilnflow"):
            raise errors.InvalidArgumentError(errors.with_location(
                f"check_numerics: {bad} in the output of op {opdef.name} (eager)"))
        return out
    return run


def enable_check_numerics(stack_height_limit: int = 30, path_length_limit: int = 50) -> None:
    """Raise InvalidArgumentError at the first op whose output holds NaN or Inf, naming it
    and the user line: eagerly, each kernel checks its outputs; compiled functions run a
    checked twin (fusion off) that names the op and the line that created it. Costs
    nothing once disable_check_numerics() has run."""
    from kilnflow.core.opdef import REGISTRY
    if not _plain_kernels:
        for opdef in REGISTRY.values():
            if opdef.name not in ("CheckNumerics", "Const", "Placeholder"):
                _plain_kernels[opdef] = opdef.kernel
                opdef.kernel = _checked(opdef, opdef.kernel)
    profile.set_checks(_check_outputs, lambda owner: unfused(owner.traced_graph))


def disable_check_numerics() -> None:
    for opdef, kernel in _plain_kernels.items():
        opdef.kernel = kernel
    _plain_kernels.clear()
    profile.set_checks(None)
