# A linear model trained with GradientTape over a module's trainable variables.
import kilnflow as tf


class Linear(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(5.0, name="w")
        self.b = tf.Variable(0.0, name="b")

    def __call__(self, x):
        return self.w * x + self.b


x = tf.linspace(-2.0, 2.0, 11)
y = 3.0 * x + 2.0
model = Linear()


def loss(target, predicted):
    return tf.reduce_mean(tf.square(target - predicted))


@tf.function
def train_step(x, y, lr):
    with tf.GradientTape() as t:
        current = loss(y, model(x))
    dw, db = t.gradient(current, [model.w, model.b])
    model.w.assign_sub(lr * dw)
    model.b.assign_sub(lr * db)
    return current


for epoch in range(40):
    current = train_step(x, y, 0.1)
    if epoch % 10 == 0:
        print(f"epoch {epoch}: loss={current.numpy():.4f}")
print(f"w={model.w.numpy():.3f} b={model.b.numpy():.3f}")
print([v.name for v in model.trainable_variables])
print(train_step.experimental_get_tracing_count())
