"""benchmarks/keras_fit.py runs at smoke size (kilnflow only) and reports finite,
positive throughputs; no timing is asserted."""
import math

from benchmarks import keras_fit


def test_keras_fit_benchmark_smoke(capsys):
    results = keras_fit.main(["--size", "smoke", "--no-tf"])
    assert set(results["kilnflow"]) == set(keras_fit.MODELS)
    assert all(math.isfinite(v) and v > 0 for v in results["kilnflow"].values())
    assert "examples/s" in capsys.readouterr().out
