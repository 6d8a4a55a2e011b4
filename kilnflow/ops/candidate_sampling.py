"""Candidate sampling (tf.random.*_candidate_sampler, tf.nn.compute_accidental_hits) and the
sampled losses built on it (tf.nn.nce_loss, tf.nn.sampled_softmax_loss).

A sampler op draws `num_sampled` class ids from a distribution over [0, range_max) and
returns (sampled_candidates, true_expected_count, sampled_expected_count) as TF does: the
expected count of a class is num_sampled * p, or with unique=True 1 - (1 - p) ** num_tries.
Sampler ops are random (their stream is a RandomStream attr, as in random.py); the learned
unigram sampler keeps its counts beside its stream. Imports ops.random and other ops.
"""
from __future__ import annotations

import weakref
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.math import cast, log
from kilnflow.ops.random import RandomStream, get_seed
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

_LEARNED_COUNTS: Any = weakref.WeakKeyDictionary()  # stream -> class counts seen so far


def _distribution(kind: str, range_max: int, unigrams: tuple, distortion: float,
                  stream: RandomStream) -> np.ndarray:
    if kind == "uniform":
        return np.full(range_max, 1.0 / range_max)
    if kind == "log_uniform":  # Zipf-like: p(k) = log((k + 2) / (k + 1)) / log(range_max + 1)
        k = np.arange(range_max, dtype=np.float64)
        return (np.log(k + 2) - np.log(k + 1)) / np.log(range_max + 1)
    if kind == "learned":  # counts + 1: uniform before any class is seen
        weights = _LEARNED_COUNTS.setdefault(stream, np.zeros(range_max)) + 1.0
    else:
        weights = np.asarray(unigrams, np.float64) ** distortion
    return weights / weights.sum()


def _sampler_rule(true_classes: Any, *, kind: str, num_true: int, num_sampled: int,
                  unique: bool, range_max: int, unigrams: tuple, distortion: float,
                  stream: RandomStream) -> list:
    if true_classes.shape.rank not in (None, 2):
        raise ValueError(f"true_classes must be a matrix [batch, num_true], got shape "
                         f"{true_classes.shape}")
    return [TensorSpec([num_sampled], _dtypes.int64),
            TensorSpec(true_classes.shape, _dtypes.float32),
            TensorSpec([num_sampled], _dtypes.float32)]


def _sampler_kernel(true_classes: Any, *, kind: str, num_true: int, num_sampled: int,
                    unique: bool, range_max: int, unigrams: tuple, distortion: float,
                    stream: RandomStream) -> tuple:
    if kind != "all" and true_classes.size and (true_classes.min() < 0 or
                                                true_classes.max() >= range_max):
        raise errors.InvalidArgumentError(errors.with_location(
            f"true_classes must be in [0, {range_max}) [Op:{_OP_NAMES[kind]}]"))
    p = _distribution(kind, range_max, unigrams, distortion, stream)
    if kind == "all":
        sampled = np.arange(num_sampled, dtype=np.int64)
        return (sampled, np.ones(true_classes.shape, np.float32),
                np.ones(num_sampled, np.float32))
    generator = stream.generator
    if unique:
        chosen: dict = {}
        tries = 0
        while len(chosen) < num_sampled:
            batch = generator.choice(range_max, size=max(num_sampled, 16), p=p)
            for c in batch.tolist():
                tries += 1
                chosen.setdefault(c, None)
                if len(chosen) == num_sampled:
                    break
        sampled = np.fromiter(chosen, np.int64, num_sampled)
        expected = lambda q: -np.expm1(tries * np.log1p(-np.minimum(q, 1 - 1e-12)))  # noqa
    else:
        sampled = generator.choice(range_max, size=num_sampled, p=p).astype(np.int64)
        expected = lambda q: num_sampled * q  # noqa: E731
    if kind == "learned":  # learn from this batch's true classes for the next draws
        np.add.at(_LEARNED_COUNTS[stream], true_classes.reshape(-1), 1.0)
    return (sampled, expected(p[true_classes]).astype(np.float32),
            expected(p[sampled]).astype(np.float32))


_OP_NAMES = {"uniform": "UniformCandidateSampler", "log_uniform": "LogUniformCandidateSampler",
             "learned": "LearnedUnigramCandidateSampler",
             "fixed": "FixedUnigramCandidateSampler", "all": "AllCandidateSampler"}
SAMPLERS = {kind: defop(name, shape=_sampler_rule, kernel=_sampler_kernel, random=True,
                        multi_output=True, check_eager=True,
                        dtypes=frozenset((_dtypes.int64,)))
            for kind, name in _OP_NAMES.items()}


