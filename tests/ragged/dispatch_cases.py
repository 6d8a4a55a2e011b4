"""Dense ops on RaggedTensors (TF's ragged dispatch): reductions, concat/stack and binary
math. tf_dispatch_expected.json records TF 2.21's results for these calls (recorded once
with `python scripts/record_ragged_dispatch.py` in a side venv where `tf` = tensorflow; the
tests run them with `tf` = kilnflow). Names only TF's public API."""


def cases(tf):
    R = tf.ragged
    rt = R.constant([[1, 2, 3], [], [4, 5]])
    rf = R.constant([[1.0, 2.0, 3.0], [], [4.0, 5.0]])
    rb = R.constant([[True, False], [], [True]])
    ri = tf.RaggedTensor.from_row_lengths(tf.constant([[1, 2], [3, 4], [5, 6]]), [2, 0, 1])
    nested = tf.RaggedTensor.from_nested_row_lengths([1, 2, 3, 4], [[2, 1, 0], [2, 1, 1]])
    two = R.constant([[1], [2, 3]])
    out = {}
    for fn in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_mean"):
        f = getattr(tf, fn)
        out[fn + "_none"] = lambda f=f: f(rt)
        out[fn + "_0"] = lambda f=f: f(rt, axis=0)
        out[fn + "_1"] = lambda f=f: f(rt, axis=1)
        out[fn + "_-1"] = lambda f=f: f(rt, axis=-1)
        out[fn + "_f1"] = lambda f=f: f(rf, axis=1)
        out[fn + "_01"] = lambda f=f: f(rf, axis=[0, 1])
        out[fn + "_keep1"] = lambda f=f: f(rt, axis=1, keepdims=True)
        out[fn + "_keep0"] = lambda f=f: f(rt, axis=0, keepdims=True)
        out[fn + "_inner"] = lambda f=f: f(ri, axis=2)
        out[fn + "_inner1"] = lambda f=f: f(ri, axis=1)
        out[fn + "_nested2"] = lambda f=f: f(nested, axis=2)
        out[fn + "_nested1"] = lambda f=f: f(nested, axis=1)
        out[fn + "_nested0"] = lambda f=f: f(nested, axis=0)
        out[fn + "_nestednone"] = lambda f=f: f(nested)
        out[fn + "_nested_keep2"] = lambda f=f: f(nested, axis=2, keepdims=True)
        out[fn + "_nested_keep1"] = lambda f=f: f(nested, axis=1, keepdims=True)
    for fn in ("reduce_any", "reduce_all"):
        f = getattr(tf, fn)
        out[fn + "_none"] = lambda f=f: f(rb)
        out[fn + "_0"] = lambda f=f: f(rb, axis=0)
        out[fn + "_1"] = lambda f=f: f(rb, axis=1)
    out["logsumexp_1"] = lambda: tf.reduce_logsumexp(rf, axis=1)
    out["logsumexp_none"] = lambda: tf.reduce_logsumexp(rf)
    out["logsumexp_0"] = lambda: tf.reduce_logsumexp(rf, axis=0)
    out["logsumexp_keep1"] = lambda: tf.reduce_logsumexp(rf, axis=1, keepdims=True)
    out["add_n"] = lambda: tf.math.add_n([rf, rf])
    out["reduce_max_f_empty_row"] = lambda: tf.reduce_max(rf, axis=1)
    out["reduce_min_f_empty_row"] = lambda: tf.reduce_min(rf, axis=1)
    out["reduce_axis_bad"] = lambda: tf.reduce_sum(rt, axis=2)
    # concat / stack
    out["concat0"] = lambda: tf.concat([rt, two], axis=0)
    out["concat1"] = lambda: tf.concat([rt, R.constant([[9], [8, 7], []])], axis=1)
    out["concat-1"] = lambda: tf.concat([rt, R.constant([[9], [8, 7], []])], axis=-1)
    out["concat0_dense"] = lambda: tf.concat([two, tf.constant([[7, 8]])], axis=0)
    out["concat1_dense"] = lambda: tf.concat([two, tf.constant([[7], [8]])], axis=1)
    out["concat_nested0"] = lambda: tf.concat([nested, nested], axis=0)
    out["concat1_bad_rows"] = lambda: tf.concat([rt, two], axis=1)
    out["concat_nested1"] = lambda: tf.concat([nested, nested], axis=1)
    out["concat_nested2"] = lambda: tf.concat([nested, nested * 10], axis=2)
    out["concat_inner"] = lambda: tf.concat([ri, ri * 10], axis=2)
    out["stack_inner"] = lambda: tf.stack([ri, ri * 10], axis=2)
    out["stack_inner_last"] = lambda: tf.stack([ri, ri * 10], axis=-1)
    out["stack_nested1"] = lambda: tf.stack([nested, nested], axis=1)
    out["stack0"] = lambda: tf.stack([rt, R.constant([[9], [8, 7], []])], axis=0)
    out["stack1"] = lambda: tf.stack([rt, R.constant([[9], [8, 7], []])], axis=1)
    out["stack0_dense"] = lambda: tf.stack([two, tf.constant([[7, 8], [9, 10]])], axis=0)
    out["stack1_dense"] = lambda: tf.stack([two, tf.constant([[7, 8], [9, 10]])], axis=1)
    # binary math
    other = R.constant([[10, 20, 30], [], [40, 50]])
    dense_rows = tf.constant([[100], [200], [300]])
    for fn in ("add", "subtract", "multiply", "maximum", "minimum", "equal", "less",
               "greater_equal", "not_equal", "truediv", "floordiv", "pow"):
        f = getattr(tf.math, fn)
        out[fn + "_scalar"] = lambda f=f: f(rt, 2)
        out[fn + "_rscalar"] = lambda f=f: f(3, rt)
        out[fn + "_rr"] = lambda f=f: f(rt, other)
        out[fn + "_col"] = lambda f=f: f(rt, dense_rows)
    out["add_float_scalar"] = lambda: tf.add(rf, tf.constant(0.5))
    out["add_dense_rowvec"] = lambda: tf.add(R.constant([[1, 2], [3, 4]]), tf.constant([10, 20]))
    out["add_dense_full"] = lambda: tf.add(R.constant([[1, 2], [3, 4]]),
                                           tf.constant([[10, 20], [30, 40]]))
    out["add_dense_bad"] = lambda: tf.add(rt, tf.constant([10, 20, 30]))
    out["add_inner"] = lambda: tf.add(ri, tf.constant([10, 20]))
    out["add_nested_scalar"] = lambda: tf.add(nested, 1)
    out["add_nested_nested"] = lambda: tf.add(nested, nested)
    out["add_rr_mismatch"] = lambda: tf.add(rt, R.constant([[1], [2, 3], [4, 5]]))
    out["add_rr_nrows"] = lambda: tf.add(rt, two)
    out["logical_and"] = lambda: tf.logical_and(rb, R.constant([[True, True], [], [False]]))
    out["logical_or_scalar"] = lambda: tf.logical_or(rb, False)
    out["squared_difference"] = lambda: tf.math.squared_difference(rf, 1.0)
    out["xdivy"] = lambda: tf.math.xdivy(rf, 2.0)
    out["divide_no_nan"] = lambda: tf.math.divide_no_nan(rf, rf * 0.0)
    out["eq_op"] = lambda: rt == 2
    out["ne_op"] = lambda: rt != 2
    out["eq_op_rr"] = lambda: rt == other
    out["rsub_dense_col_op"] = lambda: dense_rows - rt
    out["rpow_op"] = lambda: 2 ** rt
    out["mod_op"] = lambda: rt % 2
    out["dense_plus_ragged_op"] = lambda: tf.constant(5) + rt
    # ragged.constant with empty rows at any depth (they fit every nesting)
    out["const_nested_empty"] = lambda: R.constant([[[1, 2], [3]], [[4]], []])
    out["const_rr1_empty"] = lambda: R.constant([[[1, 2], [3, 4]], [], [[5, 6]]],
                                                ragged_rank=1)
    out["const_deep_empty"] = lambda: R.constant([[[1]], [[]], []])
    out["const_mixed_depth"] = lambda: R.constant([[1], [[2]]])
    return out


def describe(tf, value):
    """A JSON-able record of a result (RaggedTensors by repr, shape and spec)."""
    if isinstance(value, tf.RaggedTensor):
        return {"kind": "RT", "repr": repr(value), "shape": str(value.shape),
                "dtype": value.dtype.name, "list": _plain(value.to_list())}
    return {"kind": "T", "dtype": value.dtype.name, "shape": str(value.shape),
            "value": _plain(value.numpy().tolist())}


def run(tf, thunk):
    """describe(thunk()), or {"error": class name} when the call raises."""
    try:
        return describe(tf, thunk())
    except Exception as exc:  # noqa: BLE001 - the error class is the recorded fact
        return {"error": type(exc).__name__}


def _plain(x):
    if isinstance(x, float) and x != x:
        return "nan"
    if isinstance(x, float) and x in (float("inf"), float("-inf")):
        return str(x)
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x
