"""Random ops (kf.random.*): normal, uniform, truncated_normal and set_seed, with TF's seed rules.

A random op's state is a RandomStream attr: a Philox4x32-10 key and counter (TF's, from the
op's two seeds) owned by that op instance and hashable by identity; each run takes the
stream's current position and moves it on by 256 blocks per value, as TF's kernels reserve
their samples, so uniform, normal, truncated_normal and integer uniform give TF 2.21's own
numbers for the same (global seed, op seed). Eagerly, an op without an op seed takes one
from a Python `random.Random(global seed)`, as TF's eager context does. The public function creates it when called, so eagerly every call
gets a stream, and in a graph the stream is made once at build time and every run of the
compiled graph draws new numbers from it. Ops are flagged random=True: never folded or
CSE'd, always run. Imports ops.convert, ops.math, ops.opdef, ops.rules and context.
"""
from __future__ import annotations

import random as _pyrandom
import weakref
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.context import ctx
from kilnflow.core import rules
from kilnflow.ops import philox
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.math import add, cast, multiply
from kilnflow.core.opdef import bind, defop
from kilnflow.graph import register_attr_codec
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor

DEFAULT_GRAPH_SEED = 87654321  # TF's seed for ops that have an op seed but no global seed
_MAXINT32 = 2 ** 31 - 1
_INT_DTYPES = frozenset((_dtypes.int32, _dtypes.int64))


class RandomStream:
    """The state of one random op, compared and hashed by identity: the Philox key (the
    first seed) and counter (the second seed in its high half) TF builds from the op's
    seeds, and how many blocks earlier runs reserved. `seeds` is the (global seed, op seed)
    pair, or None for fresh OS entropy (different numbers on every run of the program).
    Ops TF's numbers are not reproduced for (gamma, Poisson, ...) use `generator`, a NumPy
    Generator from the same seeds.
    """

    __slots__ = ("seeds", "key", "counter", "position", "_generator", "__weakref__")

    def __init__(self, seeds: Optional[tuple]):
        self.seeds = seeds
        if seeds is None:
            seed, seed2 = (int(w) for w in np.random.SeedSequence().generate_state(2, np.uint64))
        else:
            seed, seed2 = (int(w) & (2 ** 64 - 1) for w in seeds)
        self.key = (seed & 0xFFFFFFFF, seed >> 32)
        self.counter = (0, 0, seed2 & 0xFFFFFFFF, seed2 >> 32)
        self.position = 0
        self._generator: Optional[np.random.Generator] = None

    @property
    def generator(self) -> np.random.Generator:
        if self._generator is None:
            self._generator = np.random.default_rng(
                None if self.seeds is None else list(self.seeds))
        return self._generator

    def reserve(self, count: int) -> tuple:
        """(key, counter) for a draw of `count` values; later draws start 256 * count
        blocks on (TF reserves that many samples per output value)."""
        return self.reserve_blocks(256 * int(count))

    def reserve_blocks(self, blocks: int) -> tuple:
        """(key, counter) at the current position; later draws start `blocks` on."""
        lo = (self.counter[0] | (self.counter[1] << 32)) + self.position
        hi = (self.counter[2] | (self.counter[3] << 32)) + (lo >> 64)
        lo &= 2 ** 64 - 1
        hi &= 2 ** 64 - 1
        self.position += int(blocks)
        return self.key, (lo & 0xFFFFFFFF, lo >> 32, hi & 0xFFFFFFFF, hi >> 32)

    def __repr__(self) -> str:
        return f"RandomStream(seeds={self.seeds})"


def _decode_stream(fields: dict, reader: Any) -> RandomStream:
    seeds = fields.get("seeds")
    return RandomStream(tuple(int(x) for x in seeds) if seeds else None)


register_attr_codec(
    "random", RandomStream,
    encode=lambda stream, writer: {"seeds": list(stream.seeds) if stream.seeds else None},
    decode=_decode_stream)


