"""kf.data.Options: the few tf.data options that change what a pipeline does here.

`deterministic` (keep element order in parallel map and interleave), the threading pool
size, `experimental_optimization.map_and_batch_fusion` (a row-wise map followed by batch
runs once per batch) and the distribute auto-shard policy. Other TF option names are
accepted so TF code runs; setting a name TF does not have raises AttributeError, as in TF.
"""
from __future__ import annotations

import enum
from typing import Any, Dict

AUTOTUNE = -1  # tf.data.AUTOTUNE: let the runtime pick (here: the machine's CPU count)


class AutoShardPolicy(enum.IntEnum):
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.IntEnum):
    WARN = 0
    IGNORE = 1
    FAIL = 2


class _OptionGroup:
    """Attributes with defaults; unknown names are refused. None means 'not set'."""

    _defaults: Dict[str, Any] = {}

    def __init__(self) -> None:
        for name in self._defaults:
            object.__setattr__(self, name, None)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._defaults:
            raise AttributeError(f"{type(self).__name__} has no option '{name}'")
        object.__setattr__(self, name, value)

    def value(self, name: str) -> Any:
        """The option's value, or its default when unset."""
        got = getattr(self, name)
        return self._defaults[name] if got is None else got

    def merge(self, other: "_OptionGroup") -> None:
        """Options set in `other` win over ours (later with_options calls win)."""
        for name in self._defaults:
            theirs = getattr(other, name)
            if isinstance(theirs, _OptionGroup):
                getattr(self, name).merge(theirs)
            elif theirs is not None:
                object.__setattr__(self, name, theirs)

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self._defaults)

    def __repr__(self) -> str:
        set_ = {n: getattr(self, n) for n in self._defaults if getattr(self, n) is not None}
        return f"{type(self).__name__}({set_})"


class OptimizationOptions(_OptionGroup):
    _defaults = dict(apply_default_optimizations=True, filter_fusion=False,
                     filter_parallelization=False, inject_prefetch=True,
                     map_and_batch_fusion=True, map_and_filter_fusion=False, map_fusion=False,
                     map_parallelization=True, noop_elimination=True, parallel_batch=True,
                     seq_interleave_prefetch=False, shuffle_and_repeat_fusion=True)


class ThreadingOptions(_OptionGroup):
    _defaults = dict(max_intra_op_parallelism=1, private_threadpool_size=0)


class DistributeOptions(_OptionGroup):
    _defaults = dict(auto_shard_policy=AutoShardPolicy.AUTO, num_devices=None)


class AutotuneOptions(_OptionGroup):
    _defaults = dict(enabled=True, cpu_budget=0, ram_budget=0, autotune_algorithm=None)


class Options(_OptionGroup):
    """Options of a pipeline, attached with `dataset.with_options(options)`.

    >>> import kilnflow as kf
    >>> options = kf.data.Options()
    >>> options.deterministic = False
    >>> ds = kf.data.Dataset.range(3).with_options(options)
    >>> ds.options().deterministic
    False
    """

    _defaults = dict(deterministic=True, experimental_deterministic=None,
                     experimental_optimization=None, experimental_threading=None,
                     threading=None, experimental_distribute=None, autotune=None,
                     experimental_slack=False, experimental_warm_start=False,
                     experimental_external_state_policy=ExternalStatePolicy.WARN,
                     experimental_symbolic_checkpoint=False)

    def __init__(self) -> None:
        super().__init__()
        object.__setattr__(self, "experimental_optimization", OptimizationOptions())
        threading = ThreadingOptions()
        object.__setattr__(self, "threading", threading)
        object.__setattr__(self, "experimental_threading", threading)  # TF's older name
        object.__setattr__(self, "experimental_distribute", DistributeOptions())
        object.__setattr__(self, "autotune", AutotuneOptions())

    def is_deterministic(self) -> bool:
        older = self.experimental_deterministic
        return bool(self.value("deterministic") if older is None else older)

    def merge(self, other: "_OptionGroup") -> None:
        for name in self._defaults:
            theirs = getattr(other, name)
            if name == "experimental_threading":
                continue  # the same object as `threading`, merged once
            if isinstance(theirs, _OptionGroup):
                getattr(self, name).merge(theirs)
            elif theirs is not None:
                object.__setattr__(self, name, theirs)
