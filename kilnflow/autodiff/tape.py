"""GradientTape: records op applications on watched values, then runs the reverse walk.

Recording works the same eagerly and while a graph is built (then the backward pass is
itself a graph). Reads of trainable variables are watched automatically.
"""
from __future__ import annotations

import contextlib
import enum
from typing import Any, Iterator, Optional

from kilnflow import errors, nest
from kilnflow.autodiff.accumulate import REGISTERED_GRADIENTS, backward
from kilnflow.context import ctx
from kilnflow.ops import array, convert
from kilnflow.ops import joining, reshaping
from kilnflow.tensor import Tensor


class UnconnectedGradients(enum.Enum):
    """What `gradient` returns for a source the target does not depend on."""
    NONE = "none"
    ZERO = "zero"


class _Record:
    __slots__ = ("opdef", "inputs", "outputs", "attrs")

    def __init__(self, opdef: Any, inputs: tuple, outputs: tuple, attrs: dict):
        self.opdef = opdef
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs


def _key_object(x: Any) -> Any:
    """What a source is tracked as: variables by their handle, tensors by themselves."""
    handle = getattr(x, "_handle", None)
    return handle if handle is not None else x


def _seed(grad: Any, target: Any, index: int) -> Any:
    """One entry of `output_gradients` as a tensor of the target's dtype. TF converts it
    without a dtype and multiplies: a Python int or bool for a float target is an error
    there, not a cast."""
    if not isinstance(grad, Tensor) and (target.dtype.is_floating or target.dtype.is_complex):
        try:
            natural = convert.convert_to_tensor(grad).dtype
        except (TypeError, ValueError):
            natural = None  # the conversion below names the problem
        if natural is not None and (natural.is_integer or natural.is_bool):
            raise errors.InvalidArgumentError(
                f"GradientTape.gradient: `output_gradients[{index}]` is {natural.name} but "
                f"the target is {target.dtype.name}; give a gradient of the target's dtype")
    return convert.convert_to_tensor(grad, target.dtype)


