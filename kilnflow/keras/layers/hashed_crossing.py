"""HashedCrossing: crosses categorical features (integers or strings) into `num_bins`
buckets with the hashed cross TF's Keras uses (tf.sparse.cross_hashed), bit for bit.
Inputs: a list of at least two tensors of one shape, (), (batch,) or (batch, 1)."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras import backend
from kilnflow.keras.layers.base import Layer
from kilnflow.ops import array, math as kmath, reshaping
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.cross_hash import cross_hashed_dense
from kilnflow.shapes import TensorShape


class HashedCrossing(Layer):
    """Bucket ids (output_mode='int', int64) or one-hot rows ('one_hot') of the features'
    hashed cross.

    >>> import numpy as np
    >>> from kilnflow import keras
    >>> layer = keras.layers.HashedCrossing(num_bins=1000)
    >>> layer([np.array([[1], [2]]), np.array([["x"], ["y"]])]).numpy().ravel().tolist()
    [859, 604]
    """
    supports_jit = False  # as in Keras 3: compile(jit_compile=True) warns and runs without

    def __init__(self, num_bins: int, output_mode: str = "int", sparse: bool = False,
                 name: Optional[str] = None, dtype: Any = None, **kwargs: Any):
        if output_mode not in ("int", "one_hot"):
            raise ValueError("Invalid value for argument `output_mode`. Expected one of "
                             f"{{'int', 'one_hot'}}. Received: output_mode={output_mode}")
        if sparse:
            raise NotImplementedError("HashedCrossing: sparse=True outputs are not supported")
        if dtype is None:
            dtype = "int64" if output_mode == "int" else backend.floatx()
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.num_bins, self.output_mode, self.sparse = int(num_bins), output_mode, sparse

    def call(self, inputs: Any) -> Any:
        if not isinstance(inputs, (list, tuple)):
            raise ValueError("`HashedCrossing` should be called on a list or tuple of inputs. "
                             f"Received: inputs={inputs}")
        if len(inputs) < 2:
            raise ValueError("`HashedCrossing` should be called on at least two inputs. "
                             f"Received: inputs={inputs}")
        columns = [convert_to_tensor(x) for x in inputs]
        shape = tuple(columns[0].shape.as_list())
        if len(shape) > 2 or (len(shape) == 2 and shape[-1] != 1):
            raise ValueError("All `HashedCrossing` inputs should have shape `()`, "
                             f"`(batch_size)` or `(batch_size, 1)`. Received: inputs={inputs}")
        if any(tuple(c.shape.as_list()) != shape for c in columns[1:]):
            raise ValueError("All `HashedCrossing` inputs should have equal shape. "
                             f"Received: inputs={inputs}")
        if not all(c.dtype.is_integer or c.dtype.name == "string" for c in columns):
            raise ValueError("All `HashedCrossing` inputs should have an integer or string "
                             f"dtype. Received: inputs={inputs}")
        ids = cross_hashed_dense(columns, self.num_bins)
        if self.output_mode == "int":
            return ids if self._dtype.name == "int64" else kmath.cast(ids, self._dtype)
        if len(shape) == 2:
            ids = reshaping.squeeze(ids, [-1])
        return array.one_hot(ids, self.num_bins, dtype=self._dtype)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = list(TensorShape(input_shape[0]).as_list())
        if self.output_mode == "one_hot":
            shape = (shape[:-1] if len(shape) == 2 else shape) + [self.num_bins]
        return TensorShape(shape)

    def get_config(self) -> dict:
        return {"num_bins": self.num_bins, "output_mode": self.output_mode,
                "sparse": self.sparse, "name": self.name, "dtype": self.dtype}
