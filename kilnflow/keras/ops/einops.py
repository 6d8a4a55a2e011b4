"""keras.ops.rearrange: einops' rearrange patterns ("b h w c -> b (h w) c",
"b (h w) c -> b h w c" with h=...) as one reshape, one transpose and one reshape."""
from __future__ import annotations

from typing import Any, Dict, List

import kilnflow as kf
from kilnflow.keras.ops.convert import to_tensor


def _groups(side: str, pattern: str) -> List[List[str]]:
    """'b (h w) c' -> [['b'], ['h', 'w'], ['c']]."""
    groups: List[List[str]] = []
    current = None
    for token in side.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            if current is not None:
                raise ValueError(f"rearrange: nested parentheses in {pattern!r}")
            current = []
        elif token == ")":
            if current is None:
                raise ValueError(f"rearrange: unbalanced parentheses in {pattern!r}")
            groups.append(current)
            current = None
        elif not token.isidentifier():
            raise ValueError(f"rearrange: unsupported axis {token!r} in {pattern!r} (names "
                             "and parenthesised groups only)")
        elif current is not None:
            current.append(token)
        else:
            groups.append([token])
    if current is not None:
        raise ValueError(f"rearrange: unbalanced parentheses in {pattern!r}")
    return groups


def rearrange(tensor: Any, pattern: str, **axes_lengths: int) -> Any:
    """Reorder, merge and split axes as an einops pattern says."""
    x = to_tensor(tensor)
    if "->" not in pattern:
        raise ValueError(f"rearrange: pattern needs '->', got {pattern!r}")
    left, right = (_groups(side, pattern) for side in pattern.split("->"))
    names_in = [n for g in left for n in g]
    names_out = [n for g in right for n in g]
    if sorted(names_in) != sorted(names_out) or len(set(names_in)) != len(names_in):
        raise ValueError(f"rearrange: both sides must name the same axes once: {pattern!r}")
    if len(left) != x.shape.rank:
        raise ValueError(f"rearrange: {pattern!r} has {len(left)} input axes, the tensor has "
                         f"rank {x.shape.rank}")
    sizes: Dict[str, Any] = dict(axes_lengths)
    dims = x.shape.as_list()
    for axis, group in enumerate(left):
        dim = dims[axis] if dims[axis] is not None else kf.shape(x)[axis]
        unknown = [n for n in group if n not in sizes]
        if len(unknown) > 1:
            raise ValueError(f"rearrange: cannot infer {unknown} in {pattern!r}; pass their "
                             "lengths as keyword arguments")
        known = 1
        for n in group:
            if n in sizes:
                known = known * sizes[n]
        if unknown:
            sizes[unknown[0]] = dim // known
    x = kf.reshape(x, [sizes[n] for n in names_in])
    x = kf.transpose(x, [names_in.index(n) for n in names_out])
    out_shape = []
    for group in right:
        size = 1
        for n in group:
            size = size * sizes[n]
        out_shape.append(size)
    return kf.reshape(x, out_shape)


__all__ = ["rearrange"]
