"""Samples of the ops in kilnflow/ops/stateless_random.py (see tests/ops/samples/__init__.py).

The references state the op's contract: a seed's words, wrapped to unsigned 64-bit, key a
NumPy SeedSequence -> Philox generator, and the op draws from it with NumPy's method. The
generic checks then pin eager = function = interpreter; the distributions are tested in
tests/ops/test_random_stateless.py.
"""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, i32, pos, rand


def _gen(seed):
    words = [int(w) & ((1 << 64) - 1) for w in np.asarray(seed).reshape(-1)]
    return np.random.Generator(np.random.Philox(np.random.SeedSequence(words)))


_SEED = i32([7, -3])
_SEED64 = np.asarray([2 ** 40, 5], np.int64)

add("StatelessRandomNormal", lambda s: kf.random.stateless_normal([2, 3], s), (_SEED,),
    lambda s: _gen(s).standard_normal((2, 3), np.float32))
add("StatelessRandomNormal",
    lambda s, m, d: kf.random.stateless_normal([4], s, m, d, dtype=kf.float64),
    (_SEED64, rand(4), pos(4)), lambda s, m, d: m + d * _gen(s).standard_normal(4),
    differentiable=True, wrt=(1, 2), name="mean_stddev")
add("StatelessRandomUniform", lambda s: kf.random.stateless_uniform([3, 2], s, -1.0, 3.0),
    (_SEED,), lambda s: (-1.0 + 4.0 * _gen(s).random((3, 2), np.float32)).astype(np.float32),
    rtol=1e-6)
add("StatelessTruncatedNormal",
    lambda s: kf.random.stateless_truncated_normal([50], s, dtype=kf.float64), (_SEED,),
    lambda s: _truncated(_gen(s), 50))
add("StatelessRandomUniformInt",
    lambda s, lo, hi: kf.random.stateless_uniform([6], s, lo, hi, dtype=kf.int32),
    (_SEED, i32(-4), i32(9)), lambda s, lo, hi: _gen(s).integers(lo, hi, 6, dtype=np.int32))
add("StatelessRandomUniformFullInt",
    lambda s: kf.random.stateless_uniform([5], s, None, None, dtype=kf.int64), (_SEED64,),
    lambda s: _gen(s).integers(-2 ** 63, 2 ** 63 - 1, 5, dtype=np.int64, endpoint=True))
add("StatelessRandomUniformFullInt", lambda s: kf.random.split(s, 3), (_SEED,),
    lambda s: _gen(s).integers(-2 ** 31, 2 ** 31 - 1, (3, 2), dtype=np.int32, endpoint=True),
    name="split")
add("StatelessRandomBinomial",
    lambda s, n, p: kf.random.stateless_binomial([2, 3], s, n, p), (_SEED, pos(3) * 5, pos(3) / 2),
    lambda s, n, p: _gen(s).binomial(np.broadcast_to(n, (2, 3)).astype(np.int64),
                                     np.broadcast_to(p, (2, 3)), (2, 3)).astype(np.int32))
add("StatelessRandomGammaV2",
    lambda s, a: kf.random.stateless_gamma([3, 2], s, a, dtype=kf.float64), (_SEED, pos(2)),
    lambda s, a: _gen(s).standard_gamma(np.broadcast_to(a, (3, 2)), (3, 2)))
add("StatelessRandomPoisson", lambda s, lam: kf.random.stateless_poisson([2, 2], s, lam),
    (_SEED, pos(2) * 3), lambda s, lam: _gen(s).poisson(
        np.broadcast_to(lam, (2, 2)), (2, 2)).astype(np.int32))
add("StatelessMultinomial",
    lambda x, s: kf.random.stateless_categorical(x, 6, s), (rand(3, 4), _SEED),
    lambda x, s: _categorical(_gen(s), x, 6), static_shape=True)
add("StatelessParameterizedTruncatedNormal",
    lambda s, m: kf.random.stateless_parameterized_truncated_normal([5], s, m, 1.0, -10.0,
                                                                     10.0),
    (_SEED, rand(5)), lambda s, m: m + _gen(s).standard_normal(5))
add("StatelessShuffle", lambda x, s: kf.random.experimental.stateless_shuffle(x, s),
    (rand(5, 2), _SEED), lambda x, s: x[_gen(s).permutation(5)])
add("RandomIndexShuffle",
    lambda i, s: kf.random.experimental.index_shuffle(i, s, 9), (i32(np.arange(10)),
                                                                 i32([1, 2, 3])),
    lambda i, s: _feistel_reference(i, s, 10))


def _truncated(gen, n):
    out = gen.standard_normal(n)
    bad = np.flatnonzero(np.abs(out) > 2)
    while bad.size:
        out[bad] = gen.standard_normal(bad.size)
        bad = bad[np.abs(out[bad]) > 2]
    return out


def _categorical(gen, logits, n):
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    cdf = np.cumsum(p, axis=1)
    u = gen.random((logits.shape[0], n))
    return np.stack([np.searchsorted(cdf[r], u[r] * cdf[r, -1], side="right")
                     for r in range(logits.shape[0])]).astype(np.int64)


def _feistel_reference(index, seed, size):
    from kilnflow.ops.stateless_random import feistel_permute  # the kernel's own cipher
    keys = _gen(seed).integers(0, 1 << 63, 4, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return feistel_permute(index, keys, size).astype(index.dtype)


ERRORS.extend([
    ErrorSample("StatelessRandomNormal", lambda s: kf.random.stateless_normal([2], s),
                (i32([1, 2, 3]),), errors.InvalidArgumentError,
                ("seed must have shape [2], not [3]",), name="seed_shape"),
    ErrorSample("StatelessRandomNormal", lambda s: kf.random.stateless_normal([2], s),
                (rand(2),), errors.InvalidArgumentError, ("Tseed", "float64"),
                name="seed_dtype"),
    ErrorSample("StatelessRandomUniformInt",
                lambda s: kf.random.stateless_uniform([2], s, 5, 5, dtype=kf.int32), (_SEED,),
                errors.InvalidArgumentError, ("Need minval < maxval",), name="empty_range"),
    ErrorSample("StatelessRandomUniformInt",
                lambda s: kf.random.stateless_uniform([2], s, 0, None, dtype=kf.int32),
                (_SEED,), ValueError, ("must be both None or not None",), name="one_bound"),
    ErrorSample("RandomIndexShuffle",
                lambda s: kf.random.experimental.index_shuffle(3, s, 9), (i32([1, 2, 3, 4]),),
                errors.InvalidArgumentError, ("Seed must be a vector of size [3]",)),
    ErrorSample("StatelessMultinomial",
                lambda x: kf.random.stateless_categorical(x, 2, [1, 2]), (rand(4),),
                errors.InvalidArgumentError, ("logits should be a matrix",)),
])
