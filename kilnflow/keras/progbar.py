"""keras.utils.Progbar: the progress line Keras 3 prints.

verbose=1 on a terminal redraws one line in place (at most every `interval` seconds), with
Keras 3's bar: `3/3 ━━━━━━━━━━━━━━━━━━━━ 0s 3ms/step - loss: 0.2197`, coloured as Keras
colours it. Anywhere else (pipes, CI logs, captured notebook output) it prints that line once,
uncoloured, when the bar is finalized: one complete line per epoch instead of a thousand
carriage returns (Keras 3 itself redraws even into pipes). verbose=2 prints Keras 3's
semi-verbose line at the end only: `3/3 - 0s - 3ms/step - loss: 0.2197`.
"""
from __future__ import annotations

import math
import sys
import time
from typing import Any, Optional

BOLD, GREEN, GREY, RESET = "\x1b[1m", "\x1b[32m", "\x1b[37m", "\x1b[0m"
_INTERACTIVE = {"enabled": True}


def enable_interactive_logging() -> None:
    """Progress bars and messages go to stdout (the default)."""
    _INTERACTIVE["enabled"] = True


def disable_interactive_logging() -> None:
    """Progress bars and messages go to Python's `logging` (INFO, logger 'kilnflow.keras')
    instead of stdout: one record per finished line."""
    _INTERACTIVE["enabled"] = False


def is_interactive_logging_enabled() -> bool:
    return _INTERACTIVE["enabled"]


class _LogStream:
    """A write()-able stream that logs each complete line (interactive logging off)."""

    def __init__(self) -> None:
        self._pending = ""

    def write(self, text: str) -> None:
        import logging
        self._pending += text.replace("\r", "")
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            logging.getLogger("kilnflow.keras").info(line)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def output_stream(stream: Any = None) -> Any:
    """Where progress goes: `stream`, else stdout, or the log when interactive logging is
    off."""
    if stream is not None:
        return stream
    return sys.stdout if _INTERACTIVE["enabled"] else _LogStream()


def format_time(per_unit: float, unit_name: str) -> str:
    """' 3ms/step', ' 2s/step' or ' 40us/step', as Keras words a step's duration."""
    if per_unit >= 1 or per_unit == 0:
        return f" {per_unit:.0f}s/{unit_name}"
    if per_unit >= 1e-3:
        return f" {per_unit * 1000.0:.0f}ms/{unit_name}"
    return f" {per_unit * 1000000.0:.0f}us/{unit_name}"


def _value(avg: float, absolute: bool = True) -> str:
    return f" {avg:.4f}" if (abs(avg) if absolute else avg) > 1e-3 else f" {avg:.4e}"


class Progbar:
    """Progbar(target).update(current, values=[("loss", 0.3)]): the step count, a bar of
    `width` cells, the time (ETA while running) and the values.

    Values named in `stateful_metrics` are shown as given; the others are averaged over the
    steps (and shown as given by a finalizing update), as in Keras 3. `stateless_metrics`
    is the other way round: only those are averaged.
    """

    def __init__(self, target: Optional[int], width: int = 20, verbose: int = 1,
                 interval: float = 0.05, stateful_metrics: Any = None,
                 stateless_metrics: Any = None, unit_name: str = "step",
                 stream: Any = None):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError("Only one of `stateful_metrics` or `stateless_metrics` can be "
                             "provided.")
        self.target, self.width, self.verbose = target, width, verbose
        self.interval, self.unit_name = interval, unit_name
        self.stateful_metrics = None if stateless_metrics is not None else \
            set(stateful_metrics or ())
        self.stateless_metrics = set(stateless_metrics) if stateless_metrics is not None \
            else None
        self.stream = stream
        self._values: dict = {}
        self._seen = 0
        self._start = time.time()
        self._after_first_step: Optional[float] = None
        self._last_update = 0.0
        self._prev_width = 0
        isatty = getattr(self._out(), "isatty", None)
        self._dynamic = bool(isatty and isatty())

    def _out(self) -> Any:
        if self.stream is None and not _INTERACTIVE["enabled"]:
            self.stream = _LogStream()
        return output_stream(self.stream)

    def _stateless(self, name: str) -> bool:
        if self.stateful_metrics is not None:
            return name not in self.stateful_metrics
        return name in self.stateless_metrics

    def update(self, current: int, values: Any = None, finalize: Optional[bool] = None) -> None:
        """Record progress `current` (steps done) and this step's `values`."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in (values.items() if isinstance(values, dict) else values or []):
            value = float(value)
            if self._stateless(name) and not finalize:
                steps = max(current - self._seen, 1)
                total, count = self._values.get(name, (0.0, 0))
                self._values[name] = (total + value * steps, count + steps)
            else:
                self._values[name] = (value, 1)
        self._seen = current
        now = time.time()
        per_unit = self._step_duration(current, now)
        if self.verbose == 1:
            if not finalize and (not self._dynamic or now - self._last_update < self.interval):
                return
            self._write(self._line(current, now, per_unit, finalize), finalize)
        elif self.verbose == 2 and finalize and self.target:
            digits = int(math.log10(self.target)) + 1
            line = f"{current:{digits}d}/{self.target} - {now - self._start:.0f}s -" + \
                format_time(per_unit, self.unit_name)
            line += "".join(f" - {k}:" + _value(t / max(1, c), absolute=False)
                            for k, (t, c) in self._values.items())
            self._out().write(line + "\n")
            self._out().flush()
        self._last_update = now

    def _line(self, current: int, now: float, per_unit: float, finalize: bool) -> str:
        colour = (lambda code, text: f"{code}{text}{RESET}") if self._dynamic else \
            (lambda code, text: text)
        if self.target:
            digits = int(math.log10(self.target)) + 1
            filled = int(self.width * current / self.target)
            bar = colour(BOLD, f"{current:{digits}d}/{self.target}") + " "
            if filled > 0:
                bar += colour(GREEN, "━" * filled)
            bar += colour(GREY, "━" * (self.width - filled))
        else:
            bar = "%7d/Unknown" % current
        if self.target and not finalize:
            eta = per_unit * (self.target - current)
            if eta > 3600:
                shown = "%d:%02d:%02d" % (eta // 3600, (eta % 3600) // 60, eta % 60)
            elif eta > 60:
                shown = "%d:%02d" % (eta // 60, eta % 60)
            else:
                shown = "%ds" % eta
            info = " " + colour(BOLD, shown)
        else:
            info = " " + colour(BOLD, f"{now - self._start:.0f}s")
        info += format_time(per_unit, self.unit_name)
        info += "".join(f" - {k}:" + _value(t / max(1, c)) for k, (t, c) in self._values.items())
        return bar + info

    def _write(self, line: str, finalize: bool) -> None:
        out = self._out()
        if self._dynamic:
            width = len(line)
            pad = " " * max(self._prev_width - width, 0)
            self._prev_width = width
            out.write("\r" + line + pad + ("\n" if finalize else ""))
        else:
            out.write(line + "\n")
        out.flush()

    def _step_duration(self, current: int, now: float) -> float:
        """Seconds per step, leaving out the first step (compilation) once past it."""
        if not current:
            return 0.0
        if self._after_first_step is not None and current > 1:
            per_unit = (now - self._after_first_step) / (current - 1)
        else:
            per_unit = (now - self._start) / current
        if current == 1:
            self._after_first_step = now
        return per_unit

    def add(self, n: int, values: Any = None) -> None:
        self.update(self._seen + n, values)
