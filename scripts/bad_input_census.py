"""The bad-input census (issue 19): thousands of malformed calls over every public op sample,
every Keras layer and the APIs around them (tapes, functions, variables, sessions, control
flow), each classified as

  clean     a named error (TF's class, message naming the op/layer or argument), or a
            result where TF also returns one, or the malformed value's own Python behaviour
  unnamed   an allowed error class whose message names neither op/layer nor argument
  internal  an implementation exception escaped (KeyError, AttributeError, MemoryError...)
            or a context stack was left changed
  silent    a result where TF raises (tests/ops/data/bad_input_tf.json, recorded by
            scripts/record_bad_input_tf.py), or for a value no op accepts (None, an object,
            a ragged list, a dict) where TF's answer is not recorded
  crash     no answer within 20 s (a hang), or a BaseException that is not an Exception

    python3 scripts/bad_input_census.py                   # this tree
    python3 scripts/bad_input_census.py --kilnflow /tmp/base   # another checkout's kilnflow
    python3 scripts/bad_input_census.py --details silent  # list the calls of one class

With --kilnflow, kilnflow and the op samples come from that checkout (they belong
together); the malformed values, layer table and API cases come from this tree.
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import signal
import sys
import warnings

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLASSES = ("clean", "unnamed", "internal", "silent", "crash")


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so the judged call's `except Exception` cannot
    take it for the call's own error."""


def _timeout(*_):
    raise Hang("no answer within 20 s")


