"""The bad-input tier for Keras layers: every public layer (tests/keras/bad_input_layers.py,
which must list them all) gets the op tier's malformed values in each input, and a malformed
first constructor argument. Nothing may escape as an internal exception (AttributeError,
KeyError, IndexError, a raw MemoryError...), hang, or change a context stack; values no op
accepts must raise TF's kind of error naming the layer or the argument."""
import inspect
import signal

import pytest

import kilnflow as kf
from kilnflow import keras
from tests.keras import bad_input_layers as table
from tests.ops import bad_inputs

pytestmark = pytest.mark.filterwarnings("ignore")
L = keras.layers
CASES = {}
for _key, _call in table.layer_cases(L, kf.constant, bad_inputs.REJECTED, bad_inputs.ODD):
    CASES.setdefault(_key[0].split("[")[0], []).append((_key, _call))
# Known gap: inference-mode dropout/noise layers and Identity return a ragged list or dict
# (as scalar tensors) where TF raises (tests/ops/data/bad_input_tf.json); the census counts
# them as silent
PASS_THROUGH = {"Dropout", "AlphaDropout", "GaussianDropout", "GaussianNoise", "Identity",
                "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D"}


def _names_layer(message, layer_class):
    return layer_class.lower() in message.lower().replace("_", "") or "Layer '" in message \
        or "`" in message or "[Op:" in message


class _Hang(BaseException):
    pass


def _alarm(*_):
    raise _Hang()


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_rejects_malformed_values_by_name(name):
    layer_class = getattr(L, name).__name__
    failures = []
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for (prefix, category), call in CASES[name]:
            signal.alarm(20)
            try:
                outcome, detail = bad_inputs.judge(
                    call, layer_class, category in bad_inputs.REJECTED)
            except _Hang:
                outcome, detail = "internal", "no answer within 20 s"
            finally:
                signal.alarm(0)
            if outcome == "unnamed" and _names_layer(detail, layer_class):
                outcome = "named"
            if outcome == "silent" and name in PASS_THROUGH:
                continue
            rejected = category in bad_inputs.REJECTED or category in (
                "ctor_none", "ctor_object", "ctor_string")
            if outcome in ("internal", "silent") or outcome == "unnamed" and rejected:
                failures.append(f"{prefix} {category}: {outcome}: {detail[:200]}")
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert not failures, "\n".join(failures)


def test_the_table_lists_every_public_layer():
    public = {n for n in dir(L) if inspect.isclass(getattr(L, n))
              and issubclass(getattr(L, n), L.Layer)}
    assert public - set(table.SPECS) - set(table.EXCLUDED) == set()
    assert len(CASES) >= 140


def test_weights_too_large_raise_resource_exhausted():
    with pytest.raises(kf.errors.ResourceExhaustedError, match="Layer 'huge'"):
        L.Dense(2 ** 34, name="huge")(kf.ones([1, 2]))


def test_a_huge_adaptive_pooling_output_is_refused_before_the_loop():
    with pytest.raises(kf.errors.ResourceExhaustedError, match="output_size"):
        L.AdaptiveMaxPooling1D(2 ** 62)(kf.ones([2, 6, 4]))


@pytest.mark.parametrize("make", [lambda: L.MaxPooling3D(0), lambda: L.Conv1D(2, 0),
                                  lambda: L.AveragePooling2D(None), lambda: L.MaxPooling1D(1.5),
                                  lambda: L.Conv3D(2, 1.5), lambda: L.MaxPooling2D(1.5)])
def test_window_sizes_are_checked_at_construction(make):
    with pytest.raises((ValueError, TypeError), match="pool_size|kernel_size|Pooling|Conv"):
        make()


def test_a_layer_error_keeps_the_internal_cause():
    with pytest.raises(ValueError) as info:
        L.Dense(3)(kf.constant(1.0))
    assert "Layer 'dense" in str(info.value) and isinstance(info.value.__cause__, IndexError)


@pytest.mark.parametrize("make", [lambda: L.Dense(0), lambda: L.Dense(1.5),
                                  lambda: L.Conv2D(0, 3), lambda: L.LSTM(-1),
                                  lambda: L.Embedding(10, 0), lambda: L.RepeatVector(0)])
def test_size_arguments_must_be_positive_ints(make):
    # TF/Keras 3 (recorded): 0, negative and fractional sizes raise; kilnflow truncated 1.5
    with pytest.raises(ValueError, match="expected a positive integer"):
        make()


@pytest.mark.parametrize("make, shape", [
    (lambda: L.GlobalAveragePooling1D(), [2, 3, 4, 5]), (lambda: L.Cropping2D(), [2, 3, 4]),
    (lambda: L.UpSampling1D(), [2, 3, 4, 5]), (lambda: L.SpatialDropout1D(0.5), [2, 3]),
    (lambda: L.AdaptiveAveragePooling1D(2), [2, 6, 4, 1]), (lambda: L.Flatten(), [])])
def test_spatial_layers_check_the_rank_first(make, shape):
    # these reduced or cropped whichever axes a wrong-rank input had (silent); TF raises
    with pytest.raises(ValueError, match="expected (min_)?ndim"):
        make()(kf.ones(shape))


def test_cropping_more_than_the_input_is_refused():
    # TF/Keras 3 (recorded in the census): it returned an empty tensor
    with pytest.raises(ValueError, match="must be smaller than the input length"):
        L.Cropping1D((1, 1))(kf.zeros([2, 2, 3]))
    assert L.Cropping1D((1, 1))(kf.zeros([2, 3, 3])).shape == (2, 1, 3)
