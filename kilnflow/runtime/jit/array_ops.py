"""Lowering rules for the array ops a Keras train step needs beyond rules.py: ArgMax and
ArgMin (accuracy metrics), OneHot and SoftmaxCrossEntropyWithLogits (categorical losses),
LogSoftmax, Tile, PadV2, Range / DynamicRange, Cumsum / Cumprod, MatrixDiagPart, SplitV,
and Size / DynamicFill / SumToShape with shapes known only when run (a partial batch).

Each rule brings its input to a (rows, columns) or (outer, n, inner) C-contiguous view with
static reshapes, calls one numba kernel below as `kf_array.<name>`, and reshapes back, so
one loop serves every rank and axis. The kernels are plain functions compiled on first use
(module `__getattr__`), so importing this module, as rules.py does, needs no numba.
Reads op attrs as data; never imports ops/.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import numpy as np

from kilnflow.runtime.jit import cache

_KERNELS: Dict[str, Callable] = {}


def _kernel(fn: Callable) -> Callable:
    _KERNELS[fn.__name__[3:]] = fn  # _k_name -> name
    return fn


def __getattr__(name: str) -> Any:
    """`kf_array.argmax_rows` in generated code: the kernel, compiled (and disk-cached)."""
    fn = _KERNELS.get(name)
    if fn is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    compiled = cache.numba().njit(cache=True, error_model="numpy")(fn)
    globals()[name] = compiled
    return compiled


def _np(dtype: Any) -> str:
    from kilnflow.runtime.jit.lower import dtype_text
    return dtype_text(dtype)


def _dims(x: str, axes: Any) -> List[str]:
    return [f"{x}.shape[{d}]" for d in axes]


def _prod(dims: List[str]) -> str:
    return " * ".join(dims) or "1"


def _shape(dims: List[str]) -> str:
    return f"({', '.join(dims)},)" if dims else "()"


def _cube(x: str, rank: int, axis: int) -> str:
    """x as a C-contiguous (outer, n, inner) array around `axis`."""
    return f"np.ascontiguousarray({x}).reshape(({_prod(_dims(x, range(axis)))}, " \
           f"{x}.shape[{axis}], {_prod(_dims(x, range(axis + 1, rank)))}))"


def _rows(x: str, rank: int) -> str:
    """x as a C-contiguous (rows, last axis) matrix."""
    return f"np.ascontiguousarray({x}).reshape(({_prod(_dims(x, range(rank - 1)))}, " \
           f"{x}.shape[{rank - 1}]))"


# ---------------------------------------------------------------- rules

def _arg_extreme(op: Any, args: List[str]) -> Optional[str]:
    """ArgMax / ArgMin: the reduced axis moved last, one index per row (NumPy's rules: the
    first extreme wins, a NaN is the extreme)."""
    x, rank = args[0], op.inputs[0].shape.rank
    axis = int(op.attrs["axis"]) % rank
    kept = [d for d in range(rank) if d != axis]
    moved = x if axis == rank - 1 else f"{x}.transpose({tuple(kept + [axis])!r})"
    rows = f"np.ascontiguousarray({moved}).reshape(({_prod(_dims(x, kept))}, " \
           f"{x}.shape[{axis}]))"
    found = f"kf_array.arg_rows({rows}, {op.type == 'ArgMax'})"
    if not kept:
        return f"{found}[0]"
    return f"{found}.astype({_np(op.attrs['output_type'])}).reshape({_shape(_dims(x, kept))})"


def _one_hot(op: Any, args: List[str]) -> Optional[str]:
    indices, on, off = op.inputs
    if on.shape.rank != 0 or off.shape.rank != 0:
        return None
    i, rank, depth, axis = args[0], indices.shape.rank, int(op.attrs["depth"]), \
        int(op.attrs["axis"])
    flat = f"np.full(1, {i}, np.int64)" if rank == 0 else \
        f"np.ascontiguousarray({i}).reshape({i}.size)"
    out = f"kf_array.one_hot({flat}, {depth}, {args[1]}, {args[2]})" \
          f".reshape({_shape(_dims(i, range(rank)) + [str(depth)])})"
    if axis == rank:
        return out
    perm = list(range(rank))
    perm.insert(axis, rank)
    return f"{out}.transpose({tuple(perm)!r})"


def _last(x: str, rank: int, axis: int) -> tuple:
    """(x with `axis` moved last, the permutation back, or None when it already is)."""
    if axis == rank - 1:
        return x, None
    perm = [d for d in range(rank) if d != axis] + [axis]
    return f"{x}.transpose({tuple(perm)!r})", tuple(int(i) for i in np.argsort(perm))


def _log_softmax(op: Any, args: List[str]) -> Optional[str]:
    rank = op.inputs[0].shape.rank
    moved, back = _last(args[0], rank, int(op.attrs.get("axis", -1)) % rank)
    out = f"kf_array.log_softmax_rows({_rows(moved, rank)}).reshape({moved}.shape)"
    return out if back is None else f"{out}.transpose({back!r})"


def _softmax_xent(op: Any, args: List[str]) -> Optional[str]:
    """-sum(labels * log_softmax(logits)) over `axis` (labels and logits of one static
    shape: the op's shape rule requires it), the axis moved last."""
    labels, logits = op.inputs
    rank = logits.shape.rank
    if labels.shape.rank != rank:
        return None
    axis = int(op.attrs["axis"]) % rank
    (z, _), (x, _) = _last(args[0], rank, axis), _last(args[1], rank, axis)
    loss = f"kf_array.softmax_xent_rows({_rows(z, rank)}, {_rows(x, rank)})"
    kept = _dims(args[1], [d for d in range(rank) if d != axis])
    return f"{loss}[0]" if rank == 1 else f"{loss}.reshape({_shape(kept)})"


def _tile(op: Any, args: List[str]) -> Optional[str]:
    """x viewed as (1, d0, 1, d1, ...), broadcast to (m0, d0, m1, d1, ...), copied and
    merged pairwise: NumPy's tile without a loop of our own. DynamicTile's multiples are a
    tensor of static length."""
    rank, x = op.inputs[0].shape.rank, args[0]
    if op.type == "Tile":
        multiples = [str(int(m)) for m in op.attrs["multiples"]]
    elif op.inputs[1].shape.as_list() == [rank]:
        multiples = [f"np.intp({args[1]}[{d}])" for d in range(rank)]
    else:
        return None
    if rank == 0:
        return x
    spread = [p for d in range(rank) for p in ("1", f"{x}.shape[{d}]")]
    wide = [p for d, m in enumerate(multiples) for p in (m, f"{x}.shape[{d}]")]
    merged = [f"{m} * {x}.shape[{d}]" for d, m in enumerate(multiples)]
    return f"np.ascontiguousarray(np.broadcast_to(np.ascontiguousarray({x}).reshape(" \
           f"{_shape(spread)}), {_shape(wide)})).reshape({_shape(merged)})"


def _pad(op: Any, args: List[str]) -> Optional[str]:
    """PadV2 (constant): one `pad_axis` call per padded axis on the (outer, n, inner) view;
    outer counts the axes already padded, so every size refers to the input's shape."""
    paddings, x = op.attrs["paddings"], args[0]
    rank = op.inputs[0].shape.rank
    if op.attrs.get("mode", "CONSTANT") != "CONSTANT" or len(paddings) != rank or \
            op.inputs[1].shape.rank != 0:
        return None
    padded = [f"({x}.shape[{d}] + {b + a})" if b or a else f"{x}.shape[{d}]"
              for d, (b, a) in enumerate(paddings)]
    out = x
    for d, (b, a) in enumerate(paddings):
        if b or a:
            cube = f"np.ascontiguousarray({out}).reshape(({_prod(padded[:d])}, " \
                   f"{x}.shape[{d}], {_prod(_dims(x, range(d + 1, rank)))}))"
            out = f"kf_array.pad_axis({cube}, {int(b)}, {int(a)}, {args[1]})"
    return x if out == x else f"{out}.reshape({_shape(padded)})"


def _range(op: Any, args: List[str]) -> Optional[str]:
    """Range with static bounds: integers through np.arange (exact); floats as the literal
    values NumPy's kernel gives (its float32 stepping is not numba's)."""
    a = op.attrs
    dtype = np.dtype(a["dtype"].as_numpy_dtype)
    values = np.arange(a["start"], a["limit"], a["delta"], dtype=dtype)
    if dtype.kind in "iu":
        return f"np.arange({int(a['start'])}, {int(a['limit'])}, {int(a['delta'])})" \
               f".astype({_np(dtype)})"
    if values.size > 4096 or dtype not in (np.float32, np.float64):
        return None
    return f"np.array([{', '.join(repr(float(v)) for v in values)}], {_np(dtype)})" \
        if values.size else f"np.zeros(0, {_np(dtype)})"


def _dynamic_range(op: Any, args: List[str]) -> Optional[str]:
    if any(t.shape.rank != 0 for t in op.inputs):
        return None
    return f"kf_array.arange({', '.join(args)}).astype({_np(op.outputs[0].dtype)})"


def _scan(op: Any, args: List[str]) -> Optional[str]:
    """Cumsum / Cumprod along `axis` on the (outer, n, inner) view, in the input's dtype
    (NumPy's accumulate: sequential, so the bits match)."""
    rank = op.inputs[0].shape.rank
    if rank == 0:
        return None
    a = op.attrs
    return f"kf_array.scan({_cube(args[0], rank, int(a['axis']) % rank)}, " \
           f"{bool(a['exclusive'])}, {bool(a['reverse'])}, {op.type == 'Cumprod'})" \
           f".reshape({args[0]}.shape)"


def _diag_part(op: Any, args: List[str]) -> Optional[str]:
    x, rank = args[0], op.inputs[0].shape.rank
    m, n = f"{x}.shape[{rank - 2}]", f"{x}.shape[{rank - 1}]"
    batch = _dims(x, range(rank - 2))
    cube = f"np.ascontiguousarray({x}).reshape(({_prod(batch)}, {m}, {n}))"
    return f"kf_array.diag_part({cube}).reshape({_shape(batch + [f'min({m}, {n})'])})"


def _size(op: Any, args: List[str]) -> str:
    return "1" if op.inputs[0].shape.rank == 0 else f"{args[0]}.size"


def _dynamic_fill(op: Any, args: List[str]) -> Optional[str]:
    from kilnflow.runtime.jit.lower import literal
    shape = op.inputs[0].shape
    if shape.rank != 1 or shape.as_list()[0] is None:
        return None
    value = literal(op.attrs["value"], op.attrs["dtype"])
    dims = [f"np.intp({args[0]}[{d}])" for d in range(shape.as_list()[0])]
    return f"np.full({_shape(dims)}, {value})" if dims else value


def sum_to_dynamic_shape(op: Any, args: List[str]) -> Optional[str]:
    """SumToShape to a target known only when run (a partial last batch retraced with
    `None` dims): one pass over dy adding each element into its target slot."""
    dy, target = op.inputs
    if dy.shape.rank is None or target.shape.rank != 1 or None in target.shape.as_list():
        return None
    k = target.shape.as_list()[0]
    kind = np.dtype(dy.dtype.as_numpy_dtype).kind
    zero = "np.float64(0)" if kind == "f" else "np.complex128(0)" if kind == "c" else \
        "np.int64(0)"
    dims = f"np.array({_shape(_dims(args[0], range(dy.shape.rank)))}, np.int64)"
    summed = f"kf_array.sum_to_shape(np.ascontiguousarray({args[0]}).reshape({args[0]}.size)" \
             f", {dims}, {args[1]}.astype(np.int64), {zero}).astype({_np(dy.dtype)})"
    out = [f"np.intp({args[1]}[{d}])" for d in range(k)]
    return f"{summed}.reshape({_shape(out)})" if out else f"{summed}[0]"


def _split(op: Any, args: List[str]) -> Optional[str]:
    """SplitV: a tuple of basic slices along `axis` (views, as StridedSlice's); the last
    piece takes the rest, as np.split's."""
    axis, x = int(op.attrs["axis"]), args[0]
    bounds = np.cumsum((0,) + tuple(int(s) for s in op.attrs["sizes"])).tolist()
    pieces = [f"{x}[{':, ' * axis}{a}:{b if i < len(bounds) - 2 else ''}]"
              for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    return pieces[0] if len(pieces) == 1 else f"({', '.join(pieces)},)"


RULES = {"ArgMax": _arg_extreme, "ArgMin": _arg_extreme, "OneHot": _one_hot,
         "LogSoftmax": _log_softmax, "SoftmaxCrossEntropyWithLogits": _softmax_xent,
         "Tile": _tile, "DynamicTile": _tile, "PadV2": _pad, "Range": _range, "DynamicRange": _dynamic_range,
         "Cumsum": _scan, "Cumprod": _scan, "MatrixDiagPart": _diag_part,
         "Size": _size, "DynamicFill": _dynamic_fill, "SplitV": _split}


# ---------------------------------------------------------------- numba kernels

@_kernel
def _k_arg_rows(m, largest):
    """Per row, the index of its largest (smallest) value; the first NaN wins."""
    if m.shape[1] == 0:
        raise ValueError("ArgMax/ArgMin: attempt to get argmax of an empty sequence")
    out = np.empty(m.shape[0], np.int64)
    for i in range(m.shape[0]):
        best, at = m[i, 0], 0
        if best == best:
            for j in range(1, m.shape[1]):
                v = m[i, j]
                if v != v:
                    at = j
                    break
                if (v > best) if largest else (v < best):
                    best, at = v, j
        out[i] = at
    return out


@_kernel
def _k_one_hot(indices, depth, on, off):
    """(n, depth): `on` at each row's index, `off` elsewhere (and for indices out of
    range, as TF's kernel)."""
    out = np.full((indices.shape[0], depth), off)
    for r in range(indices.shape[0]):
        k = indices[r]
        if 0 <= k < depth:
            out[r, k] = on
    return out


@_kernel
def _k_log_softmax_rows(m):
    """x - max - log(sum(exp(x - max))) per row; the sum accumulates in float64."""
    out = np.empty_like(m)
    for i in range(m.shape[0]):
        top = m[i, 0]
        for j in range(1, m.shape[1]):
            top = max(top, m[i, j])
        total = 0.0
        for j in range(m.shape[1]):
            out[i, j] = m[i, j] - top
            total += np.exp(out[i, j])
        shift = np.log(total)
        for j in range(m.shape[1]):
            out[i, j] = out[i, j] - shift
    return out


@_kernel
def _k_softmax_xent_rows(z, x):
    """-sum_j z[i, j] * log_softmax(x)[i, j] per row, accumulated in float64."""
    out = np.empty(x.shape[0], x.dtype)
    for i in range(x.shape[0]):
        top = x[i, 0]
        for j in range(1, x.shape[1]):
            top = max(top, x[i, j])
        total = 0.0
        for j in range(x.shape[1]):
            total += np.exp(x[i, j] - top)
        shift = np.log(total)
        loss = 0.0
        for j in range(x.shape[1]):
            loss -= z[i, j] * ((x[i, j] - top) - shift)
        out[i] = loss
    return out


@_kernel
def _k_pad_axis(cube, before, after, value):
    out = np.full((cube.shape[0], before + cube.shape[1] + after, cube.shape[2]), value,
                  cube.dtype)
    out[:, before:before + cube.shape[1], :] = cube
    return out


@_kernel
def _k_arange(start, limit, delta):
    if delta == 0:
        raise ValueError("Range: Requires delta != 0")
    if (delta > 0 and start > limit) or (delta < 0 and start < limit):
        raise ValueError("Range: Requires start <= limit when delta > 0 (>= when < 0)")
    return np.arange(start, limit, delta)


@_kernel
def _k_scan(cube, exclusive, reverse, product):
    """Running sums (products) along axis 1, each step stored in the array's dtype."""
    out = np.empty_like(cube)
    n = cube.shape[1]
    for o in range(cube.shape[0]):
        for k in range(cube.shape[2]):
            prev = -1
            for step in range(n):
                j = n - 1 - step if reverse else step
                if prev < 0:
                    out[o, j, k] = (1 if product else 0) if exclusive else cube[o, j, k]
                else:
                    x = cube[o, prev if exclusive else j, k]
                    out[o, j, k] = out[o, prev, k] * x if product else out[o, prev, k] + x
                prev = j
    return out


@_kernel
def _k_diag_part(cube):
    k = min(cube.shape[1], cube.shape[2])
    out = np.empty((cube.shape[0], k), cube.dtype)
    for b in range(cube.shape[0]):
        for i in range(k):
            out[b, i] = cube[b, i, i]
    return out


@_kernel
def _k_sum_to_shape(flat, dims, target, zero):
    """dy (flat, of shape `dims`) summed onto `target` (NumPy broadcasting undone: the
    leading axes and the target's 1s where dy is wider), accumulated in `zero`'s type."""
    lead = dims.size - target.size
    if lead < 0:
        raise ValueError("SumToShape: the target has more dimensions than the gradient")
    strides = np.zeros(dims.size, np.int64)
    size = 1
    for a in range(dims.size - 1, lead - 1, -1):
        t = target[a - lead]
        if t == dims[a]:
            strides[a] = size
        elif t != 1:
            raise ValueError("SumToShape: the gradient does not broadcast to the target")
        size *= t
    out = np.full(size, zero)
    if size == flat.size:  # nothing to sum (the usual case): the same order
        out[:] = flat
        return out
    for i in range(flat.size):
        rest, at = i, 0
        for a in range(dims.size - 1, -1, -1):
            at += (rest % dims[a]) * strides[a]
            rest //= dims[a]
        out[at] += flat[i]
    return out
