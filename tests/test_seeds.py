"""One test per behaviour the seed documents show (../shared/SEED_EXAMPLES.md, E1..E30),
written as close to the documents' own snippets as the API allows."""
import timeit
import warnings

import numpy as np
import pytest

import kilnflow as tf


def _has(name):
    return hasattr(tf, name)


needs_print = pytest.mark.skipif(not _has("print"), reason="kf.print not available yet")
needs_random = pytest.mark.skipif(not _has("random"), reason="kf.random not available yet")


# ---------------------------------------------------------------- 000: tf.function & AutoGraph

def test_E1_tf1_graph_and_session():
    """E1 - TF1 style: a Graph made default, a = [[10,10],[11.,1.]], x = identity,"""
    g = tf.Graph()
    with g.as_default():
        a = tf.constant([[10, 10], [11., 1.]])
        x = tf.constant([[1., 0.], [0., 1.]])
        b = tf.Variable(12.)
        y = tf.matmul(a, x) + b
        init_op = tf.compat.v1.global_variables_initializer()
    with tf.compat.v1.Session(graph=g) as sess:
        sess.run(init_op)
        np.testing.assert_array_equal(sess.run(y), [[22, 22], [23, 13]])


def test_E2_eager_gives_the_value_at_once():
    """E2 - The same lines run eagerly give the same value at once; `y.numpy()` works."""
    a = tf.constant([[10, 10], [11., 1.]])
    x = tf.constant([[1., 0.], [0., 1.]])
    b = tf.Variable(12.)
    y = tf.matmul(a, x) + b
    np.testing.assert_array_equal(y.numpy(), [[22, 22], [23, 13]])


def test_E3_plain_python_function_eagerly():
    """E3 - Wrapping the lines in a plain Python function and calling it eagerly works."""
    def f():
        a = tf.constant([[10, 10], [11., 1.]])
        x = tf.constant([[1., 0.], [0., 1.]])
        b = tf.Variable(12.)
        y = tf.matmul(a, x) + b
        return y
    np.testing.assert_array_equal(f().numpy(), [[22, 22], [23, 13]])


@needs_print
def test_E4_python_print_at_trace_time_tf_print_every_call(capsys):
    """E4 - With `@function` and a Python `print` plus `tf.print` inside: the Python"""
    b = tf.Variable(12.)

    @tf.function
    def f():
        a = tf.constant([[10, 10], [11., 1.]])
        x = tf.constant([[1., 0.], [0., 1.]])
        y = tf.matmul(a, x) + b
        print("PRINT: ", y)
        tf.print("TF-PRINT: ", y)
        return y

    f()
    first = capsys.readouterr()
    assert 'PRINT:  Tensor("add:0", shape=(2, 2), dtype=float32)' in first.out
    assert "TF-PRINT:" in first.err and "[[22 22]" in first.err
    f()
    second = capsys.readouterr()
    assert "PRINT:" not in second.out
    assert "TF-PRINT:" in second.err


def test_E5_creating_a_variable_on_every_trace_raises():
    """E5 - That function creates `tf.Variable(12.)` unconditionally: calling it"""
    @tf.function
    def f():
        a = tf.constant([[10, 10], [11., 1.]])
        x = tf.constant([[1., 0.], [0., 1.]])
        b = tf.Variable(12.)
        return tf.matmul(a, x) + b

    with pytest.raises(ValueError, match="tried to create variables on non-first call") as info:
        f()
    assert "test_seeds.py" in str(info.value)  # names the user's line


def test_E6_variable_passed_in_as_argument():
    """E6 - Workaround 1: the variable passed in as an argument works."""
    @tf.function
    def f(b):
        a = tf.constant([[10, 10], [11., 1.]])
        x = tf.constant([[1., 0.], [0., 1.]])
        return tf.matmul(a, x) + b

    b = tf.Variable(12.)
    np.testing.assert_array_equal(f(b).numpy(), [[22, 22], [23, 13]])
    np.testing.assert_array_equal(f(b).numpy(), [[22, 22], [23, 13]])


