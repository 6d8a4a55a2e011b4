"""Stateless random ops (kf.random.stateless_*): the numbers are a pure function of a shape [2]
integer `seed` and the op's arguments, so the same seed gives the same numbers eagerly, in a
kf.function, in a Session and after constant folding. Unlike the ops of random.py these are
not flagged random: they may be folded and merged like any pure op.

Uniform, normal, truncated normal, the integer draws, categorical and shuffle are TF's own
numbers (TF 2.21, CPU):
the seed's two words are scrambled into a Philox4x32-10 key and counter as TF does, and the
words become values with TF's conversions (kilnflow/ops/philox.py). The "V2" ops take that key
and counter directly; kf.random.Generator draws through them from its state. Binomial, gamma,
Poisson and the parameterised truncated normal draw from a NumPy
Philox generator keyed by the seed: deterministic, but not TF's numbers.
Imports ops.random (shape arguments), ops.philox, ops.math, ops.joining, ops.convert, core.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import philox as philox_bits
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import stack
from kilnflow.ops.math import add, cast, multiply
from kilnflow.ops.random import float_dtype, scale_and_shift
from kilnflow.ops.random import draw_categorical, philox_draw, shape_argument, shape_spec
from kilnflow.shapes import TensorSpec, broadcast_shapes
from kilnflow.tensor import Tensor

_MASK64 = (1 << 64) - 1
SEED_DTYPES = frozenset((_dtypes.int32, _dtypes.int64))
_SHAPE_DTYPES = SEED_DTYPES
_FULL_INT_DTYPES = frozenset((_dtypes.int32, _dtypes.int64, _dtypes.uint32, _dtypes.uint64))
ALGORITHMS = ("philox", "auto_select", "threefry")  # ThreeFry has no CPU kernel in TF
_SCRAMBLE_KEY = (0x3EC8F720, 0x02461E29)  # the fixed key TF hashes a seed's words with


def key_counter(seed: Any) -> tuple:
    """The Philox (key, counter) for a stateless seed: the seed's two 64-bit words (sign-
    extended) are the counter of one Philox block under a fixed key; its four output words
    are the new key (two) and the high half of the new counter (low half zero). TF does
    this so that both seed words matter equally."""
    s0, s1 = (int(w) & _MASK64 for w in np.asarray(seed).reshape(-1)[:2])
    mixed = philox_bits.blocks(_SCRAMBLE_KEY, (s0 & 0xFFFFFFFF, s0 >> 32, s1 & 0xFFFFFFFF,
                                               s1 >> 32), 0, 1)[0]
    return (int(mixed[0]), int(mixed[1])), (0, 0, int(mixed[2]), int(mixed[3]))


def key_counter_v2(key: Any, counter: Any) -> tuple:
    """(key, counter) words from a V2 op's int64 key [1] and counter [2] tensors' values."""
    k = int(np.asarray(key).reshape(-1)[0]) & _MASK64
    c0, c1 = (int(w) & _MASK64 for w in np.asarray(counter).reshape(-1)[:2])
    return ((k & 0xFFFFFFFF, k >> 32),
            (c0 & 0xFFFFFFFF, c0 >> 32, c1 & 0xFFFFFFFF, c1 >> 32))


def philox(seed: np.ndarray) -> np.random.Generator:
    """The NumPy generator a seed's words key (negative words wrap, as unsigned 64-bit),
    for the draws whose TF algorithm is not reproduced (binomial, gamma, Poisson,
    parameterised truncated normal, index_shuffle): deterministic, not TF's numbers."""
    words = [int(w) & _MASK64 for w in np.asarray(seed).reshape(-1)]
    return np.random.Generator(np.random.Philox(np.random.SeedSequence(words)))


