"""kf.variable_creator_scope and the variables strategies create through it, checked
against TF 2.21's recorded behaviour (tf_variable_options.json: recorded with
/work/tfvenv/bin/python for MirroredStrategy over 2 logical CPU devices; each replica
adds replica_id + 1 to a variable starting at 10, and so on, as the tests below do)."""
import json
import os

import pytest

import kilnflow as kf

TF = json.load(open(os.path.join(os.path.dirname(__file__), "tf_variable_options.json")))


def _enum(value):
    """TF's str(enum) -> kilnflow's: 'VariableAggregationV2.SUM' -> 'SUM'."""
    return value.split(".")[-1]


def _delta():
    return kf.cast(kf.distribute.get_replica_context().replica_id_in_sync_group + 1,
                   kf.float32)


def _two():
    return kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def test_creators_nest_innermost_first_and_may_change_arguments():
    calls = []

    def outer(next_creator, **kwargs):
        calls.append(["outer", sorted(kwargs)])
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        calls.append(["inner", kwargs["name"]])
        kwargs["name"], kwargs["trainable"] = "renamed", False
        return next_creator(**kwargs)

    with kf.variable_creator_scope(outer), kf.variable_creator_scope(inner):
        v = kf.Variable(1.0, name="orig")
    assert calls == TF["creator_calls"]
    assert [v.name, v.trainable] == TF["creator_result"]
    assert type(kf.Variable(2.0)).__name__ == "ResourceVariable"  # the scopes are gone (TF's class)


def test_a_creator_may_return_its_own_object():
    with kf.variable_creator_scope(lambda next_creator, **kwargs: "made"):
        assert kf.Variable(1.0) == "made"


def test_plain_variables_record_synchronization_and_aggregation():
    v = kf.Variable(1.0, synchronization=kf.VariableSynchronization.ON_READ,
                    aggregation=kf.VariableAggregation.SUM)
    kind, sync, agg, trainable = TF["plain_on_read"]
    assert type(v).__name__ == "ResourceVariable"  # as TF
    assert (v.synchronization.name, v.aggregation.name, v.trainable) == (
        _enum(sync), _enum(agg), trainable)
    plain = kf.Variable(1.0)
    assert [plain.synchronization.name, plain.aggregation.name] == [
        _enum(x) for x in TF["plain_default"]]
    assert kf.Variable(1.0, synchronization="ON_READ", trainable=True).trainable
    for key, kwargs in [("bad_agg", {"aggregation": "bogus"}),
                        ("bad_sync", {"synchronization": "bogus"})]:
        with pytest.raises(ValueError, match=TF[key][1].split(":")[0]):
            kf.Variable(1.0, **kwargs)


def test_mirrored_scope_makes_distributed_variables_through_the_creator():
    strategy = _two()
    seen = []

    def mine(next_creator, **kwargs):
        seen.append(kwargs["aggregation"])
        return next_creator(**kwargs)

    with strategy.scope():
        m = kf.Variable(1.0)
        r = kf.Variable(0.0, synchronization=kf.VariableSynchronization.ON_READ,
                        aggregation=kf.VariableAggregation.SUM)
        with kf.variable_creator_scope(mine):
            c = kf.Variable(2.0, aggregation=kf.VariableAggregation.MEAN)
        for key, kwargs in [("mirrored_on_read_trainable",
                             {"synchronization": "ON_READ", "trainable": True}),
                            ("mirrored_on_write_trainable_default",
                             {"synchronization": "ON_WRITE"})]:
            v = kf.Variable(1.0, **kwargs)
            assert [type(v).__name__, v.trainable] == TF[key]
        with pytest.raises(ValueError, match="`NONE` variable synchronization"):
            kf.Variable(1.0, synchronization=kf.VariableSynchronization.NONE)
    for v, key in [(m, "mirrored_default"), (r, "mirrored_on_read")]:
        kind, sync, agg, trainable = TF[key]
        assert [type(v).__name__, v.synchronization.name, v.aggregation.name,
                v.trainable] == [kind, _enum(sync), _enum(agg), trainable]
    assert [type(c).__name__, c.aggregation.name] == [
        TF["mirrored_with_creator"][0], _enum(TF["mirrored_with_creator"][1])]
    assert seen == [kf.VariableAggregation.MEAN]
    one = kf.distribute.OneDeviceStrategy("/cpu:0")
    with one.scope():  # TF: a plain ResourceVariable
        v = kf.Variable(1.0, synchronization="ON_READ", aggregation="SUM")
    assert type(v).__name__ == "ResourceVariable" and [v.trainable] == TF["mirrored_one_device"][1:]


# the replica ids computed for ONLY_FIRST_REPLICA's dropped replicas are pruned: expected
@pytest.mark.filterwarnings("ignore:kf.function 'step' computes")
@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("aggregation", ["SUM", "MEAN", "ONLY_FIRST_REPLICA"])
def test_aggregations_match_tf(aggregation, compiled):
    expected = TF["aggregations"][aggregation]
    strategy = _two()
    agg = kf.VariableAggregation[aggregation]
    with strategy.scope():
        w = kf.Variable(10.0, aggregation=agg)
        o = kf.Variable(10.0, synchronization=kf.VariableSynchronization.ON_READ,
                        aggregation=agg)
        o2 = kf.Variable(10.0, synchronization=kf.VariableSynchronization.ON_READ,
                         aggregation=agg)
        w2 = kf.Variable(10.0, aggregation=agg)

    def step():
        strategy.run(lambda: w.assign_add(_delta(), read_value=False))
        strategy.run(lambda: o.assign_add(_delta(), read_value=False))
        strategy.run(lambda: w2.assign(_delta(), read_value=False))
    (kf.function(step) if compiled else step)()
    assert float(w.numpy()) == expected["on_write_assign_add"]
    assert float(o.read_value()) == expected["on_read_assign_add"]
    assert [float(kf.Variable.numpy(c)) for c in o.components] == expected["on_read_locals"]
    assert float(w2.numpy()) == expected["on_write_assign"]
    o2.assign(6.0)
    assert [float(kf.Variable.numpy(c)) for c in o2.components] == \
        expected["on_read_cross_assign6_locals"]
    assert float(o2.read_value()) == expected["on_read_cross_assign6_read"]


def test_on_read_without_aggregation_cannot_be_read_across_replicas():
    strategy = _two()
    with strategy.scope():
        v = kf.Variable(0.0, synchronization=kf.VariableSynchronization.ON_READ)
    strategy.run(lambda: v.assign_add(_delta()))
    with pytest.raises(ValueError, match="Could not convert from `tf.VariableAggregation`"):
        v.read_value()
    assert TF["on_read_none_read"][0] == "ValueError"


def test_replica_threads_inherit_the_creator_scopes():
    strategy = _two()
    made = []

    def counting(next_creator, **kwargs):
        made.append(kwargs["name"])
        return next_creator(**kwargs)

    with strategy.scope(), kf.variable_creator_scope(counting):
        made_in = strategy.run(lambda: kf.Variable(1.0, name="in_replica"))
    assert made == ["in_replica", "in_replica"]
    assert all(isinstance(v, kf.distribute.MirroredVariable)
               for v in strategy.experimental_local_results(made_in))
