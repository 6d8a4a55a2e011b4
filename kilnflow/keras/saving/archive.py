"""Whole-model saving in Keras 3's `.keras` format: a zip holding metadata.json,
config.json (the architecture and compile settings as Keras configs) and the weights.

Weights are stored under Keras 3's paths ("layers/dense/vars/0", "optimizer/vars/3"): a
container's layers are named by class in snake case, numbered on repeats; a layer's own
variables are numbered trainable first. With h5py installed (the `h5` extra) they go to
`model.weights.h5` with Keras's HDF5 layout, so `.weights.h5` files are interchangeable
with Keras's for the same architecture; without it to `model.weights.npz` (same paths,
readable by kilnflow only). load_model reads either.
"""
from __future__ import annotations

import datetime
import io
import json
import os
import warnings
import zipfile
from typing import Any, Optional

import numpy as np

from kilnflow.keras.saving import serialization
from kilnflow.module import Module
from kilnflow.saving.fileio import write_atomically
from kilnflow.variables import Variable

KERAS_VERSION = "3.10.0"  # the Keras whose format this writes
CONFIG, METADATA = "config.json", "metadata.json"
H5_WEIGHTS, NPZ_WEIGHTS = "model.weights.h5", "model.weights.npz"


def _h5py() -> Any:
    try:
        import h5py
    except ImportError:
        return None
    return h5py


def require_h5py() -> Any:
    h5py = _h5py()
    if h5py is None:
        raise ImportError("Reading or writing .weights.h5 files needs h5py: install the "
                          "`h5` extra (pip install kilnflow[h5])")
    return h5py


# ---------------------------------------------------------------- weight paths

def _snake(name: str) -> str:
    from kilnflow.keras import backend
    return backend.to_snake_case(name)


def _is_saveable(obj: Any) -> bool:
    return isinstance(obj, Module)


def _own_variables(obj: Any) -> list:
    """The object's own variables, trainable ones first (Keras's numbering)."""
    own_fn = getattr(obj, "_own_and_children", None)
    if own_fn is not None:
        own = own_fn()[0]
    elif hasattr(obj, "variables") and not hasattr(obj, "_tracked_children"):
        own = list(obj.variables)
    else:
        own = [v for _, v in obj._tracked_children() if isinstance(v, Variable)]
    return [v for v in own if v.trainable] + [v for v in own if not v.trainable]


def _children(obj: Any) -> list:
    """(attribute, child) pairs: Module children and containers of them."""
    out, skip = [], set()
    if getattr(obj, "_seq_layers", None) is not None or getattr(obj, "_nodes", None) is not None:
        out.append(("layers", list(obj.layers)))  # Sequential / functional: first, as Keras
        skip.add("layers")
    for key, value in obj._tracked_children():
        if key in skip or isinstance(value, Variable):
            continue
        if _is_saveable(value) or (isinstance(value, (list, tuple, dict)) and any(
                _is_saveable(v) for v in (value.values() if isinstance(value, dict)
                                          else value))):
            out.append((key, value))
    return out


def collect_variables(obj: Any, path: str = "", out: Optional[dict] = None,
                      seen: Optional[set] = None) -> dict:
    """{"<path>/vars/<i>": variable} for obj and everything it tracks, as Keras names
    them."""
    out = {} if out is None else out
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return out
    seen.add(id(obj))
    for i, var in enumerate(_own_variables(obj)):
        out[_join(path, f"vars/{i}")] = var
    for key, value in _children(obj):
        if _is_saveable(value):
            collect_variables(value, _join(path, key), out, seen)
            continue
        items = list(value.values()) if isinstance(value, dict) else list(value)
        used: dict = {}
        for item in items:
            if not _is_saveable(item):
                continue
            name = _snake(type(item).__name__)
            if name in used:
                used[name] += 1
                name = f"{name}_{used[name]}"
            else:
                used[name] = 0
            collect_variables(item, _join(path, key, name), out, seen)
    return out


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


def model_variables(model: Any, include_optimizer: bool = True) -> dict:
    out = collect_variables(model)
    optimizer = getattr(model, "optimizer", None)
    if include_optimizer and optimizer is not None and hasattr(optimizer, "variables"):
        for i, var in enumerate(optimizer.variables):
            out[f"optimizer/vars/{i}"] = var
    return out


# ---------------------------------------------------------------- weight files

def _weights_bytes_h5(values: dict) -> bytes:
    h5py = require_h5py()
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as f:
        groups: dict = {}
        for key, value in values.items():
            group_path, index = key.rsplit("/", 1)
            group = groups.get(group_path)
            if group is None:
                group = groups[group_path] = f.require_group(group_path)
            group.create_dataset(index, data=value)
    return buffer.getvalue()