def _check_seed(seed: Any, size: int = 2) -> None:
    if seed.dtype not in SEED_DTYPES:
        raise ValueError(f"Value for attr 'Tseed' of {seed.dtype.name} is not in the list of "
                         f"allowed values: int32, int64 (argument `seed`)")
    dims = seed.shape.as_list() if seed.shape.rank is not None else None
    if dims is not None and None not in dims and dims != [size]:
        raise ValueError(f"seed must have shape [{size}], not [{','.join(map(str, dims))}]")


def _rule(shape: Any, seed: Any, *params: Any, dtype: _dtypes.DType) -> TensorSpec:
    """Output spec: the value of `shape`; parameters must broadcast to it."""
    _check_seed(seed)
    spec = shape_spec(shape, dtype)
    for param in params:
        if spec.shape.is_fully_defined() and param.shape.is_fully_defined() and \
                broadcast_shapes(param.shape, spec.shape) != spec.shape:
            raise ValueError(f"a parameter of shape {param.shape} does not broadcast to the "
                             f"output shape {spec.shape}")
    return spec


def _size(shape: np.ndarray) -> tuple:
    return tuple(int(d) for d in shape)


# ---------------------------------------------------------------- kernels

def _normal(shape: Any, seed: Any, *, dtype: _dtypes.DType) -> np.ndarray:
    return philox_draw("normal", key_counter(seed), shape, dtype)


def _uniform(shape: Any, seed: Any, *, dtype: _dtypes.DType) -> np.ndarray:
    return philox_draw("uniform", key_counter(seed), shape, dtype)


def _truncated(shape: Any, seed: Any, *, dtype: _dtypes.DType) -> np.ndarray:
    return philox_draw("truncated_normal", key_counter(seed), shape, dtype)


def check_int_bounds(lo: Any, hi: Any, op: str) -> None:
    if np.ndim(lo) or np.ndim(hi):
        raise errors.InvalidArgumentError(errors.with_location(
            f"minval must be 0-D, got shape {list(np.shape(lo))} and maxval shape "
            f"{list(np.shape(hi))} [Op:{op}]"))
    if int(lo) >= int(hi):
        raise errors.InvalidArgumentError(errors.with_location(
            f"Need minval < maxval: {int(lo)} >= {int(hi)} [Op:{op}]"))


def _uniform_int(shape: Any, seed: Any, minval: Any, maxval: Any, *,
                 dtype: _dtypes.DType) -> np.ndarray:
    check_int_bounds(minval, maxval, "StatelessRandomUniformInt")
    return philox_draw("uniform_int", key_counter(seed), shape, dtype, minval, maxval)


def _full_int(shape: Any, seed: Any, *, dtype: _dtypes.DType) -> np.ndarray:
    return philox_draw("full_int", key_counter(seed), shape, dtype)


# V2 kernels: the same draws from an explicit key [1] and counter [2] (int64 words)

def _normal_v2(shape: Any, key: Any, counter: Any, *, dtype: _dtypes.DType) -> np.ndarray:
    return philox_draw("normal", key_counter_v2(key, counter), shape, dtype)


def _uniform_v2(shape: Any, key: Any, counter: Any, *, dtype: _dtypes.DType) -> np.ndarray:
    return philox_draw("uniform", key_counter_v2(key, counter), shape, dtype)


def _truncated_v2(shape: Any, key: Any, counter: Any, *, dtype: _dtypes.DType) -> np.ndarray:
    return philox_draw("truncated_normal", key_counter_v2(key, counter), shape, dtype)


def _uniform_int_v2(shape: Any, key: Any, counter: Any, minval: Any, maxval: Any, *,
                    dtype: _dtypes.DType) -> np.ndarray:
    check_int_bounds(minval, maxval, "StatelessRandomUniformIntV2")
    return philox_draw("uniform_int", key_counter_v2(key, counter), shape, dtype, minval,
                       maxval)


def _full_int_v2(shape: Any, key: Any, counter: Any, *, dtype: _dtypes.DType) -> np.ndarray:
    return philox_draw("full_int", key_counter_v2(key, counter), shape, dtype)


