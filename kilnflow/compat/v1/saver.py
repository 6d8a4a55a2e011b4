"""tf.compat.v1.train.Saver: save and restore variables by their TF1 names.

A Saver writes kilnflow's checkpoint format (saving/checkpoint.py: a safetensors file and
a JSON index) with each variable keyed by its graph name without ':0' ('layer/w'), the
names TF1 checkpoints use, and keeps the directory's `checkpoint` state file, so
kf.train.latest_checkpoint finds the newest save. Values go straight into the variables'
storage, so a restore needs no initializer run (and a Session's later runs see them).
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import numpy as np

from kilnflow import errors
from kilnflow.compat.v1.graph_keys import GraphKeys, get_collection
from kilnflow.context import ctx
from kilnflow.saving import checkpoint as _checkpoint
from kilnflow.variables import Variable


def _plain_name(var: Variable) -> str:
    # a Keras 3 variable's name is short ('kernel'); its path ('dense/kernel') is unique
    name = getattr(var, "path", None) or var.name
    return name[:-2] if name.endswith(":0") else name


class _NameTree:
    """Checkpoint root whose children nest by name parts, so 'a/b/w' is saved as 'a/b/w'."""

    def __init__(self, variables: Dict[str, Variable]):
        tree: Dict[str, Any] = {}
        for name, var in variables.items():
            node = tree
            parts = name.split("/")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
                if not isinstance(node, dict):
                    raise ValueError(f"Saver: variable names {name!r} and "
                                     f"{'/'.join(parts[:parts.index(part) + 1])!r} collide")
            if parts[-1] in node:
                raise ValueError(f"Saver: two variables are saved as {name!r}")
            node[parts[-1]] = var
        self._tree = tree

    def _checkpoint_children(self) -> list:
        return sorted(self._tree.items())


class Saver:
    """Saves and restores variables (all global variables by default) in a Session.

    `var_list` may be a list of variables or a dict from checkpoint name to variable.
    `max_to_keep` old checkpoints are kept (None or 0: all). Sharding, `keep_checkpoint_
    every_n_hours` and meta graphs are accepted and not used.
    """

    def __init__(self, var_list: Any = None, reshape: bool = False, sharded: bool = False,
                 max_to_keep: Optional[int] = 5, keep_checkpoint_every_n_hours: float = 10000.0,
                 name: Optional[str] = None, restore_sequentially: bool = False,
                 saver_def: Any = None, builder: Any = None, defer_build: bool = False,
                 allow_empty: bool = False, write_version: Any = None,
                 pad_step_number: bool = False, save_relative_paths: bool = False,
                 filename: Optional[str] = None):
        self._var_list = var_list
        self._allow_empty = allow_empty
        self._max_to_keep = max_to_keep
        self._pad_step_number = pad_step_number
        self._kept: List[str] = []
        if var_list is not None or not allow_empty:
            self._variables()  # TF checks at construction

    def _variables(self) -> Dict[str, Variable]:
        var_list = self._var_list
        if var_list is None and ctx.graph is None:
            raise RuntimeError("When eager execution is enabled, `var_list` must specify a "
                               "list or dict of variables to save")
        if var_list is None:
            var_list = get_collection(GraphKeys.GLOBAL_VARIABLES)
        if isinstance(var_list, dict):
            named = {str(k): v for k, v in var_list.items()}
        else:
            named = {}
            for var in var_list:
                if not isinstance(var, Variable):
                    raise TypeError(f"Saver: var_list items must be variables, got {var!r}")
                key = _plain_name(var)
                if key in named and named[key] is not var:
                    raise ValueError(f"At least two variables have the same name: {key}")
                named[key] = var
        if not named and not self._allow_empty:
            raise ValueError("No variables to save")
        return named

    def save(self, sess: Any, save_path: str, global_step: Any = None,
             latest_filename: Optional[str] = None, meta_graph_suffix: str = "meta",
             write_meta_graph: bool = True, write_state: bool = True,
             strip_default_attrs: bool = False, save_debug_info: bool = False) -> str:
        """Write the variables' current values to `save_path` (plus '-<global_step>');
        returns the checkpoint prefix."""
        prefix = os.fspath(save_path)
        if global_step is not None:
            step = int(global_step if isinstance(global_step, (int, np.integer))
                       else sess.run(global_step))
            prefix = f"{prefix}-{step:08d}" if self._pad_step_number else f"{prefix}-{step}"
        prefix = _checkpoint.write_checkpoint(_NameTree(self._variables()), prefix,
                                              name_based=True)
        if prefix in self._kept:
            self._kept.remove(prefix)
        self._kept.append(prefix)
        self._sweep()
        if write_state:
            directory = os.path.dirname(prefix) or "."
            _checkpoint.write_state(directory, prefix, self._kept)
        return prefix

    def _sweep(self) -> None:
        if not self._max_to_keep:
            return
        while len(self._kept) > self._max_to_keep:
            old = self._kept.pop(0)
            for suffix in (".json", ".safetensors"):
                if os.path.exists(old + suffix):
                    os.remove(old + suffix)

    @property
    def last_checkpoints(self) -> list:
        return list(self._kept)

    def restore(self, sess: Any, save_path: Optional[str]) -> None:
        """Load every saved variable's value from checkpoint `save_path`."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        _index, tensors = _checkpoint.read_checkpoint(os.fspath(save_path))
        for name, var in self._variables().items():
            if name not in tensors:
                raise errors.NotFoundError(
                    f"Key {name} not found in checkpoint {save_path}: the checkpoint has "
                    f"{sorted(tensors)}")
            _checkpoint.assign_value(var, tensors[name], name, os.fspath(save_path))


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    return os.path.exists(_checkpoint.split_prefix(checkpoint_prefix) + ".json")
