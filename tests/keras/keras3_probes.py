"""Small Keras programs run under both Keras 3 (TF 2.21's, recorded by
scripts/record_keras3_probes.py into data/keras3_probes.json) and kilnflow's keras
(tests/keras/test_keras3_probes.py). Each probe takes the `keras` module and returns plain
JSON data: log keys, callback event sequences, History values, printed lines. Weights are set
from a fixed NumPy generator and nothing is shuffled, so the numbers agree too.

This module imports neither TensorFlow nor kilnflow: the caller passes `keras` in.
"""
import contextlib
import io
import re
import warnings

import numpy as np

RS = np.random.RandomState(1)
X = RS.rand(10, 3).astype("float32")
Y = RS.rand(10, 1).astype("float32")
YC = (Y > 0.5).astype("float32")
OUT_OF_DATA = "Your input ran out of data"


def _model(keras, out=1, act=None, loss="mse", **compile_kwargs):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"),
                              keras.layers.Dense(out, activation=act)])
    rs = np.random.RandomState(0)
    model.set_weights([rs.uniform(-1, 1, w.shape).astype("float32")
                       for w in model.get_weights()])
    model.compile(keras.optimizers.SGD(0.1), loss, **compile_kwargs)
    return model


def _rounded(history):
    return {k: [round(float(v), 4) for v in vs] for k, vs in sorted(history.items())}


def _recorder(keras):
    class Recorder(keras.callbacks.Callback):
        """Records every hook called, with its step and the sorted log keys."""

        def __init__(self):
            super().__init__()
            self.events = []

        def __getattribute__(self, name):
            if not name.startswith("on_"):
                return object.__getattribute__(self, name)

            def hook(*args, **kwargs):
                logs = args[-1] if args and isinstance(args[-1], dict) else kwargs.get("logs")
                step = "" if not args or isinstance(args[0], dict) or args[0] is None \
                    else f"({args[0]})"
                keys = " " + ",".join(sorted(logs)) if logs else ""
                self.events.append(name + step + keys)
            return hook
    return Recorder()


def probe_metric_names(keras):
    """sorted(history) for compile(metrics=[spec]) on a single-output model."""
    specs = {"mae": "mae", "mse": "mse", "accuracy": "accuracy", "acc": "acc",
             "mean_absolute_error": "mean_absolute_error", "binary_accuracy":
             "binary_accuracy", "mape": "mape", "msle": "msle", "AUC": "AUC",
             "MeanAbsoluteError()": lambda: keras.metrics.MeanAbsoluteError(),
             "MeanSquaredError(name=foo)": lambda: keras.metrics.MeanSquaredError(name="foo"),
             "fn mean_absolute_error": lambda: keras.metrics.mean_absolute_error}
    out = {}
    for label, spec in specs.items():
        spec = spec() if callable(spec) else spec
        model = _model(keras, act="sigmoid", loss="binary_crossentropy", metrics=[spec])
        history = model.fit(X, YC, epochs=1, verbose=0, validation_data=(X, YC),
                            shuffle=False)
        out[label] = sorted(history.history)
    return out


def probe_metrics_names_and_evaluate(keras):
    model = _model(keras, metrics=["mae", "mse"])
    out = {"before": model.metrics_names,
           "evaluate": [round(v, 4) for v in model.evaluate(X, Y, verbose=0)],
           "after": model.metrics_names,
           "sub_metrics": [m.name for m in getattr(model.metrics[1], "metrics", [])],
           "loss_only": _model(keras).metrics_names}
    out["empty_list"] = _model(keras, metrics=[]).metrics_names
    return out


def probe_weighted_metrics(keras):
    model = _model(keras, metrics=["mae"], weighted_metrics=["mae"])
    history = model.fit(X, Y, batch_size=4, epochs=2, verbose=0, shuffle=False,
                        sample_weight=np.arange(10.0))
    return _rounded(history.history)


def probe_callback_order(keras):
    model = _model(keras, metrics=["mae"])
    rec = _recorder(keras)
    out = {}
    model.fit(X, Y, batch_size=4, epochs=2, verbose=0, validation_data=(X[:5], Y[:5]),
              callbacks=[rec], shuffle=False)
    out["fit"], rec.events = rec.events, []
    model.evaluate(X, Y, batch_size=4, verbose=0, callbacks=[rec])
    out["evaluate"], rec.events = rec.events, []
    model.predict(X, batch_size=4, verbose=0, callbacks=[rec])
    out["predict"], rec.events = rec.events, []
    model = _model(keras, metrics=["mae"], steps_per_execution=2)  # 5 batches in 3 groups
    history = model.fit(X, Y, batch_size=2, epochs=1, verbose=0, callbacks=[rec],
                        shuffle=False, validation_data=(X[:6], Y[:6]))
    out["steps_per_execution"] = [rec.events, _rounded(history.history)]
    return out


