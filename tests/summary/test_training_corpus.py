"""No false alarms: 20 idiomatic TF-2 training functions (the quickstart's train_step and
test_step first) trace without a PrunedComputationWarning, while the forgotten `return`
still warns. Metrics, optimizer steps and variable updates are work, not dead code."""
import warnings

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.function.diagnostics import PrunedComputationWarning

keras = kf.keras
RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 6)).astype("float32")
Y = RNG.integers(0, 3, 8).astype("int32")
YF = RNG.standard_normal((8, 1)).astype("float32")
IMG = RNG.standard_normal((4, 6, 6, 1)).astype("float32")
SEQ = RNG.standard_normal((4, 5, 3)).astype("float32")


def _mlp(units=3):
    return keras.Sequential([keras.layers.Dense(8, activation="relu"),
                             keras.layers.Dense(units)])


class _Quickstart(keras.Model):
    def __init__(self):
        super().__init__()
        self.d1 = keras.layers.Dense(8, activation="relu")
        self.d2 = keras.layers.Dense(3)

    def call(self, x):
        return self.d2(self.d1(x))


def quickstart_train_step():
    model, opt = _Quickstart(), keras.optimizers.Adam()
    loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_loss = keras.metrics.Mean(name="train_loss")
    train_accuracy = keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

    @kf.function
    def train_step(images, labels):
        with kf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(gradients, model.trainable_variables))
        train_loss(loss)
        train_accuracy(labels, predictions)
    return train_step, (X, Y)


def quickstart_test_step():
    model = _Quickstart()
    loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    test_loss = keras.metrics.Mean(name="test_loss")
    test_accuracy = keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")

    @kf.function
    def test_step(images, labels):
        predictions = model(images, training=False)
        t_loss = loss_object(labels, predictions)
        test_loss(t_loss)
        test_accuracy(labels, predictions)
    return test_step, (X, Y)


def update_state_metrics():
    model = _mlp()
    acc = keras.metrics.SparseCategoricalAccuracy()
    mean = keras.metrics.Mean()

    @kf.function
    def eval_step(x, y):
        logits = model(x)
        acc.update_state(y, logits)
        mean.update_state(kf.reduce_mean(logits))
    return eval_step, (X, Y)


def sgd_minimize_by_hand():
    w = kf.Variable(np.zeros((6, 1), "float32"))
    b = kf.Variable(0.0)

    @kf.function
    def step(x, y):
        with kf.GradientTape() as tape:
            loss = kf.reduce_mean(kf.square(kf.matmul(x, w) + b - y))
        dw, db = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * dw)
        b.assign_sub(0.1 * db)
    return step, (X, YF)


def returns_loss():
    model, opt = _mlp(1), keras.optimizers.SGD(0.01)
    mse = keras.losses.MeanSquaredError()

    @kf.function
    def step(x, y):
        with kf.GradientTape() as tape:
            loss = mse(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
        return loss
    return step, (X, YF)


def returns_metric_dict():
    model, opt = _mlp(), keras.optimizers.RMSprop()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    loss_m, acc_m = keras.metrics.Mean(), keras.metrics.SparseCategoricalAccuracy()

    @kf.function
    def step(x, y):
        with kf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        loss_m.update_state(loss)
        acc_m.update_state(y, logits)
        return {"loss": loss_m.result(), "accuracy": acc_m.result()}
    return step, (X, Y)


def clipped_gradients():
    model, opt = _mlp(), keras.optimizers.Adam()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @kf.function
    def step(x, y):
        with kf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        grads, _ = kf.clip_by_global_norm(grads, 1.0)
        opt.apply_gradients(zip(grads, model.trainable_variables))
    return step, (X, Y)


def regularization_losses():
    model = keras.Sequential([
        keras.layers.Dense(8, activation="relu", kernel_regularizer=keras.regularizers.l2(1e-3)),
        keras.layers.Dense(3)])
    opt = keras.optimizers.SGD(0.1)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @kf.function
    def step(x, y):
        with kf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True)) + kf.add_n(model.losses)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
    return step, (X, Y)


