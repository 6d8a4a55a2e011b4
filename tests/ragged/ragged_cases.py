"""The RaggedTensor calls whose results tf_ragged_expected.json records from TF 2.21 (run
once in a side venv with `tf` = tensorflow; the tests run them with `tf` = kilnflow).
Names only TF's public API, so the same table drives both."""


def cases(tf):
    R, RT = tf.ragged, tf.RaggedTensor
    rt = R.constant([[1, 2], [3], []])
    nested = R.constant([[[1, 2], [3]], [[4]]])
    return {
        "from_row_splits": lambda: RT.from_row_splits([1, 2, 3, 4], [0, 3, 3, 4]),
        "from_row_lengths": lambda: RT.from_row_lengths([1, 2, 3, 4], [2, 0, 2]),
        "from_value_rowids": lambda: RT.from_value_rowids([1, 2, 3, 4], [0, 0, 2, 2], nrows=4),
        "from_value_rowids_nonrows": lambda: RT.from_value_rowids([1, 2, 3, 4], [0, 0, 2, 2]),
        "from_row_starts": lambda: RT.from_row_starts([1, 2, 3, 4], [0, 1, 1]),
        "from_row_limits": lambda: RT.from_row_limits([1, 2, 3, 4], [1, 1, 4]),
        "from_nested_row_lengths": lambda: RT.from_nested_row_lengths(
            [1, 2, 3, 4, 5], [[2, 1], [2, 0, 3]]),
        "from_nested_row_splits": lambda: RT.from_nested_row_splits(
            [1, 2, 3, 4, 5], [[0, 2, 3], [0, 2, 2, 5]]),
        "from_tensor": lambda: RT.from_tensor([[1, 0, 0], [2, 3, 0]], padding=0),
        "from_tensor_lengths": lambda: RT.from_tensor([[1, 0, 0], [2, 3, 0]], lengths=[1, 3]),
        "from_tensor_plain": lambda: RT.from_tensor([[1, 2], [3, 4]]),
        "uniform": lambda: RT.from_uniform_row_length([1, 2, 3, 4, 5, 6], 3),
        "uniform_math": lambda: RT.from_uniform_row_length([1, 2, 3, 4], 2) * 2,
        "to_tensor": lambda: rt.to_tensor(),
        "to_tensor_def": lambda: rt.to_tensor(default_value=-1),
        "to_tensor_shape": lambda: rt.to_tensor(shape=[2, 3]),
        "nested_to_tensor": lambda: nested.to_tensor(),
        "flat_values": lambda: nested.flat_values,
        "nested_row_splits": lambda: nested.nested_row_splits,
        "row_lengths": lambda: rt.row_lengths(),
        "nrows": lambda: rt.nrows(),
        "bounding": lambda: rt.bounding_shape(),
        "value_rowids": lambda: rt.value_rowids(),
        "row_limits": lambda: rt.row_limits(),
        "nested_row_lengths": lambda: nested.nested_row_lengths(),
        "idx0": lambda: rt[0],
        "idx2": lambda: rt[2],
        "idx-1": lambda: rt[-1],
        "slice": lambda: rt[1:],
        "slice2": lambda: rt[:2],
        "idx00": lambda: rt[0, 1],
        "idx_col": lambda: rt[:, :1],
        "add": lambda: rt + 1,
        "add_rt": lambda: rt + rt,
        "mul": lambda: rt * 2,
        "neg": lambda: -rt,
        "gt": lambda: rt > 1,
        "div": lambda: rt / 2,
        "mfv": lambda: R.map_flat_values(tf.math.square, rt),
        "mfv2": lambda: R.map_flat_values(tf.add, rt, 10),
        "const_float": lambda: R.constant([[1.0], [2.0, 3.0]]),
        "const_rr": lambda: R.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1),
        "const_str": lambda: R.constant([["a", "b"], ["c"]]),
        "const_dtype": lambda: R.constant([[1], []], dtype=tf.float64),
        "const_rsd": lambda: R.constant([[1], []], row_splits_dtype=tf.int32),
        "range": lambda: R.range([3, 1]),
        "range2": lambda: R.range([0, 5], [3, 8], 2),
        "range3": lambda: R.range(3),
        "stack": lambda: R.stack([R.constant([[1], [2, 3]]), R.constant([[4, 5, 6]])]),
        "stack1": lambda: R.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1),
        "bm": lambda: R.boolean_mask([[1, 2], [3, 4]], [[True, False], [False, True]]),
        "bm_rt": lambda: R.boolean_mask(rt, R.constant([[True, False], [True], []])),
        "bm1": lambda: R.boolean_mask(rt, [True, False, True]),
        "seg": lambda: R.row_splits_to_segment_ids([0, 2, 3, 3]),
        "splits": lambda: R.segment_ids_to_row_splits([0, 0, 2], num_segments=4),
        "split": lambda: tf.strings.split(["hello world", "a  b c", ""]),
        "split_sep": lambda: tf.strings.split(["a,b", "c"], sep=","),
        "split_2d": lambda: tf.strings.split([["a b"], ["c"]]),
        "ud": lambda: tf.strings.unicode_decode(["hé", "x", ""], "UTF-8"),
        "bs": lambda: tf.strings.bytes_split(["ab", "", "c"]),
        "bs_2d": lambda: tf.strings.bytes_split([["ab"], ["c"]]),
        "us": lambda: tf.strings.unicode_split(["hé", "x"], "UTF-8"),
        "rfer": lambda: tf.ragged_fill_empty_rows(
            tf.constant([0, 0, 2], tf.int64), tf.constant([1, 2, 3]),
            tf.constant(4, tf.int64), tf.constant(-1)),
        "with_flat_values": lambda: rt.with_flat_values(rt.flat_values * 10),
        "empty2": lambda: R.constant([[], []]),
        "nested_repr": lambda: R.constant([[[1.5, 2.25], []], [[3.0]]]),
        "big_repr": lambda: R.constant([list(range(i)) for i in range(12)]),
    }


def describe(tf, value):
    """A JSON-able record of a result: RaggedTensors by repr, shape and spec."""
    if isinstance(value, tf.RaggedTensor):
        return {"kind": "RT", "repr": repr(value), "shape": str(value.shape),
                "spec": repr(value._type_spec), "list": _plain(value.to_list())}
    if isinstance(value, (tuple, list)):
        return [describe(tf, v) for v in value]
    return {"kind": "T", "dtype": value.dtype.name, "value": _plain(value.numpy().tolist())}


def _plain(x):
    if isinstance(x, bytes):
        return x.decode("latin-1")
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x
