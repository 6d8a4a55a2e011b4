"""kilnflow's keras answers the probes of keras3_probes.py as TF 2.21's Keras 3 answered
them (recorded in data/keras3_probes.json by scripts/record_keras3_probes.py): metric log
names, metrics_names, weighted metrics, the callback sequence of fit with validation,
running out of data, verbose=2 lines, and History values under fit's options."""
import json
import pathlib
import warnings

import numpy as np
import pytest

from kilnflow import keras
from tests.keras import keras3_probes

# Deliberate differences from the recording. Keras 3.15.1's TF sparsemax sums the cumulative
# sums of the support into its threshold (not the sorted values), so rows with more than one
# entry in the support come out all zeros; kilnflow computes sparsemax as defined (Martins &
# Astudillo): the rows sum to 1 (checked below).
KNOWN_DIFFERENCES = {("functions", "sparsemax_rows")}

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "keras3_probes.json")
                      .read_text())


def _close(got, want, path="result"):
    """Equal structures; floats within float32 round-off of the recorded 4 digits."""
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), path
        for key in want:
            _close(got[key], want[key], f"{path}[{key!r}]")
    elif isinstance(want, list):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (path, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, f"{path}[{i}]")
    elif isinstance(want, float):
        np.testing.assert_allclose(got, want, atol=2e-4, err_msg=path)
    else:
        assert got == want, (path, got, want)


@pytest.mark.parametrize("name", sorted(keras3_probes.PROBES))
def test_probe_matches_keras3(name):
    keras.utils.set_random_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = json.loads(json.dumps(keras3_probes.PROBES[name](keras)))
    want = dict(RECORDED[name])
    for probe, key in KNOWN_DIFFERENCES:
        if probe == name:
            got.pop(key)
            want.pop(key)
    _close(got, want)


def test_sparsemax_is_a_projection_onto_the_simplex():
    out = np.asarray(keras.activations.sparsemax(np.array([[0.1, 0.5, 0.45], [1.0, 1.0, 1.0],
                                                           [3.0, 0.0, -2.0]], "float32")))
    np.testing.assert_allclose(out.sum(-1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(out[0], [1 / 12, 29 / 60, 13 / 30], rtol=1e-5)
    np.testing.assert_allclose(out[2], [1.0, 0.0, 0.0])