def dropout_and_batchnorm():
    model = keras.Sequential([keras.layers.Dense(8), keras.layers.BatchNormalization(),
                              keras.layers.Dropout(0.5), keras.layers.Dense(3)])
    opt = keras.optimizers.Adam()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    metric = keras.metrics.SparseCategoricalAccuracy()

    @kf.function
    def step(x, y):
        with kf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
        metric(y, logits)
    return step, (X, Y)


def conv_classifier():
    model = keras.Sequential([keras.layers.Conv2D(2, 3, activation="relu"),
                              keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3)])
    opt = keras.optimizers.Adam()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    loss_m = keras.metrics.Mean()

    @kf.function
    def step(x, y):
        with kf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
        loss_m(loss)
    return step, (IMG, Y[:4])


def lstm_regression():
    model = keras.Sequential([keras.layers.LSTM(4), keras.layers.Dense(1)])
    opt = keras.optimizers.Adam()

    @kf.function
    def step(x, y):
        with kf.GradientTape() as tape:
            loss = kf.reduce_mean(kf.square(model(x, training=True) - y))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
    return step, (SEQ, YF[:4])


def gan_like_two_tapes():
    gen, disc = _mlp(6), _mlp(1)
    g_opt, d_opt = keras.optimizers.Adam(), keras.optimizers.Adam()
    bce = keras.losses.BinaryCrossentropy(from_logits=True)
    g_m, d_m = keras.metrics.Mean(), keras.metrics.Mean()

    @kf.function
    def step(real):
        noise = kf.random.normal([8, 6])
        with kf.GradientTape() as g_tape, kf.GradientTape() as d_tape:
            fake = gen(noise, training=True)
            real_out, fake_out = disc(real, training=True), disc(fake, training=True)
            g_loss = bce(kf.ones_like(fake_out), fake_out)
            d_loss = bce(kf.ones_like(real_out), real_out) + \
                bce(kf.zeros_like(fake_out), fake_out)
        g_opt.apply_gradients(zip(g_tape.gradient(g_loss, gen.trainable_variables),
                                  gen.trainable_variables))
        d_opt.apply_gradients(zip(d_tape.gradient(d_loss, disc.trainable_variables),
                                  disc.trainable_variables))
        g_m(g_loss)
        d_m(d_loss)
    return step, (X,)


def gradient_accumulation():
    model = _mlp()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model(X)
    acc = [kf.Variable(kf.zeros_like(v), trainable=False) for v in model.trainable_variables]

    @kf.function
    def accumulate(x, y):
        with kf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        for a, g in zip(acc, tape.gradient(loss, model.trainable_variables)):
            a.assign_add(g)
    return accumulate, (X, Y)


def apply_accumulated():
    model, opt = _mlp(), keras.optimizers.SGD(0.1)
    model(X)
    acc = [kf.Variable(kf.ones_like(v), trainable=False) for v in model.trainable_variables]

    @kf.function
    def apply():
        opt.apply_gradients(zip([a / 4.0 for a in acc], model.trainable_variables))
        for a in acc:
            a.assign(kf.zeros_like(a))
    return apply, ()


def loop_over_batches():
    w = kf.Variable(np.zeros((6, 1), "float32"))
    total = kf.Variable(0.0)

    @kf.function
    def epoch(xs, ys):
        for i in kf.range(kf.shape(xs)[0]):
            with kf.GradientTape() as tape:
                loss = kf.reduce_mean(kf.square(kf.matmul(xs[i], w) - ys[i]))
            w.assign_sub(0.01 * tape.gradient(loss, w))
            total.assign_add(loss)
    return epoch, (np.stack([X, X]), np.stack([YF, YF]))


def step_counter_and_print():
    step_var = kf.Variable(0, dtype=kf.int64)
    model = _mlp()

    @kf.function
    def step(x):
        logits = model(x)
        step_var.assign_add(1)
        if step_var % 100 == 0:
            kf.print("step", step_var, kf.reduce_mean(logits))
    return step, (X,)