def test_E7_lazily_created_attribute_variable():
    """E7 - Workaround 2: the variable as a lazily created class attribute"""
    class F:
        def __init__(self):
            self._b = None

        @tf.function
        def __call__(self):
            a = tf.constant([[10, 10], [11., 1.]])
            x = tf.constant([[1., 0.], [0., 1.]])
            if self._b is None:
                self._b = tf.Variable(12.)
            return tf.matmul(a, x) + self._b

    f = F()
    np.testing.assert_array_equal(f().numpy(), [[22, 22], [23, 13]])
    np.testing.assert_array_equal(f().numpy(), [[22, 22], [23, 13]])


def test_E8_assign_add_is_visible_outside():
    """E8 - `a = tf.Variable(0)`, `@function def g(x): x.assign_add(1); return x`;"""
    a = tf.Variable(0)

    @tf.function
    def g(x):
        x.assign_add(1)
        return x

    assert [int(g(a)) for _ in range(3)] == [1, 2, 3]
    assert a.numpy() == 3


def test_E9_graph_cache_keyed_by_input_signature(capsys):
    """E9 - The cache: a graph is keyed by the function and its input signature;"""
    @tf.function
    def f(x):
        print("tracing")
        return x + 1

    f(tf.constant(1.0))
    f(tf.constant(2.0))
    assert capsys.readouterr().out.count("tracing") == 1
    f(tf.constant([1.0, 2.0]))  # a new signature: traced again
    assert capsys.readouterr().out.count("tracing") == 1
    assert f.experimental_get_tracing_count() == 2


# ---------------------------------------------------------------- 001: subclassed layers

def char_unpack(inputs):
    shifting_range = tf.reshape(tf.cast(tf.range(7, -1, -1, name="shifter_range"), tf.uint8),
                                (1, 1, 8))
    selection_bit = tf.constant(0x01, dtype=tf.uint8)
    unpacked = tf.bitwise.bitwise_and(
        tf.bitwise.right_shift(tf.expand_dims(inputs, 2), shifting_range), selection_bit)
    return tf.cast(tf.reshape(unpacked, [-1, inputs.shape[-1] * 8]), tf.float32)


def test_E11_char_unpack_same_eager_and_function():
    """E11 - The CharUnpack layer (uint8 [B,400] -> float32 [B,3200] of bits via"""
    data = np.random.default_rng(0).integers(0, 256, size=(4, 400), dtype=np.uint8)
    eager = char_unpack(tf.constant(data)).numpy()
    expected = np.unpackbits(data, axis=1).astype(np.float32)
    np.testing.assert_array_equal(eager, expected)
    np.testing.assert_array_equal(tf.function(char_unpack)(tf.constant(data)).numpy(),
                                  expected)


def test_E12_wrapper_without_return_is_pruned_and_warned():
    """E12 - A `@function` wrapper that calls the layer but returns nothing: its graph"""
    @tf.function
    def fun(x):
        char_unpack(x)

    inputs = tf.zeros([64, 400], dtype=tf.uint8)
    with pytest.warns(UserWarning, match="fun.*never used.*forget a `return`"):
        assert fun(inputs) is None
    concrete = fun.get_concrete_function(tf.TensorSpec([None, 400], tf.uint8))
    assert [op.type for op in concrete.graph.get_operations()] == ["Placeholder"]


def test_E13_concrete_function_prints_args_and_returns():
    """E13 - `get_concrete_function(TensorSpec([None, 400], uint8))` gives a concrete"""
    @tf.function
    def fun(x):
        char_unpack(x)

    @tf.function
    def call(inputs):
        return char_unpack(inputs)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = str(fun.get_concrete_function(tf.TensorSpec(shape=[None, 400], dtype=tf.uint8)))
    # the seed shows an older TF's form; this is TF 2.21's (same facts)
    assert text == ("ConcreteFunction Input Parameters:\n"
                    "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None, 400), dtype=tf.uint8, "
                    "name=None)\nOutput Type:\n  Literal[None]\nCaptures:\n  None")
    text = str(call.get_concrete_function(tf.TensorSpec(shape=[None, 400], dtype=tf.uint8)))
    assert "inputs (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None, 400), dtype=tf.uint8" in text
    assert "TensorSpec(shape=(None, 3200), dtype=tf.float32" in text


