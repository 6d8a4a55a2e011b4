"""StackedRNNCells: several recurrent cells run as one, each step feeding the next cell.

It speaks the cell protocol keras.layers.RNN runs (project / step / input_weights /
recurrent_weights): the first cell's input projection happens outside the step, the other
cells project their predecessor's output inside it. The states are every cell's states in
order, as Keras lists them; the output is the last cell's (`output_state_index`).
"""
from __future__ import annotations

from typing import Any

from kilnflow.keras.layers.base import Layer
from kilnflow.shapes import TensorShape


class StackedRNNCells(Layer):
    """Wraps a list of RNN cells to behave as a single cell (used as `RNN(cell)`)."""

    def __init__(self, cells: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.cells = list(cells)
        for cell in self.cells:
            if not hasattr(cell, "step") or not hasattr(cell, "state_size"):
                raise ValueError("All cells must have a `call` method and a `state_size` "
                                 f"attribute. Received cell without one: {cell}")

    def _sizes(self, cell: Any) -> list:
        size = cell.state_size
        return list(size) if isinstance(size, (list, tuple)) else [size]

    @property
    def state_size(self) -> list:
        return [n for cell in self.cells for n in self._sizes(cell)]

    @property
    def output_size(self) -> int:
        return self.cells[-1].units

    @property
    def output_state_index(self) -> int:
        return len(self.state_size) - len(self._sizes(self.cells[-1]))

    # Dropout is each cell's own business in Keras; the RNN loop applies a cell-level rate.
    dropout = 0.0
    recurrent_dropout = 0.0

    def build(self, input_shape: Any) -> None:
        shape = TensorShape(input_shape).as_list()
        for cell in self.cells:
            if not cell.built:
                cell.build(TensorShape(shape))
                cell.built = True
            shape = shape[:-1] + [cell.units]
        self.built = True

    def input_weights(self) -> list:
        return self.cells[0].input_weights()

    def project(self, x: Any, input_weights: list) -> Any:
        return self.cells[0].project(x, input_weights)

    def recurrent_weights(self) -> list:
        return [self.cells[0].recurrent_weights()] + [
            (cell.input_weights(), cell.recurrent_weights()) for cell in self.cells[1:]]

    def _split(self, states: list) -> list:
        out, start = [], 0
        for cell in self.cells:
            n = len(self._sizes(cell))
            out.append(list(states[start:start + n]))
            start += n
        return out

    def nest_states(self, states: list) -> list:
        """Flat states -> one list per cell (the structure RNN(return_state=True) returns)."""
        return self._split(list(states))

    def step(self, x_proj: Any, states: list, weights: list) -> tuple:
        per_cell = self._split(states)
        out, new = self.cells[0].step(x_proj, per_cell[0], weights[0])
        flat = list(new)
        for cell, cell_states, (in_w, rec_w) in zip(self.cells[1:], per_cell[1:], weights[1:]):
            out, new = cell.step(cell.project(out, in_w), cell_states, rec_w)
            flat.extend(new)
        return out, flat

    def call(self, inputs: Any, states: Any) -> tuple:
        """One step on [batch, features] inputs: (last cell's output, all new states)."""
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        return self.step(self.project(inputs, self.input_weights()), states,
                         self.recurrent_weights())

    def get_config(self) -> dict:
        from kilnflow.keras.layers.layer_utils import serialize
        return {**super().get_config(), "cells": [serialize(cell) for cell in self.cells]}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Any = None) -> "StackedRNNCells":
        from kilnflow.keras.layers.layer_utils import deserialize
        config = dict(config)
        config["cells"] = [deserialize(c, custom_objects) for c in config["cells"]]
        return cls(**config)
