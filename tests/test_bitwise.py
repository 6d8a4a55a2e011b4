"""kf.bitwise re-exports TF's tf.bitwise names only."""
import kilnflow as kf


def test_kf_bitwise_exports_public_names_only():
    public = {n for n in dir(kf.bitwise) if not n.startswith("_")}
    assert public == {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
                      "right_shift"}
    assert int(kf.bitwise.bitwise_and(kf.constant(6), kf.constant(3))) == 2