class GradientTape:
    """Records operations for automatic differentiation.

    >>> import kilnflow as kf
    >>> w = kf.Variable([[1.0]])
    >>> with kf.GradientTape() as tape:
    ...     loss = w * w
    >>> tape.gradient(loss, w).numpy().tolist()
    [[2.0]]
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._records: list = []
        self._watched: set = set()
        self._keep: list = []       # keeps watched objects alive so their ids stay unique
        self._variables: list = []  # watched variable handles, in first-access order
        self._used = False

    def __enter__(self) -> "GradientTape":
        ctx.tapes = ctx.tapes + [self]
        return self

    def __exit__(self, *exc: Any) -> None:
        ctx.tapes = [t for t in ctx.tapes if t is not self]

    def watch(self, tensor: Any) -> None:
        """Track `tensor` (or a variable, or a nested structure of them) as a source."""
        for x in nest.flatten(tensor):
            key = _key_object(x)
            if id(key) not in self._watched:
                self._watched.add(id(key))
                self._keep.append(key)
                if key is not x:
                    self._variables.append(x)

    def watched_variables(self) -> tuple:
        return tuple(self._variables)

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Ops run inside are not recorded on this tape."""
        saved = ctx.tapes
        ctx.tapes = [t for t in saved if t is not self]
        try:
            yield
        finally:
            ctx.tapes = saved

    def reset(self) -> None:
        self._records = []
        self._watched = set()
        self._keep = []
        self._variables = []

    def record(self, opdef: Any, inputs: Any, attrs: dict, result: Any) -> None:
        """Called by bind() for every op applied while this tape is active."""
        if opdef.grad is None and REGISTERED_GRADIENTS.get(opdef.name) is None:
            return
        watched = self._watched
        if opdef.watch_attr is not None:
            handle = attrs[opdef.watch_attr]
            if id(handle) not in watched:
                if not (self._watch_accessed and handle.trainable):
                    return
                watched.add(id(handle))
                self._keep.append(handle)
                self._variables.append(handle.owner)
            inputs = (handle,)
        elif not any(id(x) in watched for x in inputs):
            return
        outputs = result if opdef.multi_output else (result,)
        for o in outputs:
            watched.add(id(o))
        if outputs and hasattr(outputs[0], "op"):
            outputs[0].op.quiet = True  # its value may only matter to the gradient
        self._records.append(_Record(opdef, tuple(inputs), outputs, attrs))

    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: Any = UnconnectedGradients.NONE) -> Any:
        """d(sum of target) / d(source) for each source (same structure as `sources`)."""
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        self._used = True
        unconnected = UnconnectedGradients(unconnected_gradients.value if isinstance(
            unconnected_gradients, UnconnectedGradients) else unconnected_gradients)
        flat_sources = nest.flatten(sources)
        for s in flat_sources:
            if s is None:
                raise ValueError("Argument `sources` must not contain None")
        target_objects = nest.flatten(target)
        flat_targets = [convert.convert_to_tensor(t) if not hasattr(t, "_handle") else
                        t.read_value() for t in target_objects]
        if output_gradients is None:
            seeds = [array.gradient_seed(t) for t in flat_targets]
        else:
            flat_grads = nest.flatten(output_gradients)
            if len(flat_grads) != len(flat_targets):
                raise ValueError(f"GradientTape.gradient: `output_gradients` has "
                                 f"{len(flat_grads)} entries but `target` has "
                                 f"{len(flat_targets)}; give one per target (None for ones)")
            seeds = [_seed(g, t, i) if g is not None else array.gradient_seed(t)
                     for i, (g, t) in enumerate(zip(flat_grads, flat_targets))]
        keys = [_key_object(s) for s in flat_sources]
        # A persistent tape still active records its own gradient ops, like TF, so the
        # gradient of that gradient works; the walk reads a snapshot of the records.
        recording = self._persistent and self in ctx.tapes
        with contextlib.nullcontext() if recording else self.stop_recording():
            found = backward(list(self._records), flat_targets, seeds, {id(k) for k in keys})
            for t, seed in zip(target_objects, seeds):  # d v / d v: the seed itself, as in TF
                if hasattr(t, "_handle") and any(k is t._handle for k in keys):
                    previous = found.get(id(t._handle))
                    found[id(t._handle)] = seed if previous is None else previous + seed
            results = []
            for s, k in zip(flat_sources, keys):
                g = found.get(id(k))
                if g is None and unconnected is UnconnectedGradients.ZERO:
                    g = array.zeros_like(s.read_value() if hasattr(s, "_handle") else s)
                results.append(g)
        if not self._persistent:
            self._records = []
        return nest.pack_sequence_as(sources, results)

    def jacobian(self, target: Any, sources: Any,
                 unconnected_gradients: Any = UnconnectedGradients.NONE,
                 parallel_iterations: Optional[int] = None,
                 experimental_use_pfor: bool = True) -> Any:
        """Jacobian of `target` w.r.t. each source: shape target.shape + source.shape."""
        target = convert.convert_to_tensor(target)
        if not target.shape.is_fully_defined():
            raise ValueError("jacobian needs a target of fully known shape")
        n = target.shape.num_elements()
        persistent, self._persistent = self._persistent, True
        flat_sources = nest.flatten(sources)
        rows: list = [[] for _ in flat_sources]
        import numpy as np
        for i in range(n):
            seed = np.zeros(n, target.dtype.as_numpy_dtype)
            seed[i] = 1
            seed = reshaping.reshape(convert.convert_to_tensor(seed), target.shape.as_list())
            grads = self.gradient(target, flat_sources, output_gradients=seed,
                                  unconnected_gradients=unconnected_gradients)
            for r, g in zip(rows, grads):
                r.append(g)
        self._persistent = persistent
        out = []
        for s, r in zip(flat_sources, rows):
            if any(g is None for g in r):
                out.append(None)
                continue
            s_shape = s.shape.as_list()
            out.append(reshaping.reshape(joining.stack(r), target.shape.as_list() + s_shape))
        return nest.pack_sequence_as(sources, out)

    def batch_jacobian(self, target: Any, source: Any,
                       unconnected_gradients: Any = UnconnectedGradients.NONE,
                       parallel_iterations: Optional[int] = None,
                       experimental_use_pfor: bool = True) -> Any:
        """Per-example Jacobian: for `target` [b, y...] and `source` [b, x...] (row i of
        the target depends only on row i of the source), the [b, y..., x...] tensor whose
        entry [i, j..., k...] is d target[i, j...] / d source[i, k...]."""
        import numpy as np
        target = convert.convert_to_tensor(target)
        if not target.shape.is_fully_defined() or not target.shape.rank:
            raise ValueError("batch_jacobian needs a target of fully known shape with a "
                             f"batch dimension, got shape {target.shape}")
        batch, inner = target.shape[0], target.shape.as_list()[1:]
        source_shape = source.shape.as_list()
        if source_shape[:1] != [batch]:
            raise ValueError(f"batch_jacobian: the target's batch size {batch} differs from "
                             f"the source's ({source.shape})")
        n = int(np.prod(inner)) if inner else 1
        persistent, self._persistent = self._persistent, True
        rows = []
        try:
            for j in range(n):
                seed = np.zeros((batch, n), target.dtype.as_numpy_dtype)
                seed[:, j] = 1
                seed = reshaping.reshape(convert.convert_to_tensor(seed), [batch] + inner)
                rows.append(self.gradient(target, source, output_gradients=seed,
                                          unconnected_gradients=unconnected_gradients))
        finally:
            self._persistent = persistent
        if any(g is None for g in rows):
            return None
        stacked = joining.stack([convert.convert_to_tensor(g) for g in rows], axis=1)
        return reshaping.reshape(stacked, [batch] + inner + source_shape[1:])