def ema_update():
    w = kf.Variable(np.ones((6, 1), "float32"))
    ema = kf.Variable(np.zeros((6, 1), "float32"))

    @kf.function
    def step(x):
        with kf.GradientTape() as tape:
            loss = kf.reduce_sum(kf.matmul(x, w))
        w.assign_sub(0.01 * tape.gradient(loss, w))
        ema.assign(0.99 * ema + 0.01 * w)
    return step, (X,)


def validation_loop_with_metrics():
    model = _mlp()
    acc, loss_m = keras.metrics.SparseCategoricalAccuracy(), keras.metrics.Mean()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @kf.function
    def validate(x, y):
        acc.reset_state()
        loss_m.reset_state()
        logits = model(x, training=False)
        loss_m.update_state(loss_fn(y, logits))
        acc.update_state(y, logits)
    return validate, (X, Y)


def custom_model_train_step():
    class Custom(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(3)
            self.opt = keras.optimizers.Adam()
            self.loss_tracker = keras.metrics.Mean(name="loss")

        def call(self, x):
            return self.dense(x)

    model = Custom()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @kf.function
    def train_step(x, y):
        with kf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        model.opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                      model.trainable_variables))
        model.loss_tracker.update_state(loss)
        return {"loss": model.loss_tracker.result()}
    return train_step, (X, Y)


def summary_writing_step():
    pytest.importorskip("tensorboard")
    import tempfile
    writer = kf.summary.create_file_writer(tempfile.mkdtemp())
    model, opt = _mlp(), keras.optimizers.SGD(0.1)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    step_var = kf.Variable(0, dtype=kf.int64)

    @kf.function
    def step(x, y):
        with kf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
        step_var.assign_add(1)
        with writer.as_default():
            kf.summary.scalar("loss", loss, step=step_var)
    return step, (X, Y)


CORPUS = [quickstart_train_step, quickstart_test_step, update_state_metrics,
          sgd_minimize_by_hand, returns_loss, returns_metric_dict, clipped_gradients,
          regularization_losses, dropout_and_batchnorm, conv_classifier, lstm_regression,
          gan_like_two_tapes, gradient_accumulation, apply_accumulated, loop_over_batches,
          step_counter_and_print, ema_update, validation_loop_with_metrics,
          custom_model_train_step, summary_writing_step]


def test_corpus_has_twenty_functions():
    assert len(CORPUS) == 20


@pytest.mark.parametrize("build", CORPUS, ids=lambda b: b.__name__)
def test_idiomatic_training_function_is_not_reported_as_pruned(build):
    fn, args = build()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrunedComputationWarning)
        fn(*args)
        fn(*args)


def test_forgotten_return_still_warns():
    model = _mlp()

    @kf.function
    def predict(x):
        kf.nn.softmax(model(x))

    with pytest.warns(PrunedComputationWarning, match="forget a `return`"):
        predict(X)


def test_dead_work_on_state_and_inputs_still_warns():
    w = kf.Variable(np.ones((6, 1), "float32"))

    @kf.function
    def step(x):
        w.assign_add(kf.ones_like(w))
        kf.matmul(x, w)    # depends on the input: real dead work

    with pytest.warns(PrunedComputationWarning, match="MatMul"):
        step(X)


def test_unused_checks_run_and_are_not_reported():
    # TF 2.21 runs an unused check_numerics inside tf.function (it raises on NaN)
    v = kf.Variable(1.0)

    @kf.function
    def checked(x):
        kf.debugging.check_numerics(x, "bad input")
        kf.debugging.assert_positive(x + 10.0)
        v.assign_add(1.0)
        return x * 2.0

    with warnings.catch_warnings():
        warnings.simplefilter("error", PrunedComputationWarning)
        np.testing.assert_allclose(checked(kf.constant([1.0])).numpy(), [2.0])
        with pytest.raises(kf.errors.InvalidArgumentError, match="bad input.*NaN"):
            checked(kf.constant([float("nan")]))
