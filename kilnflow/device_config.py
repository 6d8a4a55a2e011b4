"""Device and runtime settings of kf.config (tf.config): the CPU as physical device, virtual
CPU devices as logical devices, visible devices, soft placement, memory growth, determinism,
and the thread counts that reach the fused engine and BLAS.

kilnflow runs every op on the host CPU. Settings that matter only to accelerators (memory
growth, device policy, synchronous execution) are recorded and read back, as TF does on a
CPU-only machine; logical CPU devices are what MirroredStrategy splits replicas over.
"""
from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional, Sequence

_CPU = "CPU"


class PhysicalDevice:
    """A device the machine has (`tf.config.PhysicalDevice`): only the CPU here."""

    def __init__(self, name: str, device_type: str):
        self.name = name
        self.device_type = device_type

    def __repr__(self) -> str:
        return f"PhysicalDevice(name='{self.name}', device_type='{self.device_type}')"

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, PhysicalDevice) and other.name == self.name
                and other.device_type == self.device_type)

    def __hash__(self) -> int:
        return hash((self.name, self.device_type))


class LogicalDevice:
    """A device ops are placed on (`tf.config.LogicalDevice`), e.g. '/device:CPU:1'."""

    def __init__(self, name: str, device_type: str):
        self.name = name
        self.device_type = device_type

    def __repr__(self) -> str:
        return f"LogicalDevice(name='{self.name}', device_type='{self.device_type}')"

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, LogicalDevice) and other.name == self.name
                and other.device_type == self.device_type)

    def __hash__(self) -> int:
        return hash((self.name, self.device_type))


class LogicalDeviceConfiguration:
    """One logical device carved out of a physical one (`tf.config.LogicalDeviceConfiguration`);
    the memory limit and priority are accelerator settings, kept for reading back."""

    def __init__(self, memory_limit: Optional[int] = None,
                 experimental_priority: Optional[int] = None,
                 experimental_device_ordinal: Optional[int] = None):
        self.memory_limit = memory_limit
        self.experimental_priority = experimental_priority
        self.experimental_device_ordinal = experimental_device_ordinal

    def __repr__(self) -> str:
        return (f"LogicalDeviceConfiguration(memory_limit={self.memory_limit}, "
                f"experimental_priority={self.experimental_priority}, "
                f"experimental_device_ordinal={self.experimental_device_ordinal})")

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, LogicalDeviceConfiguration) and vars(other) == vars(self)


CPU0 = PhysicalDevice("/physical_device:CPU:0", _CPU)

_settings: Dict[str, Any] = {
    "logical": None,            # list of LogicalDeviceConfiguration for the CPU, or None
    "visible": [CPU0],
    "soft_placement": True,
    "memory_growth": {},
    "device_policy": "silent",
    "synchronous": True,
    "op_determinism": False,
    "intra_op_threads": 0,
    "inter_op_threads": 0,
}


def _check_device(device: Any, argument: str) -> PhysicalDevice:
    if not isinstance(device, PhysicalDevice):
        raise ValueError(f"{argument} must be a PhysicalDevice from "
                         f"kf.config.list_physical_devices(), got {device!r}")
    if device != CPU0:
        raise ValueError(f"Unrecognized device: {device!r}")
    return device


def list_physical_devices(device_type: Optional[str] = None) -> List[PhysicalDevice]:
    """The machine's devices of `device_type` (None: all): the CPU only."""
    return [CPU0] if device_type in (None, _CPU) else []


def list_logical_devices(device_type: Optional[str] = None) -> List[LogicalDevice]:
    """One logical CPU per configured virtual device (one by default)."""
    if device_type not in (None, _CPU):
        return []
    count = len(_settings["logical"]) if _settings["logical"] else 1
    return [LogicalDevice(f"/device:CPU:{i}", _CPU) for i in range(count)]


def set_logical_device_configuration(device: PhysicalDevice,
                                     logical_devices: Optional[Sequence[LogicalDeviceConfiguration]]
                                     ) -> None:
    """Splits the CPU into virtual devices (None restores one), as TF's tests and guides do
    to run MirroredStrategy with several replicas on one CPU."""
    _check_device(device, "device")
    if logical_devices is not None:
        logical_devices = list(logical_devices)
        for config in logical_devices:
            if not isinstance(config, LogicalDeviceConfiguration):
                raise ValueError("logical_devices must be LogicalDeviceConfiguration objects, "
                                 f"got {config!r}")
        if not logical_devices:
            raise ValueError("logical_devices must hold at least one "
                             "LogicalDeviceConfiguration (None restores the default)")
    _settings["logical"] = logical_devices


