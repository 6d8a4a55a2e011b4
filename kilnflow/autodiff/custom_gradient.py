"""kf.custom_gradient: a function whose gradient the user defines, as in TF.

The decorated function returns (y, grad_fn); grad_fn(*dy) returns one gradient per tensor
argument. y is computed with no tape watching; a CustomGradient op then passes it through,
so tapes (eager) and graph gradients (inside kf.function) call grad_fn instead of
differentiating the forward computation. Functions whose grad_fn takes `variables`
(gradients for variables read inside) are not supported yet.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from kilnflow import nest
from kilnflow.context import no_tapes
from kilnflow.core.opdef import bind
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.custom_gradient import CUSTOM_GRADIENT


def custom_gradient(f: Callable) -> Callable:
    """Decorator: `f(*x)` returns `(y, grad_fn)` and grad_fn(*dy) gives the gradients of x.

    >>> import kilnflow as kf
    >>> @kf.custom_gradient
    ... def clipped_identity(x):
    ...     return kf.identity(x), lambda dy: kf.clip_by_value(dy, -1.0, 1.0)
    >>> x = kf.constant(2.0)
    >>> with kf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = clipped_identity(x) * 5.0
    >>> float(tape.gradient(y, x))
    1.0
    """
    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        sources = [convert_to_tensor(a) for a in args]
        with no_tapes():  # the forward computation is not what gets differentiated
            result, grad_fn = f(*sources, **kwargs)
        if "variables" in inspect.signature(grad_fn).parameters:
            raise NotImplementedError("custom_gradient: gradient functions taking "
                                      "`variables` are not supported yet")
        flat = [convert_to_tensor(y) for y in nest.flatten(result)]
        outputs = bind(CUSTOM_GRADIENT, sources + flat,
                       {"grad_fn": grad_fn, "n_sources": len(sources)})
        return nest.pack_sequence_as(result, list(outputs))
    return wrapper
