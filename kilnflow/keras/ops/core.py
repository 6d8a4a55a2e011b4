"""keras.ops.core: control flow (cond, while_loop, fori_loop, scan, associative_scan, map,
switch, vectorized_map), conversion (convert_to_tensor, convert_to_numpy, cast, shape,
dtype), gradients (stop_gradient, custom_gradient, jvp) and functional updates (slice,
slice_update, scatter, scatter_update), on kilnflow's ops so they trace into kf.function."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

import kilnflow as kf
from kilnflow import nest
from kilnflow.keras.ops.convert import dtype_name, is_placeholder, standardize_dtype, to_tensor


def convert_to_tensor(x: Any, dtype: Any = None, sparse: Any = None, ragged: Any = None) -> Any:
    """x as a kilnflow tensor (Keras's dtype rules: Python floats are floatx)."""
    return to_tensor(x, standardize_dtype(dtype))


def convert_to_numpy(x: Any) -> np.ndarray:
    """x as a NumPy array (eager values only)."""
    if isinstance(x, kf.Variable):
        return np.asarray(x.numpy())
    if kf.is_tensor(x):
        return np.asarray(x.numpy())
    return np.asarray(x)


def is_tensor(x: Any) -> bool:
    """Whether x is a kilnflow tensor (NumPy arrays are not)."""
    return kf.is_tensor(x)


def dtype(x: Any) -> str:
    """x's Keras dtype name ('float32', 'int32'...)."""
    return dtype_name(x)


def shape(x: Any) -> tuple:
    """x's shape as a tuple: ints where known, scalar tensors where only known at run time
    (None for a functional model's placeholder)."""
    if is_placeholder(x):
        return tuple(x.shape.as_list())
    x = to_tensor(x)
    static = x.shape.as_list()
    if all(d is not None for d in static):
        return tuple(static)
    dyn = kf.shape(x)
    return tuple(d if d is not None else dyn[i] for i, d in enumerate(static))


def cast(x: Any, dtype: Any) -> Any:
    return kf.cast(to_tensor(x), standardize_dtype(dtype))


def saturate_cast(x: Any, dtype: Any) -> Any:
    """cast that clamps to the target dtype's range first."""
    return kf.saturate_cast(to_tensor(x), standardize_dtype(dtype))


def stop_gradient(variable: Any) -> Any:
    return kf.stop_gradient(to_tensor(variable))


def custom_gradient(f: Callable) -> Callable:
    """f returns (y, grad_fn); grad_fn(upstream) gives the gradients of its inputs."""
    return kf.custom_gradient(f)


def cond(pred: Any, true_fn: Callable, false_fn: Callable) -> Any:
    """true_fn() if pred else false_fn(), as a graph cond when pred is symbolic."""
    return nest.map_structure(to_tensor, kf.cond(pred, true_fn, false_fn))


def while_loop(cond: Callable, body: Callable, loop_vars: Any,
               maximum_iterations: Optional[int] = None) -> Any:
    """Loop body(*loop_vars) while cond(*loop_vars); a lone loop variable stays unpacked."""
    packed = isinstance(loop_vars, (tuple, list))
    init = tuple(loop_vars) if packed else (loop_vars,)
    init = nest.map_structure(to_tensor, init)

    def step(*args: Any) -> tuple:
        out = body(*args)
        return tuple(out) if packed else (out,)
    out = kf.while_loop(cond, step, init, maximum_iterations=maximum_iterations)
    out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return (type(loop_vars)(out) if packed else out[0])


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any) -> Any:
    """val = body_fun(i, val) for i in [lower, upper)."""
    out = kf.while_loop(lambda i, v: kf.less(i, upper),
                        lambda i, v: (i + 1, body_fun(i, v)),
                        (kf.convert_to_tensor(lower), nest.map_structure(to_tensor, init_val)))
    return out[1]


def _length(xs: Any) -> Any:
    flat = nest.flatten(xs)
    return to_tensor(flat[0]).shape.as_list()[0] if flat else None


def scan(f: Callable, init: Any, xs: Any = None, length: Optional[int] = None,
         reverse: bool = False, unroll: int = 1) -> tuple:
    """(carry, ys) with carry, y = f(carry, x) for each x along xs' first axis; ys stacked.
    Static lengths unroll (so gradients flow through every step)."""
    n = length if xs is None else _length(xs)
    if n is None:
        raise ValueError("scan: xs needs a static leading dimension (or pass length=)")
    xs_t = None if xs is None else nest.map_structure(to_tensor, xs)
    carry, ys = init, []
    steps = range(n - 1, -1, -1) if reverse else range(n)
    for i in steps:
        x = None if xs_t is None else nest.map_structure(lambda t: t[i], xs_t)
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys or ys[0] is None:
        return carry, None
    stacked = nest.map_structure(lambda *vs: kf.stack([to_tensor(v) for v in vs]), *ys)
    return carry, stacked


