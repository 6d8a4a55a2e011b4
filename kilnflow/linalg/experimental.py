"""The kf.linalg.experimental namespace (tf.linalg.experimental): re-exports only."""
from kilnflow.ops.matrix_functions import conjugate_gradient as conjugate_gradient