class _SeedState:
    """Process-wide seed bookkeeping, reset by set_seed."""

    def __init__(self) -> None:
        self.global_seed: Optional[int] = None
        # TF's eager context draws op seeds from a Python random.Random(global seed)
        self.eager_seeds = _pyrandom.Random(None)
        # Eager ops with an op seed reuse one stream per (op, seeds, dtype): calling
        # `uniform([1], seed=1)` twice continues one sequence (also with another shape), as
        # TF's cached kernel does; set_seed clears the cache as TF clears its kernel cache.
        self.eager_streams: dict = {}
        self.graph_op_counts: Any = weakref.WeakKeyDictionary()


_state = _SeedState()


def set_seed(seed: Optional[int]) -> None:
    """Sets the global random seed (TF's rules for combining it with op seeds).

    - no global seed, no op seed: fresh randomness on every call and every program run;
    - global seed only: each op created afterwards gets its own deterministic sequence;
    - op seed only: a default global seed is combined with the op seed;
    - both: both determine the sequence.
    Calling set_seed again restarts every sequence.

    >>> import kilnflow as kf
    >>> import kilnflow.random
    >>> kf.random.set_seed(7)
    >>> a = kf.random.uniform([2])
    >>> kf.random.set_seed(7)
    >>> bool(kf.reduce_all(a == kf.random.uniform([2])))
    True
    >>> kf.random.set_seed(None)
    """
    if seed is not None:
        seed = int(seed)
    _state.global_seed = seed
    _state.eager_seeds = _pyrandom.Random(seed)
    _state.eager_streams = {}
    _state.graph_op_counts = weakref.WeakKeyDictionary()


def get_seed(op_seed: Optional[int]) -> Optional[tuple]:
    """(global seed, op seed) for a new random op, or None for nondeterministic numbers."""
    graph = ctx.graph
    global_seed = getattr(graph, "seed", None) if graph is not None else None
    if global_seed is None:
        global_seed = _state.global_seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = _next_op_seed(graph)
        seeds = global_seed % _MAXINT32, int(op_seed) % _MAXINT32
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, int(op_seed) % _MAXINT32
    else:
        return None
    return (0, _MAXINT32) if seeds == (0, 0) else seeds  # (0, 0) would mean "no seed"


def _next_op_seed(graph: Any) -> int:
    """Eagerly the next number of the global seed's Python random.Random, as TF's eager
    context; in a graph a per-graph counter 0, 1, ..., as TF's function graphs count
    (so kf.function draws TF's numbers; TF1 Graphs use the last op's id instead, which
    kilnflow's graphs do not reproduce: there the numbers are not TF's)."""
    if graph is None:
        return _state.eager_seeds.randint(0, _MAXINT32)
    counts = _state.graph_op_counts
    try:
        n = counts.get(graph, 0)
        counts[graph] = n + 1
    except TypeError:  # a graph that cannot be weakly referenced: count on the object
        n = getattr(graph, "_kf_random_ops", 0)
        graph._kf_random_ops = n + 1
    return n


def _stream(kind: str, seed: Optional[int], key: tuple) -> RandomStream:
    seeds = get_seed(seed)
    if seeds is None:
        return RandomStream(None)
    if ctx.graph is None and seed is not None:
        cache_key = (kind, seeds) + key[1:]
        stream = _state.eager_streams.get(cache_key)
        if stream is None:
            stream = _state.eager_streams[cache_key] = RandomStream(seeds)
        return stream
    return RandomStream(seeds)


# ---------------------------------------------------------------- shape argument and rule

