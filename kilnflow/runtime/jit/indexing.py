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

from kilnflow.runtime.jit import tensorlist

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


def strided_slice_grad(op: Any, args: List[str]) -> Optional[str]:
    """StridedSlice's gradient: dy placed at `x[spec]` of zeros(x's shape), the index
    passed to `kf_lists.place` as a tuple of ints and slices (newaxis is not lowered)."""
    rank = op.outputs[0].shape.rank
    spec = op.attrs["spec"]
    if not rank or any(e is None for e in spec):
        return None
    dy, s = args[:2]
    fed = iter(args[2:])
    dims = [f"np.intp({s}[{d}])" for d in range(rank)]
    consumed = sum(1 for e in spec if e != _ELLIPSIS)
    parts: List[str] = []
    for e in spec:
        if e == _ELLIPSIS:
            parts += ["slice(None, None, None)"] * (rank - consumed)
        elif isinstance(e, tuple):
            parts.append("slice(" + ", ".join("None" if p is None else next(fed) if p == _FED
                                              else str(int(p)) for p in e[1:]) + ")")
        else:
            value = next(fed) if e == _FED else str(int(e))
            parts.append(f"kf_helpers.checked_index({value}, {dims[len(parts)]})")
    from kilnflow.runtime.jit.lower import dtype_text  # lower imports this module
    zeros = f"np.zeros(({', '.join(dims)},), {dtype_text(op.outputs[0].dtype)})"
    return f"kf_lists.place({zeros}, ({''.join(p + ', ' for p in parts)}), {dy})"


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


def set_item(op: Any, args: List[str], in_place: bool = False) -> Optional[str]:
    """TensorArray.write: a buffer of the element's rank plus one (element_shape=, unstack,
    or a loop variable typed from its writes by tensorlist.typed), or an unwritten
    TensorArray's empty [n, 0] start, retyped to that rank here. Writes whose static shapes
    disagree raise TF's trace-time ValueError. `in_place`: the loop owns the buffer (no
    history keeps its states), so a write that needs no growth stores into it."""
    buffer, _, value = op.inputs
    rank = value.shape.rank
    if rank is None or buffer.shape.rank is None or buffer.dtype != value.dtype:
        return None
    b = args[0]
    if buffer.shape.rank != rank + 1 or not buffer.shape[1:].is_compatible_with(value.shape):
        if not tensorlist.statically_empty(buffer):
            raise tensorlist.inconsistent(value.shape, buffer.shape[1:])
        if buffer.shape.rank != rank + 1:
            b = f"np.zeros(({b}.shape[0],{' 0,' * rank}), {b}.dtype)"
    limit = op.attrs.get("limit")
    helper = ("kf_lists." if in_place else "kf_helpers.") + \
        ("set_item_scalar" if rank == 0 else "set_item") + ("_in_place" if in_place else "")
    return f"{helper}({b}, np.intp({args[1]}), {args[2]}, " \
           f"{-1 if limit is None else int(limit)})"


def dynamic_range(op: Any, args: List[str]) -> Optional[str]:
    """`kf.range` with tensor bounds (a TensorArray gradient's row numbers)."""
    if op.outputs[0].dtype.name not in ("int32", "int64"):
        return None
    start, limit, delta = args
    return f"kf_lists.arange(np.int64({start}), np.int64({limit}), np.int64({delta}))" \
        f".astype(np.{op.outputs[0].dtype.name})"


def dynamic_fill(op: Any, args: List[str]) -> Optional[str]:
    """`kf.fill(shape_tensor, value)`: the dims read at run time (a gradient's seed)."""
    from kilnflow.runtime.jit.lower import literal  # lower imports this module
    rank = op.outputs[0].shape.rank
    value = literal(op.attrs["value"], op.attrs["dtype"])
    dims = "".join(f"np.intp({args[0]}[{d}]), " for d in range(rank))
    return f"np.full(({dims}), {value})" if rank else value


def sum_to_shape(op: Any, args: List[str]) -> Optional[str]:
    """SumToShape (a gradient summed back to an input's shape) when the target's dims are
    known only at run time (a stacked TensorArray's [None, None]): the leading dims summed,
    then each dim kept or summed to 1 by `kf_lists.sum_to` on an (outer, n, inner) view."""
    src, dst = op.inputs[0].shape.rank, op.outputs[0].shape.rank
    if src is None or not dst or src < dst or op.outputs[0].dtype.name not in (
            "float32", "float64"):
        return None
    x, s = args
    lead = src - dst
    target = [f"np.intp({s}[{d}])" for d in range(dst)]
    cur = x
    if lead:
        summed = " * ".join(f"{x}.shape[{d}]" for d in range(lead))
        rest = " * ".join(f"{x}.shape[{d}]" for d in range(lead, src))
        cur = f"kf_lists.sum_to(np.ascontiguousarray({x}).reshape((1, {summed}, {rest})), 1)"
    for d in range(dst):
        outer = " * ".join(target[:d]) or "1"
        inner = " * ".join(f"{x}.shape[{lead + k}]" for k in range(d + 1, dst)) or "1"
        cur = f"kf_lists.sum_to(np.ascontiguousarray({cur}).reshape(({outer}, " \
            f"{x}.shape[{lead + d}], {inner})), {target[d]})"
    return f"np.ascontiguousarray({cur}).reshape(({', '.join(target)},))"


RULES = {"StridedSlice": strided_slice, "GatherV2": gather, "GatherGrad": gather_grad,
         "TensorListSetItem": set_item, "DynamicRange": dynamic_range,
         "DynamicFill": dynamic_fill,
         "StridedSliceGrad": strided_slice_grad}
