"""kf.random.Generator: a random number generator whose state is an int64 Variable.

The state has TF's Philox layout: a 128-bit counter in two int64 words, then a 64-bit key.
Each draw reads the state, calls a V2 stateless op with that key and counter (no seed
scrambling: TF's stateful kernels use the state as is, so uniform, normal, truncated_normal,
uniform_full_int, integer uniform and split give TF 2.21's numbers) and advances the counter
by 256 per value drawn (TF's step), all with public ops: eagerly the state moves at once; in a kf.function the
read, draw and update are ops that run on every call, in program order, so every call draws
new numbers. The global generator is created outside any function on first use.
Imports variables, context, ops.stateless_random, ops.random, ops.math, ops.joining.
"""
from __future__ import annotations

import enum
from typing import Any, List, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.context import ctx, eager_mode
from kilnflow.ops import stateless_random as _stateless
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import stack
from kilnflow.core.opdef import bind
from kilnflow.ops.math import cast, multiply
from kilnflow.ops.random import float_dtype, scale_and_shift, shape_argument
from kilnflow.tensor import Tensor, is_symbolic
from kilnflow.variables import Variable

_MASK64 = (1 << 64) - 1
_STATE_SIZE = 3
_STEP = 256  # counter increase per value drawn (what TF's Philox generator advances by)


class Algorithm(enum.Enum):
    """Random algorithms TF names. AUTO_SELECT is Philox on CPU; ThreeFry has no CPU kernel
    in TF (its generators can be made, their draws fail)."""
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _algorithm(alg: Any) -> int:
    """TF's int for an algorithm: None and "philox" are 1, "threefry" 2, "auto_select" 3."""
    if alg is None:
        return Algorithm.PHILOX.value
    value = alg.value if isinstance(alg, Algorithm) else alg
    if isinstance(value, str):
        value = {"philox": 1, "threefry": 2, "auto_select": 3}.get(value.lower(), value)
    if value in (1, 2, 3):
        return int(value)
    raise ValueError(f"Argument `alg` got unsupported value {alg}. Supported values are "
                     f"philox for the Philox algorithm, threefry for the ThreeFry algorithm, "
                     f"and auto_select for auto-selection.")


def _state_size(alg: int) -> int:
    return 2 if alg == Algorithm.THREEFRY.value else _STATE_SIZE


def _as_int64(word: int) -> int:
    word &= _MASK64
    return word - (1 << 64) if word >= 1 << 63 else word


def create_rng_state(seed: Any, alg: Any) -> Tensor:
    """The int64 state a Generator starts from for `seed`, laid out as TF does: an int is
    cut into 64-bit words, lowest first, as many as the state holds (a negative int's
    higher words are -1); a list of words is left-padded with zeros or cut to the state
    size (3 for Philox, 2 for ThreeFry).

    >>> import kilnflow as kf
    >>> kf.random.create_rng_state(1234, "philox").numpy().tolist()
    [1234, 0, 0]
    """
    size = _state_size(_algorithm(alg))
    if isinstance(seed, Tensor):
        seed = seed.numpy()
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        seed = int(seed)
        words = []
        for _ in range(size):
            words.append(seed & _MASK64)
            seed >>= 64
    else:
        words = [int(w) for w in np.asarray(seed).reshape(-1)]
        words = ([0] * (size - len(words)) + words)[:size]
    return convert_to_tensor(np.array([_as_int64(w) for w in words], np.int64))


def _entropy_state(alg: int = 1) -> np.ndarray:
    """A fresh state from OS entropy (counter 0, random key)."""
    key = int(np.random.SeedSequence().generate_state(2, np.uint64)[0])
    return np.array([0] * (_state_size(alg) - 1) + [_as_int64(key)], np.int64)


