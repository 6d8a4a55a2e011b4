"""keras.utils.Progbar: the progress line Keras prints. On a terminal it redraws one line
in place (at most every `interval` seconds); anywhere else (pipes, CI logs, captured
notebook output) it prints one complete line when the target is reached, so logs hold one
line per epoch instead of nothing or a thousand carriage returns."""
from __future__ import annotations

import sys
import time
from typing import Any, Optional


class Progbar:
    """Progbar(target).update(current, values=[("loss", 0.3)]): a bar of `width` cells,
    the step count, the time (ETA while running) and the latest or averaged values.

    verbose=1: live bar on a terminal, one final line elsewhere; verbose=2: the final line
    only; verbose=0: nothing. Metrics listed in `stateful_metrics` are shown as given;
    the others are averaged over the steps, as in Keras.
    """

    def __init__(self, target: Optional[int], width: int = 30, verbose: int = 1,
                 interval: float = 0.05, stateful_metrics: Any = None,
                 unit_name: str = "step", stream: Any = None):
        self.target, self.width, self.verbose = target, width, verbose
        self.interval, self.unit_name = interval, unit_name
        self.stateful_metrics = stateful_metrics if hasattr(stateful_metrics, "__contains__") \
            and not isinstance(stateful_metrics, (list, tuple)) else set(stateful_metrics or ())
        self.stream = stream
        self._values: dict = {}
        self._seen = 0
        self._start = time.perf_counter()
        self._last_draw = 0.0
        out = self._out()
        isatty = getattr(out, "isatty", None)
        self._dynamic = bool(isatty and isatty())

    def _out(self) -> Any:
        return self.stream if self.stream is not None else sys.stdout

    def update(self, current: int, values: Any = None, finalize: Optional[bool] = None) -> None:
        """Record progress `current` (steps done) and this step's `values`."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in (values.items() if isinstance(values, dict) else values or []):
            if name in self.stateful_metrics:
                self._values[name] = (float(value), 1)
            else:
                total, count = self._values.get(name, (0.0, 0))
                steps = max(current - self._seen, 1)
                self._values[name] = (total + float(value) * steps, count + steps)
        self._seen = current
        if self.verbose == 0:
            return
        if not finalize:
            now = time.perf_counter()
            if self.verbose != 1 or not self._dynamic or now - self._last_draw < self.interval:
                return
            self._last_draw = now
        self._draw(current, finalize)

    def add(self, n: int, values: Any = None) -> None:
        self.update(self._seen + n, values)

    def _draw(self, current: int, final: bool) -> None:
        total = self.target
        elapsed = time.perf_counter() - self._start
        per_step = elapsed / max(current, 1)
        if total:
            filled = int(self.width * min(current, total) / total)
            arrow = ">" if filled < self.width else ""
            bar = "[" + "=" * max(filled - len(arrow), 0) + arrow + \
                "." * (self.width - filled) + "]"
            head = f"{current:>{len(str(total))}}/{total} {bar}"
        else:
            head = f"{current}"
        if final or not total:
            timing = f"{elapsed:.0f}s {per_step * 1000:.0f}ms/{self.unit_name}"
        else:
            timing = f"ETA: {per_step * (total - current):.0f}s"
        shown = " - ".join(f"{k}: {total_ / max(count, 1):.4f}"
                           for k, (total_, count) in self._values.items())
        line = f"{head} - {timing}" + (f" - {shown}" if shown else "")
        out = self._out()
        if self._dynamic and self.verbose == 1:
            out.write("\r" + line + ("\n" if final else ""))
        else:
            out.write(line + "\n")
        out.flush()