def _generator(n):
    for i in range(n):
        yield X[(2 * i) % 10:(2 * i) % 10 + 2], Y[(2 * i) % 10:(2 * i) % 10 + 2]


class _Batches:
    """A PyDataset of 3 batches (the base class is passed in)."""

    def __init__(self):
        self.ends = 0

    def __len__(self):
        return 3

    def __getitem__(self, i):
        return X[2 * i:2 * i + 2], Y[2 * i:2 * i + 2]

    def on_epoch_end(self):
        self.ends += 1


def probe_out_of_data(keras):
    """Generators and a PyDataset that run out before steps_per_epoch * epochs."""
    dataset_cls = type("Batches", (_Batches, keras.utils.PyDataset), {})
    cases = {"gen5 spe2 ep4": (lambda: _generator(5), dict(steps_per_epoch=2, epochs=4)),
             "gen4 spe2 ep3": (lambda: _generator(4), dict(steps_per_epoch=2, epochs=3)),
             "gen5 ep3": (lambda: _generator(5), dict(epochs=3)),
             "gen3 spe5 ep2": (lambda: _generator(3), dict(steps_per_epoch=5, epochs=2)),
             "pydataset spe2 ep3": (dataset_cls, dict(steps_per_epoch=2, epochs=3)),
             "pydataset ep2": (dataset_cls, dict(epochs=2))}
    out = {}
    for label, (make, kwargs) in cases.items():
        model = _model(keras, metrics=["mae"])
        rec = _recorder(keras)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            history = model.fit(make(), verbose=0, callbacks=[rec], shuffle=False, **kwargs)
        out[label] = {"epochs": history.epoch, "history": _rounded(history.history),
                      "ran_out": sum(OUT_OF_DATA in str(w.message) for w in caught),
                      "events": [e.split(" ")[0][3:] for e in rec.events]}
    return out


