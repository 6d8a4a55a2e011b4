"""Iterators (next / get_next / optionals), options, the host iterator a graph op can
drive, and Keras fit / evaluate / predict fed by a Dataset."""
import warnings

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from kilnflow.data import Dataset


def test_for_loop_yields_eager_tensors():
    seen = [x for x in Dataset.range(3)]
    assert all(isinstance(x, kf.Tensor) for x in seen)
    assert [int(x) for x in seen] == [0, 1, 2]


def test_iterator_end_of_sequence():
    it = iter(Dataset.from_tensor_slices([1, 2]))
    assert it.element_spec == kf.TensorSpec([], kf.int32)
    assert int(next(it)) == 1 and int(it.get_next()) == 2
    with pytest.raises(kf.errors.OutOfRangeError):
        it.get_next()
    with pytest.raises(StopIteration):
        next(it)
    optional = it.get_next_as_optional()
    assert not bool(optional.has_value())
    with pytest.raises(kf.errors.InvalidArgumentError):
        optional.get_value()
    present = iter(Dataset.range(1)).get_next_as_optional()
    assert bool(present.has_value()) and int(present.get_value()) == 0


def test_as_numpy_iterator_structures():
    ds = Dataset.from_tensor_slices({"a": [1, 2], "b": [[1.0], [2.0]]})
    first = next(ds.as_numpy_iterator())
    assert isinstance(first["b"], np.ndarray) and first["a"] == 1


def test_options():
    options = kf.data.Options()
    options.deterministic = False
    options.threading.private_threadpool_size = 4
    ds = Dataset.range(3).with_options(options).map(lambda x: x)
    assert ds.options().deterministic is False
    assert ds.options().threading.private_threadpool_size == 4
    assert Dataset.range(3).options().deterministic is None
    with pytest.raises(AttributeError):
        options.not_an_option = 1
    with pytest.raises(TypeError):
        Dataset.range(3).with_options({"deterministic": False})


def test_repr_bool_and_experimental_namespace():
    ds = Dataset.range(2)
    assert "element_spec=TensorSpec(shape=(), dtype=tf.int64" in repr(ds)
    assert bool(ds.repeat())  # never calls len()
    assert kf.data.experimental.AUTOTUNE == kf.data.AUTOTUNE == -1
    assert int(kf.data.experimental.cardinality(ds)) == 2
    assert kf.data.experimental.INFINITE_CARDINALITY == -1


def test_host_iterator_drives_a_pipeline_for_a_graph_op():
    ds = Dataset.from_tensor_slices(({"x": np.arange(6.0).reshape(3, 2)}, [1, 2, 3]))
    host = ds.host_iterator()
    assert [s.shape.as_list() for s in host.flat_specs] == [[2], []]
    ok, flat = host.next_flat()
    assert ok and host.pack(flat)[0]["x"].tolist() == [0.0, 1.0]
    host.next_flat()
    host.next_flat()
    ok, flat = host.next_flat()
    assert not ok and flat[0].shape == (2,) and flat[1].shape == ()
    host.reset()
    assert host.next_flat()[0]


def test_dataset_built_and_iterated_in_a_function_python_loop():
    # until AutoGraph lowers `for x in dataset`, a loop inside kf.function runs at trace
    # time over the host pipeline (with a warning): values are right for the traced call
    @kf.function
    def total():
        s = kf.constant(0, kf.int64)
        for x in Dataset.range(5).map(lambda v: v * 2):
            s += x
        return s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert int(total()) == 20


def test_counter():
    assert [int(v) for v in Dataset.counter(3, 2).take(4)] == [3, 5, 7, 9]
    assert int(Dataset.counter().cardinality()) == kf.data.INFINITE_CARDINALITY


def _model():
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(3)])
    model.compile(keras.optimizers.SGD(0.1),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def test_keras_fit_evaluate_predict_accept_a_dataset():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = rng.integers(0, 3, 64).astype(np.int64)
    results = []
    for use_dataset in (False, True):
        keras.utils.set_random_seed(1)
        model = _model()
        if use_dataset:
            history = model.fit(Dataset.from_tensor_slices((x, y)).batch(16), epochs=2,
                                verbose=0)
        else:
            history = model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
        results.append((history.history["loss"], model.get_weights()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    loss = model.evaluate(Dataset.from_tensor_slices((x, y)).batch(32), verbose=0)
    assert np.isfinite(loss)
    predicted = model.predict(Dataset.from_tensor_slices(x).batch(10), verbose=0)
    assert predicted.shape == (64, 3)
    steps = model.fit(Dataset.from_tensor_slices((x, y)).batch(16).repeat(), epochs=1,
                      steps_per_epoch=3, verbose=0)
    assert len(steps.history["loss"]) == 1


def test_eager_iterator_read_inside_a_function_reads_at_run_time_not_trace_time():
    it = iter(Dataset.range(5))

    @kf.function
    def f(iterator):
        return iterator.get_next() * 2
    f.get_concrete_function(it)
    assert int(next(it)) == 0  # tracing consumed nothing
    assert int(f(it)) == 2 and int(f(it)) == 4


def test_iterator_and_its_host_view_share_one_stream():
    it = iter(Dataset.range(4))
    host = it.host_iterator()
    assert int(next(it)) == 0
    assert host.next_flat()[1][0] == 1  # what a graph op would read
    assert int(it.get_next()) == 2


def test_numpy_iterator_and_iterator_spec():
    ds = kf.data.Dataset.from_tensor_slices(([1, 2], [[1.0], [2.0]]))
    it = ds.as_numpy_iterator()
    assert isinstance(it, kf.data.NumpyIterator) and iter(it) is it
    assert it.element_spec == ds.element_spec
    first = next(it)
    assert first[0] == 1 and first[1].tolist() == [1.0]
    assert it.next()[0] == 2
    with pytest.raises(StopIteration):
        next(it)
    spec = kf.data.IteratorSpec(ds.element_spec)
    assert spec == kf.data.IteratorSpec.from_value(iter(ds))
    assert spec.is_compatible_with(iter(ds)) and not spec.is_compatible_with(
        iter(kf.data.Dataset.range(2)))