def _sample(kind: str, true_classes: Any, num_true: int, num_sampled: int, unique: bool,
            range_max: int, seed: Optional[int], name: Optional[str],
            unigrams: Sequence = (), distortion: float = 1.0) -> tuple:
    true_classes = cast(convert_to_tensor(true_classes), _dtypes.int64)
    if kind != "all" and (range_max < 1 or (unique and num_sampled > range_max)):
        raise errors.InvalidArgumentError(errors.with_location(
            f"{_OP_NAMES[kind]}: need range_max >= 1 and, with unique=True, num_sampled "
            f"({num_sampled}) <= range_max ({range_max})"))
    if true_classes.shape.rank == 2 and true_classes.shape[1] not in (None, num_true):
        raise errors.InvalidArgumentError(errors.with_location(
            f"{_OP_NAMES[kind]}: true_classes has {true_classes.shape[1]} columns, "
            f"num_true is {num_true}"))
    attrs = {"kind": kind, "num_true": int(num_true), "num_sampled": int(num_sampled),
             "unique": bool(unique), "range_max": int(range_max),
             "unigrams": tuple(float(u) for u in unigrams), "distortion": float(distortion),
             "stream": RandomStream(get_seed(seed))}
    return bind(SAMPLERS[kind], (true_classes,), attrs, name=name)


def uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int,
                              unique: bool, range_max: int, seed: Optional[int] = None,
                              name: Optional[str] = None) -> tuple:
    """Class ids drawn uniformly from [0, range_max): (sampled_candidates,
    true_expected_count, sampled_expected_count)."""
    return _sample("uniform", true_classes, num_true, num_sampled, unique, range_max, seed,
                   name)


def log_uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int,
                                  unique: bool, range_max: int, seed: Optional[int] = None,
                                  name: Optional[str] = None) -> tuple:
    """Class ids drawn with P(k) = log((k + 2) / (k + 1)) / log(range_max + 1) (classes
    sorted by decreasing frequency)."""
    return _sample("log_uniform", true_classes, num_true, num_sampled, unique, range_max,
                   seed, name)


def learned_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int,
                                      unique: bool, range_max: int,
                                      seed: Optional[int] = None,
                                      name: Optional[str] = None) -> tuple:
    """Class ids drawn by the frequencies of the true classes this sampler has seen (counts
    + 1, so uniform at first)."""
    return _sample("learned", true_classes, num_true, num_sampled, unique, range_max, seed,
                   name)


def fixed_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int,
                                    unique: bool, range_max: int, vocab_file: str = "",
                                    distortion: float = 1.0, num_reserved_ids: int = 0,
                                    num_shards: int = 1, shard: int = 0,
                                    unigrams: Sequence = (), seed: Optional[int] = None,
                                    name: Optional[str] = None) -> tuple:
    """Class ids drawn with probability proportional to unigrams[k] ** distortion (from
    `unigrams`, or the last comma-separated field of each line of `vocab_file`)."""
    if num_shards != 1 or shard != 0:
        raise errors.UnimplementedError("fixed_unigram_candidate_sampler: sharding is not "
                                        "supported")
    if vocab_file:
        with open(vocab_file, encoding="utf-8") as f:
            unigrams = [float(line.rsplit(",", 1)[-1]) for line in f if line.strip()]
    weights = [0.0] * int(num_reserved_ids) + [float(u) for u in unigrams]
    if len(weights) != range_max:
        raise errors.InvalidArgumentError(errors.with_location(
            f"fixed_unigram_candidate_sampler: {len(weights)} unigrams (with reserved ids) "
            f"for range_max {range_max}"))
    return _sample("fixed", true_classes, num_true, num_sampled, unique, range_max, seed,
                   name, weights, distortion)


def all_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                          seed: Optional[int] = None, name: Optional[str] = None) -> tuple:
    """All classes [0, num_sampled) as candidates, each with expected count 1 (for tests)."""
    return _sample("all", true_classes, num_true, num_sampled, unique, num_sampled, seed, name)


# ---------------------------------------------------------------- accidental hits

def _hits_rule(true_classes: Any, sampled: Any, *, num_true: int) -> list:
    return [TensorSpec([None], _dtypes.int32), TensorSpec([None], _dtypes.int64),
            TensorSpec([None], _dtypes.float32)]


def _hits_kernel(true_classes: Any, sampled: Any, *, num_true: int) -> tuple:
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise errors.InvalidArgumentError(errors.with_location(
            f"true_classes must be a batch_size * num_true matrix, got shape "
            f"{list(true_classes.shape)} for num_true {num_true} [Op:ComputeAccidentalHits]"))
    rows, _, columns = np.nonzero(true_classes[:, :, None] == sampled[None, None, :])
    order = np.lexsort((columns, rows))
    rows, columns = rows[order], columns[order]
    return (rows.astype(np.int32), columns.astype(np.int64),
            np.full(rows.shape, -np.finfo(np.float32).max, np.float32))


ACCIDENTAL_HITS = defop("ComputeAccidentalHits", shape=_hits_rule, kernel=_hits_kernel,
                        multi_output=True, dtypes=frozenset((_dtypes.int64,)))