def _binomial(shape: Any, seed: Any, counts: Any, probs: Any, *,
              dtype: _dtypes.DType) -> np.ndarray:
    size = _size(shape)
    n = np.broadcast_to(counts, size)
    p = np.broadcast_to(probs, size)
    if np.any(n < 0) or np.any((p < 0) | (p > 1)):
        raise errors.InvalidArgumentError(errors.with_location(
            "StatelessRandomBinomial: counts must be >= 0 and probs in [0, 1] "
            "[Op:StatelessRandomBinomial]"))
    draws = philox(seed).binomial(n.astype(np.int64), p.astype(np.float64), size)
    return draws.astype(dtype.as_numpy_dtype)


def _gamma(shape: Any, seed: Any, alpha: Any, *, dtype: _dtypes.DType) -> np.ndarray:
    size = _size(shape)
    a = np.broadcast_to(alpha, size).astype(np.float64)
    with np.errstate(invalid="ignore"):  # alpha <= 0 gives NaN, as TF's kernel does
        draws = philox(seed).standard_gamma(np.where(a > 0, a, 1.0), size)
    return np.where(a > 0, draws, np.nan).astype(dtype.as_numpy_dtype)


def _poisson(shape: Any, seed: Any, lam: Any, *, dtype: _dtypes.DType) -> np.ndarray:
    size = _size(shape)
    rate = np.broadcast_to(lam, size).astype(np.float64)
    if np.any(~(rate >= 0)):
        raise errors.InvalidArgumentError(errors.with_location(
            "StatelessRandomPoisson: lam must be >= 0 [Op:StatelessRandomPoisson]"))
    return philox(seed).poisson(rate, size).astype(dtype.as_numpy_dtype)


def _categorical_rule(logits: Any, num_samples: Any, seed: Any, *,
                      dtype: _dtypes.DType) -> TensorSpec:
    _check_seed(seed)
    if logits.shape.rank is not None and logits.shape.rank != 2:
        raise ValueError(f"logits should be a matrix, got shape {logits.shape}")
    batch = logits.shape[0] if logits.shape.rank is not None else None
    count = rules.constant_value(num_samples)
    return TensorSpec([batch, None if count is None else int(count)], dtype)


def _categorical(logits: Any, num_samples: Any, seed: Any, *,
                 dtype: _dtypes.DType) -> np.ndarray:
    if int(num_samples) < 0:
        raise errors.InvalidArgumentError(errors.with_location(
            f"num_samples should be nonnegative, got {int(num_samples)} "
            f"[Op:StatelessMultinomial]"))
    if logits.shape[-1] == 0:  # TF: nothing to draw from
        raise errors.InvalidArgumentError(errors.with_location(
            "StatelessMultinomial: num_classes (the last dim of `logits`) should be "
            "positive, got 0 [Op:StatelessMultinomial]"))
    return draw_categorical(key_counter(seed), logits, int(num_samples), dtype)


def _bounded_normal(shape: Any, seed: Any, means: Any, stddevs: Any, minvals: Any,
                    maxvals: Any, *, dtype: _dtypes.DType) -> np.ndarray:
    """Normal values redrawn until inside [minval, maxval]; after 64 rounds the stragglers
    (bounds far out in a tail) are drawn uniformly between the bounds."""
    size = _size(shape)
    mean, std, lo, hi = (np.broadcast_to(v, size).astype(np.float64).reshape(-1)
                         for v in (means, stddevs, minvals, maxvals))
    if np.any(lo >= hi):
        raise errors.InvalidArgumentError(errors.with_location(
            "minvals must be less than maxvals [Op:StatelessParameterizedTruncatedNormal]"))
    generator = philox(seed)
    out = mean + std * generator.standard_normal(mean.shape)
    bad = np.flatnonzero((out < lo) | (out > hi))
    for _ in range(64):
        if not bad.size:
            break
        out[bad] = mean[bad] + std[bad] * generator.standard_normal(bad.size)
        bad = bad[(out[bad] < lo[bad]) | (out[bad] > hi[bad])]
    if bad.size:
        out[bad] = generator.uniform(lo[bad], hi[bad])
    return out.reshape(size).astype(dtype.as_numpy_dtype)


