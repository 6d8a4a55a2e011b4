"""Random ops under jit_compile=True: the Python runtime's Philox4x32-10 streams, compiled.

Every draw is a pure function of a Philox state, a uint64 array [counter low, counter
high, key] (TF's layout): the stateless ops derive it from their seed (scrambled as
ops/stateless_random.py does) or their V2 key and counter; a stateful op's RandomStream
(ops/random.py) is passed in and out like a variable (`StreamState` stands in for its
handle: read gives the stream's current counter, the write-back moves its position), and
the draw advances it by 256 blocks per value, as `RandomStream.reserve` does. The words
become values with ops/philox.py's conversions, so the bits equal the Python runtime's:
float32 normals round float64 log/sin/cos as it does (numba's libm equals NumPy's there,
checked over all 2**23 inputs); float64 normals take NumPy's own `np.log`, categorical
NumPy's `np.exp` (objmode calls: NumPy's AVX-512 versions differ from libm's in the last
bit). Shuffle and categorical follow philox.permutation and random.draw_categorical. float16 and bfloat16
draws, and the ops whose numbers come from a NumPy Generator (gamma, Poisson, binomial),
are not lowered. Rules read op attrs as data; the helpers need numba (imported lazily so
the rules load without it).
"""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from kilnflow import dtypes

try:
    import numba
    _njit = numba.njit(cache=True, error_model="numpy")
except ImportError:  # rules still answer lowerable(); compiled code needs numba anyway
    numba = None

    def _njit(fn: Any) -> Any:
        return fn

_MASK128 = (1 << 128) - 1
_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
_LOW, _S32 = np.uint64(0xFFFFFFFF), np.uint64(32)
_ONE, _ZERO = np.uint64(1), np.uint64(0)
_SCRAMBLE = np.uint64(0x3EC8F720 | (0x02461E29 << 32))  # the key seeds are hashed with
_STEP = 256  # blocks a stateful op reserves per value


# ---------------------------------------------------------------- Philox and words

@_njit
def _blocks(state, first, count, out, at):
    """Blocks first .. first+count-1 of the state's stream into out[at:at + 4 * count].
    The round keys are computed once, so LLVM unrolls the rounds and vectorizes the loop
    over blocks (0.6 ms for 1M words, against 8.5 ms calling a per-block function)."""
    keys = np.empty(20, np.uint64)
    k0, k1 = state[2] & _LOW, state[2] >> _S32
    for r in range(10):
        keys[2 * r], keys[2 * r + 1] = k0, k1
        k0, k1 = (k0 + _W0) & _LOW, (k1 + _W1) & _LOW
    base, high = state[0] + np.uint64(first), state[1]
    if base < state[0]:
        high += _ONE
    for n in range(count):
        lo = base + np.uint64(n)
        hi = high + (_ONE if lo < base else _ZERO)
        c0, c1, c2, c3 = lo & _LOW, lo >> _S32, hi & _LOW, hi >> _S32
        for r in range(10):
            p0, p1 = _M0 * c0, _M1 * c2
            c0, c1, c2, c3 = (p1 >> _S32) ^ c1 ^ keys[2 * r], p1 & _LOW, \
                (p0 >> _S32) ^ c3 ^ keys[2 * r + 1], p0 & _LOW
        i = at + 4 * n
        out[i], out[i + 1], out[i + 2], out[i + 3] = c0, c1, c2, c3


@_njit
def _words(state, count):
    """The stream's first `count` uint32 words, in TF's reading order."""
    blocks = (count + 3) // 4
    out = np.empty(4 * blocks, np.uint32)
    _blocks(state, 0, blocks, out, 0)
    return out[:count]


@_njit
def advance(state, blocks):
    """Moves the 128-bit counter on by `blocks` (a stateful op's reservation)."""
    lo = state[0] + np.uint64(blocks)
    if lo < state[0]:
        state[1] += _ONE
    state[0] = lo


@_njit
def count(shape):
    n = 1
    for d in shape:
        if d < 0:
            raise ValueError("random: the shape has a negative dimension")
        n *= np.int64(d)
    return n


@_njit
def seed_state(seed):
    """A stateless seed's state: its two words (sign-extended) hashed by one block."""
    s = np.empty(3, np.uint64)
    s[0], s[1], s[2] = np.uint64(np.int64(seed[0])), np.uint64(np.int64(seed[1])), _SCRAMBLE
    w = np.empty(4, np.uint32)
    _blocks(s, 0, 1, w, 0)
    s[0], s[1], s[2] = _ZERO, np.uint64(w[2]) | (np.uint64(w[3]) << _S32), \
        np.uint64(w[0]) | (np.uint64(w[1]) << _S32)
    return s


