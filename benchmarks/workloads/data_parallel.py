"""data_parallel: synchronous data-parallel MLP training on Ray workers
(MultiWorkerMirroredStrategy), the all-reduce cost per MB, scaling efficiency, and a
projection for larger clusters. Needs the `distributed` extra (Ray).

    python -m benchmarks.workloads.data_parallel [--steps 10] [--smoke] [--json out.json]

Not in benchmarks.run's list: it starts a Ray instance (seconds) and its figures are
throughputs, not ratios to a NumPy floor.

What is measured (one local Ray instance; the machine's cores are shared):
- examples/s of an MLP 256-512-512-10 (0.4 M parameters, 1.6 MB of float32 gradients),
  global batch 512, SGD, forward/backward in a kf.function: one process without Ray,
  1 Ray worker, 2 Ray workers (256 examples each). The driver splits each global batch
  and ships the shards; each worker all-reduces its gradients and updates its copy.
- the all-reduce: `replica_context.all_reduce(SUM)` of 0.01-16 MB between 2 workers,
  timed inside the workers (median of the slower worker); a least-squares line gives
  latency (ms) + cost per MB.
- the 1-worker step at B/2, for the per-example cost. (The one-process figure, no Ray,
  is for reference only: under the other jobs' load it varied most from run to run,
  15-57 ms per step, so the model is built from the 1-worker figures.)

Projection (a model, not a measurement). Assumptions, written down:
1. one dedicated core per worker (this 2-core machine, shared with other jobs, gives
   less: the measured 2-worker efficiency is a lower bound);
2. a step costs T(N) = T_fixed + c x (B/N) + T_allreduce(N): T_fixed (the driver's Ray
   calls, shipping shards, pulling weights, per-step overheads) and the per-example cost
   c come from the 1-worker step measured at B and B/2 (a line through both), and
   T_fixed is taken as independent of N;
3. compute is linear in the per-worker batch;
4. the all-reduce here is an all-gather through the object store: every worker fetches
   the other N-1 workers' gradients, T_allreduce(N) = latency + (N-1) x S x cost_per_MB
   for S MB of gradients; a ring all-reduce would move 2(N-1)/N x S per worker instead
   (its latency taken as the same constant, optimistic: a ring has 2(N-1) hops).
Efficiency(N) = T(1) x B_N / (N x T(N) x B_1): 1.0 is linear scaling. Strong scaling
keeps B = 512 global; weak scaling gives every worker 512 examples.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core per process, like a Ray worker

import numpy as np  # noqa: E402

import kilnflow as kf  # noqa: E402
from kilnflow import keras  # noqa: E402
from kilnflow.distribute.cluster_resolver import SimpleClusterResolver  # noqa: E402

SIZES = (256, 512, 512, 10)
BATCH = 512


def _params(sizes: tuple) -> list:
    rng = np.random.default_rng(0)
    out = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        out += [(rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32),
                np.zeros(b, np.float32)]
    return out


def _batches(sizes: tuple, batch: int, count: int) -> list:
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((batch, sizes[0])).astype(np.float32),
             rng.integers(0, sizes[-1], batch).astype(np.int64)) for _ in range(count)]


def _setup(strategy: Any, sizes: tuple, global_batch: int) -> Callable:
    """The replica step: gradients in a kf.function, the update through the optimizer
    (whose apply_gradients all-reduces across replicas)."""
    with strategy.scope():
        weights = [kf.Variable(p) for p in _params(sizes)]
        optimizer = keras.optimizers.SGD(0.01)

    @kf.function
    def gradients(x: Any, y: Any) -> Any:
        with kf.GradientTape() as tape:
            h = x
            for i in range(0, len(weights) - 2, 2):
                h = kf.nn.relu(kf.matmul(h, weights[i]) + weights[i + 1])
            logits = kf.matmul(h, weights[-2]) + weights[-1]
            per_example = kf.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
            loss = kf.distribute.compute_average_loss(per_example,
                                                      global_batch_size=global_batch)
        return loss, tape.gradient(loss, weights)

    def step(x: Any, y: Any) -> Any:
        loss, grads = gradients(x, y)
        optimizer.apply_gradients(zip(grads, weights))
        return loss
    return step


def _time_steps(strategy: Any, step: Callable, batches: list, warmup: int = 2) -> float:
    """Median seconds per step over the batches after `warmup` untimed ones."""
    dist = list(strategy.experimental_distribute_dataset(batches))
    times = []
    for i, (x, y) in enumerate(dist):
        start = time.perf_counter()
        strategy.reduce("SUM", strategy.run(step, args=(x, y)), None).numpy()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def _multi_worker(workers: int) -> Any:
    spec = kf.train.ClusterSpec({"worker": [f"localhost:{i}" for i in range(workers)]})
    return kf.distribute.MultiWorkerMirroredStrategy(
        cluster_resolver=SimpleClusterResolver(spec))


def _allreduce_costs(strategy: Any, megabytes: List[float], reps: int) -> Dict[float, float]:
    """Median ms of an all_reduce(SUM) of `mb` MB, the slower worker's time each rep."""
    def timed(n: Any) -> Any:
        size = int(n)
        value = kf.constant(np.ones(size, np.float32))
        ctx = kf.distribute.get_replica_context()
        ctx.all_reduce("SUM", kf.constant(0.0))  # line the workers up first
        start = time.perf_counter()
        ctx.all_reduce("SUM", value)
        return kf.constant(time.perf_counter() - start)
    out = {}
    for mb in megabytes:
        n = max(1, int(mb * 2**20 / 4))
        samples = []
        for _ in range(reps):
            per_worker = strategy.experimental_local_results(strategy.run(timed, args=(n,)))
            samples.append(max(float(t) for t in per_worker))
        out[mb] = 1000 * statistics.median(samples)
    return out