def shape_argument(shape: Any) -> tuple:
    """(int tensor, static key) for a shape argument: list, TensorShape or int tensor."""
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if isinstance(shape, (int, np.integer)):
        shape = [int(shape)]
    if isinstance(shape, Tensor):
        if shape.dtype not in _INT_DTYPES:
            raise TypeError(f"random: `shape` must be an int32 or int64 tensor, got "
                            f"{shape.dtype.name}")
        value = rules.constant_value(shape)
        key = tuple(int(d) for d in value.reshape(-1)) if value is not None else None
        return cast(shape, _dtypes.int32), key
    dims = [d for d in shape]
    if any(isinstance(d, Tensor) for d in dims):
        from kilnflow.ops.joining import stack
        return stack([cast(convert_to_tensor(d), _dtypes.int32) for d in dims]), None
    try:
        dims = [int(d) for d in dims]
    except TypeError:
        raise TypeError(f"random: `shape` must be a list of ints or an int tensor, got "
                        f"{shape!r}") from None
    if any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(errors.with_location(
            f"random: shape {dims} has a negative dimension"))
    return convert_to_tensor(dims, _dtypes.int32), tuple(dims)


def random_shape(shape: Any, *extra: Any, dtype: _dtypes.DType, stream: RandomStream) -> \
        TensorSpec:
    return shape_spec(shape, dtype)


def shape_spec(shape: Any, dtype: _dtypes.DType) -> TensorSpec:
    """The spec of a tensor whose shape is the value of 1-D int tensor `shape`."""
    value = rules.constant_value(shape)
    if value is not None:
        return TensorSpec([int(d) for d in value.reshape(-1)], dtype)
    if shape.shape.rank == 1 and shape.shape[0] is not None:
        return TensorSpec([None] * shape.shape[0], dtype)
    return TensorSpec(None, dtype)


def _size(shape: Any) -> tuple:
    return tuple(int(d) for d in shape)


def philox_draw(kind: str, key_counter: tuple, shape: Any, dtype: _dtypes.DType,
                minval: Any = None, maxval: Any = None) -> np.ndarray:
    """TF's values of shape `shape` for one Philox (key, counter): kind is "uniform",
    "normal", "truncated_normal", "uniform_int" (in [minval, maxval)) or "full_int"."""
    size = _size(shape)
    count = int(np.prod(size, dtype=np.int64))
    key, counter = key_counter
    np_dtype = dtype.as_numpy_dtype
    if kind == "uniform_int":
        flat = philox.uniform_int(key, counter, count, np_dtype, int(minval), int(maxval))
    else:
        flat = getattr(philox, kind)(key, counter, count, np_dtype)
    return flat.reshape(size)


def _stream_draw(kind: str, stream: RandomStream, shape: Any, dtype: _dtypes.DType,
                 *bounds: Any) -> np.ndarray:
    count = int(np.prod(_size(shape), dtype=np.int64))
    return philox_draw(kind, stream.reserve(count), shape, dtype, *bounds)


def _standard_normal(shape: Any, *, dtype: _dtypes.DType, stream: RandomStream) -> np.ndarray:
    return _stream_draw("normal", stream, shape, dtype)


def _uniform(shape: Any, *, dtype: _dtypes.DType, stream: RandomStream) -> np.ndarray:
    return _stream_draw("uniform", stream, shape, dtype)


def _uniform_int(shape: Any, minval: Any, maxval: Any, *, dtype: _dtypes.DType,
                 stream: RandomStream) -> np.ndarray:
    lo, hi = int(minval), int(maxval)
    if lo >= hi:
        raise errors.InvalidArgumentError(errors.with_location(
            f"Need minval < maxval: {lo} >= {hi} [Op:RandomUniformInt]"))
    return _stream_draw("uniform_int", stream, shape, dtype, lo, hi)


def _truncated_normal(shape: Any, *, dtype: _dtypes.DType, stream: RandomStream) -> np.ndarray:
    return _stream_draw("truncated_normal", stream, shape, dtype)


RANDOM_STANDARD_NORMAL = defop("RandomStandardNormal", shape=random_shape,
                               kernel=_standard_normal, random=True, same_dtype=False)
RANDOM_UNIFORM = defop("RandomUniform", shape=random_shape, kernel=_uniform, random=True,
                       same_dtype=False)
RANDOM_UNIFORM_INT = defop("RandomUniformInt", shape=random_shape, kernel=_uniform_int,
                           random=True, same_dtype=(1, 2))
