"""Record Keras 3 (TF 2.21 side venv) CTC loss values for tests/keras/test_losses_ctc.py:
   /work/tfvenv/bin/python scripts/record_keras_ctc.py > tests/keras/data/keras_ctc.json"""
import json, numpy as np, keras
rng = np.random.RandomState(0)
cases = []
for (b, t, c, u, labels) in [(2, 5, 4, 3, [[1, 2, 0], [3, 3, 1]]),
                            (3, 6, 5, 4, [[1, 2, 3, 4], [2, 0, 0, 0], [4, 4, 0, 0]]),
                            (1, 4, 3, 2, [[0, 0]])]:
    logits = np.round(rng.randn(b, t, c), 3).astype("float32")
    y = np.array(labels, "int32")
    per = keras.losses.ctc(y, logits)
    red = keras.losses.CTC()(y, logits)
    cases.append({"y_true": labels, "y_pred": logits.tolist(),
                  "per_example": np.asarray(per).tolist(), "reduced": float(red)})
errs = {}
for name, yt, yp in [("rank_true", np.zeros((2, 3, 1), "int32"), np.zeros((2, 5, 4), "float32")),
                     ("rank_pred", np.zeros((2, 3), "int32"), np.zeros((2, 5), "float32"))]:
    try:
        keras.losses.ctc(yt, yp)
    except ValueError as e:
        errs[name] = str(e)
l = keras.losses.get("ctc")
cfg = keras.losses.serialize(keras.losses.CTC())
print(json.dumps({"cases": cases, "errors": errs, "get": getattr(l, "__name__", None),
                  "config": cfg["config"], "class_name": cfg["class_name"]}, indent=None))
