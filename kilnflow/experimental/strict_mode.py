"""tf.experimental.enable_strict_mode: turn TF's deprecation warnings into errors.

kilnflow keeps no deprecated endpoints that warn, so strict mode has nothing to refuse
yet; the switch is recorded so code that calls it runs, and `strict_mode_enabled()`
lets a future deprecation raise instead of warn."""
from __future__ import annotations

_strict = [False]


def enable_strict_mode() -> None:
    """If called, deprecated behaviours raise instead of warning (see TF's strict mode)."""
    _strict[0] = True


def strict_mode_enabled() -> bool:
    """Whether enable_strict_mode() was called."""
    return _strict[0]