def get_logical_device_configuration(device: PhysicalDevice
                                     ) -> Optional[List[LogicalDeviceConfiguration]]:
    _check_device(device, "device")
    logical = _settings["logical"]
    return list(logical) if logical else None


def set_visible_devices(devices: Any, device_type: Optional[str] = None) -> None:
    """Which physical devices the runtime uses; the CPU cannot be hidden."""
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    for device in devices:
        _check_device(device, "devices")
    if device_type in (None, _CPU) and CPU0 not in devices:
        raise ValueError("Could not hide CPU devices: kilnflow runs every op on the CPU")
    _settings["visible"] = [CPU0]


def get_visible_devices(device_type: Optional[str] = None) -> List[PhysicalDevice]:
    return [d for d in _settings["visible"] if device_type in (None, d.device_type)]


def set_soft_device_placement(enabled: bool) -> None:
    _settings["soft_placement"] = bool(enabled)


def get_soft_device_placement() -> bool:
    return _settings["soft_placement"]


def set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    """Recorded only: the CPU allocates as it goes (see set_allocation_limit for a cap)."""
    _check_device(device, "device")
    if _settings["logical"]:
        raise ValueError("Cannot set memory growth on device when virtual devices configured")
    _settings["memory_growth"][device.name] = bool(enable)


def get_memory_growth(device: PhysicalDevice) -> bool:
    _check_device(device, "device")
    return _settings["memory_growth"].get(device.name, False)


def get_device_details(device: PhysicalDevice) -> Dict[str, Any]:
    """TF gives accelerator details (name, compute capability); a CPU has none."""
    _check_device(device, "device")
    return {}


def set_device_policy(device_policy: Optional[str]) -> None:
    """How tensors on the wrong device are handled: nothing is ever on another device."""
    if device_policy not in (None, "silent", "silent_for_int32", "warn", "explicit"):
        raise ValueError(f"Not a valid device policy: {device_policy!r}")
    _settings["device_policy"] = device_policy or "silent"


def get_device_policy() -> str:
    return _settings["device_policy"]


def set_synchronous_execution(enable: bool) -> None:
    """Eager ops already run synchronously; the flag is kept for reading back."""
    _settings["synchronous"] = bool(enable)


def get_synchronous_execution() -> bool:
    return _settings["synchronous"]


def enable_op_determinism() -> None:
    """Makes results reproducible run to run. kilnflow's kernels are deterministic already;
    the flag is recorded for pipelines to read (op_determinism_enabled)."""
    _settings["op_determinism"] = True


def op_determinism_enabled() -> bool:
    return _settings["op_determinism"]


def set_intra_op_parallelism_threads(num_threads: int) -> None:
    """Threads one op may use (0: the system's choice): the fused engine's pool and, through
    threadpoolctl (the `fast` extra), BLAS and OpenMP pools already loaded by NumPy/SciPy."""
    num_threads = int(num_threads)
    if num_threads < 0:
        raise ValueError(f"num_threads must be >= 0, got {num_threads}")
    from kilnflow.runtime.fused_engine import default_num_threads, set_num_threads
    set_num_threads(num_threads or default_num_threads())
    _settings["intra_op_threads"] = num_threads
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        warnings.warn("kf.config.threading.set_intra_op_parallelism_threads reaches BLAS only "
                      "with threadpoolctl: pip install 'kilnflow[fast]'", stacklevel=2)
        return
    if _blas_limit:
        _blas_limit.pop().restore_original_limits()
    if num_threads:
        _blas_limit.append(ThreadpoolController().limit(limits=num_threads))


_blas_limit: List[Any] = []  # the threadpoolctl limiter in force, to restore on 0 or a new value


def get_intra_op_parallelism_threads() -> int:
    return _settings["intra_op_threads"]


def set_inter_op_parallelism_threads(num_threads: int) -> None:
    """Ops run one after another on the calling thread; the value is kept for reading back."""
    num_threads = int(num_threads)
    if num_threads < 0:
        raise ValueError(f"num_threads must be >= 0, got {num_threads}")
    _settings["inter_op_threads"] = num_threads


def get_inter_op_parallelism_threads() -> int:
    return _settings["inter_op_threads"]
