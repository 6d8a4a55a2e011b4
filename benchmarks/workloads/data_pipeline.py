"""data_pipeline: one epoch of a kf.data input pipeline, and fit() fed by it (issue 13).

Pipeline: `from_tensor_slices((x, y)).shuffle(10_000).map(normalize, AUTOTUNE).batch(64)
.prefetch(AUTOTUNE)` over 60k 28x28 float32 examples, against a hand-written NumPy loop
doing the same work (a permutation, then gather + normalize per batch of 64; target: the
pipeline at >= 0.8x the loop's examples/s, i.e. time ratio <= 1.25) and TF's tf.data when
installed. Training: `fit(dataset)` against `fit(x, y)` on the same batches, one epoch of
a small MLP (target: >= 0.9x, time ratio <= 1.11).
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

import kilnflow as kf
from benchmarks.harness import Case, Config, Target, Variant
from benchmarks.workloads._common import peer_variants, peers_note, quiet

NAME = "data_pipeline"
DESCRIPTION = "kf.data shuffle/map/batch/prefetch epoch vs a NumPy loop; fit(dataset) vs fit(x, y)"
MEAN, STD = 0.1307, 0.3081


def normalize(image: Any, label: Any) -> tuple:
    return (image - MEAN) / STD, label


def _numpy_epoch(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> None:
    order = rng.permutation(len(x))
    mean, std = np.float32(MEAN), np.float32(STD)
    for start in range(0, len(x), 64):
        rows = order[start:start + 64]
        images, labels = (x[rows] - mean) / std, y[rows]
    del images, labels


def _tf_epoch(tf: Any, x: np.ndarray, y: np.ndarray) -> Any:
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(10_000).map(
        lambda a, b: ((a - MEAN) / STD, b), num_parallel_calls=tf.data.AUTOTUNE).batch(64) \
        .prefetch(tf.data.AUTOTUNE)

    def epoch() -> None:
        for _ in ds:
            pass
    return epoch


def _pipeline(x: np.ndarray, y: np.ndarray) -> Any:
    return kf.data.Dataset.from_tensor_slices((x, y)).shuffle(10_000).map(
        normalize, num_parallel_calls=kf.data.AUTOTUNE).batch(64).prefetch(kf.data.AUTOTUNE)


def _check(ds: Any, x: np.ndarray, y: np.ndarray) -> None:
    """One epoch holds every example once, normalized (the timed work is the real work)."""
    labels, sums = [], 0.0
    for images, batch_labels in ds.as_numpy_iterator():
        labels.append(batch_labels)
        sums += float(images.astype(np.float64).sum())
    assert sorted(np.concatenate(labels).tolist()) == sorted(y.tolist())
    expected = float(((x.astype(np.float64) - MEAN) / STD).sum())
    assert abs(sums - expected) <= 1e-3 * max(1.0, abs(expected)), (sums, expected)


def _model(inputs: int) -> Any:
    keras = kf.keras
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input(shape=(inputs,)),
                              keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(10)])
    model.compile(keras.optimizers.SGD(0.01),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def cases(config: Config) -> Iterator[Case]:
    n = config.pick(60_000, 20_000, 512)
    rng = np.random.default_rng(0)
    x = rng.random((n, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, n).astype(np.int64)
    ds = _pipeline(x, y)
    _check(ds, x, y)

    def kf_epoch() -> None:
        for _ in ds:
            pass
    variants = [
        Variant("NumPy loop (permutation, gather, normalize)", lambda: _numpy_epoch(x, y, rng)),
        Variant("kf.data shuffle.map.batch.prefetch", quiet(kf_epoch)),
        Variant("kf.data as_numpy_iterator", lambda: [None for _ in ds.as_numpy_iterator()]),
    ] + peer_variants([("TF tf.data", "tensorflow", lambda tf: _tf_epoch(tf, x, y))])
    yield Case(f"one epoch over {n} 28x28 float32 examples, batches of 64", variants,
               floor="NumPy loop (permutation, gather, normalize)",
               per_unit=("example", n),
               targets=[Target(">= 0.8x the NumPy loop's examples/s",
                               "kf.data shuffle.map.batch.prefetch", "ratio", 1.25)],
               notes=[peers_note(), "map(normalize) is row-wise, so it runs once per block "
                      "of ~1 MB of shuffled rows (map_and_batch_fusion); shuffle permutes row "
                      "numbers 16k draws at a time and gathers each block once; AUTOTUNE "
                      "prefetch stays in the consumer's thread here (the loop does no work of "
                      "its own to overlap)"])

    flat = x.reshape(n, 28 * 28)
    fit_n = config.pick(20_000, 8_000, 256)
    flat, labels = flat[:fit_n], y[:fit_n]
    train = kf.data.Dataset.from_tensor_slices((flat, labels)).batch(64).prefetch(
        kf.data.AUTOTUNE)
    arrays_model, dataset_model = _model(28 * 28), _model(28 * 28)
    yield Case(f"fit: one epoch of a 784-64-10 MLP on {fit_n} examples, batches of 64", [
        Variant("fit(x, y)", quiet(lambda: arrays_model.fit(
            flat, labels, batch_size=64, epochs=1, verbose=0, shuffle=False))),
        Variant("fit(dataset)", quiet(lambda: dataset_model.fit(train, epochs=1, verbose=0))),
    ], floor="fit(x, y)", per_unit=("example", fit_n),
        targets=[Target(">= 0.9x fit(x, y)'s throughput", "fit(dataset)", "ratio", 1.11)])
