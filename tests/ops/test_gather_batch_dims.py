"""gather(batch_dims=) against TF 2.21's recorded output, in every mode."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors

# tf.gather(tf.reshape(tf.range(24.), [2, 3, 4]), [[0, 2], [1, 1]], batch_dims=1, axis=2)
# under TF 2.21; the shapes of the three calls below as TF printed them.
TF_AXIS2 = [[[0.0, 2.0], [4.0, 6.0], [8.0, 10.0]], [[13.0, 13.0], [17.0, 17.0], [21.0, 21.0]]]
TF_SHAPES = {(1, None): (2, 2, 4), (1, 2): (2, 3, 2), (-1, None): (2, 3, 2)}


def _args():
    return kf.reshape(kf.range(24.0), [2, 3, 4]), kf.constant([[0, 2], [1, 1]])


def test_values_and_shapes_match_tf_in_eager_function_and_session():
    p, i = _args()
    np.testing.assert_array_equal(kf.gather(p, i, batch_dims=1, axis=2).numpy(), TF_AXIS2)
    f = kf.function(lambda p, i: kf.gather(p, i, batch_dims=1, axis=2))
    np.testing.assert_array_equal(f(p, i).numpy(), TF_AXIS2)
    for (batch_dims, axis), shape in TF_SHAPES.items():
        assert kf.gather(p, i, batch_dims=batch_dims, axis=axis).shape == shape
    with kf.Graph().as_default():
        pp = kf.compat.v1.placeholder(kf.float32, [None, 3, 4])
        ii = kf.compat.v1.placeholder(kf.int32, [None, 2])
        out = kf.gather(pp, ii, batch_dims=1, axis=2)
        assert out.shape.as_list() == [None, 3, 2]
        with kf.compat.v1.Session() as sess:
            got = sess.run(out, {pp: p.numpy(), ii: i.numpy()})
    np.testing.assert_array_equal(got, TF_AXIS2)


def test_batch_shapes_must_agree():
    p, _ = _args()
    with pytest.raises((ValueError, errors.InvalidArgumentError),
                       match=r"params.shape\[0\]: 2 should be equal to indices.shape\[0\]: 3"):
        kf.gather(p, kf.constant([[0], [1], [2]]), batch_dims=1)


def test_second_order_gradient_flows_through_the_batched_gradient():
    p, i = _args()
    p = kf.Variable(p)
    with kf.GradientTape() as outer:
        with kf.GradientTape() as inner:
            y = kf.reduce_sum(kf.gather(p, i, batch_dims=1) ** 2)
        g = inner.gradient(y, p)
        z = kf.reduce_sum(g * g)
    expected = np.zeros((2, 3, 4), np.float32)
    np.add.at(expected, (np.array([[0, 0], [1, 1]]), i.numpy()), 8.0 * np.stack(
        [p.numpy()[0][[0, 2]], p.numpy()[1][[1, 1]]]))
    # d/dp sum((2 p_sel * count)^2) = 8 * count^2 * p at gathered rows; rows of batch 1 are
    # gathered twice (count 2), so their gradient carries count^2 = 4.
    counts = np.zeros((2, 3, 4), np.float32)
    np.add.at(counts, (np.array([[0, 0], [1, 1]]), i.numpy()), 1.0)
    np.testing.assert_allclose(outer.gradient(z, p).numpy(), 8.0 * counts ** 2 * p.numpy(),
                               rtol=1e-6)