def test_E14_graph_def_nodes_list_inputs_and_names():
    """E14 - `concrete.graph.as_graph_def().node` lists `input -> name` pairs;"""
    @tf.function
    def fun(x):
        char_unpack(x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        concrete = fun.get_concrete_function(tf.TensorSpec(shape=[None, 400], dtype=tf.uint8))
    nodes = [(list(n.input), n.name) for n in concrete.graph.as_graph_def().node]
    assert nodes == [([], "x")]
    traced = [(list(n.input), n.name) for n in concrete.traced_graph.as_graph_def().node]
    assert ([], "x") in traced and any(name.startswith("Cast") for _, name in traced)


def test_E16_function_with_return_does_the_work():
    """E16 - With `return out` added, function and eager take similar time on large"""
    @tf.function
    def fun(x):
        out = char_unpack(x)
        return out

    inputs = tf.zeros([64, 400], dtype=tf.uint8)
    assert fun(inputs).shape == (64, 3200)
    # Both run the computation now (timings are in benchmarks/, not asserted here).
    assert timeit.timeit(lambda: fun(inputs), number=3) > 0


# ---------------------------------------------------------------- 002: eager vs graph

def test_E18_placeholder_must_be_fed():
    """E18 - `x = placeholder(float32, (1024,1024))`, `y = matmul(x, x)`,"""
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(1024, 1024), name="x")
        y = tf.matmul(x, x)
        with tf.compat.v1.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="placeholder tensor 'x'"):
                sess.run(y)
            rand_array = np.random.rand(1024, 1024).astype(np.float32)
            np.testing.assert_allclose(sess.run(y, feed_dict={x: rand_array}),
                                       rand_array @ rand_array, rtol=1e-4)


def test_E20_executing_eagerly():
    """E20 - Eager: `tf.executing_eagerly()` is True; keras layers work eagerly."""
    assert tf.executing_eagerly()
    with tf.Graph().as_default():
        assert not tf.executing_eagerly()
    assert tf.executing_eagerly()


def test_E21_gradient_tape():
    """E21 - GradientTape: w = Variable([[1.0]]), loss = w*w, gradient [[2.0]]."""
    w = tf.Variable([[1.0]])
    with tf.GradientTape() as tape:
        loss = w * w
    grad = tape.gradient(loss, w)
    np.testing.assert_array_equal(grad.numpy(), [[2.0]])


def test_E22_eager_values_are_plain_python_objects():
    """E22 - Eager results can be debugged with ordinary Python (pdb, print)."""
    x = tf.constant([1.0, 2.0, 3.0])
    y = x * 2
    assert float(y[1]) == 4.0          # inspect mid-computation, as in a debugger
    assert y.numpy().tolist() == [2.0, 4.0, 6.0]
    assert "numpy=array([2., 4., 6.], dtype=float32)" in repr(y)


def test_E23_add_and_numpy_interop():
    """E23 - `a = constant([[1,2],[3,4]])`, `b = tf.add(a, 1)` -> [[2,3],[4,5]];"""
    a = tf.constant([[1, 2], [3, 4]])
    b = tf.add(a, 1)
    np.testing.assert_array_equal(b.numpy(), [[2, 3], [4, 5]])
    c = np.multiply(a, b)
    assert isinstance(c, np.ndarray)
    np.testing.assert_array_equal(c, [[2, 6], [12, 20]])
    assert tf.reduce_sum(np.ones((2, 2))).numpy() == 4.0


def test_E24_placeholder_in_eager_mode_raises():
    """E24 - `placeholder` in eager mode raises"""
    with pytest.raises(RuntimeError,
                       match=r"tf.placeholder\(\) is not compatible with eager execution"):
        tf.compat.v1.placeholder(tf.float32, shape=(2, 2))


