"""kf.DeviceSpec against TF 2.21's recorded behaviour."""
import pytest

import kilnflow as kf

TF_DS = ['/job:worker/replica:0/task:1/device:GPU:2', 'worker', 0, 1, 'GPU', 2, '<DeviceSpec(job=worker, replica=0, task=1, device_type=GPU, device_index=2)>']
TF_DS2 = ['/job:ps/device:CPU:0', '/job:ps/task:3/device:CPU:0', '/job:ps/task:2/device:CPU:0']
TF_DS3 = '/device:CPU:0'
TF_DS4 = '/device:GPU:1'


def test_parse_and_print_as_tf():
    spec = kf.DeviceSpec.from_string("/job:worker/replica:0/task:1/device:GPU:2")
    assert [spec.to_string(), spec.job, spec.replica, spec.task, spec.device_type,
            spec.device_index, repr(spec)] == TF_DS
    d2 = kf.DeviceSpec(job="ps", device_type="CPU", device_index=0)
    assert [d2.to_string(), d2.replace(task=3).to_string(),
            d2.make_merged_spec(kf.DeviceSpec(task=2)).to_string()] == TF_DS2
    assert kf.DeviceSpec.from_string("CPU:0").to_string() == TF_DS3
    assert kf.DeviceSpec.from_string("/gpu:1").to_string() == TF_DS4


def test_equality_wildcards_and_bad_input():
    assert kf.DeviceSpec.from_string("/device:CPU:0") == kf.DeviceSpec(device_type="cpu",
                                                                       device_index=0)
    assert hash(kf.DeviceSpec(job="a")) == hash(kf.DeviceSpec.from_string("/job:a"))
    assert kf.DeviceSpec.from_string("/device:GPU:*").device_index is None
    assert kf.DeviceSpec.from_string("/device:GPU:*").to_string() == "/device:GPU:*"
    with pytest.raises(ValueError):
        kf.DeviceSpec.from_string("/bogus:1:2:3")
    with pytest.raises(ValueError):
        kf.DeviceSpec(task="x")
    with pytest.raises(TypeError):
        kf.DeviceSpec().replace(colour=1)
    with kf.device(kf.DeviceSpec(device_type="CPU", device_index=0).to_string()):
        assert int(kf.constant(1)) == 1
