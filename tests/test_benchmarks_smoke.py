"""Smoke tests for benchmarks/: every workload runs at tiny sizes and reports finite figures.

Nothing here asserts a timing: speed is judged from `python -m benchmarks.run` ratios.
A variant that waits for a feature still being built says so instead of running; any
other failure (an error, or kilnflow disagreeing with NumPy in a workload's own checks)
fails the test.
"""
import json
import math

import numpy as np
import pytest

from benchmarks import run
from benchmarks.harness import Case, Config, Target, Variant, finite_results, format_case, measure
from benchmarks.workloads import _common, _models

import kilnflow as kf


@pytest.mark.parametrize("name", run.workload_names())
def test_workload_runs_and_reports_finite_numbers(name):
    result = run.run_workload(name, Config("smoke"), echo=False, keep_going=False)
    cases = result["_cases"]
    assert cases, f"{name} yielded no cases"
    for case in cases:
        assert not case.errors, case.errors
        if case.unavailable:
            continue
        assert case.floor in case.stats
        assert finite_results(case)
        for v in case.variants:
            assert v.unavailable or v.name in case.stats, v.name
            if v.unavailable:
                assert v.unavailable.startswith(("not available yet", "not working yet",
                                                 "numexpr is not", "numba is not",
                                                 "setup failed")), v.unavailable
        json.dumps(case.to_json())
        assert case.title in format_case(case)


def test_workload_modules_declare_name_and_description():
    for name in run.workload_names():
        module = run.load_workload(name)
        assert module.NAME == name
        assert module.DESCRIPTION


def test_measure_interleaves_and_reports_paired_ratios():
    data = np.ones(1000, np.float32)
    out = np.empty_like(data)
    case = Case("copy vs add", [Variant("copy", lambda: np.copyto(out, data)),
                                Variant("add", "np.add(a, a)", {"np": np, "a": data}),
                                Variant("broken", lambda: 1 / 0),
                                Variant("missing", unavailable="not available yet: x")],
                floor="copy", copy_floor="copy",
                targets=[Target("add <= 1000x copy", "add", "ratio", 1000.0),
                         Target("missing row", "missing", "time", 1.0)])
    measure(case, Config("quick"))
    assert set(case.stats) == {"copy", "add"}
    assert "ZeroDivisionError" in case.errors["broken"]
    assert case.stats["copy"].ratio == 1.0 and case.stats["copy"].copy_ratio == 1.0
    assert case.stats["add"].rounds >= Config("quick").min_rounds
    assert math.isfinite(case.stats["add"].ratio)
    assert case.targets[0].met(case) is True
    assert case.targets[1].met(case) is None
    text = format_case(case)
    assert "copy [floor] [copy]" in text and "ERROR ZeroDivisionError" in text
    assert "not available yet: x" in text and "not measured" in text


def test_config_pick_falls_back():
    assert Config("full").pick(1, 2, 3) == 1
    assert Config("quick").pick(1, 2, 3) == 2
    assert Config("smoke").pick(1, 2, 3) == 3
    assert Config("smoke").pick(1, 2) == 2
    assert Config("smoke").pick(1) == 1


def test_single_thread_env_pins_blas():
    env = run.single_thread_env({"OMP_NUM_THREADS": "8", "XLA_FLAGS": "--mine"})
    assert all(env[v] == "1" for v in run.THREAD_VARIABLES)
    assert env["XLA_FLAGS"] == "--mine"  # a user's own flags are left alone


def test_peers_get_one_thread_unless_kf_peer_threads_says_more():
    one = run.single_thread_env({})
    assert one["TF_NUM_INTRAOP_THREADS"] == "1"
    assert "intra_op_parallelism_threads=1" in one["XLA_FLAGS"]
    two = run.single_thread_env({"KF_PEER_THREADS": "2"})
    assert all(two[v] == "1" for v in run.THREAD_VARIABLES)  # NumPy's BLAS stays at one
    assert two["TF_NUM_INTRAOP_THREADS"] == "2"
    assert "intra_op_parallelism_threads=2" in two["XLA_FLAGS"]


