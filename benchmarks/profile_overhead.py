"""Where the time of one tiny call goes: the eager dispatch path and the compiled call path.

    python -m benchmarks.profile_overhead            # step table + cProfile, ~1 minute
    python -m benchmarks.profile_overhead --no-cprofile
    python -m benchmarks.profile_overhead --profiler   # profiling off vs on, ~1 minute

The step table times each piece of `kf.add(x, y)` and of a cached `f(x)` (f = x + 1
under @kf.function) on [16] float32 by itself, in interleaved rounds, and prints the
minimum and median ns per call: the minimum is the cost on a quiet machine, the median
what a loaded one sees. Pieces reach into kilnflow internals on purpose; a piece whose
internal name has changed prints n/a instead of failing. BLAS is pinned as in run.py.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import timeit
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple


def _namespace() -> dict:
    import numpy as np

    import kilnflow as kf
    from kilnflow import dtypes, tensor
    from kilnflow.context import ctx
    from kilnflow.core import opdef
    from kilnflow.ops import convert, math

    a = np.linspace(-1, 1, 16, dtype=np.float32)
    b = np.linspace(1, 2, 16, dtype=np.float32)
    x, y = kf.constant(a), kf.constant(b)

    def plus_one(t):
        return t + 1

    f = kf.function(plus_one)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f(x)
    concrete = f.get_concrete_function(x)
    key = ((tuple([("T", a.shape, a.dtype)])), ())
    sketch_add, sketch_call = _sketches(np, tensor, ctx, math.ADD, concrete, a)
    return {"sketch_add": sketch_add, "sketch_call": sketch_call,
            "np": np, "kf": kf, "dtypes": dtypes, "tensor": tensor, "ctx": ctx,
            "convert": convert, "math": math, "opdef": opdef, "a": a, "b": b, "x": x,
            "y": y, "inputs": (x, y), "f": f, "concrete": concrete, "fn": concrete._fn,
            "key": key, "c0": np.array(1, np.float32), "one": np.float32(1),
            "s": kf.constant(1.5), "h": kf.constant(0.5)}


def _sketches(np, tensor, ctx, add_op, concrete, a) -> tuple:
    """What the hot paths could cost: the checks that matter, nothing else (see README).

    sketch_add: one mode read, exact-type test, dtype identity, kernel, wrap without the
    isinstance. sketch_call: a one-entry (shape, dtype) memo in front of the cache and the
    generated function called directly. Both fall back to the real path otherwise.
    """
    new = tensor.EagerTensor.__new__
    eager_type = tensor.EagerTensor
    kernel = add_op.kernel
    fn = concrete._fn
    shape, dtype = a.shape, a.dtype

    def sketch_add(x, y):
        if type(x) is eager_type and type(y) is eager_type and ctx.graph is None:
            u, v = x._value, y._value
            if u.dtype is v.dtype:
                t = new(eager_type)
                t._value = kernel(u, v)
                return t
        raise NotImplementedError("slow path")

    def sketch_call(x):
        if type(x) is eager_type:
            v = x._value
            if v.shape == shape and v.dtype is dtype:
                t = new(eager_type)
                t._value = fn(v)[0]
                return t
        raise NotImplementedError("slow path")
    return sketch_add, sketch_call


EAGER_STEPS = [
    ("NumPy np.add(a, b)  [floor]", "np.add(a, b)"),
    ("kf.add(x, y)  [total]", "kf.add(x, y)"),
    ("x + y  [total, operator]", "x + y"),
    ("  convert.binary(x, y)", "convert.binary(x, y)"),
    ("  opdef.bind(ADD, (x, y))", "opdef.bind(math.ADD, inputs)"),
    ("    ctx.graph (threading.local read)", "ctx.graph"),
    ("    ctx.tapes (threading.local read)", "ctx.tapes"),
    ("    opdef._run_eagerly(ADD, (x, y), {})", "opdef._run_eagerly(math.ADD, inputs, {})"),
    ("      [t._value for t in inputs]", "[t._value for t in inputs]"),
    ("      dtype agreement: a.dtype != b.dtype", "a.dtype != b.dtype"),
    ("      (x.dtype: kf DType via dict lookup on np.dtype)", "x.dtype"),
    ("      ADD.kernel(a, b) (np.add)", "math.ADD.kernel(a, b)"),
    ("      tensor.wrap(array)", "tensor.wrap(a)"),
    ("        EagerTensor.__new__ + slot store",
     "t = tensor.EagerTensor.__new__(tensor.EagerTensor); t._value = a"),
    ("        isinstance(a, (np.ndarray, np.generic))",
     "isinstance(a, (np.ndarray, np.generic))"),
    ("sketch: fast eager path (one mode read, two frames)", "sketch_add(x, y)"),
]

COMPILED_STEPS = [
    ("NumPy a + 1  [floor]", "a + 1"),
    ("NumPy np.add(a, 0-d float32 array) (the graph's kernel call)", "np.add(a, c0)"),
    ("f(x)  [total]", "f(x)"),
    ("  ctx.run_functions_eagerly / graph / tapes (3 reads)",
     "ctx.run_functions_eagerly; ctx.graph; ctx.tapes"),
    ("  trace key: tuple of ('T', shape, dtype)",
     "((tuple([('T', t._value.shape, t._value.dtype) for t in (x,)])), ())"),
    ("  f._cache.get(key)", "f._cache.get(key)"),
    ("  concrete._call_flat([a])", "concrete._call_flat([a])"),
    ("    generated fn(a)", "fn(a)"),
    ("    tensor.wrap(out)", "tensor.wrap(a)"),
    ("sketch: (shape, dtype) memo + generated fn + wrap", "sketch_call(x)"),
]


SCALAR_STEPS = [
    ("kf scalar s * h (two tensors)", "s * h"),
    ("kf scalar s * 0.5 (Python float operand)", "s * 0.5"),
    ("  convert.operand(0.5, float32)", "convert.operand(0.5, kf.float32)"),
    ("kf.convert_to_tensor(3) (Python int)", "kf.convert_to_tensor(3)"),
    ("kf.cast(3, kf.float32)", "kf.cast(3, kf.float32)"),
    ("np.errstate(all='ignore') enter + exit (np_errors_ignored kernels)",
     "with np.errstate(all='ignore'): pass"),
    ("NumPy scalar * 0-d array constant (graph Const of shape ())", "one * c0"),
    ("NumPy scalar * NumPy scalar constant", "one * one"),
]


def step_table(steps: Sequence[Tuple[str, str]], ns: dict, number: int = 20000,
               rounds: int = 40) -> List[Tuple[str, Optional[float], Optional[float]]]:
    """(label, min ns, median ns) per step, timed in interleaved rounds."""
    timers = []
    for label, stmt in steps:
        try:
            timer = timeit.Timer(stmt, globals=ns)
            timer.timeit(10)
        except Exception:  # noqa: BLE001 - an internal renamed: print n/a
            timer = None
        timers.append((label, timer))
    samples: Dict[str, List[float]] = {label: [] for label, _ in steps}
    for _ in range(rounds):
        for label, timer in timers:
            if timer is not None:
                samples[label].append(timer.timeit(number) / number * 1e9)
    return [(label, min(v) if v else None, statistics.median(v) if v else None)
            for label, v in samples.items()]


def print_table(title: str, rows: Sequence[Tuple[str, Optional[float], Optional[float]]]
                ) -> None:
    print(f"\n{title}\n{'step':64s} {'min ns':>8s} {'median ns':>10s}")
    for label, low, mid in rows:
        if low is None:
            print(f"{label:64s} {'n/a':>8s} {'n/a':>10s}")
        else:
            print(f"{label:64s} {low:8.0f} {mid:10.0f}")


def print_cprofile(stmt: str, ns: dict, calls: int = 100000, top: int = 14) -> None:
    profiler = cProfile.Profile()
    code = compile(f"for _ in range({calls}):\n    {stmt}\n", "<profile>", "exec")
    profiler.enable()
    exec(code, ns)  # noqa: S102 - our own statement
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    print(f"\ncProfile of {calls} x `{stmt}` (tottime; cProfile inflates small calls)")
    print("\n".join(line for line in out.getvalue().splitlines()[4:] if line.strip()))


def _profiler_namespace() -> dict:
    """Twins of one function and of an MLP train step: never profiled, profiled once by
    kf.profiler (start/stop, then the plain code is back), and always profiled
    (kf.function(experimental_profile=True): the cost while a profile records)."""
    import tempfile

    import numpy as np

    import kilnflow as kf

    rng = np.random.default_rng(0)
    x = kf.constant(np.linspace(-1, 1, 16, dtype=np.float32))
    bx = rng.standard_normal((64, 128)).astype("float32")
    by = rng.integers(0, 10, 64).astype("int32")

    def mlp_step(profiled: bool) -> Any:
        model = kf.keras.Sequential([kf.keras.layers.Dense(128, activation="relu"),
                                     kf.keras.layers.Dense(10)])
        opt = kf.keras.optimizers.SGD(0.01)
        loss_fn = kf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(a, b):
            with kf.GradientTape() as tape:
                loss = loss_fn(b, model(a, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        return kf.function(step, experimental_profile=profiled)

    ns: Dict[str, Any] = {"x": x, "bx": bx, "by": by}
    for name, profiled in (("never", False), ("never2", False), ("after", False),
                           ("on", True)):
        ns[f"f_{name}"] = kf.function(lambda t: t + 1, experimental_profile=profiled)
        ns[f"mlp_{name}"] = mlp_step(profiled)
        ns[f"f_{name}"](x)
        ns[f"mlp_{name}"](bx, by)
    with tempfile.TemporaryDirectory() as logdir:   # a profile runs "after" twins once
        kf.profiler.experimental.start(logdir)
        ns["f_after"](x)
        ns["mlp_after"](bx, by)
        kf.profiler.experimental.stop(save=False)
    for name in ("f", "mlp"):
        args = (x,) if name == "f" else (bx, by)
        concrete = ns[f"{name}_after"].get_concrete_function(*args)
        assert concrete._fn is concrete._plain_fn, "profile left the twin in place"
    return ns


PROFILER_STEPS = [
    ("x + 1 on [16]: never profiled", "f_never(x)"),
    ("x + 1 on [16]: never profiled, a second copy (the noise floor)", "f_never2(x)"),
    ("x + 1 on [16]: after a kf.profiler start/stop (profiling off)", "f_after(x)"),
    ("x + 1 on [16]: profiling on (experimental_profile=True)", "f_on(x)"),
]

PROFILER_MLP_STEPS = [
    ("MLP train step [64,128]: never profiled", "mlp_never(bx, by)"),
    ("MLP train step [64,128]: never profiled, a second copy", "mlp_never2(bx, by)"),
    ("MLP train step [64,128]: after a kf.profiler start/stop (off)", "mlp_after(bx, by)"),
    ("MLP train step [64,128]: profiling on (experimental_profile=True)", "mlp_on(bx, by)"),
]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_overhead",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-cprofile", action="store_true")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--profiler", action="store_true",
                        help="only the profiling off/on table")
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    from benchmarks import run
    run._reexec_pinned(argv, "benchmarks.profile_overhead")
    if args.profiler:
        ns = _profiler_namespace()
        print_table("kf.profiler: call cost with profiling off and on",
                    step_table(PROFILER_STEPS, ns, rounds=args.rounds))
        print_table("kf.profiler: MLP train step with profiling off and on",
                    step_table(PROFILER_MLP_STEPS, ns, number=50,
                               rounds=max(1, args.rounds // 2)))
        return 0
    ns = _namespace()
    print_table("eager dispatch: kf.add on [16] float32", step_table(EAGER_STEPS, ns,
                                                                   rounds=args.rounds))
    print_table("compiled call: cached @kf.function x + 1 on [16] float32",
                step_table(COMPILED_STEPS, ns, rounds=args.rounds))
    print_table("scalars and conversions", step_table(SCALAR_STEPS, ns, number=5000,
                                                      rounds=max(1, args.rounds // 2)))
    if not args.no_cprofile:
        print_cprofile("kf.add(x, y)", ns)
        print_cprofile("f(x)", ns)
    return 0


if __name__ == "__main__":
    sys.exit(main())
