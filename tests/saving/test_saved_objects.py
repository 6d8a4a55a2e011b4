"""Faithful saved models: the loaded object has the saved variables, attributes,
sub-modules, lists/dicts and functions; serving_default is derived as TF derives it, returns
named outputs and describes them with TensorSpecs; loaded functions fine-tune."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.module import Module
from kilnflow.saving import saved_model


class Inner(Module):
    def __init__(self):
        super().__init__()
        self.w = kf.Variable(3.0)

    @kf.function(input_signature=[kf.TensorSpec([None], kf.float32)])
    def scale(self, x):
        return x * self.w


class Outer(Module):
    def __init__(self):
        super().__init__()
        self.v = kf.Variable([1.0, 2.0])
        self.inner = Inner()
        self.parts = [kf.Variable(5.0), Inner()]
        self.table = {"bias": kf.Variable(-1.0)}
        self.units = 7
        self.label = "outer"
        self.frozen = kf.Variable(0.5, trainable=False)

    @kf.function(input_signature=[kf.TensorSpec([2], kf.float32)])
    def __call__(self, x):
        return self.inner.scale(x * self.v) + self.table["bias"]


@pytest.fixture
def saved(tmp_path):
    model = Outer()
    path = str(tmp_path / "m")
    kf.saved_model.save(model, path)
    return model, path


def test_loaded_object_rebuilds_the_object_tree(saved):
    model, path = saved
    loaded = kf.saved_model.load(path)
    np.testing.assert_array_equal(loaded.v.numpy(), [1.0, 2.0])
    assert float(loaded.inner.w.numpy()) == 3.0
    assert float(loaded.parts[0].numpy()) == 5.0 and float(loaded.parts[1].w.numpy()) == 3.0
    assert float(loaded.table["bias"].numpy()) == -1.0
    assert (loaded.units, loaded.label) == (7, "outer")
    assert not loaded.frozen.trainable
    x = kf.constant([1.0, 1.0])
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy())
    np.testing.assert_allclose(loaded.inner.scale(kf.constant([2.0])).numpy(), [6.0])
    assert kf.saved_model.contains_saved_model(path)
    assert not kf.saved_model.contains_saved_model(os.path.dirname(path))


def test_shared_variables_stay_shared(saved):
    loaded = kf.saved_model.load(saved[1])
    loaded.inner.w.assign(10.0)  # the function reads the restored variable itself
    np.testing.assert_allclose(loaded(kf.constant([1.0, 1.0])).numpy(), [9.0, 19.0])


def test_serving_default_is_derived_and_named(saved):
    loaded = kf.saved_model.load(saved[1])
    assert list(loaded.signatures) == [kf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
    serving = loaded.signatures["serving_default"]
    out = serving(x=kf.constant([1.0, 1.0]))
    assert list(out) == ["output_0"]
    np.testing.assert_allclose(out["output_0"].numpy(), [2.0, 5.0])
    spec = serving.structured_outputs["output_0"]
    assert isinstance(spec, kf.TensorSpec) and spec.dtype == kf.float32
    assert spec.shape.as_list() == [2] and spec.name == "output_0"


def test_no_default_signature_when_ambiguous(tmp_path):
    class Two(Module):
        @kf.function(input_signature=[kf.TensorSpec([], kf.float32)])
        def a(self, x):
            return x + 1.0

        @kf.function(input_signature=[kf.TensorSpec([], kf.float32)])
        def b(self, x):
            return x * 2.0

    kf.saved_model.save(Two(), str(tmp_path / "m"))
    loaded = kf.saved_model.load(str(tmp_path / "m"))
    assert loaded.signatures == {}
    assert float(loaded.a(kf.constant(1.0)).numpy()) == 2.0
    assert float(loaded.b(kf.constant(1.0)).numpy()) == 2.0


def test_dict_outputs_keep_their_names(tmp_path):
    class Dicts(Module):
        def __init__(self):
            super().__init__()
            self.w = kf.Variable(2.0)

        @kf.function(input_signature=[kf.TensorSpec([3], kf.float32, name="pixels")])
        def __call__(self, pixels):
            return {"doubled": pixels * self.w, "total": kf.reduce_sum(pixels)}

    kf.saved_model.save(Dicts(), str(tmp_path / "m"))
    serving = kf.saved_model.load(str(tmp_path / "m")).signatures["serving_default"]
    out = serving(pixels=kf.constant([1.0, 2.0, 3.0]))
    assert sorted(out) == ["doubled", "total"] and float(out["total"].numpy()) == 6.0
    assert sorted(serving.structured_outputs) == ["doubled", "total"]


def test_fine_tuning_after_load_matches_the_analytic_gradient(saved):
    loaded = kf.saved_model.load(saved[1])
    x = kf.constant([1.0, 2.0])
    with kf.GradientTape() as tape:
        loss = kf.reduce_sum(loaded(x) ** 2)
    grads = tape.gradient(loss, [loaded.v, loaded.inner.w])
    assert all(g is not None for g in grads)
    # loss = sum((x * v * w - 1)^2): d/dw = sum(2 (x v w - 1) x v)
    xv = np.array([1.0, 4.0])
    np.testing.assert_allclose(float(grads[1].numpy()), np.sum(2 * (xv * 3.0 - 1) * xv),
                               rtol=1e-5)
    opt = kf.keras.optimizers.SGD(0.01)
    before = float(kf.reduce_sum(loaded(x) ** 2).numpy())
    for _ in range(5):
        with kf.GradientTape() as tape:
            loss = kf.reduce_sum(loaded(x) ** 2)
        variables = list(loaded.trainable_variables)
        grads = tape.gradient(loss, variables)
        opt.apply_gradients([(g, v) for g, v in zip(grads, variables) if g is not None])
    assert float(kf.reduce_sum(loaded(x) ** 2).numpy()) < before


def test_loaded_function_inside_a_new_function(saved):
    loaded = kf.saved_model.load(saved[1])

    @kf.function
    def twice(x):
        return loaded(x) * 2.0

    np.testing.assert_allclose(twice(kf.constant([1.0, 1.0])).numpy(), [4.0, 10.0])


def test_loads_in_a_fresh_process_without_the_class(saved):
    _, path = saved
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = ("import kilnflow as kf\n"
            f"m = kf.saved_model.load({path!r})\n"
            "print(m.units, m.label, float(m.inner.w.numpy()),"
            " m(kf.constant([1.0, 1.0])).numpy().tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, env={**os.environ, "PYTHONPATH": root})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "7 outer 3.0 [2.0, 5.0]"


def test_a_tree_naming_a_missing_variable_is_refused(saved):
    import json
    document = saved_model.read_document(saved[1])
    document["root"]["children"]["v"] = {"variable": "variable_999"}
    saved_model.write_document(saved[1], document)
    with pytest.raises(saved_model.SavedModelError, match="variable_999"):
        kf.saved_model.load(saved[1])


def test_side_effects_run_when_a_loaded_function_is_replayed_under_a_tape(tmp_path):
    class Counter(Module):
        def __init__(self):
            super().__init__()
            self.calls = kf.Variable(0.0)
            self.w = kf.Variable(2.0)

        @kf.function(input_signature=[kf.TensorSpec([], kf.float32)])
        def __call__(self, x):
            self.calls.assign_add(1.0)
            return x * self.w

    kf.saved_model.save(Counter(), str(tmp_path / "m"))
    loaded = kf.saved_model.load(str(tmp_path / "m"))
    loaded(kf.constant(1.0))
    with kf.GradientTape() as tape:
        y = loaded(kf.constant(3.0))
    assert float(tape.gradient(y, loaded.w).numpy()) == 3.0
    assert float(loaded.calls.numpy()) == 2.0


_SAVER = """
import sys, numpy as np
sys.path.insert(0, {root!r})
import kilnflow as kf
class Scale(kf.Module):
    def __init__(self, factor, size):
        super().__init__()
        self.w = kf.Variable(np.full(size, factor, np.float32))
    @kf.function(input_signature=[kf.TensorSpec([None], kf.float32)])
    def __call__(self, x):
        return x * self.w[0]