def _printed(fn):
    """The lines `fn` prints, with the times (which vary) written as T."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        fn()
    text = re.sub(r"\d+(ms|us|s)/step", "T/step", buffer.getvalue())
    return re.sub(r" - \d+s - ", " - Ts - ", text).splitlines()


def probe_verbose_2(keras):
    model = _model(keras, metrics=["mae"])
    return {
        "fit 2 epochs": _printed(lambda: model.fit(
            X, Y, batch_size=4, epochs=2, verbose=2, shuffle=False,
            validation_data=(X[:5], Y[:5]))),
        "fit 1 epoch": _printed(lambda: model.fit(X, Y, batch_size=4, epochs=1, verbose=2,
                                                  shuffle=False)),
        "evaluate": _printed(lambda: model.evaluate(X, Y, batch_size=4, verbose=2)),
        "predict": _printed(lambda: model.predict(X, batch_size=4, verbose=2)),
        "fit generator": _printed(lambda: model.fit(_generator(3), epochs=2, verbose=2,
                                                    shuffle=False)),
    }


def probe_fit_values(keras):
    """History of the same training under several fit options."""
    out = {}
    model = _model(keras, metrics=["mae"])
    out["plain"] = _rounded(model.fit(X, Y, batch_size=4, epochs=2, verbose=0,
                                      shuffle=False).history)
    model = _model(keras, metrics=["mae"])
    out["validation_split"] = _rounded(model.fit(X, Y, batch_size=3, epochs=2, verbose=0,
                                                 shuffle=False,
                                                 validation_split=0.3).history)
    model = _model(keras, metrics=["mae"])
    out["sample_weight"] = _rounded(model.fit(X, Y, batch_size=4, epochs=2, verbose=0,
                                              shuffle=False,
                                              sample_weight=np.arange(10.0)).history)
    model = _model(keras, out=2, act="softmax", loss="sparse_categorical_crossentropy",
                   metrics=["accuracy"])
    out["class_weight"] = _rounded(model.fit(X, YC[:, 0].astype("int32"), batch_size=4,
                                             epochs=2, verbose=0, shuffle=False,
                                             class_weight={0: 1.0, 1: 3.0}).history)
    model = _model(keras, metrics=["mae"])
    out["validation_freq"] = _rounded(model.fit(
        X, Y, batch_size=4, epochs=3, verbose=0, shuffle=False,
        validation_data=(X, Y), validation_freq=2).history)
    model = _model(keras, metrics=["mae"])
    out["initial_epoch"] = model.fit(X, Y, epochs=3, initial_epoch=1, verbose=0).epoch
    model = _model(keras, metrics=["mae"])
    out["train_on_batch"] = [round(v, 4) for v in model.train_on_batch(X, Y)]
    out["test_on_batch"] = [round(v, 4) for v in model.test_on_batch(X, Y)]
    out["evaluate_dict"] = {k: round(v, 4) for k, v in
                            model.evaluate(X, Y, verbose=0, return_dict=True).items()}
    model = _model(keras, out=2, act="softmax", loss="sparse_categorical_crossentropy",
                   metrics=["accuracy"])
    labels = YC[:, 0].astype("int32")
    out["train_on_batch_class_weight"] = [
        round(v, 4) for v in model.train_on_batch(X, labels, class_weight={0: 1.0, 1: 3.0})]
    out["train_on_batch_dict"] = sorted(model.train_on_batch(X, labels, return_dict=True))
    return out



def probe_utils(keras):
    """keras.utils' array and dataset helpers."""
    out = {}
    seqs = [[1, 2, 3], [4, 5], [6, 7, 8, 9, 10], []]
    out["pad"] = keras.utils.pad_sequences(seqs).tolist()
    out["pad_post"] = keras.utils.pad_sequences(seqs, maxlen=3, padding="post",
                                                truncating="post", value=-1).tolist()
    out["pad_float"] = keras.utils.pad_sequences([[1.5, 2.5], [3.5]], dtype="float32").tolist()
    out["pad_dtype"] = str(keras.utils.pad_sequences(seqs).dtype)
    out["pad_2d"] = keras.utils.pad_sequences([[[1, 2], [3, 4]], [[5, 6]]], maxlen=3).tolist()
    out["normalize"] = keras.utils.normalize(np.array([[3., 4.], [1., 0.], [0., 0.]])).tolist()
    out["normalize_l1_axis0"] = keras.utils.normalize(np.array([[3., 4.], [1., 0.]]), axis=0,
                                                      order=1).tolist()
    out["to_categorical"] = keras.utils.to_categorical([[1], [0], [2]]).tolist()
    out["standardize_dtype"] = {d: keras.utils.standardize_dtype(d) for d in
                                ["float32", "int32", "bfloat16", "float64", "bool", "int64",
                                 "uint8"]}
    out["standardize_dtype"]["np.float64"] = keras.utils.standardize_dtype(np.float64)
    out["standardize_dtype"]["None"] = keras.utils.standardize_dtype(None)
    ds = keras.utils.timeseries_dataset_from_array(np.arange(10), np.arange(10) * 10,
                                                   sequence_length=3, sequence_stride=2,
                                                   batch_size=2)
    out["timeseries"] = [[x.numpy().tolist(), y.numpy().tolist()] for x, y in ds]
    ds = keras.utils.timeseries_dataset_from_array(np.arange(12), None, sequence_length=3,
                                                   sampling_rate=2, batch_size=3,
                                                   start_index=1, end_index=11)
    out["timeseries_no_targets"] = [x.numpy().tolist() for x in ds]
    a, b = keras.utils.split_dataset(np.arange(10), left_size=0.8, shuffle=False)
    out["split"] = [[int(x) for x in a], [int(x) for x in b]]
    a, b = keras.utils.split_dataset((np.arange(10), np.arange(10) * 2), left_size=3,
                                     right_size=5)
    out["split_sizes"] = [len(list(a)), len(list(b))]
    a, b = keras.utils.split_dataset(np.arange(10), right_size=0.3, shuffle=False)
    out["split_right"] = [[int(x) for x in a], [int(x) for x in b]]
    pack, unpack = keras.utils.pack_x_y_sample_weight, keras.utils.unpack_x_y_sample_weight
    out["pack"] = [str(pack(1)), str(pack(1, 2)), str(pack(1, 2, 3))]
    out["unpack"] = [str(unpack((1,))), str(unpack((1, 2))), str(unpack((1, 2, 3))),
                     str(unpack(1))]
    inputs = keras.Input((3,), name="inp")
    dense = keras.layers.Dense(2, name="d")(inputs)
    out["is_keras_tensor"] = [keras.utils.is_keras_tensor(inputs),
                              keras.utils.is_keras_tensor(np.ones(2))]
    out["source_inputs"] = [t.name for t in keras.utils.get_source_inputs(dense)]
    config = keras.utils.Config(a=1, b=2)
    config.c = 3
    out["config"] = [config.a, config["b"], sorted(config.keys()), config.to_json()]
    config.freeze()
    try:
        config.d = 4
    except ValueError as exc:
        out["config_frozen"] = str(exc)
    out["interactive"] = keras.utils.is_interactive_logging_enabled()
    return out


