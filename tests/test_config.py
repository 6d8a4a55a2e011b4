"""kf.config devices and threads, against what TF 2.21 prints and returns on a CPU machine
(recorded from tensorflow-cpu 2.21)."""
import numpy as np
import pytest

import kilnflow as kf


@pytest.fixture(autouse=True)
def _restore_settings():
    yield
    cpu = kf.config.list_physical_devices("CPU")[0]
    kf.config.set_logical_device_configuration(cpu, None)
    kf.config.experimental.set_memory_growth(cpu, False)
    kf.config.set_soft_device_placement(True)
    kf.config.experimental.set_device_policy(None)


def test_devices_print_as_tf_prints_them():
    cpu = kf.config.list_physical_devices("CPU")[0]
    assert repr(cpu) == "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')"
    assert kf.config.list_physical_devices("GPU") == []
    assert [d.name for d in kf.config.list_logical_devices()] == ["/device:CPU:0"]
    assert repr(kf.config.LogicalDeviceConfiguration()) == (
        "LogicalDeviceConfiguration(memory_limit=None, experimental_priority=None, "
        "experimental_device_ordinal=None)")


def test_virtual_cpus_become_logical_devices():
    cpu = kf.config.list_physical_devices("CPU")[0]
    assert kf.config.get_logical_device_configuration(cpu) is None
    kf.config.set_logical_device_configuration(cpu, [kf.config.LogicalDeviceConfiguration()] * 2)
    assert repr(kf.config.list_logical_devices("CPU")) == (
        "[LogicalDevice(name='/device:CPU:0', device_type='CPU'), "
        "LogicalDevice(name='/device:CPU:1', device_type='CPU')]")
    assert len(kf.config.get_logical_device_configuration(cpu)) == 2
    assert kf.config.experimental.VirtualDeviceConfiguration is kf.config.LogicalDeviceConfiguration
    with pytest.raises(ValueError, match="virtual devices configured"):
        kf.config.experimental.set_memory_growth(cpu, True)
    kf.config.set_logical_device_configuration(cpu, None)
    assert len(kf.config.list_logical_devices()) == 1


def test_settings_read_back_with_tfs_defaults():
    cpu = kf.config.list_physical_devices("CPU")[0]
    assert kf.config.get_soft_device_placement() is True
    assert kf.config.experimental.get_device_policy() == "silent"
    assert kf.config.experimental.get_synchronous_execution() is True
    assert kf.config.experimental.get_device_details(cpu) == {}
    kf.config.experimental.set_memory_growth(cpu, True)
    assert kf.config.experimental.get_memory_growth(cpu) is True
    kf.config.set_soft_device_placement(False)
    assert kf.config.get_soft_device_placement() is False
    with pytest.raises(ValueError, match="device policy"):
        kf.config.experimental.set_device_policy("sometimes")


def test_bad_devices_and_hiding_the_cpu_are_value_errors():
    with pytest.raises(ValueError, match="PhysicalDevice"):
        kf.config.experimental.set_memory_growth("/CPU:0", True)
    with pytest.raises(ValueError, match="hide CPU"):
        kf.config.set_visible_devices([], "CPU")
    cpu = kf.config.list_physical_devices("CPU")[0]
    kf.config.set_visible_devices([cpu])
    assert kf.config.get_visible_devices("CPU") == [cpu]
    with pytest.raises(ValueError, match="LogicalDeviceConfiguration"):
        kf.config.set_logical_device_configuration(cpu, [1, 2])


def test_intra_op_threads_reach_blas():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    blas = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
    if not blas:
        pytest.skip("NumPy's BLAS is not visible to threadpoolctl")
    try:
        kf.config.threading.set_intra_op_parallelism_threads(1)
        now = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        assert all(p["num_threads"] == 1 for p in now)
        assert kf.config.threading.get_intra_op_parallelism_threads() == 1
        assert np.allclose(kf.matmul(kf.ones([4, 4]), kf.ones([4, 4])).numpy(), 4.0)
    finally:
        kf.config.threading.set_intra_op_parallelism_threads(0)
    assert kf.config.threading.get_intra_op_parallelism_threads() == 0


def test_function_eagerly_aliases():
    assert kf.config.experimental_functions_run_eagerly() is False
    kf.config.experimental_run_functions_eagerly(True)
    try:
        assert kf.config.functions_run_eagerly() is True
    finally:
        kf.config.run_functions_eagerly(False)
