import kilnflow as tf

print(bool(tf.constant([1])), bool(tf.constant(0.0)), int(tf.constant(7)), float(tf.constant(2.5)))
print(int(tf.constant(3.9)), float(tf.constant(True)), complex(tf.constant(1.5)))
print([10, 20, 30][tf.constant(2)], list(range(5))[tf.constant(1):tf.constant(4)])
print(len(tf.zeros([4, 2])), [t.numpy().tolist() for t in tf.constant([[1, 2], [3, 4]])])
print(tf.constant(5).ref() == tf.constant(5).ref())
t = tf.constant(1)
v = tf.Variable(1.0)
print({t.ref(): "tensor", v.ref(): "variable"}[t.ref()])
print(t.ref().deref() is t)
cases = [
    ("hash", lambda: hash(tf.constant(1))),
    ("hash variable", lambda: hash(tf.Variable(1))),
    ("len scalar", lambda: len(tf.constant(1))),
    ("iter scalar", lambda: iter(tf.constant(1))),
    ("bool vector", lambda: bool(tf.constant([1, 2]))),
    ("float vector", lambda: float(tf.constant([1.0, 2.0]))),
    ("float size-1", lambda: float(tf.constant([1.5]))),
    ("int matrix", lambda: int(tf.constant([[3]]))),
    ("index vector", lambda: [1, 2, 3][tf.constant([1])]),
    ("no initial value", lambda: tf.Variable()),
    ("graph", lambda: tf.constant(1).graph),
    ("name", lambda: tf.constant(1).name),
]
for label, bad in cases:
    try:
        bad()
        print(label, "no error")
    except Exception as e:
        print(label, "->", type(e).__name__ + ":", e)
for label, bad in [("setitem", lambda: tf.constant([1]).__setitem__(0, 1)),
                   ("ragged constant", lambda: tf.constant([[1, 2], [3]])),
                   ("mixed types", lambda: tf.constant(["a", 1])),
                   ("number as string", lambda: tf.constant(1, dtype=tf.string)),
                   ("assign shape", lambda: tf.Variable([1.0, 2.0]).assign([1.0, 2.0, 3.0]))]:
    try:
        bad()
    except Exception as e:
        print(label, "->", type(e).__name__)
