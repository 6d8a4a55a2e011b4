"""pipeline: order, switches (ours and TF's option names), the report, KF_DUMP_GRAPHS."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow.passes import pipeline
from tests.passes._helpers import trace


@pytest.fixture(autouse=True)
def _restore_options():
    saved = pipeline.get_options()
    yield
    pipeline.set_options(saved)


def gelu(x):
    return 0.5 * x * (1.0 + kf.tanh(0.7978845608 * (x + 0.044715 * (x * x * x))))


def test_every_pass_is_on_by_default_and_listed_once():
    assert pipeline.get_options() == {"prune": True, "constant_fold": True, "cse": True,
                                      "simplify": True, "fuse_elementwise": True,
                                      "plan_buffers": True, "subgraphs": True}


def test_the_report_counts_ops_and_fused_groups():
    concrete = kf.function(gelu).get_concrete_function(kf.TensorSpec([None], kf.float32))
    report = concrete.pass_report
    assert [r[0] for r in report] == [name for name, _ in pipeline.PASSES]
    fuse = report[[r[0] for r in report].index("fuse_elementwise")]
    assert fuse[1] == 14 and fuse.fused_groups == 1 and fuse.fused_ops == 9
    assert str(fuse) == "fuse_elementwise: 14 -> 6 ops (1 fused group of 9 ops)"
    assert all(len(tuple(r)) == 3 for r in report)   # (pass, before, after) unpacks


def test_switching_a_pass_off_skips_it_and_results_stay():
    x = np.linspace(-3, 3, 11).astype(np.float32)
    want = kf.function(gelu)(x).numpy()
    kf.config.optimizer.set_experimental_options({"fuse_elementwise": False})
    assert kf.config.optimizer.get_experimental_options()["fuse_elementwise"] is False
    concrete = kf.function(gelu).get_concrete_function(kf.TensorSpec([None], kf.float32))
    assert "fuse_elementwise" not in [r[0] for r in concrete.pass_report]
    programs = [op.attrs["program"] for op in concrete.graph.operations
                if op.type == "FusedElementwise"]        # plan_buffers' one-op programs
    assert all(p.n_ops == 1 for p in programs)
    # atol: autoclustered, numba's tanh may differ from NumPy's by an ulp, and x * (1 + tanh)
    # cancels near -1 (so a small result's relative error grows; 1.4e-7 absolute seen)
    np.testing.assert_allclose(concrete(x).numpy(), want, rtol=1e-6, atol=1e-6)


def test_tf_option_names_map_to_passes():
    kf.config.optimizer.set_experimental_options({"constant_folding": False,
                                                  "arithmetic_optimization": False,
                                                  "layout_optimizer": False})
    options = pipeline.get_options()
    assert not options["constant_fold"] and not options["simplify"] and not options["cse"]
    assert options["fuse_elementwise"]
    kf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    assert not any(pipeline.get_options().values())
    with pytest.raises(ValueError, match="Unknown graph pass 'fold'"):
        pipeline.set_options({"fold": False})


def test_dump_prints_the_graph_after_each_pass(monkeypatch, capsys):
    graph = trace(lambda x: x * 1.0 + 2.0, kf.TensorSpec([2], kf.float32))
    capsys.readouterr()
    monkeypatch.setenv("KF_DUMP_GRAPHS", "1")
    pipeline.optimize(graph)
    err = capsys.readouterr().err
    assert err.count("--- after ") == len(pipeline.PASSES)
    assert "--- after simplify ---" in err
