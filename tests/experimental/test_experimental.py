"""kf.experimental: DLPack exchange (zero-copy, read-only), Optional, strict mode."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors


def test_to_dlpack_round_trip_is_zero_copy_and_read_only():
    t = kf.constant([[1.0, 2.0], [3.0, 4.0]])
    capsule = kf.experimental.dlpack.to_dlpack(t)
    back = kf.experimental.dlpack.from_dlpack(capsule)
    assert back.dtype == kf.float32 and back.shape == (2, 2)
    np.testing.assert_array_equal(back.numpy(), t.numpy())
    assert np.shares_memory(np.asarray(back), np.asarray(t))


def test_numpy_reads_a_tensor_through_dunder_dlpack_read_only():
    t = kf.constant([1, 2, 3])
    a = np.from_dlpack(t)
    assert np.shares_memory(a, np.asarray(t)) and not a.flags.writeable
    with pytest.raises(ValueError):
        a[0] = 7
    assert t.__dlpack_device__() == (1, 0)
    assert t.numpy().tolist() == [1, 2, 3]


def test_legacy_consumer_gets_a_copy():
    t = kf.constant([1.0, 2.0])
    capsule = t.__dlpack__()  # no max_version: a pre-1.0 consumer cannot see "read-only"
    back = kf.experimental.dlpack.from_dlpack(capsule)
    assert back.numpy().tolist() == [1.0, 2.0]
    assert not np.shares_memory(np.asarray(back), np.asarray(t))
    with pytest.raises(BufferError):
        t.__dlpack__(copy=False)


def test_from_dlpack_of_numpy_arrays_and_dtypes():
    for dtype, kf_dtype in [(np.float64, kf.float64), (np.int32, kf.int32),
                            (np.bool_, kf.bool), (np.complex64, kf.complex64)]:
        a = np.ones((2, 3), dtype)
        t = kf.experimental.dlpack.from_dlpack(a)
        assert t.dtype == kf_dtype and t.shape == (2, 3)
    r = kf.experimental.dlpack.from_dlpack(np.arange(6).reshape(2, 3)[:, 1])  # strided
    assert r.numpy().tolist() == [1, 4]


def test_dlpack_bad_inputs():
    with pytest.raises(errors.InvalidArgumentError, match="from_dlpack"):
        kf.experimental.dlpack.from_dlpack([1, 2])
    with pytest.raises(errors.InvalidArgumentError, match="string"):
        kf.experimental.dlpack.to_dlpack(kf.constant(["a"]))

    @kf.function
    def f(x):
        return kf.experimental.dlpack.to_dlpack(x)

    with pytest.raises(errors.InvalidArgumentError, match="eager"):
        f(kf.constant(1.0))


def test_dlpack_of_a_variable_reads_its_value():
    v = kf.Variable([1.0, 2.0])
    t = kf.experimental.dlpack.from_dlpack(kf.experimental.dlpack.to_dlpack(v))
    assert t.numpy().tolist() == [1.0, 2.0]


def test_optional_from_value_and_empty():
    opt = kf.experimental.Optional.from_value({"a": 1, "b": (2.0, "s")})
    assert bool(opt.has_value())
    value = opt.get_value()
    assert int(value["a"]) == 1 and value["b"][1].numpy() == b"s"
    assert opt.element_spec["b"][0] == kf.TensorSpec([], kf.float32)
    empty = kf.experimental.Optional.empty(kf.TensorSpec([2], kf.int32))
    assert not bool(empty.has_value())
    with pytest.raises(errors.InvalidArgumentError):
        empty.get_value()
    it = iter(kf.data.Dataset.range(0))
    assert isinstance(it.get_next_as_optional(), kf.data.experimental.get_next_as_optional(
        iter(kf.data.Dataset.range(1))).__class__)


def test_optional_inside_a_function():
    @kf.function
    def f(x):
        opt = kf.experimental.Optional.from_value(x * 2)
        return opt.get_value() if opt.has_value() is not None else x

    assert float(f(kf.constant(3.0))) == 6.0


def test_enable_strict_mode_is_accepted():
    kf.experimental.enable_strict_mode()
    from kilnflow.experimental.strict_mode import strict_mode_enabled
    assert strict_mode_enabled()


def test_optional_is_a_composite_through_functions():
    full = kf.experimental.Optional.from_value(3.0)
    empty = kf.experimental.Optional.empty(kf.TensorSpec([], kf.float32))
    assert repr(kf.OptionalSpec(kf.TensorSpec([], kf.int32))) == \
        "OptionalSpec(TensorSpec(shape=(), dtype=tf.int32, name=None),)"  # TF 2.21's repr
    assert full._type_spec == kf.OptionalSpec(kf.TensorSpec([], kf.float32))

    @kf.function
    def twice_or_minus_one(opt):
        return kf.cond(opt.has_value(), lambda: opt.get_value() * 2, lambda: kf.constant(-1.0))

    assert float(twice_or_minus_one(full)) == 6.0
    assert float(twice_or_minus_one(empty)) == -1.0

    @kf.function
    def make(x):
        return kf.experimental.Optional.from_value({"y": x + 1})

    out = make(kf.constant(1.0))
    assert isinstance(out, kf.experimental.Optional) and bool(out.has_value())
    assert float(out.get_value()["y"]) == 2.0

    @kf.function
    def read(opt):
        return opt.get_value()

    with pytest.raises(errors.InvalidArgumentError,
                       match="The given optional does not have a value"):
        read(empty)
    with pytest.raises(errors.InvalidArgumentError,
                       match="The given optional does not have a value"):
        empty.get_value()
    with pytest.raises(TypeError):
        kf.OptionalSpec(3)