def _shuffle(value: Any, seed: Any) -> np.ndarray:
    if value.ndim == 0:
        return value.copy()
    return value[philox_bits.permutation(*key_counter(seed), value.shape[0])]


STATELESS_NORMAL = defop("StatelessRandomNormal", shape=_rule, kernel=_normal,
                         same_dtype=False, dtypes=_SHAPE_DTYPES, check_eager=True)
STATELESS_UNIFORM = defop("StatelessRandomUniform", shape=_rule, kernel=_uniform,
                          same_dtype=False, dtypes=_SHAPE_DTYPES, check_eager=True)
STATELESS_TRUNCATED_NORMAL = defop("StatelessTruncatedNormal", shape=_rule, kernel=_truncated,
                                   same_dtype=False, dtypes=_SHAPE_DTYPES, check_eager=True)
STATELESS_UNIFORM_INT = defop("StatelessRandomUniformInt", shape=_rule, kernel=_uniform_int,
                              same_dtype=(2, 3), dtypes=_SHAPE_DTYPES, check_eager=True)
STATELESS_UNIFORM_FULL_INT = defop("StatelessRandomUniformFullInt", shape=_rule,
                                   kernel=_full_int, same_dtype=False, dtypes=_SHAPE_DTYPES,
                                   check_eager=True)
STATELESS_BINOMIAL = defop("StatelessRandomBinomial", shape=_rule, kernel=_binomial,
                           same_dtype=(2, 3), dtypes=_SHAPE_DTYPES, check_eager=True)
STATELESS_GAMMA = defop("StatelessRandomGammaV2", shape=_rule, kernel=_gamma,
                        same_dtype=False, dtypes=_SHAPE_DTYPES, check_eager=True)
STATELESS_POISSON = defop("StatelessRandomPoisson", shape=_rule, kernel=_poisson,
                          same_dtype=False, dtypes=_SHAPE_DTYPES, check_eager=True)
STATELESS_MULTINOMIAL = defop("StatelessMultinomial", shape=_categorical_rule,
                              kernel=_categorical, same_dtype=False, dtypes=_dtypes.FLOATS,
                              check_eager=True)
STATELESS_BOUNDED_NORMAL = defop("StatelessParameterizedTruncatedNormal", shape=_rule,
                                 kernel=_bounded_normal, same_dtype=(2, 3, 4, 5),
                                 dtypes=_SHAPE_DTYPES, check_eager=True)


def _rule_v2(shape: Any, key: Any, counter: Any, *params: Any,
             dtype: _dtypes.DType) -> TensorSpec:
    """Output spec of a V2 op: int64 key [1] and counter [2], then as _rule."""
    for what, value, size in (("key", key, 1), ("counter", counter, 2)):
        if value.dtype is not _dtypes.int64:
            raise ValueError(f"{what} must be int64, got {value.dtype.name}")
        dims = value.shape.as_list() if value.shape.rank is not None else None
        if dims is not None and None not in dims and dims != [size]:
            raise ValueError(f"{what} must have shape [{size}], not {dims}")
    return _rule(shape, convert_to_tensor(np.zeros(2, np.int64)), *params, dtype=dtype)


STATELESS_NORMAL_V2 = defop("StatelessRandomNormalV2", shape=_rule_v2, kernel=_normal_v2,
                            same_dtype=False, dtypes=_SHAPE_DTYPES, check_eager=True)
STATELESS_UNIFORM_V2 = defop("StatelessRandomUniformV2", shape=_rule_v2, kernel=_uniform_v2,
                             same_dtype=False, dtypes=_SHAPE_DTYPES, check_eager=True)
STATELESS_TRUNCATED_NORMAL_V2 = defop("StatelessTruncatedNormalV2", shape=_rule_v2,
                                      kernel=_truncated_v2, same_dtype=False,
                                      dtypes=_SHAPE_DTYPES, check_eager=True)