TRUNCATED_NORMAL = defop("TruncatedNormal", shape=random_shape, kernel=_truncated_normal,
                         random=True, same_dtype=False)


# ---------------------------------------------------------------- public functions

def float_dtype(dtype: Any, what: str) -> _dtypes.DType:
    """`dtype` as a floating DType; TF's TypeError naming `what` otherwise."""
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"{what}: Value passed to parameter 'dtype' has DataType {dtype.name} "
                        f"not in list of allowed values: float16, float32, float64")
    return dtype


def scale_and_shift(values: Tensor, scale: Any, shift: Any) -> Tensor:
    """values * scale + shift, skipping the ops when scale is 1 and shift is 0 (Python)."""
    dtype = values.dtype
    if not (isinstance(scale, (int, float)) and scale == 1):
        values = multiply(values, convert_to_tensor(scale, dtype))
    if not (isinstance(shift, (int, float)) and shift == 0):
        values = add(values, convert_to_tensor(shift, dtype))
    return values


def normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = _dtypes.float32,
           seed: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """Outputs random values from a normal distribution with `mean` and `stddev`.

    >>> import kilnflow as kf
    >>> import kilnflow.random
    >>> kf.random.normal([2, 3], seed=1).shape
    TensorShape([2, 3])
    """
    dtype = float_dtype(dtype, "random.normal")
    shape_t, key = shape_argument(shape)
    stream = _stream("normal", seed, (key, dtype))
    values = bind(RANDOM_STANDARD_NORMAL, (shape_t,), {"dtype": dtype, "stream": stream},
                  name=name)
    return scale_and_shift(values, stddev, mean)


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
                     dtype: Any = _dtypes.float32, seed: Optional[int] = None,
                     name: Optional[str] = None) -> Tensor:
    """Normal values with `mean` and `stddev`, redrawn when more than 2 stddevs from `mean`."""
    dtype = float_dtype(dtype, "random.truncated_normal")
    shape_t, key = shape_argument(shape)
    stream = _stream("truncated_normal", seed, (key, dtype))
    values = bind(TRUNCATED_NORMAL, (shape_t,), {"dtype": dtype, "stream": stream}, name=name)
    return scale_and_shift(values, stddev, mean)


def uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = _dtypes.float32,
            seed: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """Uniform values in [minval, maxval); integer dtypes (int32, int64) need `maxval`.

    >>> import kilnflow as kf
    >>> import kilnflow.random
    >>> x = kf.random.uniform([100], 0, 10, dtype=kf.int32, seed=3)
    >>> bool(kf.reduce_all((x >= 0) & (x < 10)))
    True
    """
    dtype = _dtypes.as_dtype(dtype)
    shape_t, key = shape_argument(shape)
    if dtype in _INT_DTYPES:
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {dtype.name}")
        lo = convert_to_tensor(minval, dtype)
        hi = convert_to_tensor(maxval, dtype)
        stream = _stream("uniform_int", seed, (key, dtype))
        return bind(RANDOM_UNIFORM_INT, (shape_t, lo, hi), {"dtype": dtype, "stream": stream},
                    name=name)
    if not dtype.is_floating:
        raise TypeError(f"random.uniform: dtype {dtype.name} is not supported; use a float "
                        f"dtype, or int32/int64 with maxval")
    stream = _stream("uniform", seed, (key, dtype))
    values = bind(RANDOM_UNIFORM, (shape_t,), {"dtype": dtype, "stream": stream}, name=name)
    if maxval is None:
        maxval = 1.0
    # TF's arithmetic, in `dtype`: values * maxval when minval is 0, else
    # values * (maxval - minval) + minval
    hi = convert_to_tensor(maxval, dtype)
    if isinstance(minval, (int, float)) and minval == 0:
        return values if isinstance(maxval, (int, float)) and maxval == 1 else \
            multiply(values, hi)
    lo = convert_to_tensor(minval, dtype)
    return add(multiply(values, hi - lo), lo)