def test_list_prints_every_workload(capsys):
    assert run.main(["--list"]) == 0
    printed = capsys.readouterr().out
    for name in run.workload_names():
        assert name in printed


def test_composed_nn_fallback_matches_numpy_step():
    # The MLP workload must still run when kf.nn is missing: relu and the loss composed
    # from primitives give the same step as the hand-written NumPy one.
    rng = np.random.default_rng(0)
    sizes = (6, 5, 4)
    params = _models.mlp_params(rng, sizes)
    x, y = _models.mlp_batch(rng, 3, sizes)
    model = _models.KfMLP(params)
    model.nn = _common.SimpleNamespace(
        relu=_common._relu, sparse_softmax_cross_entropy_with_logits=_common._sparse_xent)
    _models.check_same_step(_models.numpy_mlp_step, model.step, params, model, (x, y),
                            (kf.constant(x), kf.constant(y)), "composed nn")


def test_mlp_products_bound_runs_every_product_of_the_step_once(monkeypatch):
    # The bound row of jit_compile's MLP table: forward h @ w per layer, backward
    # h.T @ d per layer and d @ w.T for all but the input layer, nothing else.
    rng = np.random.default_rng(0)
    sizes = (6, 5, 4, 3)
    params = _models.mlp_params(rng, sizes)
    x, _ = _models.mlp_batch(rng, 2, sizes)
    run_products = _models.numpy_mlp_products(params, x)
    seen = []
    real = np.matmul

    def counting(a, b, out):
        seen.append((a.shape, b.shape))
        return real(a, b, out=out)
    monkeypatch.setattr(np, "matmul", counting)
    run_products()
    assert seen == [((2, 6), (6, 5)), ((2, 5), (5, 4)), ((2, 4), (4, 3)),
                    ((4, 2), (2, 3)), ((2, 3), (3, 4)),
                    ((5, 2), (2, 4)), ((2, 4), (4, 5)),
                    ((6, 2), (2, 5))]


def test_jit_compile_cases_compare_with_the_compiled_peers_only(monkeypatch):
    # Issue 16's peers are jax.jit and TF with XLA: jit_compile's tables take those rows
    # of each workload's peer builders (TF's built with jit_compile=True), not PyTorch's.
    from benchmarks.workloads import elementwise_chain, mlp_train_step, rnn_train_step, while_loop
    rng = np.random.default_rng(0)
    mlp = _models.mlp_params(rng, (4, 3, 2))
    rnn = _models.rnn_params(rng, 2, 3)
    builders = {
        "while_loop": while_loop.peers("accumulate", 3, np.float32(2.5), jit_compile=True),
        "elementwise_chain": elementwise_chain.peers("gelu", np.ones(4, np.float32), True),
        "mlp_train_step": mlp_train_step.peers(mlp, np.ones((2, 4), np.float32),
                                               np.zeros(2, np.int32), jit_compile=True),
        "rnn_train_step": rnn_train_step.peers(rnn, np.ones((2, 1, 2), np.float32),
                                               np.ones((1, 3), np.float32), jit_compile=True),
    }
    monkeypatch.setattr(_common, "peer", lambda name: object())  # every peer "installed"
    for workload, entries in builders.items():
        tf_rows = [label for label, module, _ in entries if module == "tensorflow"]
        assert tf_rows and all("jit_compile=True (XLA)" in r for r in tf_rows), workload
        # builds that cannot run on the stand-in module become 'setup failed' rows
        rows = _common.compiled_peers(entries)
        assert {v.name for v in rows} == {label for label, module, _ in entries
                                          if module in ("jax", "tensorflow")}, workload
    plain = mlp_train_step.peers(mlp, np.ones((2, 4), np.float32), np.zeros(2, np.int32))
    assert "TensorFlow tf.function" in [label for label, _, _ in plain]
