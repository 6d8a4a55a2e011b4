"""MirroredVariable and SyncOnReadVariable: TF's aggregation and synchronization options,
eagerly and inside @kf.function."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow.distribute.distributed_variables import create_variable


def _replica_id():
    return kf.cast(kf.distribute.get_replica_context().replica_id_in_sync_group, kf.float32)


# ONLY_FIRST_REPLICA drops the other replicas' values: pruning them is expected
@pytest.mark.filterwarnings("ignore:kf.function 'step' computes")
@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("aggregation, expected", [
    ("SUM", 1.0 + 2.0 + 3.0), ("MEAN", 2.0), ("ONLY_FIRST_REPLICA", 1.0)])
def test_mirrored_update_in_replica_context(compiled, aggregation, expected):
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1", "/cpu:2"])
    with strategy.scope():
        v = kf.distribute.MirroredVariable(10.0, aggregation=aggregation)
    assert v.aggregation is kf.VariableAggregation[aggregation]
    assert v.synchronization is kf.VariableSynchronization.ON_WRITE

    def step():
        return strategy.run(lambda: v.assign_add(_replica_id() + 1.0, read_value=False))
    if compiled:
        step = kf.function(step)
    step()
    assert float(v.numpy()) == pytest.approx(10.0 + expected)
    strategy.run(lambda: v.assign(_replica_id() * 0.0 + 4.0))  # same value on every replica
    assert float(v.numpy()) == pytest.approx(12.0 if aggregation == "SUM" else 4.0)


def test_mirrored_without_aggregation_updates_the_shared_buffer_per_replica():
    # TF 2.21 updates each device's copy separately (they diverge: 2.0 and 3.0 from 1.0);
    # here the copies are one buffer, so both replicas' updates land in it.
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        v = kf.distribute.MirroredVariable(1.0, name="counter")
    strategy.run(lambda: v.assign_add(_replica_id() + 1.0))
    assert float(v.numpy()) == 4.0
    with strategy.scope():
        v.assign_add(1.0)  # cross-replica: applied once
    assert float(v.numpy()) == 5.0


@pytest.mark.parametrize("compiled", [False, True])
def test_sync_on_read_keeps_a_copy_per_replica(compiled):
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        total = create_variable(0.0, synchronization=kf.VariableSynchronization.ON_READ,
                                aggregation=kf.VariableAggregation.SUM, name="total")
        mean = create_variable(0.0, synchronization="ON_READ", aggregation="MEAN")
    assert isinstance(total, kf.distribute.SyncOnReadVariable)
    assert len(total.components) == 2

    def update():
        def replica():
            total.assign_add(_replica_id() + 1.0)
            mean.assign_add(_replica_id() + 1.0)
            return total.read_value()  # the local copy
        return strategy.run(replica)
    if compiled:
        update = kf.function(update)
    local = update()
    assert [float(t) for t in strategy.experimental_local_results(local)] == [1.0, 2.0]
    assert float(total.numpy()) == 3.0
    assert float(mean.numpy()) == 1.5
    with strategy.scope():
        total.assign(10.0)
        with pytest.raises(ValueError, match="cross-replica"):
            total.assign_add(1.0)
    assert float(total.numpy()) == 10.0
    assert [float(kf.Variable.numpy(c)) for c in total.components] == [5.0, 5.0]


def test_create_variable_defaults_to_mirrored():
    v = create_variable(np.ones(2, np.float32), aggregation="SUM")
    assert isinstance(v, kf.distribute.MirroredVariable) and isinstance(v, kf.Variable)
    v.assign_add([1.0, 2.0])  # no strategy: a plain update
    assert v.numpy().tolist() == [2.0, 3.0]
    with pytest.raises(ValueError, match="aggregation"):
        create_variable(1.0, aggregation="PRODUCT")