def _read_h5(data: bytes) -> dict:
    h5py = require_h5py()
    out: dict = {}
    with h5py.File(io.BytesIO(data), "r") as f:
        def visit(name: str, node: Any) -> None:
            if isinstance(node, h5py.Dataset):
                out[name] = np.asarray(node)
        f.visititems(visit)
    return out


def _weights_bytes_npz(values: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **values)
    return buffer.getvalue()


def _read_npz(data: bytes) -> dict:
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        return {k: archive[k] for k in archive.files}


def _numpy_values(variables: dict) -> dict:
    return {k: np.asarray(v.numpy()) for k, v in variables.items()}


def assign_values(variables: dict, values: dict, what: str, strict: bool = True) -> list:
    """Assign saved arrays to variables by path; returns the paths that had no value."""
    missing = []
    for key, var in variables.items():
        if key not in values:
            missing.append(key)
            continue
        value = values[key]
        if tuple(value.shape) != tuple(var.shape.as_list()):
            label = getattr(var, "path", var.name)
            raise ValueError(f"{what}: the saved value of {key!r} has shape {value.shape}, "
                             f"the model's variable {label} has shape {var.shape}")
        var.assign(value.astype(var.dtype.as_numpy_dtype))
    unused = sorted(set(values) - set(variables))
    if strict and (missing or unused):
        raise ValueError(f"{what}: the saved weights do not match the model. Missing from "
                         f"the file: {missing[:8]}; not in the model: {unused[:8]}")
    return missing


def save_weights_h5(model: Any, filepath: str) -> None:
    """Keras 3's `.weights.h5`: the model's (not the optimizer's) variables."""
    data = _weights_bytes_h5(_numpy_values(collect_variables(model)))
    write_atomically(filepath, data)


def load_weights_h5(model: Any, filepath: str, skip_mismatch: bool = False) -> None:
    with open(filepath, "rb") as f:
        values = _read_h5(f.read())
    values = {k: v for k, v in values.items() if not k.startswith("optimizer/")}
    assign_values(collect_variables(model), values, f"load_weights({filepath!r})",
                  strict=not skip_mismatch)


# ---------------------------------------------------------------- the archive

def compile_config(model: Any) -> Optional[dict]:
    if not getattr(model, "_is_compiled", False):
        return None
    ser = serialization.serialize_keras_object
    compiled = model._compile_metrics
    return {"optimizer": ser(model.optimizer), "loss": ser(model.loss),
            "loss_weights": _jsonable_weights(model._loss_weights),
            "metrics": _metric_specs(compiled.specs if compiled else None, ser),
            "weighted_metrics": _metric_specs(compiled.weighted_specs if compiled else None,
                                              ser),
            "run_eagerly": model._run_eagerly,
            "steps_per_execution": getattr(model, "_steps_per_execution", 1),
            "jit_compile": bool(model._jit_compile)}


def _metric_specs(specs: Any, convert: Any) -> Any:
    """compile()'s metrics (a list, a list per output or a dict by output) with each
    metric passed through `convert`; None stays None."""
    if specs is None:
        return None
    if isinstance(specs, dict) and "class_name" not in specs:  # by output name
        return {k: _metric_specs(v, convert) for k, v in specs.items()}
    if isinstance(specs, (list, tuple)):
        return [_metric_specs(v, convert) for v in specs]
    return convert(specs)


def _jsonable_weights(weights: Any) -> Any:
    if isinstance(weights, dict):
        return {k: float(v) for k, v in weights.items()}
    if isinstance(weights, (list, tuple)):
        return [float(v) for v in weights]
    return weights


