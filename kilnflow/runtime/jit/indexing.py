"""Lowering rules for indexing: StridedSlice (`x[1:, i, ::2]`), GatherV2 and its gradient,
TensorArray writes (TensorListSetItem).

numba compiles without bounds checks, so an index read out of range would return whatever
memory lies there: every integer index whose range is not proven at trace time goes through
`kf_helpers.checked_index`, which raises IndexError (the call turns it into TF's
InvalidArgumentError) and wraps a negative index as Python does. Slices clamp as NumPy's do,
so they need no check. Reads op attrs as data; never imports ops/.
"""
from __future__ import annotations

from typing import Any, List, Optional

_FED, _ELLIPSIS = "*", "..."


def strided_slice(op: Any, args: List[str]) -> Optional[str]:
    """`x[spec]` as a numba basic index; fed entries are the op's extra (scalar) inputs."""
    x = op.inputs[0]
    rank = x.shape.rank
    spec = op.attrs["spec"]
    if rank == 0:  # a numba scalar has no [...]
        return args[0] if not spec else None
    fed = iter(args[1:])
    consumed = sum(1 for e in spec if e is not None and e != _ELLIPSIS)
    dims = x.shape.as_list()
    parts, axis = [], 0
    for e in spec:
        if e is None:
            parts.append("None")
        elif e == _ELLIPSIS:
            parts.append("...")
            axis += rank - consumed
        elif isinstance(e, tuple):
            parts.append(":".join("" if p is None else next(fed) if p == _FED else str(int(p))
                                  for p in e[1:]))
            axis += 1
        else:
            value = next(fed) if e == _FED else str(int(e))
            known = e != _FED and dims[axis] is not None and -dims[axis] <= e < dims[axis]
            parts.append(value if known else
                         f"kf_helpers.checked_index({value}, {args[0]}.shape[{axis}])")
            axis += 1
    if not parts:
        return args[0]
    return f"{args[0]}[{', '.join(parts)}]"


def _gather_parts(params: str, rank: int, axis: int) -> tuple:
    """(outer, n, inner) sizes of params around `axis`, as expressions."""
    outer = " * ".join(f"{params}.shape[{d}]" for d in range(axis)) or "1"
    inner = " * ".join(f"{params}.shape[{d}]" for d in range(axis + 1, rank)) or "1"
    return outer, f"{params}.shape[{axis}]", inner


def gather(op: Any, args: List[str]) -> Optional[str]:
    """`tf.gather(params, indices, axis)` without batch_dims: params seen as
    (outer, n, inner), the flat indices picked along n, reshaped to TF's output shape."""
    params, indices = op.inputs
    if op.attrs.get("batch_dims", 0) or indices.dtype.name not in ("int32", "int64"):
        return None
    rank, axis = params.shape.rank, int(op.attrs["axis"])
    p, i = args
    if indices.shape.rank == 0:
        if rank == 1:
            return f"{p}[kf_helpers.checked_index({i}, {p}.shape[0])]"
        idx = f"np.full(1, {i}, np.int64)"
        index_dims: list = []
    else:
        idx = f"np.ascontiguousarray({i}).reshape({i}.size)"
        index_dims = [f"{i}.shape[{d}]" for d in range(indices.shape.rank)]
    outer, n, inner = _gather_parts(p, rank, axis)
    cube = f"np.ascontiguousarray({p}).reshape(({outer}, {n}, {inner}))"
    dims = [f"{p}.shape[{d}]" for d in range(axis)] + index_dims + \
        [f"{p}.shape[{d}]" for d in range(axis + 1, rank)]
    return f"kf_helpers.gather({cube}, {idx}).reshape(({', '.join(dims)},))"


def gather_grad(op: Any, args: List[str]) -> Optional[str]:
    """GatherV2's gradient: dy's slices added at their indices of zeros(params_shape)
    (repeated indices accumulate, as NumPy's add.at)."""
    dy, indices, shape = op.inputs
    if op.attrs.get("batch_dims", 0) or indices.dtype.name not in ("int32", "int64") or \
            shape.shape.rank != 1 or not shape.shape.is_fully_defined():
        return None
    rank, axis = shape.shape.as_list()[0], int(op.attrs["axis"])
    g, i, s = args
    dims = [f"np.intp({s}[{d}])" for d in range(rank)]
    outer = " * ".join(dims[:axis]) or "1"
    inner = " * ".join(dims[axis + 1:]) or "1"
    count = "1" if indices.shape.rank == 0 else f"{i}.size"
    idx = f"np.full(1, {i}, np.int64)" if indices.shape.rank == 0 else \
        f"np.ascontiguousarray({i}).reshape({i}.size)"
    slices = f"np.ascontiguousarray({g}).reshape(({outer}, {count}, {inner}))"
    return f"kf_helpers.gather_grad({slices}, {idx}, {dims[axis]}).reshape(({', '.join(dims)},))"


def set_item(op: Any, args: List[str]) -> Optional[str]:
    """TensorArray.write: the buffer must already have the element's rank plus one (a
    TensorArray made with element_shape, or from unstack) so its numba type stays fixed."""
    buffer, _, value = op.inputs
    if buffer.shape.rank != (value.shape.rank or 0) + 1 or buffer.dtype != value.dtype:
        return None
    limit = op.attrs.get("limit")
    helper = "set_item_scalar" if value.shape.rank == 0 else "set_item"
    return f"kf_helpers.{helper}({args[0]}, np.intp({args[1]}), {args[2]}, " \
           f"{-1 if limit is None else int(limit)})"


def clusterable(op: Any) -> bool:
    """Whether autoclustering may put this op in a cluster: only the integer-indexed
    StridedSlice it clustered before indexing.py (`x[i]`, `x[1, 2]`), also inside loop
    bodies. Slices, gathers and TensorArray writes lower under jit_compile=True; in
    clusters, a keras RNN's While (its body slices `x[:, i]`) joined a cluster and the
    compiled loop's recorded history (Python ints for the counter) reached the Python
    runtime's WhileGrad, which failed (tests/keras/test_recurrent_loops.py, autoclustered)."""
    spec = op.attrs.get("spec") if op.type == "StridedSlice" else None
    return spec is not None and (spec == (_FED,) or bool(spec) and
                                 all(type(e) is int for e in spec))


RULES = {"StridedSlice": strided_slice, "GatherV2": gather, "GatherGrad": gather_grad,
         "TensorListSetItem": set_item}
