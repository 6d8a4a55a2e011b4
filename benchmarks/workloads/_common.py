"""Helpers shared by the workloads: feature detection, kf.nn fallbacks, optional peers.

Features that other engineers are still building (kf.nn, AutoGraph control flow) are
detected here, so a workload either runs or says what it is waiting for. Peer frameworks
(TensorFlow, JAX, PyTorch) are optional: a loader returns None when one is not installed.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import warnings
from types import SimpleNamespace
from typing import Any, Callable, Optional

import numpy as np

import kilnflow as kf


def quiet(fn: Callable) -> Callable:
    """`fn` with kilnflow's tracing warnings silenced (a benchmark is not the place)."""
    def run(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    return run


def autograph_missing() -> Optional[str]:
    """None when tensor-dependent Python control flow converts; else what is missing."""
    missing = [f"kf.{name}" for name in ("while_loop", "cond") if not hasattr(kf, name)]
    if importlib.util.find_spec("kilnflow.autograph.api") is None:
        missing.append("kilnflow.autograph")
    if not missing:
        return None
    return "AutoGraph control flow (" + ", ".join(missing) + " missing)"


def _relu(x: Any) -> Any:
    return kf.maximum(x, 0.0)


def _sparse_xent(labels: Any, logits: Any) -> Any:
    """Per-example softmax cross-entropy from primitives: logsumexp(logits) - logit[label]."""
    depth = logits.shape[-1]
    one_hot = kf.cast(kf.equal(kf.expand_dims(labels, -1), kf.range(depth)), logits.dtype)
    top = kf.stop_gradient(kf.reduce_max(logits, axis=-1, keepdims=True))
    lse = kf.log(kf.reduce_sum(kf.exp(logits - top), axis=-1)) + kf.reshape(top, [-1])
    return lse - kf.reduce_sum(one_hot * logits, axis=-1)


def nn() -> tuple:
    """(namespace with relu and sparse_softmax_cross_entropy_with_logits, where it came from)."""
    ns = getattr(kf, "nn", None)
    if ns is not None and hasattr(ns, "relu") and \
            hasattr(ns, "sparse_softmax_cross_entropy_with_logits"):
        return ns, "kf.nn"
    try:
        ops_nn = importlib.import_module("kilnflow.ops.nn")
        if hasattr(ops_nn, "relu") and hasattr(ops_nn, "sparse_softmax_cross_entropy_with_logits"):
            return ops_nn, "kilnflow.ops.nn (not yet exported as kf.nn)"
    except Exception:  # noqa: BLE001 - a half-written module must not stop the benchmarks
        pass
    return (SimpleNamespace(relu=_relu, sparse_softmax_cross_entropy_with_logits=_sparse_xent),
            "composed from kf.maximum/exp/log/reduce_sum (kf.nn missing)")


# ---------------------------------------------------------------- optional peers

_PEERS: dict = {}


def peer_threads() -> int:
    """Threads for PyTorch and TensorFlow peers: KF_PEER_THREADS, default 1. (JAX's XLA
    CPU client keeps its default pool, every core: XLA_FLAGS do not size it.)"""
    return max(1, int(os.environ.get("KF_PEER_THREADS", "1")))


def peer(name: str) -> Any:
    """The module `name` ('torch', 'tensorflow', 'jax') pinned to `peer_threads()`
    threads (JAX: its default), or None."""
    if name in _PEERS:
        return _PEERS[name]
    module = None
    if importlib.util.find_spec(name) is not None:
        try:
            module = importlib.import_module(name)
            if name == "torch":
                module.set_num_threads(peer_threads())
            elif name == "tensorflow":
                try:
                    module.config.threading.set_intra_op_parallelism_threads(peer_threads())
                    module.config.threading.set_inter_op_parallelism_threads(1)
                except RuntimeError:  # already initialized: keep what it has
                    pass
            elif name == "jax":
                importlib.import_module("jax.numpy")
        except Exception:  # noqa: BLE001 - a broken install is the same as none
            module = None
    _PEERS[name] = module
    return module


def random_floats(rng: np.random.Generator, shape: Any, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def peer_variants(builders: list) -> list:
    """Variants for the installed peers. builders: (variant name, module name, build), where
    build(module) returns the no-argument callable to time. Missing peers are left out;
    a build that fails shows up as an unavailable row with the reason."""
    from benchmarks.harness import Variant
    variants = []
    for label, module_name, build in builders:
        module = peer(module_name)
        if module is None:
            continue
        try:
            variants.append(Variant(label, build(module)))
        except Exception as exc:  # noqa: BLE001 - show it in the table, keep going
            variants.append(Variant(label, unavailable=f"setup failed: {type(exc).__name__}: "
                                                       f"{str(exc).splitlines()[0][:120]}"))
    return variants


def tf_label(jit_compile: bool) -> str:
    """A TensorFlow peer row's name: its tf.function, compiled by XLA or not."""
    return "TensorFlow tf.function" + (" jit_compile=True (XLA)" if jit_compile else "")


def compiled_peers(builders: list) -> list:
    """The JAX and TensorFlow entries of a workload's peer builders (the compiled peers
    issue 16 compares `jit_compile=True` with), as variants."""
    return peer_variants([b for b in builders if b[1] in ("jax", "tensorflow")])


def peers_note() -> str:
    found = [n for n in ("tensorflow", "jax", "torch") if peer(n) is not None]
    if found:
        return (f"peers measured: {', '.join(found)} (TensorFlow and PyTorch at "
                f"{peer_threads()} thread(s), KF_PEER_THREADS; JAX at XLA's default pool)")
    return "peers: TensorFlow, JAX and PyTorch are optional and none is installed here"


def autograph_variant(name: str, build: Callable[[], Callable[[], Any]]) -> Any:
    """A Variant that needs AutoGraph control flow. build() traces and checks it and returns
    the callable to time; while the feature is missing, or while it fails (being built by
    someone else right now), the row says so instead of stopping the run."""
    from benchmarks.harness import Variant
    missing = autograph_missing()
    if missing:
        return Variant(name, unavailable=f"not available yet: {missing}")
    try:
        return Variant(name, build())
    except Exception as exc:  # noqa: BLE001 - shown in the table
        return Variant(name, unavailable=f"not working yet: {type(exc).__name__}: "
                                         f"{str(exc).splitlines()[0][:160]}")