# ---------------------------------------------------------------- 003: coding rules

@needs_random
def test_E26_np_random_frozen_tf_random_fresh():
    """E26 - `np.random.randn` inside `@function` is frozen at trace time (same"""
    @tf.function
    def f(x):
        a = np.random.randn()
        b = tf.random.normal([])
        return x + a, x + b

    with pytest.warns(UserWarning, match=r"test_seeds.py:\d+.*np.random.randn.*frozen"):
        first = f(tf.constant(0.0))
    second = f(tf.constant(0.0))
    assert float(first[0]) == float(second[0])
    assert float(first[1]) != float(second[1])


def test_E28_outer_variable_updated_every_call_and_creation_inside_raises():
    """E28 - An outer Variable updated with assign_add inside `@function` works on"""
    a = tf.Variable(1.0)

    @tf.function
    def f():
        a.assign_add(1.0)
        return a.read_value()

    assert float(f()) == 2.0
    assert float(f()) == 3.0

    @tf.function
    def g():
        v = tf.Variable(1.0)
        return v.read_value()

    with pytest.raises(ValueError):
        g()


def test_E29_outer_list_append_happens_at_trace_time_only():
    """E29 - Appending to an outer Python list inside `@function`: after two calls"""
    external_list = []

    @tf.function
    def f(x):
        external_list.append(x)
        return x + 1

    with pytest.warns(UserWarning, match=r"mutates the outer Python list 'external_list'"):
        f(tf.constant(1.0))
    f(tf.constant(2.0))
    assert len(external_list) == 1
    assert tf.is_tensor(external_list[0]) and not hasattr(external_list[0], "numpy")


# ---------------------------------------------------------------- AutoGraph (000, 001, 003)

def _op_types(concrete):
    return {op.type for op in concrete.traced_graph.get_operations()}


def test_E10_autograph_converts_loops_branches_and_asserts():
    """E10 - AutoGraph converts while -> while loop, for -> while loop, if -> cond,"""
    @tf.function
    def f(x, n):
        i = tf.constant(0)
        while i < n:                      # while -> While
            x = x * 2.0
            i += 1
        for j in tf.range(n):             # for -> While
            x = x + tf.cast(j, tf.float32)
        if tf.reduce_sum(x) > 100.0:      # if -> If
            x = x / 2.0
        assert tf.reduce_sum(x) > 0.0, "x must stay positive"   # assert -> Assert
        return x

    x, n = tf.constant([1.0, 2.0]), tf.constant(3)
    concrete = f.get_concrete_function(x, n)
    types = _op_types(concrete)
    assert {"While", "StatelessWhile"} & types and {"If", "StatelessIf"} & types
    assert "Assert" in types
    expected = np.array([1.0, 2.0]) * 8 + 3
    np.testing.assert_allclose(f(x, n).numpy(), expected)
    with pytest.raises(tf.errors.InvalidArgumentError, match="x must stay positive"):
        f(tf.constant([-10.0, -20.0]), n)


@needs_print
def test_E10_statements_keep_program_order(capsys):
    """E10 - AutoGraph converts while -> while loop, for -> while loop, if -> cond,"""
    v = tf.Variable(1.0)

    @tf.function
    def f():
        tf.print("first", v)
        v.assign(5.0)
        tf.print("second", v)
        v.assign_add(1.0)
        return v.read_value()

    assert float(f()) == 6.0
    err = capsys.readouterr().err
    assert err.index("first 1") < err.index("second 5")


def test_E15_to_code_prints_the_converted_function():
    """E15 - `tf.autograph.to_code(fun.python_function)` prints the converted code."""
    @tf.function
    def fun(x):
        if tf.reduce_sum(x) > 0:
            x = x * 2
        return x

    code = tf.autograph.to_code(fun.python_function)
    assert code.startswith("def tf__fun(x):")
    assert "ag__.if_stmt" in code


