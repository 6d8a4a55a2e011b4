"""kf.config: run_functions_eagerly, graph-optimizer options, devices and threads
(kilnflow/device_config.py)."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Dict

from kilnflow import device_config as _devices
from kilnflow.context import allocation_limit as _allocation_limit
from kilnflow.context import set_allocation_limit as _set_allocation_limit
from kilnflow.function.api import functions_run_eagerly as functions_run_eagerly
from kilnflow.function.api import run_functions_eagerly as run_functions_eagerly
from kilnflow.function.api import functions_run_eagerly as experimental_functions_run_eagerly
from kilnflow.function.api import run_functions_eagerly as experimental_run_functions_eagerly
from kilnflow.passes import autocluster as _autocluster
from kilnflow.passes import pipeline as _pipeline
from kilnflow.profiler.modes import disable_compare_modes as _disable_compare_modes
from kilnflow.profiler.modes import enable_compare_modes as _enable_compare_modes
from kilnflow.device_config import LogicalDevice as LogicalDevice
from kilnflow.device_config import LogicalDeviceConfiguration as LogicalDeviceConfiguration
from kilnflow.device_config import PhysicalDevice as PhysicalDevice
from kilnflow.device_config import get_logical_device_configuration as get_logical_device_configuration  # noqa: E501
from kilnflow.device_config import get_soft_device_placement as get_soft_device_placement
from kilnflow.device_config import get_visible_devices as get_visible_devices
from kilnflow.device_config import list_logical_devices as list_logical_devices
from kilnflow.device_config import list_physical_devices as list_physical_devices
from kilnflow.device_config import set_logical_device_configuration as set_logical_device_configuration  # noqa: E501
from kilnflow.device_config import set_soft_device_placement as set_soft_device_placement
from kilnflow.device_config import set_visible_devices as set_visible_devices


def _set_experimental_options(options: Dict[str, Any]) -> None:
    _pipeline.set_options(options)


threading = SimpleNamespace(
    set_intra_op_parallelism_threads=_devices.set_intra_op_parallelism_threads,
    get_intra_op_parallelism_threads=_devices.get_intra_op_parallelism_threads,
    set_inter_op_parallelism_threads=_devices.set_inter_op_parallelism_threads,
    get_inter_op_parallelism_threads=_devices.get_inter_op_parallelism_threads)

optimizer = SimpleNamespace(set_experimental_options=_set_experimental_options,
                            get_experimental_options=_pipeline.get_options,
                            set_jit=_autocluster.set_jit, get_jit=_autocluster.get_jit)

experimental = SimpleNamespace(
    set_allocation_limit=_set_allocation_limit,
    get_allocation_limit=_allocation_limit,
    enable_compare_modes=_enable_compare_modes,
    disable_compare_modes=_disable_compare_modes,
    # TF's pre-2.1 spellings of the device functions, still in tf.config.experimental
    list_physical_devices=_devices.list_physical_devices,
    list_logical_devices=_devices.list_logical_devices,
    set_visible_devices=_devices.set_visible_devices,
    get_visible_devices=_devices.get_visible_devices,
    VirtualDeviceConfiguration=_devices.LogicalDeviceConfiguration,
    set_virtual_device_configuration=_devices.set_logical_device_configuration,
    get_virtual_device_configuration=_devices.get_logical_device_configuration,
    set_memory_growth=_devices.set_memory_growth,
    get_memory_growth=_devices.get_memory_growth,
    get_device_details=_devices.get_device_details,
    set_device_policy=_devices.set_device_policy,
    get_device_policy=_devices.get_device_policy,
    set_synchronous_execution=_devices.set_synchronous_execution,
    get_synchronous_execution=_devices.get_synchronous_execution,
    enable_op_determinism=_devices.enable_op_determinism)
