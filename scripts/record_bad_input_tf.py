"""Record what TF 2.21 does with the bad-input census's malformed calls (raise or return),
so scripts/bad_input_census.py can tell a silent acceptance (kilnflow returns, TF raises)
from a value both accept. Run in the side venv that has TensorFlow:

    /work/tfvenv/bin/python scripts/record_bad_input_tf.py

Op samples call kilnflow (`lambda x, y, f=kf.add: f(x, y)`): each kilnflow object the call
reaches through its globals, defaults and closure is swapped for TF's object of the same
public name (`kf.math.cumsum` -> `tf.math.cumsum`). A call whose valid form fails in TF, or
that still reaches kilnflow, is not recorded. Writes tests/ops/data/bad_input_tf.json:
{section: {case: "r" (TF raises, or aborts the process) | "a" (TF returns)}}.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import traceback
import types
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402  the side venv's TF: kilnflow never imports it

import kilnflow as kf  # noqa: E402
from tests.keras import bad_input_layers  # noqa: E402
from tests.ops import bad_input_apis, bad_inputs  # noqa: E402
from tests.ops import samples  # noqa: E402

KF_DIR = os.path.dirname(os.path.abspath(kf.__file__))
SAMPLES_DIR = os.path.dirname(os.path.abspath(samples.__file__))


class Unmapped(Exception):
    """The call reaches a kilnflow object with no TF counterpart."""


def _public_paths() -> dict:
    """id(kilnflow object) -> its shortest public dotted path under kf."""
    paths: dict = {}
    queue = [(kf, "")]
    seen = {id(kf)}
    while queue:
        module, prefix = queue.pop(0)
        for name in dir(module):
            if name.startswith("_"):
                continue
            value = getattr(module, name, None)
            path = f"{prefix}{name}"
            if isinstance(value, types.ModuleType):
                if value.__name__.startswith("kilnflow") and id(value) not in seen \
                        and path.count(".") < 3:
                    seen.add(id(value))
                    paths.setdefault(id(value), path)
                    queue.append((value, path + "."))
            elif callable(value):
                paths.setdefault(id(value), path)
    return paths


PATHS = _public_paths()


def _tf_object(path: str):
    value = tf
    for part in path.split("."):
        value = getattr(value, part, None)
        if value is None:
            raise Unmapped(path)
    return value


class _ModuleProxy:
    """A kilnflow module seen from TF: attributes map to TF's objects of the same path."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        return translate(getattr(self._module, name))


_MEMO: dict = {}


def translate(value):
    """The TF counterpart of `value` (kilnflow objects swapped recursively)."""
    if id(value) in _MEMO:
        return _MEMO[id(value)]
    if value is kf:
        return tf
    if isinstance(value, types.ModuleType):
        if value.__name__.startswith("kilnflow"):
            if id(value) in PATHS:
                return _tf_object(PATHS[id(value)])
            return _ModuleProxy(value)
        return value
    if isinstance(value, types.FunctionType):
        filename = value.__code__.co_filename
        if filename.startswith(SAMPLES_DIR) or filename.startswith(os.path.join(ROOT, "tests")):
            return _translate_function(value)
    module = getattr(value, "__module__", None) or ""
    if module.startswith("kilnflow") and callable(value):
        if id(value) in PATHS:
            return _tf_object(PATHS[id(value)])
        raise Unmapped(getattr(value, "__qualname__", repr(value)))
    if isinstance(value, (list, tuple)) and any(callable(v) for v in value):
        return type(value)(translate(v) for v in value)
    return value