def _fit_line(xs: List[float], ys: List[float]) -> tuple:
    slope, intercept = np.polyfit(np.asarray(xs), np.asarray(ys), 1)
    return float(intercept), float(slope)


def project(t_fixed: float, compute_per_example: float, compute_base: float,
            latency: float, per_mb: float, grad_mb: float, batch: int) -> dict:
    """Step times (ms) and efficiencies for N workers under the assumptions above."""
    def step_ms(n: int, per_worker: float, ring: bool) -> float:
        moved = 2 * (n - 1) / n * grad_mb if ring else (n - 1) * grad_mb
        comm = 0.0 if n == 1 else latency + moved * per_mb
        return t_fixed + compute_base + compute_per_example * per_worker + comm
    out = {}
    t1 = step_ms(1, batch, False)
    for n in (1, 2, 4, 8, 16):
        strong = step_ms(n, batch / n, False)
        weak = step_ms(n, batch, False)
        weak_ring = step_ms(n, batch, True)
        out[n] = {"strong_ms": strong, "strong_efficiency": t1 / (n * strong),
                  "weak_ms": weak, "weak_efficiency": t1 / weak,
                  "weak_ring_ms": weak_ring, "weak_ring_efficiency": t1 / weak_ring}
    return out


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10, help="timed steps per setup")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (a test)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    try:
        import ray
    except ImportError:
        print("data_parallel needs the `distributed` extra (Ray): "
              "pip install 'kilnflow[distributed]'")
        return 1
    sizes = (16, 32, 10) if args.smoke else SIZES
    batch = 32 if args.smoke else BATCH
    steps = 2 if args.smoke else args.steps
    mbs = [0.01, 0.5] if args.smoke else [0.01, 1.0, 4.0, 16.0]
    grad_mb = sum(p.size for p in _params(sizes)) * 4 / 2**20
    figures: Dict[str, Any] = {"sizes": sizes, "global_batch": batch, "steps": steps,
                               "gradient_mb": grad_mb}

    one = kf.distribute.OneDeviceStrategy("/cpu:0")
    full = _batches(sizes, batch, steps + 2)
    half = _batches(sizes, batch // 2, steps + 2)
    t_local = _time_steps(one, _setup(one, sizes, batch), full)
    figures["one_process"] = {"ms": 1000 * t_local, "examples_per_s": batch / t_local}
    for workers in (1, 2):
        strategy = _multi_worker(workers)
        try:
            t = _time_steps(strategy, _setup(strategy, sizes, batch), full)
            entry = {"ms": 1000 * t, "examples_per_s": batch / t}
            if workers == 1:  # the same worker on half the batch: the per-example cost
                entry["half_batch_ms"] = 1000 * _time_steps(
                    strategy, _setup(strategy, sizes, batch // 2), half)
            else:
                entry["allreduce_ms"] = _allreduce_costs(strategy, mbs, 3 if args.smoke else 7)
            figures[f"ray_{workers}"] = entry
        finally:
            strategy.shutdown()
    ray.shutdown()

    costs = figures["ray_2"]["allreduce_ms"]
    latency, per_mb = _fit_line(list(costs), list(costs.values()))
    figures["allreduce_fit"] = {"latency_ms": latency, "ms_per_mb": per_mb}
    figures["scaling_efficiency_2_vs_1"] = figures["ray_2"]["examples_per_s"] / (
        2 * figures["ray_1"]["examples_per_s"])
    one_worker = figures["ray_1"]
    per_example = max(0.0, (one_worker["ms"] - one_worker["half_batch_ms"]) /
                      (batch - batch // 2))
    fixed = one_worker["ms"] - per_example * batch
    figures["model"] = {"t_fixed_ms": fixed, "compute_ms_per_example": per_example}
    figures["projection"] = project(fixed, per_example, 0.0, latency, per_mb, grad_mb, batch)
    _report(figures)
    if args.json:
        from kilnflow.saving.fileio import write_atomically
        write_atomically(args.json, json.dumps(figures, indent=1, default=str).encode())
    return 0


def _report(f: dict) -> None:
    print(f"MLP {'-'.join(map(str, f['sizes']))}, global batch {f['global_batch']}, "
          f"{f['gradient_mb']:.2f} MB of gradients, {f['steps']} timed steps (median)")
    for key, label in [("one_process", "one process, no Ray"), ("ray_1", "1 Ray worker"),
                       ("ray_2", "2 Ray workers")]:
        print(f"  {label:22s} {f[key]['ms']:8.1f} ms/step {f[key]['examples_per_s']:10.0f}"
              " examples/s")
    print(f"  scaling efficiency 2 vs 1 worker: {f['scaling_efficiency_2_vs_1']:.2f}")
    print("  all-reduce, 2 workers: " + ", ".join(
        f"{mb:g} MB {ms:.1f} ms" for mb, ms in f["ray_2"]["allreduce_ms"].items()))
    fit = f["allreduce_fit"]
    print(f"    fit: {fit['latency_ms']:.1f} ms latency + {fit['ms_per_mb']:.2f} ms/MB")
    m = f["model"]
    print(f"  model (1 worker at B and B/2): T_fixed {m['t_fixed_ms']:.1f} ms + "
          f"{1000 * m['compute_ms_per_example']:.1f} us/example")
    print("  projection (one core per worker; see the module docstring):")
    print("    N  strong ms  eff   weak ms  eff   weak+ring ms  eff")
    for n, p in f["projection"].items():
        print(f"   {n:2d} {p['strong_ms']:9.1f} {p['strong_efficiency']:5.2f} "
              f"{p['weak_ms']:8.1f} {p['weak_efficiency']:5.2f} "
              f"{p['weak_ring_ms']:12.1f} {p['weak_ring_efficiency']:5.2f}")


if __name__ == "__main__":
    sys.exit(main())
