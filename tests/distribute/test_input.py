"""Distributed input: global batches split per replica; per-replica pipelines from a
function; any iterable of arrays, tensors or nested structures."""
import numpy as np
import pytest

import kilnflow as kf


def test_global_batches_split_along_the_first_axis():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    batches = [{"x": x, "y": kf.constant(np.arange(6))}, {"x": x[:4], "y": np.arange(4)}]
    dist = list(strategy.experimental_distribute_dataset(batches))
    first = dist[0]
    assert isinstance(first["x"], kf.distribute.DistributedValues)
    assert first["x"].values[1].numpy().tolist() == x[3:].tolist()
    assert first["y"].values[0].numpy().tolist() == [0, 1, 2]
    assert [v.shape[0] for v in dist[1]["x"].values] == [2, 2]


def test_one_replica_yields_plain_batches_and_get_next_ends():
    strategy = kf.distribute.OneDeviceStrategy("/cpu:0")
    iterator = iter(strategy.experimental_distribute_dataset([np.ones((2, 3))]))
    batch = iterator.get_next()
    assert isinstance(batch, kf.Tensor) and batch.shape == (2, 3)
    with pytest.raises(kf.errors.OutOfRangeError):
        iterator.get_next()


def test_bad_elements_are_named():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with pytest.raises(kf.errors.InvalidArgumentError, match="batch dimension"):
        next(iter(strategy.experimental_distribute_dataset([3.0])))
    with pytest.raises(kf.errors.InvalidArgumentError, match="different batch sizes"):
        next(iter(strategy.experimental_distribute_dataset([(np.ones(2), np.ones(3))])))
    with pytest.raises(TypeError, match="iterable"):
        strategy.experimental_distribute_dataset(42)


def test_datasets_from_function_gives_consecutive_elements_to_replicas():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    contexts = []

    def dataset_fn(input_context):
        contexts.append(input_context)
        size = input_context.get_per_replica_batch_size(4)
        return [np.full((size,), float(i)) for i in range(4)]

    elements = list(strategy.distribute_datasets_from_function(dataset_fn))
    assert len(elements) == 2
    assert [v.numpy().tolist() for v in elements[1].values] == [[2.0, 2.0], [3.0, 3.0]]
    assert contexts[0].num_replicas_in_sync == 2
    with pytest.raises(ValueError, match="divisible"):
        contexts[0].get_per_replica_batch_size(5)


def test_distributed_batches_feed_a_compiled_step():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    step = kf.function(lambda batch: strategy.reduce(
        "SUM", strategy.run(kf.reduce_sum, args=(batch,)), axis=None))
    data = [np.arange(8, dtype=np.float32).reshape(4, 2)] * 2
    assert [float(step(b)) for b in strategy.experimental_distribute_dataset(data)] == [28.0] * 2
    assert step.experimental_get_tracing_count() == 1  # shards are traced by spec


def test_compiled_function_returns_per_replica_values():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    step = kf.function(lambda: strategy.run(
        lambda: kf.distribute.get_replica_context().replica_id_in_sync_group * 2
        + kf.constant(1)))
    result = step()
    assert isinstance(result, kf.distribute.DistributedValues)
    assert [int(v) for v in strategy.experimental_local_results(result)] == [1, 3]


def test_a_kf_data_pipeline_is_split_per_replica():
    data = getattr(kf, "data", None)
    if data is None or not hasattr(data, "Dataset"):
        pytest.skip("kf.data is not on this branch")
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    dataset = data.Dataset.from_tensor_slices((x, np.arange(6))).batch(4)
    batches = list(strategy.experimental_distribute_dataset(dataset))
    assert [[v.numpy().tolist() for v in y.values] for _, y in batches] == [
        [[0, 1], [2, 3]], [[4], [5]]]

    def dataset_fn(input_context):
        return data.Dataset.from_tensor_slices(np.arange(8.0)).batch(
            input_context.get_per_replica_batch_size(4))
    elements = list(strategy.distribute_datasets_from_function(dataset_fn))
    assert [v.numpy().tolist() for v in elements[1].values] == [[4.0, 5.0], [6.0, 7.0]]
