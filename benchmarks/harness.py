"""The timing harness: interleaved rounds, medians, paired ratios, targets and tables.

A workload returns Cases. A Case is a handful of Variants (one of them the NumPy floor)
timed in the same process: each round times every variant once, in a rotated order, so
slow drift of a noisy machine hits all variants alike. A variant's figure is the median
of its per-call times over the rounds; its ratio is the median over rounds of
(variant time / floor time in that round), which cancels drift that lasts longer than
a round. Speed claims are these ratios, never absolute times from different runs.
"""
from __future__ import annotations

import math
import statistics
import time
import timeit
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Union


@dataclass(frozen=True)
class Config:
    """How hard to measure. mode: 'full' (default), 'quick' (smaller sizes, fewer rounds)
    or 'smoke' (tiny sizes, one round of one call: only proves the workload runs)."""

    mode: str = "full"

    def pick(self, full: Any, quick: Any = None, smoke: Any = None) -> Any:
        """The value for this mode; quick falls back to full, smoke to quick."""
        if self.mode == "smoke" and smoke is not None:
            return smoke
        if self.mode in ("quick", "smoke") and quick is not None:
            return quick
        return full

    @property
    def smoke(self) -> bool:
        return self.mode == "smoke"

    @property
    def min_rounds(self) -> int:
        return self.pick(9, 5, 1)

    @property
    def max_rounds(self) -> int:
        return self.pick(41, 15, 1)

    @property
    def budget_s(self) -> float:
        """Stop adding rounds (past min_rounds) once a case has run this long."""
        return self.pick(25.0, 5.0, 0.0)

    @property
    def sample_s(self) -> float:
        """Aim for samples of about this long: many calls of a fast variant per sample."""
        return self.pick(0.02, 0.01, 0.0)


@dataclass
class Variant:
    """One way of doing a case's work.

    `run` is a no-argument callable, or a statement string executed with `namespace` as its
    globals (no wrapper call: the right form for sub-microsecond work). `number` fixes the
    calls per sample (1 for first-call timings); otherwise it is calibrated. A variant
    whose feature or framework is missing has `unavailable` set to the reason instead.
    """

    name: str
    run: Union[Callable[[], Any], str, None] = None
    namespace: Dict[str, Any] = field(default_factory=dict)
    number: Optional[int] = None
    unavailable: Optional[str] = None


@dataclass
class Stats:
    median: float
    p25: float
    p75: float
    minimum: float
    rounds: int
    number: int
    ratio: Optional[float] = None        # paired median ratio to the case's floor
    copy_ratio: Optional[float] = None   # paired median ratio to the copy floor

    @property
    def spread(self) -> float:
        """Half the interquartile range relative to the median: the noise of this row."""
        return (self.p75 - self.p25) / 2 / self.median if self.median > 0 else 0.0


@dataclass
class Target:
    """A figure an issue asks for. kind: 'ratio' (variant / floor <= limit), 'copy_ratio'
    (variant / copy floor <= limit), 'time' (median seconds <= limit), 'per_unit' (seconds
    per unit of work <= limit) or 'speedup' (`other` / variant >= limit)."""

    text: str
    variant: str
    kind: str
    limit: float
    other: Optional[str] = None
    peers: str = ""  # the peer figures, for the reader

    def measured(self, case: "Case") -> Optional[float]:
        stats = case.stats.get(self.variant)
        if stats is None:
            return None
        if self.kind == "ratio":
            return stats.ratio
        if self.kind == "copy_ratio":
            return stats.copy_ratio
        if self.kind == "time":
            return stats.median
        if self.kind == "per_unit":
            return stats.median / case.per_unit[1] if case.per_unit else None
        if self.kind == "speedup":
            other = case.stats.get(self.other or "")
            return other.median / stats.median if other and stats.median > 0 else None
        raise ValueError(f"unknown target kind {self.kind!r}")

    def met(self, case: "Case") -> Optional[bool]:
        value = self.measured(case)
        if value is None:
            return None
        return value >= self.limit if self.kind == "speedup" else value <= self.limit

    def format_value(self, case: "Case") -> str:
        value = self.measured(case)
        if value is None:
            return "n/a"
        if self.kind in ("time", "per_unit"):
            return format_seconds(value)
        return f"{value:.2f}x"


@dataclass
class Case:
    """One table: variants doing the same work, the floor they are compared to, targets."""

    title: str
    variants: List[Variant]
    floor: str
    copy_floor: Optional[str] = None          # np.copyto of the same size (elementwise)
    per_unit: Optional[tuple] = None          # ("iteration", count per call)
    targets: List[Target] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    stats: Dict[str, Stats] = field(default_factory=dict)
    errors: Dict[str, str] = field(default_factory=dict)
    unavailable: Optional[str] = None         # the whole case is waiting for a feature

    def to_json(self) -> dict:
        return {
            "title": self.title, "floor": self.floor, "copy_floor": self.copy_floor,
            "per_unit": list(self.per_unit) if self.per_unit else None,
            "unavailable": self.unavailable,
            "variants": [{
                "name": v.name, "unavailable": v.unavailable, "error": self.errors.get(v.name),
                **({k: getattr(self.stats[v.name], k) for k in (
                    "median", "p25", "p75", "minimum", "rounds", "number", "ratio",
                    "copy_ratio")} if v.name in self.stats else {}),
            } for v in self.variants],
            "targets": [{"text": t.text, "peers": t.peers, "variant": t.variant,
                         "kind": t.kind, "limit": t.limit, "measured": t.measured(self),
                         "met": t.met(self)} for t in self.targets],
            "notes": list(self.notes),
        }