@_njit
def v2_state(key, counter):
    s = np.empty(3, np.uint64)
    s[0], s[1], s[2] = np.uint64(counter[0]), np.uint64(counter[1]), np.uint64(key[0])
    return s


@_njit
def rng_skip(state, delta):
    """RngSkip: the int64 Philox state [counter low, counter high, key] moved on by delta."""
    s = np.empty(3, np.uint64)
    for i in range(3):
        s[i] = np.uint64(state[i])
    advance(s, np.uint64(delta))
    out = np.empty(3, np.int64)
    for i in range(3):
        out[i] = np.int64(s[i])
    return out


# ---------------------------------------------------------------- words -> values

@_njit
def _floats(w):
    """[0, 1) float32 from each word's low 23 bits (a float in [1, 2) minus 1), in place."""
    for i in range(w.size):
        w[i] = (w[i] & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)
    values = w.view(np.float32)
    for i in range(values.size):
        values[i] -= np.float32(1.0)
    return values


@_njit
def _doubles(w):
    """[0, 1) float64 from word pairs: 20 bits of the first, 32 of the second."""
    bits = np.empty(w.size // 2, np.uint64)
    for i in range(bits.size):
        bits[i] = np.uint64(w[2 * i + 1]) | ((np.uint64(w[2 * i]) & np.uint64(0xFFFFF)) <<
                                             _S32) | np.uint64(0x3FF0000000000000)
    return bits.view(np.float64) - 1.0


@_njit
def _numpy_log(x):
    with numba.objmode(y="float64[:]"):  # NumPy's SIMD log: the Python runtime's bits
        y = np.log(x)
    return y


@_njit
def _box_muller(w, wide):
    """Normals of words w (float64 array; float32 values when not wide): two per word pair
    in float32 math, or two per four words in float64 (ops/philox.py's box_muller_*)."""
    if wide:
        u = _doubles(w)
        u1 = np.maximum(u[0::2], 1.0e-12)
        radius = np.sqrt(-2.0 * _numpy_log(u1))
        out = np.empty(u.size)
        for i in range(u1.size):
            v = 2.0 * np.pi * u[2 * i + 1]
            out[2 * i], out[2 * i + 1] = radius[i] * np.sin(v), radius[i] * np.cos(v)
        return out
    u = _floats(w)
    out = np.empty(u.size)
    for i in range(u.size // 2):
        u1 = max(u[2 * i], np.float32(1.0e-7))
        v = np.float64(np.float32(np.float64(2.0 * np.pi) * np.float64(u[2 * i + 1])))
        radius = np.float32(np.sqrt(np.float32(-2.0) * np.float32(np.log(np.float64(u1)))))
        out[2 * i] = np.float32(radius * np.float32(np.sin(v)))
        out[2 * i + 1] = np.float32(radius * np.float32(np.cos(v)))
    return out


# ---------------------------------------------------------------- distributions

@_njit
def uniform_f32(state, n):
    return _floats(_words(state, n))


@_njit
def uniform_f64(state, n):
    return _doubles(_words(state, 2 * n))


@_njit
def normal(state, n, wide):
    per = 4 if wide else 2  # words per pair of values
    return _box_muller(_words(state, per * ((n + 1) // 2)), wide)[:n]


@_njit
def truncated_normal(state, n, wide):
    """Normals inside (-2, 2) by rejection, in TF's groups (ops/philox.py): group g reads
    blocks from 64 * size * g on and keeps its first `size` values below 2 in magnitude."""
    size = 2 if wide else 4
    groups = (n + size - 1) // size
    out = np.empty(groups * size)
    filled = np.zeros(groups, np.int64)
    todo = np.arange(groups)
    used = 0
    while todo.size:
        w = np.empty(4 * todo.size * 2, np.uint32)
        for t in range(todo.size):  # two blocks per unfinished group and round
            _blocks(state, 64 * size * todo[t] + used, 2, w, 8 * t)
        values = _box_muller(w, wide)
        per = values.size // todo.size
        for t in range(todo.size):
            g = todo[t]
            for j in range(per):
                v = values[per * t + j]
                if filled[g] < size and abs(v) < 2.0:
                    out[g * size + filled[g]] = v
                    filled[g] += 1
        todo = todo[filled[todo] < size]
        used += 2
    return out[:n]


@_njit
def full_int(state, n, wide):
    """Integers over a 32-bit (one word) or 64-bit (two words, low first) range, as uint64."""
    if not wide:
        return _words(state, n).astype(np.uint64)
    w = _words(state, 2 * n)
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = np.uint64(w[2 * i]) | (np.uint64(w[2 * i + 1]) << _S32)
    return out


@_njit
def uniform_int(state, n, low, high, wide):
    """low + (bits mod (high - low)), wrapping as C does; raises on an empty range."""
    if low >= high:
        raise ValueError("Need minval < maxval")
    bits = full_int(state, n, wide)
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) if wide else _LOW
    span = np.uint64(np.int64(high) - np.int64(low)) & mask
    base = np.uint64(np.int64(low)) & mask
    for i in range(n):
        bits[i] = (bits[i] % span + base) & mask
    return bits


@_njit
def some_classes(logits, state):
    if logits.shape[1] == 0:
        raise ValueError("StatelessMultinomial: num_classes should be positive, got 0")
    return state


@_njit
def stateful(state, n, values):
    """A stateful op's draw: `values` were drawn at the state; reserve 256 per value."""
    advance(state, _STEP * n)
    return values


@_njit
def shuffle(state, value, stateful):
    """value with its rows permuted as TF shuffles: swap row i with row i + (word i mod
    (rows - i)), in order; a stateful op reserves one block per four rows (rounded)."""
    rows = value.shape[0]
    perm = np.arange(rows)
    if rows > 1:
        w = _words(state, rows - 1)
        for i in range(rows - 1):
            j = i + np.int64(w[i]) % (rows - i)
            perm[i], perm[j] = perm[j], perm[i]
    if stateful:
        advance(state, (rows + 2) // 4)
    return value[perm]


@_njit
def _numpy_exp(x):
    with numba.objmode(y="float64[:, :]"):  # NumPy's SIMD exp, as for the log above
        y = np.exp(x)
    return y


@_njit
def categorical(state, logits, count, stateful):
    """Class indices [batch, count] as ops/random.py's draw_categorical: per row, the first
    class whose running sum of exp(logit - max) over finite logits exceeds a uniform
    double times the total."""
    if count < 0:
        raise ValueError("num_samples should be nonnegative")
    batch, classes = logits.shape
    u = _doubles(_words(state, 2 * batch * count))
    x = logits.astype(np.float64)
    finite = np.isfinite(x)
    shifted = np.zeros((batch, classes))
    for r in range(batch):
        top = -np.inf
        for c in range(classes):
            if finite[r, c] and x[r, c] > top:
                top = x[r, c]
        top = top if np.isfinite(top) else np.finfo(np.float64).min
        for c in range(classes):
            if finite[r, c]:
                shifted[r, c] = x[r, c] - top
    weights = _numpy_exp(shifted)
    out = np.empty((batch, count), np.int64)
    for r in range(batch):
        cdf = np.cumsum(np.where(finite[r], weights[r], 0.0))
        total = cdf[classes - 1] if classes else 0.0
        for k in range(count):
            out[r, k] = np.searchsorted(cdf, u[r * count + k] * total, side="right")
    if stateful:  # 256 blocks per double, for a sample count rounded up to 4
        advance(state, _STEP * batch * ((count + 3) // 4 * 4) * 2)
    return out


# ---------------------------------------------------------------- the Python side

class StreamState:
    """A RandomStream as a jit 'variable': read() gives [counter low, counter high, key]
    at the stream's position; assigning the advanced array moves the position on."""

    dtype = dtypes.uint64
    name = "random_stream"

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def _counter(self) -> int:
        c = self.stream.counter
        return (c[0] | c[1] << 32 | c[2] << 64 | c[3] << 96) + self.stream.position

    def read(self) -> np.ndarray:
        now = self._counter() & _MASK128
        key = self.stream.key[0] | self.stream.key[1] << 32
        return np.array([now & (2 ** 64 - 1), now >> 64, key], np.uint64)

    @property
    def value(self) -> np.ndarray:
        return self.read()

    @value.setter
    def value(self, state: np.ndarray) -> None:
        new = int(state[0]) | int(state[1]) << 64
        self.stream.position += (new - self._counter()) & _MASK128


def _unsupported(reason: str) -> Any:
    from kilnflow.runtime.jit.lower import Unsupported
    return Unsupported(reason)


def _draw(op: Any, state: str, shape: str, bounds: List[str]) -> Optional[str]:
    """The expression drawing op's output from Philox state `state`."""
    out = op.outputs[0]
    kind = np.dtype(out.dtype.as_numpy_dtype)
    n = f"kf_random.count({shape})"
    kind_name = op.type.replace("Stateless", "").replace("V2", "").replace("Random", "")
    if kind_name in ("Uniform", "Normal", "TruncatedNormal", "StandardNormal"):
        if kind not in (np.float32, np.float64):
            raise _unsupported(f"{kind.name} draws are left to the Python runtime (numba "
                               f"has no {kind.name} arithmetic)")
        wide = kind == np.float64
        if kind_name == "Uniform":
            flat = f"kf_random.uniform_f{kind.itemsize * 8}({state}, {n})"
        else:
            name = "truncated_normal" if kind_name == "TruncatedNormal" else "normal"
            flat = f"kf_random.{name}({state}, {n}, {wide}).astype(np.{kind.name})"
    elif kind_name in ("UniformInt", "UniformFullInt"):
        if kind.kind not in "iu" or kind.itemsize not in (4, 8):
            raise _unsupported(f"integer draws of {kind.name}")
        wide = kind.itemsize == 8
        unsigned = np.dtype(f"uint{kind.itemsize * 8}").name
        if kind_name == "UniformInt":
            flat = f"kf_random.uniform_int({state}, {n}, {bounds[0]}, {bounds[1]}, {wide})"
        else:
            flat = f"kf_random.full_int({state}, {n}, {wide})"
        flat = f"{flat}.astype(np.{unsigned}).view(np.{kind.name})"
    else:
        return None
    if any(t.shape.rank != 0 for t in op.inputs[len(op.inputs) - len(bounds):]):
        raise _unsupported("minval and maxval must be scalars")
    if op.opdef.random:
        flat = f"kf_random.stateful({state}, {n}, {flat})"
    rank = out.shape.rank
    if rank == 0:
        return f"{flat}[0]"
    dims = ", ".join(f"np.intp({shape}[{d}])" for d in range(rank))
    return f"{flat}.reshape(({dims},))"


def _special(op: Any, args: List[str], state: str) -> Optional[str]:
    """Shuffle and categorical: other inputs than a shape, their own reservations."""
    stateful = bool(op.opdef.random)
    if op.type.endswith("Shuffle"):
        if op.inputs[0].shape.rank == 0:
            return args[0]
        return f"kf_random.shuffle({state}, {args[0]}, {stateful})"
    logits = op.inputs[0]
    if np.dtype(logits.dtype.as_numpy_dtype) not in (np.float32, np.float64) or \
            logits.shape.rank != 2:
        raise _unsupported(f"categorical over {logits.dtype.name} logits")
    if not stateful:  # the Python kernel's own check
        state = f"kf_random.some_classes({args[0]}, {state})"
    draw = f"kf_random.categorical({state}, {args[0]}, np.int64({args[1]}), {stateful})"
    return f"{draw}.astype({_np_text(op.outputs[0].dtype)})"


def _np_text(dtype: Any) -> str:
    return f"np.{np.dtype(dtype.as_numpy_dtype).name}"


def _stateless(op: Any, args: List[str]) -> Optional[str]:
    if op.type in ("StatelessShuffle", "StatelessMultinomial"):
        return _special(op, args, f"kf_random.seed_state({args[-1]})")
    if op.type.endswith("V2"):  # shape, key [1], counter [2], bounds
        return _draw(op, f"kf_random.v2_state({args[1]}, {args[2]})", args[0], args[3:])
    return _draw(op, f"kf_random.seed_state({args[1]})", args[0], args[2:])


def _stateful(op: Any, args: List[str], lo: Any) -> Optional[str]:
    """A RandomStream op: the stream's state is an argument and a result of the compiled
    function (one per stream, however many times the op is emitted)."""
    streams = lo.__dict__.setdefault("random_streams", {})
    stream = op.attrs["stream"]
    handle = streams.setdefault(id(stream), StreamState(stream))
    lo.assigned[id(handle)] = handle
    if op.type in ("RandomShuffle", "Multinomial"):
        return _special(op, args, lo.variable(handle))
    return _draw(op, lo.variable(handle), args[0], args[1:])


def _rng_skip(op: Any, args: List[str]) -> str:
    return f"kf_random.rng_skip({args[0]}, {args[1]})"


_stateful.with_lowering = True
RULES = {name: _stateless for name in (
    "StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal",
    "StatelessRandomUniformInt", "StatelessRandomUniformFullInt", "StatelessRandomUniformV2",
    "StatelessRandomNormalV2", "StatelessTruncatedNormalV2", "StatelessRandomUniformIntV2",
    "StatelessRandomUniformFullIntV2", "StatelessShuffle", "StatelessMultinomial")}
RULES.update({name: _stateful for name in ("RandomUniform", "RandomStandardNormal",
                                           "TruncatedNormal", "RandomUniformInt",
                                           "RandomShuffle", "Multinomial")})
RULES["RngSkip"] = _rng_skip