def _png(pixels):
    """PNG bytes of an (h, w, 3) uint8 array (filter 0 rows, zlib): no codec needed."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    h, w, _ = pixels.shape
    rows = b"".join(b"\x00" + pixels[r].tobytes() for r in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def probe_directories(keras):
    """text_ and image_dataset_from_directory on a small folder tree."""
    import os
    import tempfile
    root = tempfile.mkdtemp()
    for cls, texts in {"neg": ["bad", "awful movie", "meh"],
                       "pos": ["good", "great", "fine film", "ok"]}.items():
        os.makedirs(os.path.join(root, "t", cls))
        for i, text in enumerate(texts):
            with open(os.path.join(root, "t", cls, f"{i}.txt"), "w") as f:
                f.write(text)
    rs = np.random.RandomState(0)
    for cls in ["cat", "dog"]:
        os.makedirs(os.path.join(root, "i", cls))
        for i in range(3):
            with open(os.path.join(root, "i", cls, f"{i}.png"), "wb") as f:
                f.write(_png(rs.randint(0, 255, (4 + i, 6, 3)).astype("uint8")))

    def value(v):
        v = v.numpy()
        if isinstance(v, bytes):
            return v.decode()
        if v.dtype == object:
            return [x.decode() for x in v.tolist()]
        return np.round(v, 3).tolist()

    def listed(ds):
        return [[value(x) for x in b] if isinstance(b, tuple) else value(b) for b in ds]
    out = {}
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        text = keras.utils.text_dataset_from_directory
        ds = text(os.path.join(root, "t"), batch_size=3, seed=1)
        out["text_shuffled"] = {"class_names": ds.class_names,
                                "files": sorted(sum((b[0] for b in listed(ds)), []))}
        out["text_categorical"] = listed(text(os.path.join(root, "t"), batch_size=None,
                                              shuffle=False, label_mode="categorical"))
        out["text_binary_max_length"] = listed(text(os.path.join(root, "t"), batch_size=4,
                                                    shuffle=False, label_mode="binary",
                                                    max_length=3))
        train, val = text(os.path.join(root, "t"), batch_size=10, validation_split=0.3,
                          subset="both", seed=5)
        out["text_split_sizes"] = [len(listed(train)[0][0]), len(listed(val)[0][0])]
        image = keras.utils.image_dataset_from_directory
        ds = image(os.path.join(root, "i"), batch_size=2, image_size=(3, 4), shuffle=False)
        out["image"] = {"class_names": ds.class_names, "batches": listed(ds)}
        out["image_gray_no_labels"] = listed(image(
            os.path.join(root, "i"), batch_size=None, image_size=(2, 2), shuffle=False,
            color_mode="grayscale", labels=None))
    out["printed"] = printed.getvalue().splitlines()
    return out


def probe_functions(keras):
    """The newer activations, schedules, regularizers and the deserialize functions."""
    x = np.array([[-3.0, -1.5, -0.5, -0.1, 0.0, 0.2, 0.7, 1.2, 2.5, 4.0]], "float32")
    act = keras.activations
    out = {name: np.asarray(getattr(act, name)(x)).round(5).tolist() for name in [
        "celu", "glu", "hard_shrink", "hard_silu", "hard_swish", "hard_tanh", "log_sigmoid",
        "mish", "soft_shrink", "sparse_plus", "sparse_sigmoid", "sparsemax", "squareplus",
        "tanh_shrink"]}
    out["threshold"] = np.asarray(act.threshold(x, 0.5, -1.0)).round(5).tolist()
    out["celu_alpha2"] = np.asarray(act.celu(x, alpha=2.0)).round(5).tolist()
    out["shrinks_t1"] = [np.asarray(act.hard_shrink(x, threshold=1.0)).round(5).tolist(),
                         np.asarray(act.soft_shrink(x, threshold=1.0)).round(5).tolist()]
    out["squareplus_b2"] = np.asarray(act.squareplus(x, b=2)).round(5).tolist()
    out["sparsemax_rows"] = np.asarray(act.sparsemax(np.array(
        [[0.1, 0.5, 0.45], [1.0, 1.0, 1.0]], "float32"))).round(5).tolist()
    out["activation_names"] = [act.deserialize("mish").__name__, act.serialize(act.mish),
                               act.deserialize(act.serialize(act.relu)).__name__]
    sched = keras.optimizers.schedules
    poly = sched.PolynomialDecay(0.1, 10, end_learning_rate=0.01, power=2.0)
    out["polynomial"] = [round(float(poly(s)), 6) for s in [0, 3, 10, 15]]
    poly = sched.PolynomialDecay(0.1, 10, end_learning_rate=0.01, power=1.0, cycle=True)
    out["polynomial_cycle"] = [round(float(poly(s)), 6) for s in [0, 3, 10, 15, 25]]
    out["polynomial_config"] = {k: v for k, v in poly.get_config().items()}
    restarts = sched.CosineDecayRestarts(1.0, 4, t_mul=2.0, m_mul=0.5, alpha=0.1)
    out["cosine_restarts"] = [round(float(restarts(s)), 6)
                              for s in [0, 1, 3, 4, 5, 11, 12, 13, 30]]
    out["cosine_restarts_config"] = restarts.get_config()
    flat = sched.CosineDecayRestarts(2.0, 3, t_mul=1.0)
    out["cosine_restarts_t1"] = [round(float(flat(s)), 6) for s in [0, 2, 3, 4, 7]]
    reg = keras.regularizers
    w = np.random.RandomState(0).randn(4, 3).astype("float32")
    w = keras.ops.convert_to_tensor(w) if hasattr(keras, "ops") else w
    out["orthogonal_regularizer"] = [
        round(float(reg.OrthogonalRegularizer(0.1, mode="rows")(w)), 6),
        round(float(reg.OrthogonalRegularizer(0.1, mode="columns")(w)), 6),
        round(float(reg.orthogonal_regularizer(0.2)(w)), 6)]
    out["regularizer_deserialize"] = [
        type(reg.deserialize("l2")).__name__,
        reg.deserialize({"class_name": "L1L2", "config": {"l1": 0.1, "l2": 0.2}}).get_config()]
    con = keras.constraints
    max_norm = {"class_name": "MaxNorm", "config": {"max_value": 2.0, "axis": 0}}
    out["constraint_deserialize"] = [type(con.deserialize("non_neg")).__name__,
                                     type(con.deserialize(max_norm)).__name__,
                                     con.deserialize(max_norm).get_config()]
    init = keras.initializers
    out["initializers"] = [type(init.deserialize("lecun_normal")).__name__,
                           type(init.lecun_uniform()).__name__,
                           type(init.variance_scaling()).__name__,
                           type(init.OrthogonalInitializer()).__name__,
                           type(init.IdentityInitializer()).__name__,
                           np.asarray(init.identity(gain=2.0)((3, 4))).tolist()]
    return out


def probe_metrics_and_losses(keras):
    """The IoU, correlation and at-rate metrics, Circle and generalized cross entropy."""
    met, out = keras.metrics, {}

    def result(metric, *args, **kwargs):
        metric.update_state(*args, **kwargs)
        return round(float(metric.result()), 6)
    yt, yp = np.array([0, 1, 2, 2, 1, 0]), np.array([0, 2, 2, 1, 1, 0])
    out["iou"] = result(met.IoU(num_classes=3, target_class_ids=[0, 2]), yt, yp)
    out["iou_weighted"] = result(met.IoU(num_classes=3, target_class_ids=[1]), yt, yp,
                                 sample_weight=[1, 2, 1, 1, 3, 1])
    bt, bp = np.array([0, 1, 1, 0, 1]), np.array([0.2, 0.7, 0.4, 0.6, 0.9])
    out["binary_iou"] = [result(met.BinaryIoU(target_class_ids=[0, 1]), bt, bp),
                         result(met.BinaryIoU(target_class_ids=[1], threshold=0.3), bt, bp)]
    onehot = np.eye(3)[yt]
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.2, 0.6], [0.1, 0.5, 0.4],
                      [0.3, 0.4, 0.3], [0.5, 0.4, 0.1]])
    out["onehot_iou"] = result(met.OneHotIoU(num_classes=3, target_class_ids=[0, 2]),
                               onehot, probs)
    out["onehot_mean_iou"] = result(met.OneHotMeanIoU(num_classes=3), onehot, probs)
    a = np.array([[1., 2., 3., 4.], [2., 1., 0., 5.]])
    b = np.array([[1.5, 2.5, 2.9, 4.2], [1.0, 1.2, 0.5, 3.0]])
    out["pearson"] = [result(met.PearsonCorrelation(), a, b),
                      result(met.PearsonCorrelation(axis=0), a.T, b.T)]
    out["concordance"] = result(met.ConcordanceCorrelation(), a, b)
    out["correlation_functions"] = [np.asarray(met.pearson_correlation(a, b)).round(6).tolist(),
                                    np.asarray(met.concordance_correlation(a, b)).round(6)
                                    .tolist()]
    yt2 = np.array([0, 0, 0, 1, 1, 1, 0, 1, 0, 1])
    yp2 = np.array([0.1, 0.4, 0.35, 0.8, 0.65, 0.3, 0.7, 0.9, 0.2, 0.55])
    for name, value in [("PrecisionAtRecall", 0.8), ("RecallAtPrecision", 0.75),
                        ("SensitivityAtSpecificity", 0.6), ("SpecificityAtSensitivity", 0.8)]:
        cls = getattr(met, name)
        config = cls(value, name="m").get_config()
        out[name] = [result(cls(value), yt2, yp2),
                     result(cls(value, num_thresholds=10), yt2, yp2,
                            sample_weight=np.arange(1, 11)),
                     sorted(config.items())]
    los = keras.losses
    probs3 = np.array([[0.2, 0.7, 0.1], [0.5, 0.3, 0.2]], "float32")
    out["generalized_cross_entropy"] = [
        round(float(los.CategoricalGeneralizedCrossEntropy(q=0.5)(np.array([1, 0]), probs3)), 6),
        np.asarray(los.categorical_generalized_cross_entropy(np.array([1, 0]), probs3, q=0.3))
        .round(6).tolist(), los.CategoricalGeneralizedCrossEntropy().get_config()]
    emb = np.array([[1., 0.], [0.8, 0.6], [0., 1.], [-1., 0.]], "float32")
    labels = np.array([0, 0, 1, 1])
    out["circle"] = [round(float(los.Circle()(labels, emb)), 4),
                     np.asarray(los.circle(labels, emb, gamma=10.0, margin=0.2)).round(5)
                     .tolist(), los.Circle().get_config()]
    return out


def probe_optimizers(keras):
    """Three steps of Lamb and Adafactor on fixed gradients; LossScaleOptimizer around SGD;
    optimizer (de)serialization."""
    rs = np.random.RandomState(3)
    w0, b0 = rs.randn(2, 3).astype("float32"), rs.randn(3).astype("float32")
    grads = [(rs.randn(2, 3).astype("float32"), rs.randn(3).astype("float32"))
             for _ in range(3)]
    out = {}
    for label, make in [("lamb", lambda: keras.optimizers.Lamb(0.01)),
                        ("adafactor", lambda: keras.optimizers.Adafactor(0.05)),
                        ("adafactor_no_relative", lambda: keras.optimizers.Adafactor(
                            0.05, relative_step=False, clip_threshold=0.5)),
                        ("loss_scale_sgd", lambda: keras.optimizers.LossScaleOptimizer(
                            keras.optimizers.SGD(0.1), dynamic_growth_steps=3))]:
        opt = make()
        w, b = keras.Variable(w0), keras.Variable(b0)
        for gw, gb in grads:
            opt.apply_gradients([(gw, w), (gb, b)])
        out[label] = [np.asarray(w).round(5).tolist(), np.asarray(b).round(5).tolist()]
    config = keras.optimizers.serialize(keras.optimizers.Lamb(0.02))
    out["serialize"] = [config["class_name"], round(config["config"]["learning_rate"], 6),
                        config["config"]["beta_1"]]
    return out


PROBES = {name[len("probe_"):]: fn for name, fn in sorted(globals().items())
          if name.startswith("probe_")}