class Generator:
    """A random number generator with its state in a Variable (TF's tf.random.Generator).

    >>> import kilnflow as kf
    >>> g = kf.random.Generator.from_seed(1234)
    >>> g.normal([2, 3]).shape
    TensorShape([2, 3])
    >>> g.state.numpy().tolist()   # 6 values drawn: the counter moved by 6 * 256
    [2770, 0, 0]
    """

    def __init__(self, copy_from: Optional["Generator"] = None, state: Any = None,
                 alg: Any = None):
        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("random.Generator: give copy_from, or state and alg, not both")
            state = copy_from.state.read_value()
            alg = copy_from.algorithm
        self._alg = _algorithm(alg)
        if state is None:
            state = _entropy_state(self._alg)
        state = self._checked_state(state)
        self._state_var = Variable(state, trainable=False, name="StateVar")

    def _checked_state(self, state: Any) -> Any:
        state = convert_to_tensor(state, _dtypes.int64)
        size = _state_size(self._alg)
        if state.shape.rank is not None and state.shape.as_list() != [size]:
            raise ValueError(f"random.Generator: the state must have shape [{size}], got "
                             f"{state.shape}")
        return state

    # ---------------------------------------------------------------- constructors

    @classmethod
    def from_seed(cls, seed: Any, alg: Any = None) -> "Generator":
        """A generator whose state is create_rng_state(seed, alg)."""
        return cls(state=create_rng_state(seed, _algorithm(alg)), alg=_algorithm(alg))

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> "Generator":
        """A generator seeded from OS entropy: different numbers on every run."""
        return cls(state=_entropy_state(_algorithm(alg)), alg=alg)

    @classmethod
    def from_state(cls, state: Any, alg: Any) -> "Generator":
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key: Any, counter: Any, alg: Any) -> "Generator":
        """A generator with state [counter[0], counter[1], key] (Philox's layout)."""
        return cls(state=cls._key_counter_state(key, counter), alg=alg)

    @staticmethod
    def _key_counter_state(key: Any, counter: Any) -> Any:
        key = np.asarray(key.numpy() if isinstance(key, Tensor) else key).reshape(-1)
        counter = np.asarray(counter.numpy() if isinstance(counter, Tensor) else counter)
        counter = counter.reshape(-1)
        if key.size != 1 or counter.size != 2:
            raise ValueError("random.Generator: a Philox key has 1 word and a counter 2, got "
                             f"{key.size} and {counter.size}")
        return np.array([counter[0], counter[1], key[0]], np.int64)

    # ---------------------------------------------------------------- state

    @property
    def state(self) -> Variable:
        """The int64 state Variable: [counter, 0, key]."""
        return self._state_var

    @property
    def algorithm(self) -> int:
        return self._alg

    @property
    def key(self) -> Tensor:
        return self._state_var.read_value()[-1]

    def reset(self, state: Any) -> None:
        self._state_var.assign(self._checked_state(state))

    def reset_from_seed(self, seed: Any) -> None:
        self.reset(create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key: Any, counter: Any) -> None:
        self.reset(self._key_counter_state(key, counter))

    def skip(self, delta: Any) -> Tensor:
        """Advances the counter as if `delta` values had been drawn; returns the old state."""
        old = self._state_var.read_value()
        step = multiply(cast(convert_to_tensor(delta), _dtypes.int64),
                        convert_to_tensor(np.int64(_STEP)))
        self._state_var.assign(bind(_stateless.RNG_SKIP, (old, step)))
        return old

    def _checkpoint_children(self) -> list:
        """What a kf.train.Checkpoint saves: the state, under TF's name for it."""
        return [("_state_var", self._state_var)]

    def _advance(self, shape: Any) -> tuple:
        """(shape tensor, key [1], counter [2]) for one draw; advances the counter by 256
        per value (TF's stateful kernels reserve that many blocks per output value)."""
        if self._alg == Algorithm.THREEFRY.value:
            raise errors.UnimplementedError(
                "Non-XLA devices don't support the ThreeFry algorithm. [Op:RngReadAndSkip]")
        shape_t, static = shape_argument(shape)
        state = self._state_var.read_value()
        if static is not None:
            count: Any = convert_to_tensor(np.int64(_STEP * int(np.prod(static, dtype=np.int64))))
        else:
            from kilnflow.ops.reduction import reduce_prod
            count = multiply(cast(reduce_prod(shape_t), _dtypes.int64),
                             convert_to_tensor(np.int64(_STEP)))
        self._state_var.assign(bind(_stateless.RNG_SKIP, (state, count)))
        return shape_t, state[2:3], state[0:2]

    def _next_seed(self, shape: Any) -> tuple:
        """(shape tensor, seed [key, counter]) for the draws that go through a seeded
        stateless op (binomial: not TF's numbers)."""
        shape_t, key, counter = self._advance(shape)
        return shape_t, stack([key[0], counter[0]])

    def _draw(self, op: Any, shape: Any, dtype: _dtypes.DType, *bounds: Any,
              name: Optional[str] = None) -> Tensor:
        shape_t, key, counter = self._advance(shape)
        return bind(op, (shape_t, key, counter) + bounds, {"dtype": dtype}, name=name)

    # ---------------------------------------------------------------- draws

    def normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
               dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Tensor:
        """Normal values with `mean` and `stddev`."""
        dtype = float_dtype(dtype, "random.Generator.normal")
        values = self._draw(_stateless.STATELESS_NORMAL_V2, shape, dtype, name=name)
        return scale_and_shift(values, stddev, mean)

    def truncated_normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
                         dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Tensor:
        """Normal values redrawn when more than 2 stddevs from `mean`."""
        dtype = float_dtype(dtype, "random.Generator.truncated_normal")
        values = self._draw(_stateless.STATELESS_TRUNCATED_NORMAL_V2, shape, dtype, name=name)
        return scale_and_shift(values, stddev, mean)

    def uniform(self, shape: Any, minval: Any = 0, maxval: Any = None,
                dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Tensor:
        """Uniform values in [minval, maxval); integer dtypes need `maxval` (or both bounds
        None for the full range)."""
        dtype = _dtypes.as_dtype(dtype)
        if dtype.is_integer:
            if minval is None and maxval is None:
                return self.uniform_full_int(shape, dtype, name)
            if maxval is None:
                raise ValueError(f"random.Generator.uniform: must specify maxval for integer "
                                 f"dtype {dtype.name}")
            if dtype not in _stateless.SEED_DTYPES:
                raise TypeError(f"random.Generator.uniform: dtype {dtype.name} with bounds "
                                f"is not supported; use int32 or int64")
            lo = convert_to_tensor(0 if minval is None else minval, dtype)
            return self._draw(_stateless.STATELESS_UNIFORM_INT_V2, shape, dtype, lo,
                              convert_to_tensor(maxval, dtype), name=name)
        dtype = float_dtype(dtype, "random.Generator.uniform")
        values = self._draw(_stateless.STATELESS_UNIFORM_V2, shape, dtype, name=name)
        return _stateless.shift_uniform(values, 0 if minval is None else minval, maxval)

    def uniform_full_int(self, shape: Any, dtype: Any = _dtypes.uint64,
                         name: Optional[str] = None) -> Tensor:
        """Integers spread over the whole range of `dtype` (int32, int64, uint32, uint64)."""
        dtype = _dtypes.as_dtype(dtype)
        if dtype not in (_dtypes.int32, _dtypes.int64, _dtypes.uint32, _dtypes.uint64):
            raise TypeError(f"random.Generator.uniform_full_int: dtype {dtype.name} is not "
                            f"supported; use int32, int64, uint32 or uint64")
        return self._draw(_stateless.STATELESS_UNIFORM_FULL_INT_V2, shape, dtype, name=name)

    def binomial(self, shape: Any, counts: Any, probs: Any, dtype: Any = _dtypes.int32,
                 name: Optional[str] = None) -> Tensor:
        """Binomial draws: successes in `counts` trials of probability `probs`."""
        shape_t, seed = self._next_seed(shape)
        return _stateless.stateless_binomial(shape_t, seed, counts, probs, dtype, name)

    def make_seeds(self, count: int = 1) -> Tensor:
        """`count` seeds for stateless ops, as an int64 [2, count] tensor (one per column)."""
        keys = self.uniform_full_int([int(count)], _dtypes.int64)
        from kilnflow.ops.array import zeros_like
        return stack([keys, zeros_like(keys)])

    def split(self, count: int = 1) -> List["Generator"]:
        """`count` new generators with independent streams; advances this one."""
        keys = self.uniform_full_int([int(count)], _dtypes.int64)
        if is_symbolic(keys):
            raise errors.UnimplementedError(
                "random.Generator.split inside a kf.function is not supported: split "
                "outside the function and pass or capture the new generators")
        return [Generator(state=np.array([0] * (_state_size(self._alg) - 1) + [k], np.int64),
                          alg=self._alg) for k in keys.numpy().tolist()]


# ---------------------------------------------------------------- the global generator

class _GlobalGenerator:
    generator: Optional[Generator] = None


def get_global_generator() -> Generator:
    """The process-wide generator, created from OS entropy on first use (also when first
    used inside a kf.function: it is made outside the function, as TF's init_scope does)."""
    if _GlobalGenerator.generator is None:
        hooks = ctx.variable_hooks
        ctx.variable_hooks = []  # not a variable of the function being traced
        try:
            with eager_mode():
                _GlobalGenerator.generator = Generator.from_non_deterministic_state()
        finally:
            ctx.variable_hooks = hooks
    return _GlobalGenerator.generator


def set_global_generator(generator: Generator) -> None:
    """Replaces the global generator (functions traced earlier keep the one they captured)."""
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator: expected a kf.random.Generator, got "
                        f"{type(generator).__name__}")
    _GlobalGenerator.generator = generator