def _tf_records() -> dict:
    path = os.path.join(HERE, "tests", "ops", "data", "bad_input_tf.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        data = json.load(f)
    order = data["categories"].split(",")
    records: dict = {}
    for section in ("ops", "layers"):
        records[section] = {(prefix, order[i]): code for prefix, row in data[section].items()
                            for i, code in enumerate(row) if code != "-"}
    records["apis"] = data["apis"]
    return records


def _classify(judge, call, op, rejected, tf_code):
    """(census class, sub-outcome, detail)."""
    signal.alarm(20)
    try:
        outcome, detail = judge(call, op, rejected)
    except Hang as exc:
        return "crash", "hang", str(exc)
    except Exception as exc:  # noqa: BLE001 - raised outside the judged call (building it)
        return "internal", "setup", f"{type(exc).__name__}: {exc}"
    except BaseException as exc:  # noqa: BLE001 - SystemExit and the like: a crash
        return "crash", "base", f"{type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)
    if outcome in ("named", "python"):
        return "clean", outcome, detail
    if outcome in ("unnamed", "internal"):
        return outcome, outcome, detail
    # a result: TF's recorded answer decides, else whether any op accepts the value
    if tf_code in ("r", "c"):  # TF raises, or aborts the process
        return "silent", "tf raises", detail
    if tf_code == "a":
        return "clean", "tf returns too", detail
    if outcome == "silent":
        return "silent", "rejected value", detail
    return "clean", "unjudged result", detail


def _cases(bad_inputs, layers_table, apis, samples, kf):
    """(section, key, op, rejected, call) for every census call."""
    for sample, position, category, make in bad_inputs.every_case(samples.SAMPLES):
        bad = make(sample.inputs[position])
        if bad is None and category != "none":
            continue
        try:
            args = [kf.constant(a) for a in sample.inputs]
            args[position] = kf.constant(bad) if hasattr(bad, "dtype") else bad
        except (TypeError, ValueError):
            continue  # the malformed value is not a tensor of this kind (kf.constant said so)
        yield ("ops", bad_inputs.case_key(sample, position, category), sample.op,
               category in bad_inputs.REJECTED, lambda fn=sample.fn, args=args: fn(*args))
    for key, call in layers_table.layer_cases(kf.keras.layers, kf.constant,
                                              bad_inputs.REJECTED, bad_inputs.ODD):
        rejected = key[1] in bad_inputs.REJECTED or key[1] in ("ctor_none", "ctor_object",
                                                               "ctor_string")
        layer = getattr(kf.keras.layers, key[0].split("[")[0], None)
        if layer is None:  # an older kilnflow without this layer
            yield "layers", key, None, rejected, None
            continue
        yield "layers", key, f"{layer.__name__}|layer", rejected, call
    for key, case in apis.CASES.items():
        words = key.split()
        op = words[0].split(".")[-1] if words[0] != "function" else "function"
        argument = words[1] if len(words) > 1 else op
        yield ("apis", key, f"{op}`{argument}", key.split()[-1] in ("none", "object", "ragged",
                                                                   "dict"),
               lambda case=case: case(kf))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kilnflow", help="a checkout whose kilnflow and op samples to use")
    parser.add_argument("--details", "--list", dest="details", default="",
                        help="print the calls of these classes (e.g. silent or silent,unnamed)")
    parser.add_argument("--by-category", action="store_true")
    opts = parser.parse_args()
    sys.path.insert(0, opts.kilnflow or HERE)
    warnings.simplefilter("ignore")
    import kilnflow as kf
    from tests.ops import samples
    bad_inputs = _load("tests/ops/bad_inputs.py", "census_bad_inputs")
    layers_table = _load("tests/keras/bad_input_layers.py", "census_layers")
    apis = _load("tests/ops/bad_input_apis.py", "census_apis")
    tf_records = _tf_records()
    original_names_it = bad_inputs.names_it

    def names_it(message, op):  # an API case names its function or argument
        if op.endswith("|layer"):  # the layer's class or label ("Layer 'dense' (Dense)")
            flat = message.lower().replace("_", "")
            return op[:-6].lower() in flat or "Layer '" in message or "`" in message \
                or "[Op:" in message
        if "`" in op:
            fn, argument = op.split("`")
            low = message.lower()
            return fn.lower() in low or argument.lower() in low or "`" in message
        return original_names_it(message, op)

    bad_inputs.names_it = names_it
    signal.signal(signal.SIGALRM, _timeout)
    counts = collections.defaultdict(collections.Counter)
    absent = collections.Counter()
    subs = collections.defaultdict(collections.Counter)
    for section, key, op, rejected, call in _cases(bad_inputs, layers_table, apis, samples, kf):
        code = tf_records.get(section, {}).get(key)
        if call is None:
            absent[section] += 1
            continue
        klass, sub, detail = _classify(bad_inputs.judge, call, op, rejected, code)
        row = section if not opts.by_category else f"{section}:{key[1] if section != 'apis' else key.split()[-1]}"
        counts[row][klass] += 1
        subs[section][sub] += 1
        if klass in opts.details.split(","):
            print(f"{section} {key} [{sub}]: {detail[:160]}")
    where = opts.kilnflow or HERE
    print(f"bad-input census of {where} (kilnflow {kf.__file__})")
    print(f"{'section':24}{'calls':>8}" + "".join(f"{c:>10}" for c in CLASSES))
    total = collections.Counter()
    for row in sorted(counts):
        total.update(counts[row])
        print(f"{row:24}{sum(counts[row].values()):>8}"
              + "".join(f"{counts[row][c]:>10}" for c in CLASSES))
    print(f"{'all':24}{sum(total.values()):>8}" + "".join(f"{total[c]:>10}" for c in CLASSES))
    if absent:
        print(f"not run (the layer is not in this kilnflow): {dict(absent)}")
    every = collections.Counter()
    for row in subs.values():
        every.update(row)
    print("clean = named error " f"{every['named']}, result TF also returns "
          f"{every['tf returns too']}, Python's own behaviour {every['python']}, result with "
          f"no TF record (unjudged) {every['unjudged result']}; silent = TF raises "
          f"{every['tf raises']}, rejected value with no TF record {every['rejected value']}")


if __name__ == "__main__":
    main()
