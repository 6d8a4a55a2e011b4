"""Run the benchmark workloads and print, per case, median times and ratios to the floor.

    python -m benchmarks.run                      # every workload, full sizes
    python -m benchmarks.run call_overhead --quick
    python -m benchmarks.run --list

BLAS is pinned to one thread: unless OPENBLAS_NUM_THREADS & co. are already 1, this
module re-executes itself with them set, before NumPy is imported (threadpoolctl, when
installed, is applied as well). Results also go to benchmarks/results/<time>.json.
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import platform
import subprocess
import sys
import traceback
from typing import Any, List, Optional, Sequence

# Every variable a BLAS / OpenMP runtime reads for its thread count.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def peer_variables(threads: int) -> dict:
    """What peers read for their intra-op thread count, at `threads` (KF_PEER_THREADS,
    default 1; torch and TF are also set in workloads/_common.peer): XLA's flags (JAX's
    CPU client keeps its own pool regardless, measured) and TF's variables."""
    eigen = "true" if threads > 1 else "false"
    return {"XLA_FLAGS": f"--xla_cpu_multi_thread_eigen={eigen} "
                         f"intra_op_parallelism_threads={threads}",
            "TF_NUM_INTRAOP_THREADS": str(threads), "TF_NUM_INTEROP_THREADS": "1"}


_REEXEC_MARK = "KF_BENCH_PINNED"

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def single_thread_env(environ: Optional[dict] = None) -> dict:
    """A copy of `environ` with BLAS pinned to one thread, and peers to KF_PEER_THREADS
    (default 1)."""
    env = dict(os.environ if environ is None else environ)
    for name in THREAD_VARIABLES:
        env[name] = "1"
    for name, value in peer_variables(int(env.get("KF_PEER_THREADS", "1"))).items():
        env.setdefault(name, value)
    return env


def _pinned() -> bool:
    return all(os.environ.get(name) == "1" for name in THREAD_VARIABLES)


def _reexec_pinned(argv: Sequence[str], module: str = "benchmarks.run") -> None:
    """Re-run `python -m module argv` with BLAS pinned, unless it already is or NumPy is
    already loaded (then it is too late; threadpoolctl, if installed, still applies)."""
    if _pinned() or os.environ.get(_REEXEC_MARK) or "numpy" in sys.modules:
        return
    env = single_thread_env()
    env[_REEXEC_MARK] = "1"
    os.execve(sys.executable, [sys.executable, "-m", module, *argv], env)


def _limit_threads_in_process() -> Any:
    """threadpoolctl's limiter when installed (belt and braces), else None."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits(limits=1, user_api="blas")


def workload_names() -> List[str]:
    from benchmarks.workloads import WORKLOADS
    return list(WORKLOADS)


def load_workload(name: str) -> Any:
    return importlib.import_module(f"benchmarks.workloads.{name}")


def run_workload(name: str, config: Any, echo: bool = True, keep_going: bool = True) -> dict:
    """Measure every case of workload `name`; print each table as it finishes.

    A workload that fails while building its cases (a check that kilnflow's result equals
    NumPy's, say) is reported and, with keep_going, the run goes on with the next one.
    The returned dict holds the JSON form of each case, and the Case objects in "_cases".
    """
    from benchmarks.harness import format_case, measure
    module = load_workload(name)
    if echo:
        print(f"\n== {name}: {module.DESCRIPTION}", flush=True)
    out: dict = {"name": name, "description": module.DESCRIPTION, "cases": [], "_cases": []}
    try:
        for case in module.cases(config):
            measure(case, config)
            if echo:
                print(format_case(case), flush=True)
            out["cases"].append(case.to_json())
            out["_cases"].append(case)
            case.variants = [_forget(v) for v in case.variants]  # free big inputs now
    except Exception as exc:  # noqa: BLE001 - one broken workload must not hide the rest
        if not keep_going:
            raise
        out["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        if echo:
            print(f"-- ERROR, workload stopped: {out['error']}", flush=True)
            traceback.print_exc()
    return out


def _forget(variant: Any) -> Any:
    variant.run = None
    variant.namespace = {}
    return variant


def environment() -> dict:
    import numpy as np
    info = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": " ".join(["python -m benchmarks.run", *sys.argv[1:]]),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "blas_threads": {n: os.environ.get(n) for n in THREAD_VARIABLES},
        "threadpoolctl": _limit_active(),
        "loadavg_start": _loadavg(),
    }
    info["git_commit"] = _git_commit(os.path.dirname(os.path.dirname(RESULTS_DIR)))
    return info


def _git_commit(repo: str) -> Optional[str]:
    """HEAD's short hash, with '+local changes' when kilnflow/ differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=repo, check=False).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "kilnflow"],
                               capture_output=True, text=True, cwd=repo,
                               check=False).stdout.strip()
    except OSError:
        return None
    return (head + (" +local changes" if dirty else "")) if head else None


