"""kf.config: run_functions_eagerly, graph-optimizer options, device listing."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Dict, List

from kilnflow.context import allocation_limit as _allocation_limit
from kilnflow.context import set_allocation_limit as _set_allocation_limit
from kilnflow.function.api import functions_run_eagerly as functions_run_eagerly
from kilnflow.function.api import run_functions_eagerly as run_functions_eagerly
from kilnflow.passes import autocluster as _autocluster
from kilnflow.passes import pipeline as _pipeline
from kilnflow.profiler.modes import disable_compare_modes as _disable_compare_modes
from kilnflow.profiler.modes import enable_compare_modes as _enable_compare_modes


class PhysicalDevice(SimpleNamespace):
    pass


def list_physical_devices(device_type: str = None) -> List[PhysicalDevice]:
    """Only the CPU: kilnflow runs everything on it."""
    cpu = PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")
    return [cpu] if device_type in (None, "CPU") else []


def list_logical_devices(device_type: str = None) -> List[PhysicalDevice]:
    return list_physical_devices(device_type)


def _set_experimental_options(options: Dict[str, Any]) -> None:
    _pipeline.set_options(options)


def _set_threads(count: int) -> None:
    from kilnflow.runtime.fused_engine import set_num_threads
    set_num_threads(count)


threading = SimpleNamespace(set_intra_op_parallelism_threads=_set_threads,
                            set_inter_op_parallelism_threads=lambda count: None)

optimizer = SimpleNamespace(set_experimental_options=_set_experimental_options,
                            get_experimental_options=_pipeline.get_options,
                            set_jit=_autocluster.set_jit, get_jit=_autocluster.get_jit)

experimental = SimpleNamespace(set_allocation_limit=_set_allocation_limit,
                               get_allocation_limit=_allocation_limit,
                               enable_compare_modes=_enable_compare_modes,
                               disable_compare_modes=_disable_compare_modes)