def compute_accidental_hits(true_classes: Any, sampled_candidates: Any, num_true: int,
                            seed: Optional[int] = None, name: Optional[str] = None) -> tuple:
    """(indices, ids, weights) of sampled candidates equal to a true class of their row:
    row index, position in sampled_candidates, and -FLT_MAX to add to those logits."""
    for i, (arg, value) in enumerate((("true_classes", true_classes),
                                      ("sampled_candidates", sampled_candidates))):
        if isinstance(value, Tensor) and value.dtype != _dtypes.int64:  # TF never casts
            raise errors.InvalidArgumentError(errors.with_location(
                f"cannot compute ComputeAccidentalHits as input #{i}(zero-based) `{arg}` was "
                f"expected to be a int64 tensor but is a {value.dtype.name} tensor "
                f"[Op:ComputeAccidentalHits]"))
    true_classes = cast(convert_to_tensor(true_classes), _dtypes.int64)
    sampled = cast(convert_to_tensor(sampled_candidates), _dtypes.int64)
    return bind(ACCIDENTAL_HITS, (true_classes, sampled), {"num_true": int(num_true)},
                name=name)


# ---------------------------------------------------------------- sampled losses

def _sampled_logits(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
                    num_classes: int, num_true: int, sampled_values: Any,
                    subtract_log_q: bool, remove_accidental_hits: bool,
                    seed: Optional[int]) -> tuple:
    """(logits [batch, num_true + num_sampled], labels of the same shape), as TF builds them."""
    from kilnflow.ops.joining import concat
    from kilnflow.ops.linalg import matmul
    from kilnflow.ops.nn_extra import embedding_lookup
    from kilnflow.ops.reduction import reduce_sum
    from kilnflow.ops.reshaping import expand_dims, reshape
    from kilnflow.ops.joining import stack
    from kilnflow.ops.scatter import tensor_scatter_nd_add
    labels = cast(convert_to_tensor(labels), _dtypes.int64)
    inputs = convert_to_tensor(inputs)
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True,
                                                       num_classes, seed)
    sampled, true_expected, sampled_expected = (array.stop_gradient(v) for v in sampled_values)
    flat_labels = reshape(labels, [-1])
    true_w = reshape(embedding_lookup(weights, flat_labels), [-1, num_true, inputs.shape[-1]])
    sampled_w = embedding_lookup(weights, sampled)
    true_b = reshape(embedding_lookup(biases, flat_labels), [-1, num_true])
    true_logits = reduce_sum(expand_dims(inputs, 1) * true_w, -1) + true_b
    sampled_logits = matmul(inputs, sampled_w, transpose_b=True) + \
        embedding_lookup(biases, sampled)
    if remove_accidental_hits:
        rows, columns, hit_weights = compute_accidental_hits(labels, sampled, num_true)
        indices = stack([cast(rows, _dtypes.int64), columns], axis=1)
        sampled_logits = tensor_scatter_nd_add(sampled_logits, indices,
                                               cast(hit_weights, sampled_logits.dtype))
    if subtract_log_q:
        true_logits = true_logits - log(cast(true_expected, true_logits.dtype))
        sampled_logits = sampled_logits - log(cast(sampled_expected, true_logits.dtype))
    logits = concat([true_logits, sampled_logits], 1)
    targets = concat([array.ones_like(true_logits) / num_true, array.zeros_like(sampled_logits)],
                     1)
    return logits, targets


def nce_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
             num_classes: int, num_true: int = 1, sampled_values: Any = None,
             remove_accidental_hits: bool = False, name: str = "nce_loss") -> Tensor:
    """Noise-contrastive estimation loss per example: sigmoid cross entropy of the true and
    sampled logits (corrected by log expected counts), summed over them."""
    from kilnflow.ops.nn import sigmoid_cross_entropy_with_logits
    from kilnflow.ops.reduction import reduce_sum
    logits, targets = _sampled_logits(weights, biases, labels, inputs, num_sampled,
                                      num_classes, num_true, sampled_values, True,
                                      remove_accidental_hits, None)
    return reduce_sum(sigmoid_cross_entropy_with_logits(labels=targets, logits=logits), 1)


def sampled_softmax_loss(weights: Any, biases: Any, labels: Any, inputs: Any,
                         num_sampled: int, num_classes: int, num_true: int = 1,
                         sampled_values: Any = None, remove_accidental_hits: bool = True,
                         seed: Optional[int] = None,
                         name: str = "sampled_softmax_loss") -> Tensor:
    """Softmax cross entropy over the true class and `num_sampled` sampled classes: a cheap
    estimate of the full softmax loss for many classes (training only)."""
    from kilnflow.ops.nn import softmax_cross_entropy_with_logits
    logits, targets = _sampled_logits(weights, biases, labels, inputs, num_sampled,
                                      num_classes, num_true, sampled_values, True,
                                      remove_accidental_hits, seed)
    return softmax_cross_entropy_with_logits(labels=array.stop_gradient(targets),
                                             logits=logits)
