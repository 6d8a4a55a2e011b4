"""Samples of the ops in kilnflow/ops/stateless_random.py (see tests/ops/samples/__init__.py).

Uniform, normal, truncated normal and the integer draws are TF's numbers: the references
draw from kilnflow.ops.philox with the seed scrambled as TF does (TF's own values for these
ops are checked in tests/ops/test_random_tf_parity.py). The other ops' contract: a seed's
words, wrapped to unsigned 64-bit, key a NumPy SeedSequence -> Philox generator, and the op
draws from it with NumPy's method. The generic checks then pin eager = function =
interpreter; the distributions are tested in tests/ops/test_random_stateless.py.
"""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops import philox
from kilnflow.ops.stateless_random import RNG_SKIP, STATELESS_NORMAL_V2, \
    STATELESS_TRUNCATED_NORMAL_V2, STATELESS_UNIFORM_FULL_INT_V2, STATELESS_UNIFORM_INT_V2, \
    STATELESS_UNIFORM_V2, key_counter, key_counter_v2
from kilnflow.core.opdef import bind
from tests.ops.samples import ERRORS, ErrorSample, add, i32, pos, rand


def _bind(op, shape, *args, dtype=None):
    """Binds an internal op the way its public callers do: arguments made tensors first."""
    inputs = (kf.constant(shape),) + tuple(kf.convert_to_tensor(a) for a in args)
    return bind(op, inputs, {} if dtype is None else {"dtype": dtype})


def _gen(seed):
    words = [int(w) & ((1 << 64) - 1) for w in np.asarray(seed).reshape(-1)]
    return np.random.Generator(np.random.Philox(np.random.SeedSequence(words)))


def _tf(kind, seed, count, dtype, *bounds):
    key, counter = key_counter(seed)
    if bounds:
        return philox.uniform_int(key, counter, count, dtype, *bounds)
    return getattr(philox, kind)(key, counter, count, dtype)


def _v2(kind, key, counter, count, dtype, *bounds):
    key, counter = key_counter_v2(key, counter)
    if bounds:
        return philox.uniform_int(key, counter, count, dtype, *bounds)
    return getattr(philox, kind)(key, counter, count, dtype)


_SEED = i32([7, -3])
_SEED64 = np.asarray([2 ** 40, 5], np.int64)
_KEY = np.asarray([-3063682911872935615], np.int64)
_COUNTER = np.asarray([2 ** 63 - 3, 5], np.int64)

add("StatelessRandomNormal", lambda s: kf.random.stateless_normal([2, 3], s), (_SEED,),
    lambda s: _tf("normal", s, 6, np.float32).reshape(2, 3))
add("StatelessRandomNormal",
    lambda s, m, d: kf.random.stateless_normal([4], s, m, d, dtype=kf.float64),
    (_SEED64, rand(4), pos(4)), lambda s, m, d: m + d * _tf("normal", s, 4, np.float64),
    differentiable=True, wrt=(1, 2), name="mean_stddev")
add("StatelessRandomUniform", lambda s: kf.random.stateless_uniform([3, 2], s, -1.0, 3.0),
    (_SEED,), lambda s: (np.float32(-1.0) + np.float32(4.0) * _tf("uniform", s, 6, np.float32))
    .reshape(3, 2), rtol=1e-6)
add("StatelessTruncatedNormal",
    lambda s: kf.random.stateless_truncated_normal([50], s, dtype=kf.float64), (_SEED,),
    lambda s: _tf("truncated_normal", s, 50, np.float64))
add("StatelessRandomUniformInt",
    lambda s, lo, hi: kf.random.stateless_uniform([6], s, lo, hi, dtype=kf.int32),
    (_SEED, i32(-4), i32(9)), lambda s, lo, hi: _tf("", s, 6, np.int32, lo, hi))
add("StatelessRandomUniformFullInt",
    lambda s: kf.random.stateless_uniform([5], s, None, None, dtype=kf.int64), (_SEED64,),
    lambda s: _tf("full_int", s, 5, np.int64))
add("StatelessRandomUniformFullInt", lambda s: kf.random.split(s, 3), (_SEED,),
    lambda s: _tf("full_int", s, 6, np.int32).reshape(3, 2), name="split")
add("StatelessRandomNormalV2",
    lambda k, c: _bind(STATELESS_NORMAL_V2, [2, 3], k, c, dtype=kf.float32),
    (_KEY, _COUNTER), lambda k, c: _v2("normal", k, c, 6, np.float32).reshape(2, 3))
add("StatelessRandomUniformV2",
    lambda k, c: _bind(STATELESS_UNIFORM_V2, [5], k, c, dtype=kf.float64),
    (_KEY, _COUNTER), lambda k, c: _v2("uniform", k, c, 5, np.float64))
add("StatelessTruncatedNormalV2",
    lambda k, c: _bind(STATELESS_TRUNCATED_NORMAL_V2, [9], k, c, dtype=kf.float32),
    (_KEY, _COUNTER), lambda k, c: _v2("truncated_normal", k, c, 9, np.float32))
add("StatelessRandomUniformIntV2",
    lambda k, c, lo, hi: _bind(STATELESS_UNIFORM_INT_V2, [4], k, c, lo, hi,
                                          dtype=kf.int64),
    (_KEY, _COUNTER, np.int64(-7), np.int64(2 ** 40)),
    lambda k, c, lo, hi: _v2("", k, c, 4, np.int64, lo, hi))
add("StatelessRandomUniformFullIntV2",
    lambda k, c: _bind(STATELESS_UNIFORM_FULL_INT_V2, [3], k, c, dtype=kf.uint32),
    (_KEY, _COUNTER), lambda k, c: _v2("full_int", k, c, 3, np.uint32))
add("RngSkip", lambda s, d: bind(RNG_SKIP, (kf.convert_to_tensor(s), kf.convert_to_tensor(d))),
    (np.asarray([-5, -1, 9], np.int64), np.int64(1280)),
    lambda s, d: np.asarray([1275, 0, 9], np.int64))
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
    lambda x, s: _categorical(key_counter(s), x, 6), static_shape=True)
add("StatelessParameterizedTruncatedNormal",
    lambda s, m: kf.random.stateless_parameterized_truncated_normal([5], s, m, 1.0, -10.0,
                                                                     10.0),
    (_SEED, rand(5)), lambda s, m: m + _gen(s).standard_normal(5))
add("StatelessShuffle", lambda x, s: kf.random.experimental.stateless_shuffle(x, s),
    (rand(5, 2), _SEED), lambda x, s: x[philox.permutation(*key_counter(s), 5)])
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


def _categorical(key_counter, logits, n):
    """TF's draw: per row, the first class whose running exp-sum exceeds a uniform double
    (two stream words, rows one after another) times the total."""
    words = philox.words(*key_counter, 2 * logits.shape[0] * n)
    u = philox.uint64_to_double(words[0::2], words[1::2]).reshape(logits.shape[0], n)
    cdf = np.cumsum(np.exp(logits - logits.max(axis=1, keepdims=True)), axis=1)
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
