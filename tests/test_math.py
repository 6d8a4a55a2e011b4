"""kf.math re-exports TF's tf.math names and nothing of kilnflow's internals."""
import kilnflow as kf


def test_kf_math_exports_public_names_only():
    public = {n for n in dir(kf.math) if not n.startswith("_")}
    assert {"reduce_sum", "reduce_mean", "argmax", "cumsum", "top_k", "sigmoid", "abs"} <= public
    assert not public & {"np", "defop", "bind", "rules", "errors", "ADD", "MATMUL", "Any"}
    assert all(n.islower() for n in public)
    assert float(kf.math.reduce_sum(kf.constant([1.0, 2.0]))) == 3.0