STATELESS_UNIFORM_INT_V2 = defop("StatelessRandomUniformIntV2", shape=_rule_v2,
                                 kernel=_uniform_int_v2, same_dtype=(3, 4),
                                 dtypes=_SHAPE_DTYPES, check_eager=True)
STATELESS_UNIFORM_FULL_INT_V2 = defop("StatelessRandomUniformFullIntV2", shape=_rule_v2,
                                      kernel=_full_int_v2, same_dtype=False,
                                      dtypes=_SHAPE_DTYPES, check_eager=True)


def _skip_rule(state: Any, delta: Any) -> TensorSpec:
    if state.dtype is not _dtypes.int64 or delta.dtype is not _dtypes.int64:
        raise ValueError("RngSkip: state and delta must be int64")
    return TensorSpec(state.shape, _dtypes.int64)


def _skip(state: Any, delta: Any) -> np.ndarray:
    """The Philox state [counter low, counter high, key] with the 128-bit counter moved on
    by `delta` blocks (carrying from the low word into the high one, as TF does)."""
    words = [int(w) & _MASK64 for w in np.asarray(state).reshape(-1)]
    if len(words) != 3:
        raise errors.InvalidArgumentError(errors.with_location(
            f"the Philox state must have 3 words, got {len(words)} [Op:RngSkip]"))
    counter = (words[0] | (words[1] << 64)) + (int(delta) & _MASK64)
    words[:2] = [counter & _MASK64, (counter >> 64) & _MASK64]
    return np.array(words, np.uint64).view(np.int64)


RNG_SKIP = defop("RngSkip", shape=_skip_rule, kernel=_skip, same_dtype=False,
                 check_eager=True)


def _shuffle_rule(value: Any, seed: Any) -> TensorSpec:
    _check_seed(seed)
    return TensorSpec(value.shape, value.dtype)


STATELESS_SHUFFLE = defop("StatelessShuffle", shape=_shuffle_rule, kernel=_shuffle,
                          same_dtype=False, check_eager=True)


# ---------------------------------------------------------------- public functions

def seed_tensor(seed: Any) -> Tensor:
    """A seed argument as an int tensor (lists of Python ints become int32, as in TF)."""
    seed = convert_to_tensor(seed)
    if seed.dtype not in SEED_DTYPES:
        raise errors.InvalidArgumentError(errors.with_location(
            f"Value for attr 'Tseed' of {seed.dtype.name} is not in the list of allowed "
            f"values: int32, int64 (argument `seed`)"))
    return seed


def _check_alg(alg: Any) -> None:
    """TF's `alg` values: None, "philox", "auto_select" (Philox on CPU), "threefry", the
    Algorithm enum or its ints. ThreeFry has no CPU kernel in TF: its draws fail there."""
    name = getattr(alg, "name", alg)
    name = name.lower() if isinstance(name, str) else name
    if name is None or name in ("philox", "auto_select", 1, 3):
        return
    if name in ("threefry", 2):
        raise errors.InvalidArgumentError(errors.with_location(
            "the ThreeFry algorithm has no CPU kernel (TF: \"counter must be a vector with "
            "length at least 2; got shape: [1]\") [Op:StatelessRandomUniformV2]"))
    raise ValueError(f"Argument `alg` got unsupported value {alg}. Supported values are "
                     f"philox for the Philox algorithm, threefry for the ThreeFry algorithm, "
                     f"and auto_select for auto-selection.")