def test_E27_tf_range_print_constant_vs_python_semantics(capsys):
    """E27 - Use tf.range / tf.print / tf.constant(True) inside functions; Python"""
    @tf.function
    def python_loop(x):
        for _ in range(3):              # Python range: unrolled at trace time
            x = x + 1.0
        print("traced")                 # Python print: trace time only
        return x

    @tf.function
    def tensor_loop(x):
        for _ in tf.range(3):           # tf.range: one While op
            x = x + 1.0
        if tf.constant(True):           # tensor condition: an If op
            x = x * 1.0
        return x

    x = tf.constant(0.0)
    assert float(python_loop(x)) == 3.0 and float(python_loop(x)) == 3.0
    assert capsys.readouterr().out.count("traced") == 1
    unrolled = python_loop.get_concrete_function(x)
    assert [op.type for op in unrolled.traced_graph.get_operations()].count("AddV2") == 3
    assert float(tensor_loop(x)) == 3.0
    types = {op.type for op in tensor_loop.get_concrete_function(x).traced_graph.get_operations()}
    assert {"While", "StatelessWhile"} & types and {"If", "StatelessIf"} & types


# ---------------------------------------------------------------- sessions on devices (002)

def test_E19_session_kinds_and_devices():
    """E19 - Session kinds: Session, InteractiveSession, a Session on a named device"""
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            a = tf.constant([1.0, 2.0])
        with tf.device("/gpu:0"):        # no GPU here: soft-placed on the CPU, like TF
            b = a * 2.0
        with tf.compat.v1.Session(graph=g) as sess:
            assert sess.run(b).tolist() == [2.0, 4.0]
        sess = tf.compat.v1.InteractiveSession(graph=g)
        try:
            assert b.eval().tolist() == [2.0, 4.0]
        finally:
            sess.close()
        config = tf.compat.v1.ConfigProto(allow_soft_placement=True, log_device_placement=False)
        with tf.compat.v1.Session(graph=g, config=config) as sess:
            assert sess.run(b).tolist() == [2.0, 4.0]
    assert tf.config.list_physical_devices("CPU")
    assert tf.config.list_physical_devices("GPU") == []
    cluster = tf.train.ClusterSpec({"worker": ["localhost:2222", "localhost:2223"],
                                    "ps": ["localhost:2224"]})
    assert cluster.jobs == ["ps", "worker"] and cluster.num_tasks("worker") == 2
    with pytest.raises(tf.errors.UnimplementedError, match="distributed"):
        tf.compat.v1.Session(target="grpc://localhost:2222")


# ---------------------------------------------------------------- layers, checkpoints, modules

class CharUnpack(tf.keras.layers.Layer):
    """The seed-001 layer, as written there."""

    def __init__(self, name="CharUnpack", *args, **kwargs):
        super(CharUnpack, self).__init__(trainable=False, name=name, *args, **kwargs)
        self._shifting_range = tf.reshape(
            tf.dtypes.cast(tf.range(7, -1, -1, name="shifter_range"), tf.uint8,
                           name="shifter_cast") if hasattr(tf.dtypes, "cast") else
            tf.cast(tf.range(7, -1, -1, name="shifter_range"), tf.uint8),
            (1, 1, 8), name="shifter_reshape")
        self._selection_bit = tf.constant(0x01, dtype=tf.uint8, name="and_selection_bit")

    def call(self, inputs):
        return tf.cast(
            tf.reshape(
                tf.bitwise.bitwise_and(
                    tf.bitwise.right_shift(tf.expand_dims(inputs, 2), self._shifting_range),
                    self._selection_bit),
                [x if x else -1 for x in self.compute_output_shape(inputs.shape)]),
            tf.float32)

    def compute_output_shape(self, input_shape):
        try:
            if len(input_shape) > 1:
                output_shape = tf.TensorShape(tuple(list(input_shape[:-1]) +
                                                    [input_shape[-1] * 8]))
            else:
                output_shape = tf.TensorShape((input_shape[0] * 8,))
        except TypeError:
            output_shape = input_shape
        return output_shape

    def compute_output_signature(self, input_signature):
        return tf.TensorSpec(self.compute_output_shape(input_signature.shape), tf.float32)


