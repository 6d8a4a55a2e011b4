"""Record Keras 3 (TF 2.21 side venv) facts about RandomFlip / RandomContrast for
tests/keras/test_preprocessing_layers.py:
   /work/tfvenv/bin/python scripts/record_keras_augmentation.py > tests/keras/data/keras_augmentation.json"""
import json, numpy as np, keras
out = {}
x = (np.arange(2 * 3 * 4 * 2, dtype=np.float32).reshape(2, 3, 4, 2) / 20.0 - 0.5)  # [-0.5, 1.8]
out["x"] = x.tolist()
c = keras.layers.RandomContrast(0.0, value_range=(0, 1))
out["contrast0_direct"] = np.asarray(c(x)).tolist()
out["contrast0_train_false"] = np.asarray(c(x, training=False)).tolist()
out["contrast0_rank3"] = np.asarray(c(x[0])).tolist()
xi = (np.arange(24).reshape(1, 3, 4, 2) * 11).astype("int32")
ci = keras.layers.RandomContrast(0.0)
out["contrast_f64_dtype"] = str(keras.layers.RandomContrast(0.0)(xi.astype("float64")).dtype)
out["contrast_factor_attr"] = {str(f): list(keras.layers.RandomContrast(f).factor) for f in [0.2, 0.0, 1.0]}
out["contrast_factor_attr"]["(0.3, 0.5)"] = list(keras.layers.RandomContrast((0.3, 0.5)).factor)
errs = {}
for f in [1.5, -0.1, (0.1, 0.2, 0.3), "a"]:
    try:
        keras.layers.RandomContrast(f)
    except Exception as e:
        errs[repr(f)] = [type(e).__name__, str(e)]
out["contrast_errors"] = errs
cfg = keras.layers.RandomContrast((0.3, 0.5), value_range=(0, 1), seed=4).get_config(); cfg.pop("dtype")
out["contrast_config"] = cfg
fl = keras.layers.RandomFlip("horizontal", seed=1)
out["flip_train_false"] = np.asarray(fl(x, training=False)).tolist()
r = fl(xi, training=False); out["flip_int_dtype"] = str(r.dtype)
cfg = keras.layers.RandomFlip("vertical", seed=2).get_config(); cfg.pop("dtype"); out["flip_config"] = cfg
try:
    keras.layers.RandomFlip("diagonal")(x)
    out["flip_bad_mode"] = None
except Exception as e:
    out["flip_bad_mode"] = [type(e).__name__, str(e)]
# horizontal_and_vertical: one coin per image for both axes
big = np.random.RandomState(0).rand(64, 3, 4, 1).astype("float32")
res = np.asarray(keras.layers.RandomFlip(seed=3)(big))
kinds = set()
for o, i in zip(res, big):
    for k, v in (("same", i), ("v", i[::-1]), ("h", i[:, ::-1]), ("hv", i[::-1, ::-1])):
        if np.array_equal(o, v): kinds.add(k); break
out["flip_both_kinds"] = sorted(kinds)
m = keras.Sequential([keras.Input((3, 4, 2)), keras.layers.RandomFlip(), keras.layers.RandomContrast(0.5, value_range=(0, 1))])
out["predict_passthrough"] = bool(np.array_equal(m.predict(x, verbose=0), x))
print(json.dumps(out))