models = [Scale(2.0, 200_000), Scale(3.0, 100_000)]
print("ready", flush=True)
for i in range(200):
    kf.saved_model.save(models[i % 2], {path!r})
"""


def test_readers_during_saves_see_the_old_model_or_the_new(tmp_path):
    """One process saves two different models over the same directory again and again while
    this one loads it: every load gives one model's answer (the JSON names its weights by
    sha256, and a read that raced a save starts again)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = str(tmp_path / "model")
    code = _SAVER.format(root=root, path=path)
    writer = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    try:
        assert writer.stdout.readline().strip() == b"ready"
        x = np.ones(1, np.float32)
        loads = 0
        while writer.poll() is None:
            if not kf.saved_model.contains_saved_model(path):
                continue
            assert float(kf.saved_model.load(path)(x).numpy()[0]) in (2.0, 3.0)
            loads += 1
        assert writer.returncode == 0, writer.stderr.read().decode()
        assert loads > 5
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()


def test_save_and_load_options_take_tfs_arguments(tmp_path):
    """SaveOptions/LoadOptions accept TF 2.21's arguments (names as inspect.signature gives
    them there), refuse others as TF does, and change nothing in kilnflow's files."""
    options = kf.saved_model.SaveOptions(
        namespace_whitelist=None, save_debug_info=True, function_aliases={"f": None},
        experimental_debug_stripper=False, experimental_io_device="/job:localhost",
        experimental_variable_policy=None, experimental_custom_gradients=True,
        experimental_image_format=False, experimental_skip_saver=False,
        experimental_sharding_callback=None, extra_tags=None)
    with pytest.raises(TypeError):
        kf.saved_model.SaveOptions(no_such_option=True)
    path = str(tmp_path / "m")
    kf.saved_model.save(Outer(), path, options=options)
    loaded = kf.saved_model.load(path, options=kf.saved_model.LoadOptions(
        allow_partial_checkpoint=False, experimental_io_device=None,
        experimental_skip_checkpoint=False, experimental_variable_policy=None,
        experimental_load_function_aliases=False))
    assert kf.saved_model.contains_saved_model(path) and loaded.variables
