"""Samples of the ops in kilnflow/ops/nn.py (see tests/ops/samples/__init__.py)."""


import numpy as np

from kilnflow import errors
from kilnflow import nn as _nn
from kilnflow.ops import nn as _nn_ops  # kf.nn: the ops of kilnflow.ops.nn and .conv
from tests.ops.samples import ERRORS, ErrorSample, add, i32, ints, rand, rng


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - x.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


_ACTIVATIONS = [  # op, public function, NumPy reference
    ("Relu", _nn.relu, lambda x: np.maximum(x, 0)),
    ("Relu6", _nn.relu6, lambda x: np.clip(x, 0, 6)),
    ("Elu", _nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    ("Softplus", _nn.softplus, lambda x: np.logaddexp(x, 0)),
    ("LeakyRelu", lambda x: _nn.leaky_relu(x, alpha=0.3), lambda x: np.where(x > 0, x, 0.3 * x)),
    ("Softmax", _nn.softmax, _softmax),
    ("LogSoftmax", _nn.log_softmax, _log_softmax),
]


for _op, _fn, _ref in _ACTIVATIONS:
    add(_op, lambda x, f=_fn: f(x), (rand(2, 3) * 4,), _ref, differentiable=True)
    add(_op, lambda x, f=_fn: f(x), (rand(4).astype(np.float32) * 4,), _ref,
         differentiable=True, name="float32", rtol=2e-6)


add("Relu", _nn.relu, (ints(2, 3),), lambda x: np.maximum(x, 0), name="int32")


add("ReluGrad", lambda dy, y: _nn_ops.relu_grad(dy, y),
     (rand(2, 3), rand(2, 3) * 3), lambda dy, y: np.where(y > 0, dy, 0), differentiable=True,
     wrt=(0,))


add("Softmax", lambda x: _nn.softmax(x, axis=0), (rand(3, 2) * 3,),
     lambda x: _softmax(x, 0), differentiable=True, name="axis0")


add("LogSoftmax", lambda x: _nn.log_softmax(x, axis=1), (rand(2, 3, 2) * 3,),
     lambda x: _log_softmax(x, 1), differentiable=True, name="middle_axis")


add("SigmoidCrossEntropyWithLogits",
     lambda z, x: _nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
     (rng.uniform(0, 1, (2, 3)), rand(2, 3) * 4),
     lambda z, x: np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x))), differentiable=True)


_LABELS = _softmax(rand(3, 4))


add("SoftmaxCrossEntropyWithLogits", _nn.softmax_cross_entropy_with_logits,
     (_LABELS, rand(3, 4) * 3), lambda z, x: -np.sum(z * _log_softmax(x), -1),
     differentiable=True)


add("SoftmaxCrossEntropyWithLogits",
     lambda z, x: _nn.softmax_cross_entropy_with_logits(z, x, axis=0),
     (_LABELS.T, rand(4, 3)), lambda z, x: -np.sum(z * _log_softmax(x, 0), 0),
     differentiable=True, name="axis0")


add("SparseSoftmaxCrossEntropyWithLogits",
     lambda i, x: _nn.sparse_softmax_cross_entropy_with_logits(labels=i, logits=x),
     (i32([0, 3, 1]), rand(3, 4) * 3),
     lambda i, x: -_log_softmax(x)[np.arange(3), i], differentiable=True)


add("BiasAdd", _nn.bias_add, (rand(2, 3, 4), rand(4)), np.add, differentiable=True)


add("BiasAdd", _nn.bias_add, (ints(2, 3), ints(3)), np.add, name="int32")


ERRORS.extend([
    ErrorSample("Softmax", _nn.softmax, (ints(3),), errors.InvalidArgumentError,
                ("Softmax", "int32"), name="int32"),
    ErrorSample("SparseSoftmaxCrossEntropyWithLogits",
                lambda i, x: _nn.sparse_softmax_cross_entropy_with_logits(labels=i, logits=x),
                (i32([3]), rand(1, 3)), errors.InvalidArgumentError,
                ("SparseSoftmaxCrossEntropyWithLogits", "3"), name="label_out_of_range"),
    ErrorSample("BiasAdd", _nn.bias_add, (rand(2, 3), rand(4)), errors.InvalidArgumentError,
                ("BiasAdd",), name="bias_length"),
])