def _is_number(value: Any, number: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == number


def shift_uniform(values: Tensor, minval: Any, maxval: Any) -> Tensor:
    """values * (maxval - minval) + minval with the bounds in values' dtype, as TF computes
    it (the difference is taken in that dtype, not in Python)."""
    dtype = values.dtype
    if _is_number(minval, 0) and (maxval is None or _is_number(maxval, 1)):
        return values  # x * 1 + 0 is x: skip two ops (and bfloat16 math)
    lo = convert_to_tensor(minval, dtype)
    hi = convert_to_tensor(1.0 if maxval is None else maxval, dtype)
    return add(multiply(values, hi - lo), lo)


def stateless_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                     dtype: Any = _dtypes.float32, name: Optional[str] = None,
                     alg: Any = "auto_select") -> Tensor:
    """Deterministic normal values: the same `seed` (shape [2] int32/int64) gives the same
    numbers.

    >>> import kilnflow as kf
    >>> a = kf.random.stateless_normal([3], seed=[1, 2])
    >>> bool(kf.reduce_all(a == kf.random.stateless_normal([3], seed=[1, 2])))
    True
    """
    _check_alg(alg)
    dtype = float_dtype(dtype, "random.stateless_normal")
    values = bind(STATELESS_NORMAL, (shape_argument(shape)[0], seed_tensor(seed)),
                  {"dtype": dtype}, name=name)
    return scale_and_shift(values, stddev, mean)


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                               dtype: Any = _dtypes.float32, name: Optional[str] = None,
                               alg: Any = "auto_select") -> Tensor:
    """Deterministic normal values redrawn when more than 2 stddevs from `mean`."""
    _check_alg(alg)
    dtype = float_dtype(dtype, "random.stateless_truncated_normal")
    values = bind(STATELESS_TRUNCATED_NORMAL, (shape_argument(shape)[0], seed_tensor(seed)),
                  {"dtype": dtype}, name=name)
    return scale_and_shift(values, stddev, mean)


def stateless_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None,
                      dtype: Any = _dtypes.float32, name: Optional[str] = None,
                      alg: Any = "auto_select") -> Tensor:
    """Deterministic uniform values in [minval, maxval).

    Integer dtypes need both bounds, or both None for the dtype's full range (uint32/uint64
    only take the full range), as in TF.
    """
    _check_alg(alg)
    dtype = _dtypes.as_dtype(dtype)
    shape_t = shape_argument(shape)[0]
    seed = seed_tensor(seed)
    if dtype.is_integer:
        if minval is None and maxval is None:
            if dtype not in _FULL_INT_DTYPES:
                raise TypeError(f"random.stateless_uniform: dtype {dtype.name} has no full-"
                                f"range sampling; use int32, int64, uint32 or uint64")
            return bind(STATELESS_UNIFORM_FULL_INT, (shape_t, seed), {"dtype": dtype},
                        name=name)
        if minval is None or maxval is None:
            raise ValueError(f"For integer `dtype` argument {dtype}, argument `minval` and "
                             f"`maxval` must be both None or not None. Got `minval`={minval} "
                             f"and `maxval`={maxval}.")
        if dtype not in SEED_DTYPES:
            raise TypeError(f"random.stateless_uniform: dtype {dtype.name} with bounds is not "
                            f"supported; use int32 or int64")
        lo, hi = convert_to_tensor(minval, dtype), convert_to_tensor(maxval, dtype)
        return bind(STATELESS_UNIFORM_INT, (shape_t, seed, lo, hi), {"dtype": dtype},
                    name=name)
    dtype = float_dtype(dtype, "random.stateless_uniform")
    values = bind(STATELESS_UNIFORM, (shape_t, seed), {"dtype": dtype}, name=name)
    return shift_uniform(values, minval, maxval)


def stateless_binomial(shape: Any, seed: Any, counts: Any, probs: Any,
                       output_dtype: Any = _dtypes.int32, name: Optional[str] = None) -> Tensor:
    """Deterministic binomial draws: successes in `counts` trials of probability `probs`
    (both broadcast to `shape`)."""
    counts = convert_to_tensor(counts)
    probs = convert_to_tensor(probs, counts.dtype)
    if not counts.dtype.is_floating and not counts.dtype.is_integer:
        raise TypeError("random.stateless_binomial: counts must be a number")
    return bind(STATELESS_BINOMIAL, (shape_argument(shape)[0], seed_tensor(seed), counts, probs),
                {"dtype": _dtypes.as_dtype(output_dtype)}, name=name)