def save_model(model: Any, filepath: Any, overwrite: bool = True,
               include_optimizer: bool = True, **kwargs: Any) -> None:
    """Write `model` to a `.keras` zip: config.json, metadata.json and its weights."""
    filepath = os.fspath(filepath)
    if not filepath.endswith(".keras"):
        raise ValueError(f"Invalid filepath extension for saving. Please add the `.keras` "
                         f"extension (model.save('model.keras')). Received: {filepath!r}")
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"{filepath} exists and overwrite=False")
    config = serialization.serialize_keras_object(model)
    config["compile_config"] = compile_config(model)
    metadata = {"keras_version": KERAS_VERSION, "kilnflow": True,
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    values = _numpy_values(model_variables(model, include_optimizer))
    if _h5py() is not None:
        weights_name, weights = H5_WEIGHTS, _weights_bytes_h5(values)
    else:
        weights_name, weights = NPZ_WEIGHTS, _weights_bytes_npz(values)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(METADATA, json.dumps(metadata))
        archive.writestr(CONFIG, json.dumps(config))
        archive.writestr(weights_name, weights)
    write_atomically(filepath, buffer.getvalue())


def _compile_from_config(model: Any, config: dict, custom_objects: Optional[dict]) -> None:
    de = serialization.deserialize_keras_object
    from kilnflow.keras import losses, metrics, optimizers
    optimizer = optimizers.get(config["optimizer"]) if isinstance(config["optimizer"], str) \
        else de(config["optimizer"], custom_objects)
    def one_loss(loss: Any) -> Any:
        if loss is None or (isinstance(loss, str) and losses._BY_NAME.get(loss)):
            return loss
        return de(loss, custom_objects)
    loss = config.get("loss")
    if isinstance(loss, list):
        loss = [one_loss(l) for l in loss]
    elif isinstance(loss, dict) and "class_name" not in loss:
        loss = {k: one_loss(v) for k, v in loss.items()}
    else:
        loss = one_loss(loss)
    def one_metric(spec: Any) -> Any:
        if spec is None or isinstance(spec, str) and (
                spec in ("accuracy", "acc") or spec in metrics._BY_NAME):
            return spec
        return de(spec, custom_objects)
    model.compile(optimizer=optimizer, loss=loss,
                  metrics=_metric_specs(config.get("metrics"), one_metric),
                  weighted_metrics=_metric_specs(config.get("weighted_metrics"), one_metric),
                  loss_weights=config.get("loss_weights"),
                  run_eagerly=config.get("run_eagerly", False),
                  jit_compile=config.get("jit_compile"),
                  steps_per_execution=config.get("steps_per_execution", 1))


def _read_archive(filepath: str) -> tuple:
    """(config dict, {weight path: array}) of a `.keras` file."""
    if not zipfile.is_zipfile(filepath):
        raise ValueError(f"File format not supported: filepath={filepath}. Keras 3 only "
                         "supports V3 `.keras` files (zip archives).")
    with zipfile.ZipFile(filepath) as archive:
        names = set(archive.namelist())
        config = json.loads(archive.read(CONFIG))
        if H5_WEIGHTS in names:
            values = _read_h5(archive.read(H5_WEIGHTS))
        elif NPZ_WEIGHTS in names:
            values = _read_npz(archive.read(NPZ_WEIGHTS))
        else:
            values = {}
    return config, values


def _restore_optimizer(model: Any, values: dict, what: str) -> None:
    optimizer_values = {k: v for k, v in values.items() if k.startswith("optimizer/")}
    if not optimizer_values or not model.trainable_variables or model.optimizer is None:
        return
    model.optimizer.build_slots(model.trainable_variables)
    opt_vars = {f"optimizer/vars/{i}": v for i, v in enumerate(model.optimizer.variables)}
    if set(opt_vars) == set(optimizer_values):
        assign_values(opt_vars, optimizer_values, what)
    else:
        warnings.warn(f"{what}: the saved optimizer state has {len(optimizer_values)} "
                      f"variables, the model's optimizer {len(opt_vars)}; the optimizer "
                      "starts fresh.", stacklevel=3)


def restore_into(model: Any, filepath: str) -> None:
    """Load a `.keras` file's weights and optimizer state into an existing, same-shaped
    model (BackupAndRestore)."""
    _, values = _read_archive(os.fspath(filepath))
    what = f"restore({filepath!r})"
    _restore_optimizer(model, values, what)
    assign_values(collect_variables(model),
                  {k: v for k, v in values.items() if not k.startswith("optimizer/")}, what)


def load_model(filepath: Any, custom_objects: Optional[dict] = None, compile: bool = True,
               safe_mode: bool = True) -> Any:
    """Rebuild a model saved with model.save('x.keras'): architecture, weights and (with
    compile=True) its compile settings and optimizer state."""
    filepath = os.fspath(filepath)
    config, values = _read_archive(filepath)
    compile_settings = config.pop("compile_config", None)
    model = serialization.deserialize_keras_object(config, custom_objects)
    what = f"load_model({filepath!r})"
    if compile and compile_settings:
        _compile_from_config(model, compile_settings, custom_objects)
        _restore_optimizer(model, values, what)
    model_values = {k: v for k, v in values.items() if not k.startswith("optimizer/")}
    assign_values(collect_variables(model), model_values, what)
    return model