# ---------------------------------------------------------------- categorical, gamma, poisson...

def draw_categorical(key_counter: tuple, logits: np.ndarray, num_samples: int,
                     dtype: _dtypes.DType) -> np.ndarray:
    """Class indices [batch, num_samples] drawn as TF's CPU kernel draws them: per row, the
    running sum of exp(logit - max) over finite logits is the (unnormalised) CDF, and each
    sample is the first class whose CDF exceeds a uniform double (two stream words) times
    the total; -inf classes are never drawn. Rows read the stream one after another, as
    TF does when one thread does the whole batch (TF splits very large batches over
    threads, each starting further on: those draws are not reproduced)."""
    logits = np.asarray(logits, np.float64)
    batch, classes = logits.shape
    key, counter = key_counter
    words = philox.words(key, counter, 2 * batch * num_samples)
    uniforms = philox.uint64_to_double(words[0::2], words[1::2]).reshape(batch, num_samples)
    finite = np.isfinite(logits)
    top = np.max(np.where(finite, logits, -np.inf), axis=1, keepdims=True) if classes else \
        np.zeros((batch, 1))
    top = np.where(np.isfinite(top), top, np.finfo(np.float64).min)
    with np.errstate(over="ignore", invalid="ignore"):
        weights = np.where(finite, np.exp(logits - top), 0.0)
    cdf = np.cumsum(weights, axis=1)
    out = np.empty((batch, num_samples), dtype.as_numpy_dtype)
    for row in range(batch):
        total = cdf[row, -1] if classes else 0.0
        out[row] = np.searchsorted(cdf[row], uniforms[row] * total, side="right")
    return out


def _categorical_shape(logits: Any, num_samples: Any, *, dtype: _dtypes.DType,
                       stream: RandomStream) -> TensorSpec:
    if logits.shape.rank is not None and logits.shape.rank != 2:
        raise ValueError(f"logits should be a matrix, got shape {logits.shape}")
    batch = logits.shape[0] if logits.shape.rank is not None else None
    count = rules.constant_value(num_samples)
    return TensorSpec([batch, None if count is None else int(count)], dtype)