def associative_scan(f: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """Inclusive prefix scan of the associative f along `axis` (sequential here: the same
    values as the parallel algorithm)."""
    flat = [to_tensor(e) for e in nest.flatten(elems)]
    n = flat[0].shape.as_list()[axis]
    take = (lambda t, i: kf.gather(t, i, axis=axis))
    order = range(n - 1, -1, -1) if reverse else range(n)
    acc, outs = None, []
    for i in order:
        cur = nest.pack_sequence_as(elems, [take(t, i) for t in flat])
        acc = cur if acc is None else (f(cur, acc) if reverse else f(acc, cur))
        outs.append(acc)
    if reverse:
        outs.reverse()
    return nest.map_structure(lambda *vs: kf.stack(list(vs), axis=axis), *outs)


def map(f: Callable, xs: Any) -> Any:
    """f applied to each slice along xs' first axis, results stacked."""
    n = _length(xs)
    xs_t = nest.map_structure(to_tensor, xs)
    if n is None:
        return kf.map_fn(f, xs_t)
    ys = [f(nest.map_structure(lambda t: t[i], xs_t)) for i in range(n)]
    return nest.map_structure(lambda *vs: kf.stack([to_tensor(v) for v in vs]), *ys)


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """branches[index](*operands) (index clamped to the valid range, as in Keras)."""
    idx = kf.clip_by_value(to_tensor(index, "int32"), 0, len(branches) - 1)
    out = kf.switch_case(idx, [(lambda b=b: b(*operands)) for b in branches])
    return nest.map_structure(to_tensor, out)


def vectorized_map(function: Callable, elements: Any) -> Any:
    return kf.vectorized_map(function, elements)


def vectorize(pyfunc: Callable, *, excluded: Any = None, signature: Any = None) -> Callable:
    """An elementwise version of pyfunc over broadcast tensor arguments (no signature)."""
    if signature is not None:
        raise NotImplementedError("vectorize: `signature` is not supported")
    excluded = set(excluded or ())

    def wrapped(*args: Any) -> Any:
        keep = [i for i in range(len(args)) if i not in excluded]
        ts = [to_tensor(args[i]) for i in keep]
        shp = ts[0].shape
        for t in ts[1:]:
            shp = kf.broadcast_static_shape(shp, t.shape)
        flat = [kf.reshape(kf.broadcast_to(t, shp.as_list()), [-1]) for t in ts]

        def one(vals: Any) -> Any:
            full = list(args)
            for i, v in zip(keep, vals):
                full[i] = v
            return pyfunc(*full)
        out = kf.vectorized_map(one, tuple(flat))
        return kf.reshape(out, shp.as_list())
    return wrapped


def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple:
    """(outputs, J @ tangents), by differentiating a vector-Jacobian product (the double-vjp
    trick: two reverse passes give one forward-mode product)."""
    xs = [to_tensor(p) for p in primals]
    with kf.GradientTape() as outer:
        with kf.GradientTape() as inner:
            for x in xs:
                inner.watch(x)
            res = fun(*xs)
        out, aux = res if has_aux else (res, None)
        u = kf.zeros_like(out)
        outer.watch(u)
        g = inner.gradient(out, xs, output_gradients=u)
    g = [gi if gi is not None else kf.zeros_like(x) for gi, x in zip(g, xs)]
    tan = outer.gradient(g, u, output_gradients=[to_tensor(t, x.dtype.name)
                                                 for t, x in zip(tangents, xs)])
    tan = kf.zeros_like(out) if tan is None else tan
    return (out, tan, aux) if has_aux else (out, tan)


def slice(inputs: Any, start_indices: Any, shape: Any) -> Any:
    """inputs[start:start + shape] per axis."""
    return kf.slice(to_tensor(inputs), start_indices, shape)


def slice_update(inputs: Any, start_indices: Any, updates: Any) -> Any:
    """inputs with the block at start_indices replaced by `updates`."""
    x = to_tensor(inputs)
    u = to_tensor(updates, x.dtype.name)
    start = kf.cast(to_tensor(start_indices), "int32")
    grids = kf.meshgrid(*[kf.range(d) for d in u.shape.as_list()], indexing="ij")
    idx = kf.stack(grids, -1) + start
    return kf.tensor_scatter_nd_update(x, kf.reshape(idx, [-1, u.shape.rank]),
                                       kf.reshape(u, [-1]))


def scatter(indices: Any, values: Any, shape: Any) -> Any:
    """A zero tensor of `shape` with `values` added at `indices` (duplicates sum)."""
    return kf.scatter_nd(to_tensor(indices, "int32"), to_tensor(values), list(shape))


def scatter_update(inputs: Any, indices: Any, updates: Any, reduction: Any = None) -> Any:
    """inputs with entries at `indices` set to (or combined with, per `reduction`:
    'add', 'max', 'min', 'mul') `updates`."""
    x = to_tensor(inputs)
    idx = to_tensor(indices, "int32")
    u = to_tensor(updates, x.dtype.name)
    if reduction is None:
        return kf.tensor_scatter_nd_update(x, idx, u)
    fns = {"add": kf.tensor_scatter_nd_add, "max": kf.tensor_scatter_nd_max,
           "min": kf.tensor_scatter_nd_min}
    if reduction == "mul":
        factor = kf.tensor_scatter_nd_update(kf.ones_like(x), idx, kf.ones_like(u))
        prod = kf.math.unsorted_segment_prod(u, _flat_ids(x, idx), kf.size(x))
        return x * kf.where(kf.equal(factor, 1), kf.reshape(prod, kf.shape(x)), factor)
    if reduction not in fns:
        raise ValueError(f"scatter_update: reduction must be None, 'add', 'max', 'min' or "
                         f"'mul', got {reduction!r}")
    return fns[reduction](x, idx, u)


def _flat_ids(x: Any, idx: Any) -> Any:
    strides = np.cumprod([1] + x.shape.as_list()[::-1][:-1])[::-1].astype(np.int32)
    return kf.reduce_sum(idx * kf.constant(strides[:idx.shape.as_list()[-1]]), axis=-1)


__all__ = [
    "associative_scan", "cast", "cond", "convert_to_numpy", "convert_to_tensor",
    "custom_gradient", "dtype", "fori_loop", "is_tensor", "jvp", "map", "saturate_cast",
    "scan", "scatter", "scatter_update", "shape", "slice", "slice_update", "stop_gradient",
    "switch", "vectorize", "vectorized_map", "while_loop",
]
