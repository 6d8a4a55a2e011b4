"""benchmarks/workloads/data_parallel.py runs at tiny sizes and reports finite figures
(no timing asserted). Slow: it starts a local Ray instance."""
import json
import math

import pytest


@pytest.mark.slow
def test_data_parallel_benchmark_smoke(tmp_path):
    pytest.importorskip("ray")
    from benchmarks.workloads import data_parallel
    out = tmp_path / "dp.json"
    assert data_parallel.main(["--smoke", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    for key in ("one_process", "ray_1", "ray_2"):
        assert math.isfinite(figures[key]["examples_per_s"]) and figures[key]["ms"] > 0
    assert math.isfinite(figures["allreduce_fit"]["ms_per_mb"])
    assert set(figures["projection"]) == {"1", "2", "4", "8", "16"}


def test_projection_follows_its_model():
    from benchmarks.workloads.data_parallel import project
    p = project(t_fixed=8.0, compute_per_example=0.04, compute_base=0.0, latency=7.5,
                per_mb=3.5, grad_mb=1.6, batch=512)
    assert p[1]["strong_efficiency"] == pytest.approx(1.0)
    assert p[2]["strong_ms"] == pytest.approx(8.0 + 0.04 * 256 + 7.5 + 1.6 * 3.5)
    assert p[8]["weak_ring_ms"] == pytest.approx(8.0 + 0.04 * 512 + 7.5 + 2 * 7 / 8 * 1.6 * 3.5)
    assert p[8]["weak_ring_efficiency"] > p[8]["weak_efficiency"]