def _loadavg() -> Optional[list]:
    """1/5/15-minute load averages: above the CPU count, other work shares the machine."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


_LIMITER: Any = None


def _limit_active() -> bool:
    return _LIMITER is not None


def write_results(results: dict, directory: str = RESULTS_DIR) -> str:
    os.makedirs(directory, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = os.path.join(directory, f"{stamp}.json")
    clean = {**results, "workloads": [{k: v for k, v in w.items() if not k.startswith("_")}
                                      for w in results["workloads"]]}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(clean, fh, indent=1, default=_json_default)
    return path


def _json_default(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return repr(value)


def markdown(results: dict) -> str:
    """A saved results file as Markdown tables (what benchmarks/README.md shows)."""
    from benchmarks.harness import format_seconds

    def ratio(value: Any) -> str:
        return "-" if value is None else f"{value:.2f}x"

    lines = [f"Run {results['date']}, `{results['command']}`, mode {results['mode']}, "
             f"numpy {results['numpy']}, Python {results['python']}, {results['cpus']} CPUs, "
             f"BLAS pinned to 1 thread, commit {results.get('git_commit')}, load average "
             f"{results.get('loadavg_start')} at the start and {results.get('loadavg_end')} "
             f"at the end.", ""]
    targets = []
    for workload in results["workloads"]:
        lines.append(f"**{workload['name']}**: {workload['description']}")
        lines.append("")
        if workload.get("error"):
            lines += [f"error: `{workload['error']}`", ""]
        for case in workload["cases"]:
            lines += [f"*{case['title']}*", ""]
            if case["unavailable"]:
                lines += [f"not available yet: {case['unavailable']}", ""]
                continue
            per = case["per_unit"]
            head = ["variant", "median", "x floor"] + (["x copy"] if case["copy_floor"] else [])
            head += ([f"per {per[0]}"] if per else []) + ["spread"]
            lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for v in case["variants"]:
                name = v["name"] + (" (floor)" if v["name"] == case["floor"] else "")
                if "median" not in v:
                    reason = v["unavailable"] or f"error: {v['error']}"
                    lines.append(f"| {name} | {reason} |" + " |" * (len(head) - 2))
                    continue
                row = [name, format_seconds(v["median"]), ratio(v["ratio"])]
                row += [ratio(v["copy_ratio"])] if case["copy_floor"] else []
                row += [format_seconds(v["median"] / per[1])] if per else []
                row.append(f"+-{(v['p75'] - v['p25']) / 2 / v['median'] * 100:.0f}%")
                lines.append("| " + " | ".join(row) + " |")
            lines.append("")
            for t in case["targets"]:
                value = t["measured"]
                if value is None:
                    shown = "not measured"
                elif t["kind"] in ("time", "per_unit"):
                    shown = format_seconds(value)
                else:
                    shown = f"{value:.2f}x"
                verdict = {True: "met", False: "**missed**", None: "-"}[t["met"]]
                targets.append(f"| {workload['name']} | {t['text']} | {t['peers'] or '-'} | "
                               f"{shown} | {verdict} |")
    lines += ["**Targets**", "", "| workload | target | peers (issue) | measured | |",
              "|---|---|---|---|---|"] + targets
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="*", help="names to run (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="smaller sizes and fewer rounds (a minute or so in all)")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, one call each: only checks that everything runs")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    parser.add_argument("--no-save", action="store_true", help="don't write the JSON file")
    parser.add_argument("--markdown", metavar="RESULTS_JSON",
                        help="print a saved results file as Markdown tables and exit")
    args = parser.parse_args(argv)
    if args.markdown:
        with open(args.markdown, encoding="utf-8") as fh:
            print(markdown(json.load(fh)))
        return 0
    _reexec_pinned(argv)

    global _LIMITER
    _LIMITER = _limit_threads_in_process()
    names = workload_names()
    if args.list:
        for name in names:
            print(f"{name:18s} {load_workload(name).DESCRIPTION}")
        return 0
    unknown = [n for n in args.workloads if n not in names]
    if unknown:
        parser.error(f"unknown workload(s) {unknown}; known: {names}")
    from benchmarks.harness import Config
    config = Config("smoke" if args.smoke else "quick" if args.quick else "full")
    results = {**environment(), "mode": config.mode, "workloads": []}
    if not _pinned() and _LIMITER is None:
        print("warning: BLAS is not pinned to one thread (NumPy was imported first and "
              "threadpoolctl is not installed)", file=sys.stderr)
    print(f"kilnflow benchmarks, mode={config.mode}, {results['date']}, numpy "
          f"{results['numpy']}, {results['cpus']} CPUs, BLAS threads pinned to 1: "
          f"{_pinned() or _LIMITER is not None}, load average {results['loadavg_start']}")
    for name in args.workloads or names:
        results["workloads"].append(run_workload(name, config))
    results["loadavg_end"] = _loadavg()
    print(f"\nload average at the end: {results['loadavg_end']}")
    if not args.no_save:
        print(f"\nresults written to {write_results(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