def stateless_gamma(shape: Any, seed: Any, alpha: Any, beta: Any = None,
                    dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Tensor:
    """Deterministic Gamma(alpha, beta) draws (beta is the rate; both broadcast to `shape`).
    Not differentiable with respect to alpha here (TF's implicit gradient is not built)."""
    dtype = float_dtype(dtype, "random.stateless_gamma")
    alpha = convert_to_tensor(alpha, dtype)
    values = bind(STATELESS_GAMMA, (shape_argument(shape)[0], seed_tensor(seed), alpha),
                  {"dtype": dtype}, name=name)
    if beta is None:
        return values
    from kilnflow.ops.math import truediv
    return truediv(values, convert_to_tensor(beta, dtype))


def stateless_poisson(shape: Any, seed: Any, lam: Any, dtype: Any = _dtypes.int32,
                      name: Optional[str] = None) -> Tensor:
    """Deterministic Poisson draws with rate `lam` (broadcast to `shape`)."""
    lam = convert_to_tensor(lam)
    if not (lam.dtype.is_floating or lam.dtype in (_dtypes.int32, _dtypes.int64)):
        raise errors.InvalidArgumentError(errors.with_location(
            f"stateless_poisson: `lam` of dtype {lam.dtype.name} is not in the list of allowed "
            f"values: half, float, double, int32, int64 [Op:StatelessRandomPoisson]"))
    if not lam.dtype.is_floating:
        lam = cast(lam, _dtypes.float32)
    return bind(STATELESS_POISSON, (shape_argument(shape)[0], seed_tensor(seed), lam),
                {"dtype": _dtypes.as_dtype(dtype)}, name=name)


def stateless_categorical(logits: Any, num_samples: Any, seed: Any, dtype: Any = _dtypes.int64,
                          name: Optional[str] = None) -> Tensor:
    """Deterministic class indices [batch, num_samples] drawn from `logits` [batch, classes]."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in SEED_DTYPES:
        raise TypeError(f"random.stateless_categorical: dtype must be int32 or int64, got "
                        f"{dtype.name}")
    return bind(STATELESS_MULTINOMIAL, (convert_to_tensor(logits),
                                        convert_to_tensor(num_samples, _dtypes.int32),
                                        seed_tensor(seed)), {"dtype": dtype}, name=name)


def stateless_parameterized_truncated_normal(shape: Any, seed: Any, means: Any = 0.0,
                                             stddevs: Any = 1.0, minvals: Any = -2.0,
                                             maxvals: Any = 2.0,
                                             name: Optional[str] = None) -> Tensor:
    """Deterministic normal values with per-element mean, stddev and [minval, maxval]."""
    means = convert_to_tensor(means)
    if not means.dtype.is_floating:
        means = cast(means, _dtypes.float32)
    params = [means] + [convert_to_tensor(v, means.dtype) for v in (stddevs, minvals, maxvals)]
    return bind(STATELESS_BOUNDED_NORMAL, [shape_argument(shape)[0], seed_tensor(seed)] + params,
                {"dtype": means.dtype}, name=name)


def stateless_shuffle(value: Any, seed: Any, alg: Any = "auto_select",
                      name: Optional[str] = None) -> Tensor:
    """`value` with its first dimension deterministically permuted by `seed`."""
    _check_alg(alg)
    return bind(STATELESS_SHUFFLE, (convert_to_tensor(value), seed_tensor(seed)), name=name)


def stateless_split(seed: Any, num: int = 2, alg: Any = "auto_select") -> Tensor:
    """`num` new seeds, shape [num, 2], derived from `seed` (TF: random.split).

    >>> import kilnflow as kf
    >>> kf.random.split([1, 2], 3).shape
    TensorShape([3, 2])
    """
    _check_alg(alg)
    seed = seed_tensor(seed)
    return bind(STATELESS_UNIFORM_FULL_INT, (shape_argument([int(num), 2])[0], seed),
                {"dtype": seed.dtype})


def stateless_fold_in(seed: Any, data: Any, alg: Any = "auto_select") -> Tensor:
    """A new seed from `seed` and an integer `data` (TF: random.fold_in): [derived, data],
    in data's dtype (int32 for a Python int), derived being a full-range draw from `seed`."""
    _check_alg(alg)
    seed = seed_tensor(seed)
    data = convert_to_tensor(data)
    if data.dtype not in SEED_DTYPES:
        raise TypeError(f"random.fold_in: data must be int32 or int64, got {data.dtype.name}")
    derived = bind(STATELESS_UNIFORM_FULL_INT, (shape_argument([])[0], seed),
                   {"dtype": data.dtype})
    return stack([derived, data])


# ---------------------------------------------------------------- index_shuffle

def feistel_permute(index: np.ndarray, keys: np.ndarray, size: int) -> np.ndarray:
    """A bijection of [0, size): a 4-round Feistel network over the smallest even number of
    bits that holds size-1, cycle-walked until the value falls back inside the range, so any
    max_index works in O(1) memory (no permutation table)."""
    half = max(1, (max(size - 1, 1).bit_length() + 1) // 2)
    mask = np.uint64((1 << half) - 1)
    x = index.astype(np.uint64)
    todo = np.ones(x.shape, bool)
    while True:
        left, right = x >> np.uint64(half), x & mask
        for key in keys:
            mixed = (right ^ key) * np.uint64(0x9E3779B97F4A7C15)
            mixed ^= mixed >> np.uint64(29)
            left, right = right, (left ^ mixed) & mask
        y = (left << np.uint64(half)) | right
        x = np.where(todo, y, x)
        todo = x >= np.uint64(size)
        if not todo.any():
            return x


def _index_shuffle_rule(index: Any, seed: Any, max_index: Any) -> TensorSpec:
    if seed.dtype not in _FULL_INT_DTYPES:
        raise ValueError(f"seed must be an integer tensor, got {seed.dtype.name}")
    dims = seed.shape.as_list() if seed.shape.rank is not None else None
    if dims is not None and None not in dims and dims not in ([3], [1, 3]):
        raise ValueError(f"Seed must be a vector of size [3] or a matrix of size [1, 3] but "
                         f"got [{','.join(map(str, dims))}].")
    return TensorSpec(index.shape, index.dtype)


def _index_shuffle(index: Any, seed: Any, max_index: Any) -> np.ndarray:
    size = int(max_index) + 1
    if np.any(index < 0) or np.any(index >= size):
        raise errors.InvalidArgumentError(errors.with_location(
            f"index must be in [0, max_index={size - 1}] [Op:RandomIndexShuffle]"))
    keys = philox(seed).integers(0, 1 << 63, 4, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return feistel_permute(np.asarray(index), keys, size).astype(index.dtype)


RANDOM_INDEX_SHUFFLE = defop("RandomIndexShuffle", shape=_index_shuffle_rule,
                             kernel=_index_shuffle, same_dtype=(0, 2),
                             dtypes=_FULL_INT_DTYPES, check_eager=True)


def index_shuffle(index: Any, seed: Any, max_index: Any) -> Tensor:
    """The position of `index` in a pseudo-random permutation of [0, max_index] chosen by a
    shape [3] `seed`: a bijection, so distinct indices map to distinct positions.

    >>> import kilnflow as kf
    >>> out = kf.random.experimental.index_shuffle(kf.range(10), [1, 2, 3], 9)
    >>> sorted(out.numpy().tolist()) == list(range(10))
    True
    """
    index = convert_to_tensor(index)
    if not index.dtype.is_integer:
        raise TypeError(f"index_shuffle: index must be an integer tensor, got "
                        f"{index.dtype.name}")
    seed = convert_to_tensor(seed)
    return bind(RANDOM_INDEX_SHUFFLE, (index, seed, convert_to_tensor(max_index, index.dtype)))