def _translate_function(fn):
    names = fn.__code__.co_names
    glob = dict(fn.__globals__)
    for name in names:
        if name in glob:
            try:
                glob[name] = translate(glob[name])
            except Unmapped:
                glob[name] = _Poison(name)
    closure = None
    if fn.__closure__:
        closure = tuple(types.CellType(translate(c.cell_contents)) for c in fn.__closure__)
    defaults = tuple(translate(d) for d in fn.__defaults__) if fn.__defaults__ else None
    new = types.FunctionType(fn.__code__, glob, fn.__name__, defaults, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    _MEMO[id(fn)] = new
    return new


class _Poison:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        raise Unmapped(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        raise Unmapped(self._name)


def _timeout(*_):
    raise TimeoutError("no answer in 20 s")


def _outcome(call) -> str:
    """'r' when TF raises, 'a' when it returns; Unmapped when kilnflow was reached."""
    signal.alarm(20)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = call()
    except Unmapped:
        raise
    except Exception as exc:  # noqa: BLE001 - any TF error is a refusal
        frames = traceback.extract_tb(exc.__traceback__)
        if any(f.filename.startswith(KF_DIR) for f in frames):
            raise Unmapped("raised inside kilnflow") from None
        return "r"
    finally:
        signal.alarm(0)
    if any(isinstance(r, kf.Tensor) for r in kf.nest.flatten(result)
           if not isinstance(r, (list, dict))):
        raise Unmapped("returned a kilnflow tensor")
    return "a"


def _op_cases():
    """(section, key, thunk) of the op samples; a thunk raises Unmapped when the sample does
    not translate or its valid form fails in TF."""
    valid_ok: dict = {}

    def checked(sample):
        if sample.id not in valid_ok:
            try:
                fn = translate(sample.fn)
                valid_ok[sample.id] = fn if _outcome(
                    lambda: fn(*[tf.constant(a) for a in sample.inputs])) == "a" else None
            except Unmapped:
                valid_ok[sample.id] = None
        if valid_ok[sample.id] is None:
            raise Unmapped(sample.id)
        return valid_ok[sample.id]

    for sample, position, category, make in bad_inputs.every_case(samples.SAMPLES):
        bad = make(sample.inputs[position])
        if bad is None and category != "none":
            continue

        def thunk(sample=sample, position=position, bad=bad):
            fn = checked(sample)
            try:
                args = [tf.constant(a) for a in sample.inputs]
                args[position] = tf.constant(bad) if isinstance(bad, np.ndarray) else bad
            except Exception:  # noqa: BLE001 - TF cannot hold the value as a tensor
                raise Unmapped("not a TF tensor") from None
            return _outcome(lambda: fn(*args))
        yield "ops", bad_inputs.case_key(sample, position, category), thunk


def _all_cases() -> list:
    cases = list(_op_cases())
    for key, call in bad_input_layers.layer_cases(tf.keras.layers, tf.constant,
                                                  bad_inputs.REJECTED, bad_inputs.ODD):
        cases.append(("layers", key, lambda call=call: _outcome(call)))
    for key, case in bad_input_apis.CASES.items():
        cases.append(("apis", key, lambda case=case: _outcome(lambda: case(tf))))
    return cases


def worker(start: int) -> None:
    """Run the cases from `start`, a line per case: TF aborts the process on some malformed
    calls (a failed CHECK), so the parent restarts after the case that killed it."""
    signal.signal(signal.SIGALRM, _timeout)
    tf.get_logger().setLevel("ERROR")
    for index, (_, _, thunk) in enumerate(_all_cases()):
        if index < start:
            continue
        print(f"B {index}", flush=True)
        try:
            code = thunk()
        except Unmapped:
            code = "-"
        print(f"R {index} {code}", flush=True)
    print("DONE", flush=True)


def run_all(progress: str) -> dict:
    """Every case's code, from workers restarted after a case that kills TF (a failed
    CHECK) or hangs in its C++ code where no Python signal reaches (60 s with no line).
    Codes are appended to `progress` as they come, so a stopped run resumes."""
    import select
    import subprocess
    import time
    codes: dict = {}
    if os.path.exists(progress):
        with open(progress) as f:
            for line in f:
                index, code = line.split()
                codes[int(index)] = code
    log = open(progress, "a")
    start = max(codes, default=-1) + 1
    while True:
        process = subprocess.Popen([sys.executable, __file__, "--worker", str(start)],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        current, done, last, pending = None, False, time.monotonic(), b""
        lines: list = []
        while True:
            if not lines:  # raw reads: a buffered reader would hide lines from select()
                ready, _, _ = select.select([process.stdout], [], [], 5)
                if not ready:
                    if current is not None and time.monotonic() - last > 60:
                        process.kill()  # a hang in TF's C++ code
                        break
                    if process.poll() is not None:
                        break
                    continue
                chunk = os.read(process.stdout.fileno(), 65536)
                if not chunk:
                    break
                pending += chunk
                *complete, pending = pending.split(b"\n")
                lines.extend(line.decode() for line in complete if line)
                last = time.monotonic()
                continue
            parts = lines.pop(0).split()
            if parts[0] == "B":
                current = int(parts[1])
            elif parts[0] == "R":
                codes[int(parts[1])] = parts[2]
                log.write(f"{parts[1]} {parts[2]}\n")
                log.flush()
                current = None
            elif parts[0] == "DONE":
                done = True
        process.wait()
        if done:
            return codes
        if current is None:
            raise RuntimeError("the worker died between cases")
        codes[current] = "c"  # TF crashed or hung on this call: it returns no result
        log.write(f"{current} c\n")
        log.flush()
        print(f"TF crashed or hung on case {current}; restarting after it", file=sys.stderr)
        start = current + 1


CATEGORIES = "".join(f"{c}," for c in list(bad_inputs.REJECTED) + list(bad_inputs.ODD)
                     + list(bad_input_layers.CTOR_BAD)).rstrip(",")


def _compact(records: dict) -> dict:
    """{(prefix, category): code} -> {prefix: one code per category of CATEGORIES, "-" for
    none recorded}."""
    order = CATEGORIES.split(",")
    rows: dict = {}
    for (prefix, category), code in records.items():
        rows.setdefault(prefix, ["-"] * len(order))[order.index(category)] = code
    return {prefix: "".join(row) for prefix, row in sorted(rows.items())}


def main() -> None:
    if "--worker" in sys.argv:
        worker(int(sys.argv[sys.argv.index("--worker") + 1]))
        return
    import tempfile
    codes = run_all(os.path.join(tempfile.gettempdir(), "kilnflow_bad_input_tf.progress"))
    sections: dict = {"ops": {}, "layers": {}, "apis": {}}
    for index, (section, key, _) in enumerate(_all_cases()):
        code = codes.get(index, "-")
        if code != "-":
            sections[section][key] = "r" if code == "c" else code  # a crash refuses too
    data = {"tensorflow": tf.__version__, "categories": CATEGORIES,
            "ops": _compact(sections["ops"]), "layers": _compact(sections["layers"]),
            "apis": sections["apis"]}
    path = os.path.join(ROOT, "tests", "ops", "data", "bad_input_tf.json")
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=0, sort_keys=True)  # a line per case: readable diffs
        f.write("\n")
    os.replace(path + ".tmp", path)
    print({k: len(v) for k, v in data.items() if isinstance(v, dict)})


if __name__ == "__main__":
    main()