def _categorical(logits: Any, num_samples: Any, *, dtype: _dtypes.DType,
                 stream: RandomStream) -> np.ndarray:
    if int(num_samples) < 0:
        raise errors.InvalidArgumentError(errors.with_location(
            f"num_samples should be nonnegative, got {int(num_samples)} [Op:Multinomial]"))
    count = int(num_samples)
    # TF reserves 256 blocks per double drawn, for a sample count rounded up to 4
    reserved = logits.shape[0] * ((count + 3) // 4 * 4) * 2
    return draw_categorical(stream.reserve_blocks(256 * reserved), logits, count, dtype)


def _batched_shape(shape: Any, param: Any, *, dtype: _dtypes.DType,
                   stream: RandomStream) -> TensorSpec:
    """shape + param.shape: one draw of the requested shape per parameter value."""
    spec = shape_spec(shape, dtype)
    return TensorSpec(spec.shape.concatenate(param.shape), dtype)


def _gamma(shape: Any, alpha: Any, *, dtype: _dtypes.DType, stream: RandomStream) -> np.ndarray:
    a = alpha.astype(np.float64)
    size = _size(shape) + a.shape
    with np.errstate(invalid="ignore"):  # alpha <= 0 gives NaN, as TF's kernel does
        draws = stream.generator.standard_gamma(np.where(a > 0, a, 1.0), size)
    return np.where(a > 0, draws, np.nan).astype(dtype.as_numpy_dtype)


def _poisson(shape: Any, rate: Any, *, dtype: _dtypes.DType, stream: RandomStream) -> np.ndarray:
    rate = rate.astype(np.float64)
    if np.any(~(rate >= 0)):
        raise errors.InvalidArgumentError(errors.with_location(
            "random.poisson: lam must be >= 0 [Op:RandomPoissonV2]"))
    return stream.generator.poisson(rate, _size(shape) + rate.shape).astype(
        dtype.as_numpy_dtype)


def _shuffle(value: Any, *, stream: RandomStream) -> np.ndarray:
    if value.ndim == 0:
        return value.copy()
    rows = value.shape[0]
    # TF reserves one block per four of the rows - 1 words its swaps read
    key_counter = stream.reserve_blocks(max(0, (rows + 2) // 4))
    return value[philox.permutation(*key_counter, rows)]


MULTINOMIAL = defop("Multinomial", shape=_categorical_shape, kernel=_categorical, random=True,
                    same_dtype=False, dtypes=_dtypes.FLOATS, check_eager=True)
RANDOM_GAMMA = defop("RandomGamma", shape=_batched_shape, kernel=_gamma, random=True,
                     same_dtype=False)
RANDOM_POISSON = defop("RandomPoissonV2", shape=_batched_shape, kernel=_poisson, random=True,
                       same_dtype=False)
RANDOM_SHUFFLE = defop("RandomShuffle", shape=lambda value, *, stream: TensorSpec(
    value.shape, value.dtype), kernel=_shuffle, random=True)


def categorical(logits: Any, num_samples: Any, dtype: Any = None, seed: Optional[int] = None,
                name: Optional[str] = None) -> Tensor:
    """Class indices [batch, num_samples] drawn from unnormalized log-probabilities `logits`
    [batch, classes] (int64 unless `dtype` says int32).

    >>> import kilnflow as kf
    >>> kf.random.categorical(kf.math.log([[0.0, 1.0]]), 4).numpy().tolist()
    [[1, 1, 1, 1]]
    """
    dtype = _dtypes.int64 if dtype is None else _dtypes.as_dtype(dtype)
    if dtype not in _INT_DTYPES:
        raise TypeError(f"random.categorical: dtype must be int32 or int64, got {dtype.name}")
    logits = convert_to_tensor(logits)
    count = convert_to_tensor(num_samples, _dtypes.int32)
    stream = _stream("categorical", seed, (repr(logits.shape), dtype))
    return bind(MULTINOMIAL, (logits, count), {"dtype": dtype, "stream": stream}, name=name)


def gamma(shape: Any, alpha: Any, beta: Any = None, dtype: Any = _dtypes.float32,
          seed: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """Gamma(alpha, beta) draws of shape `shape + broadcast(alpha, beta).shape` (beta is the
    rate). Not differentiable with respect to alpha here."""
    dtype = float_dtype(dtype, "random.gamma")
    alpha = convert_to_tensor(alpha, dtype)
    if beta is not None:
        beta = convert_to_tensor(beta, dtype)
        alpha = add(alpha, multiply(beta, convert_to_tensor(0, dtype)))  # broadcast shapes
    shape_t, key = shape_argument(shape)
    stream = _stream("gamma", seed, (key, dtype))
    values = bind(RANDOM_GAMMA, (shape_t, alpha), {"dtype": dtype, "stream": stream}, name=name)
    if beta is None:
        return values
    from kilnflow.ops.math import truediv
    return truediv(values, beta)


def poisson(shape: Any, lam: Any, dtype: Any = _dtypes.float32, seed: Optional[int] = None,
            name: Optional[str] = None) -> Tensor:
    """Poisson draws of shape `shape + lam.shape` with rates `lam`."""
    dtype = _dtypes.as_dtype(dtype)
    lam = convert_to_tensor(lam)
    if not lam.dtype.is_floating:
        lam = cast(lam, _dtypes.float32)
    shape_t, key = shape_argument(shape)
    stream = _stream("poisson", seed, (key, dtype))
    return bind(RANDOM_POISSON, (shape_t, lam), {"dtype": dtype, "stream": stream}, name=name)


def shuffle(value: Any, seed: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """`value` with its first dimension randomly permuted."""
    value = convert_to_tensor(value)
    stream = _stream("shuffle", seed, (repr(value.shape), value.dtype))
    return bind(RANDOM_SHUFFLE, (value,), {"stream": stream}, name=name)