def _timer(variant: Variant) -> timeit.Timer:
    if isinstance(variant.run, str):
        return timeit.Timer(variant.run, globals=variant.namespace)
    return timeit.Timer("run()", globals={"run": variant.run})


def measure(case: Case, config: Config) -> Case:
    """Time every available variant of `case` in interleaved rounds; fills case.stats.

    A variant that raises is recorded in case.errors and dropped; the others go on.
    """
    if case.unavailable:
        return case
    timers: Dict[str, timeit.Timer] = {}
    numbers: Dict[str, int] = {}
    firsts: Dict[str, float] = {}
    for v in case.variants:
        if v.unavailable:
            continue
        try:
            timer = _timer(v)
            first = timer.timeit(1)                # warm-up (traces, caches, page faults)
            once = first if config.smoke else timer.timeit(1)
        except Exception as exc:  # noqa: BLE001 - report it in the table, keep going
            case.errors[v.name] = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
            continue
        timers[v.name] = timer
        firsts[v.name] = first
        if config.smoke:
            numbers[v.name] = 1
        else:
            numbers[v.name] = v.number or max(1, int(config.sample_s / max(once, 1e-9)))
    samples: Dict[str, List[float]] = {name: [] for name in timers}
    if config.smoke:  # the warm-up call is the measurement: it only has to run
        for name in timers:
            samples[name].append(firsts[name])
    else:
        names = list(timers)
        start = time.perf_counter()
        rounds = 0
        while rounds < config.min_rounds or (
                rounds < config.max_rounds and time.perf_counter() - start < config.budget_s):
            shift = rounds % max(1, len(names))
            for name in names[shift:] + names[:shift]:
                n = numbers[name]
                samples[name].append(timers[name].timeit(n) / n)
            rounds += 1
    for name, values in samples.items():
        ordered = sorted(values)
        case.stats[name] = Stats(
            median=statistics.median(ordered), p25=_quantile(ordered, 0.25),
            p75=_quantile(ordered, 0.75), minimum=ordered[0], rounds=len(values),
            number=numbers[name])
    for name, stats in case.stats.items():
        stats.ratio = _paired_ratio(samples, name, case.floor)
        if case.copy_floor:
            stats.copy_ratio = _paired_ratio(samples, name, case.copy_floor)
    return case


def _quantile(ordered: Sequence[float], q: float) -> float:
    if len(ordered) == 1:
        return ordered[0]
    pos = q * (len(ordered) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _paired_ratio(samples: Dict[str, List[float]], name: str, floor: str) -> Optional[float]:
    if floor not in samples or not samples[floor]:
        return None
    pairs = [a / b for a, b in zip(samples[name], samples[floor]) if b > 0]
    return statistics.median(pairs) if pairs else None


# ---------------------------------------------------------------- printing

def format_seconds(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.3g} us"
    return f"{seconds * 1e9:.3g} ns"


def format_case(case: Case) -> str:
    """The case as a plain-text table, then its targets and notes."""
    lines = [f"-- {case.title}"]
    if case.unavailable:
        lines.append(f"   not available yet: {case.unavailable}")
        lines.extend(f"   note: {n}" for n in case.notes)
        return "\n".join(lines)
    header = ["variant", "median", "x floor"]
    if case.copy_floor:
        header.append("x copy")
    if case.per_unit:
        header.append(f"per {case.per_unit[0]}")
    header.append("spread")
    rows = [header]
    for v in case.variants:
        stats = case.stats.get(v.name)
        if stats is None:
            reason = (f"-- {v.unavailable}" if v.unavailable else
                      f"ERROR {case.errors.get(v.name, 'not run')}")
            rows.append([v.name, reason])
            continue
        label = v.name + (" [floor]" if v.name == case.floor else "") + (
            " [copy]" if v.name == case.copy_floor else "")
        row = [label, format_seconds(stats.median),
               f"{stats.ratio:.2f}x" if stats.ratio is not None else "-"]
        if case.copy_floor:
            row.append(f"{stats.copy_ratio:.2f}x" if stats.copy_ratio is not None else "-")
        if case.per_unit:
            row.append(format_seconds(stats.median / case.per_unit[1]))
        row.append(f"+-{stats.spread * 100:.0f}%")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows if len(r) > i and len(r) == len(header))
              for i in range(len(header))]
    for r in rows:
        if len(r) != len(header):  # an unavailable/error row: name then the reason
            lines.append(f"   {r[0].ljust(widths[0])}  {r[1]}")
            continue
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        lines.append("   " + "  ".join(cells))
    for t in case.targets:
        met = t.met(case)
        verdict = {True: "met", False: "MISSED", None: "not measured"}[met]
        peers = f"  [{t.peers}]" if t.peers else ""
        lines.append(f"   target: {t.text}: {t.format_value(case)} -> {verdict}{peers}")
    lines.extend(f"   note: {n}" for n in case.notes)
    return "\n".join(lines)


def finite_results(case: Case) -> bool:
    """True when every measured figure of `case` is a finite number (for smoke tests)."""
    values: List[Optional[float]] = []
    for s in case.stats.values():
        values += [s.median, s.p25, s.p75, s.minimum, s.ratio]
    return all(v is not None and math.isfinite(v) for v in values)
