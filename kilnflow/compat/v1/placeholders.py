"""placeholder_with_default: a graph input that passes `input` through unless fed.

Its static shape is the one given (dims may be None), so a Session may feed values of
other sizes; unfed, it is an identity (eagerly too, as in TF).
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.core.opdef import bind, defop
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor


def _rule(x: Any, *, shape: TensorShape) -> TensorSpec:
    if not shape.is_compatible_with(x.shape):
        raise ValueError(f"PlaceholderWithDefault: the default's shape {x.shape} is not "
                         f"compatible with shape {shape}")
    return TensorSpec(shape, x.dtype)


PLACEHOLDER_WITH_DEFAULT = defop("PlaceholderWithDefault", shape=_rule, check_eager=True,
                                 kernel=lambda x, *, shape: x,
                                 grad=lambda op, dy: [dy])


def placeholder_with_default(input: Any, shape: Any,  # noqa: A002 - TF's argument name
                             name: Optional[str] = None) -> Tensor:
    """`input`, or the value fed for it in Session.run.

    >>> import kilnflow as kf
    >>> v1 = kf.compat.v1
    >>> with kf.Graph().as_default():
    ...     x = v1.placeholder_with_default([1.0, 2.0], shape=[None])
    ...     y = x * 2.0
    ...     with v1.Session() as sess:
    ...         print(sess.run(y), sess.run(y, {x: [3.0]}))
    [2. 4.] [6.]
    """
    return bind(PLACEHOLDER_WITH_DEFAULT, (convert_to_tensor(input),),
                {"shape": TensorShape(shape)}, name or "PlaceholderWithDefault")