def test_E17_subclassed_layer_with_function_methods_and_output_signature():
    """E17 - Layer methods decorated with `@function`, and layers with"""
    layer = CharUnpack()
    data = np.random.default_rng(1).integers(0, 256, size=(8, 400), dtype=np.uint8)
    expected = np.unpackbits(data, axis=1).astype(np.float32)
    np.testing.assert_array_equal(layer(tf.constant(data)).numpy(), expected)
    call = tf.function(layer.call)
    np.testing.assert_array_equal(call(tf.constant(data)).numpy(), expected)
    concrete = call.get_concrete_function(tf.TensorSpec(shape=[None, 400], dtype=tf.uint8))
    assert "inputs (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None, 400), dtype=tf.uint8" in str(concrete)
    assert layer.compute_output_shape(tf.TensorShape([None, 400])).as_list() == [None, 3200]
    signature = layer.compute_output_signature(tf.TensorSpec([None, 400], tf.uint8))
    assert signature == tf.TensorSpec([None, 3200], tf.float32)

    class Scaled(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(input_shape[-1],), initializer="ones")

        @tf.function
        def call(self, x):
            return x * self.w

    scaled = Scaled()
    x = tf.ones([2, 3])
    np.testing.assert_array_equal(scaled(x).numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(scaled(x).numpy(), np.ones((2, 3)))


def _small_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"),
                                 tf.keras.layers.Dense(2)])
    model(np.zeros((1, 3), np.float32))
    return model


def test_E25_checkpoint_eager_to_graph_and_back(tmp_path):
    """E25 - A model built eagerly can be saved to a checkpoint and restored in"""
    x = np.random.default_rng(2).normal(size=(5, 3)).astype(np.float32)
    eager_model = _small_model()
    expected = eager_model(x).numpy()
    path = tf.train.Checkpoint(model=eager_model).save(str(tmp_path / "eager"))

    with tf.Graph().as_default():
        graph_model = _small_model()
        y = graph_model(tf.constant(x))
        status = tf.train.Checkpoint(model=graph_model).restore(path)
        with tf.compat.v1.Session() as sess:
            status.assert_existing_objects_matched()
            np.testing.assert_allclose(sess.run(y), expected, rtol=1e-6)
            updates = [v.assign_add(tf.ones_like(v)) for v in graph_model.variables]
            sess.run(updates)  # change the weights in the graph
        changed = tf.train.Checkpoint(model=graph_model).save(str(tmp_path / "graph"))

    back = _small_model()
    tf.train.Checkpoint(model=back).restore(changed).assert_consumed()
    for a, b in zip(back.get_weights(), eager_model.get_weights()):
        np.testing.assert_allclose(a, b + 1.0)


def test_E30_tf_module_tracks_variables_and_function_methods():
    """E30 - Building functions with tf.Module: variables as module attributes,"""
    class Dense(tf.Module):
        def __init__(self, in_features, out_features, name=None):
            super().__init__(name=name)
            self.w = tf.Variable(tf.ones([in_features, out_features]), name="w")
            self.b = tf.Variable(tf.zeros([out_features]), name="b", trainable=False)

        @tf.function
        def __call__(self, x):
            return tf.matmul(x, self.w) + self.b

    class Model(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.layers = [Dense(3, 2), Dense(2, 1)]

        @tf.function
        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    model = Model()
    assert float(model(tf.ones([1, 3]))[0, 0]) == 6.0
    assert len(model.variables) == 4 and len(model.trainable_variables) == 2
    assert len(model.submodules) == 2
    first, second = Model(), Model()
    first(tf.ones([1, 3]))
    second(tf.ones([1, 3]))
    assert Model.__call__.__get__(first) is not Model.__call__.__get__(second)
