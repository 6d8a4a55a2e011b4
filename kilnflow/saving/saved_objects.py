"""The object tree of a saved model, and the objects `saved_model.load` rebuilds from it.

Saving walks the saved object: its tracked children (variables, sub-modules, lists and
dicts of them), its plain attributes (numbers, strings, booleans, None) and its kf.function
methods (each with its traced concrete functions). The tree is JSON; loading rebuilds it as
`LoadedObject`s (attributes set, functions callable and differentiable with respect to the
restored variables) without the original classes and without running anything from the
file. Reads saving/checkpoint (what is trackable) and the function layer.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from kilnflow import nest
from kilnflow.context import ctx
from kilnflow.function.api import Function
from kilnflow.function.trace_key import make_key
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.subgraph import replay
from kilnflow.saving.checkpoint import is_trackable
from kilnflow.shapes import TensorSpec
from kilnflow.variables import Variable

SCALARS = (bool, int, float, str, type(None))


class TreeError(ValueError):
    """A saved object tree that is malformed."""


# ---------------------------------------------------------------- saving

def concretes_of(function: Any) -> list:
    """The concrete functions a bound kf.function method has: its input signature's, or
    those its calls have traced so far."""
    if function.input_signature is not None:
        return [function.get_concrete_function()]
    return function.traced_concrete_functions()


def describe(root: Any, variable_key: Callable[[Variable], str],
             function_key: Callable[[str, Any], str]) -> dict:
    """The JSON tree of `root`. `variable_key(v)` names a variable's saved value;
    `function_key(path, concrete)` registers a concrete function and returns its key."""
    seen: set = set()

    def node(value: Any, path: str) -> Optional[dict]:
        if isinstance(value, Variable):
            return {"variable": variable_key(value)}
        if isinstance(value, SCALARS):
            return {"value": value}
        if isinstance(value, (list, tuple)):
            items = [node(v, f"{path}/{i}") for i, v in enumerate(value)]
            return {"list" if isinstance(value, list) else "tuple": items}
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return {"dict": {k: node(v, f"{path}/{k}") for k, v in value.items()}}
        if is_trackable(value) and id(value) not in seen:
            seen.add(id(value))
            return {"object": obj(value, path)}
        return None  # anything else (callables, arrays, cycles) is not saved

    def obj(value: Any, path: str) -> dict:
        children = {}
        for name, child in value._checkpoint_children():
            described = node(child, f"{path}/{name}")
            if described is not None:
                children[str(name)] = described
        for name, attr in vars(value).items():
            if not name.startswith("_") and name not in children and isinstance(attr, SCALARS):
                children[name] = {"value": attr}
        functions = {}
        for name in dir(type(value)):
            if isinstance(getattr(type(value), name, None), Function):
                bound = getattr(value, name)
                keys = [function_key(f"{path}.{name}", c) for c in concretes_of(bound)]
                if keys:
                    functions[name] = keys
        return {"class": type(value).__name__, "children": children, "functions": functions}

    seen.add(id(root))
    return obj(root, "")


# ---------------------------------------------------------------- loading

class LoadedObject:
    """What a saved object becomes on load: its attributes, sub-objects and functions, with
    no Python class of its own (TF's restored user object)."""

    def __repr__(self) -> str:
        return f"<LoadedObject of class {getattr(self, '_saved_class', '?')}>"


def call_replaying(concrete: Any, args: tuple, kwargs: dict) -> Any:
    """Call `concrete` by replaying its traced graph, side effects included, in the current
    mode (eager under a tape, or into the graph being built), so tapes see every op."""
    names = concrete._arg_names
    if kwargs:
        unknown = sorted(set(kwargs) - set(names[len(args):]))
        if unknown:
            raise TypeError(f"{concrete.name}() got unexpected keyword arguments {unknown}")
        args = tuple(args) + tuple(kwargs[n] for n in names[len(args):] if n in kwargs)
    _, values, _ = make_key(tuple(args), {})
    specs = concrete._input_specs
    if len(values) != len(specs):
        raise TypeError(f"{concrete.name}() expected {len(specs)} tensor arguments, got "
                        f"{len(values)}")
    inputs = []
    for (name, spec), value in zip(specs, values):
        tensor = convert_to_tensor(value)
        if tensor.dtype != spec.dtype or not spec.shape.is_compatible_with(tensor.shape):
            raise TypeError(f"{concrete.name}(): argument {name!r} must be a {spec}, got "
                            f"{tensor.dtype.name} {tensor.shape}")
        inputs.append(tensor)
    outputs = replay(concrete.traced_graph, inputs, side_effects=True)
    template = concrete._output_template
    leaves = [outputs[leaf.index] if hasattr(leaf, "index") else leaf
              for leaf in nest.flatten(template)]
    return leaves[0] if not nest.is_nested(template) else \
        nest.pack_sequence_as(template, leaves)


class RestoredFunction:
    """A loaded kf.function: calls the first concrete function whose input signature accepts
    the arguments. Under a GradientTape or inside another function the traced graph is
    replayed op by op, so gradients reach the restored variables (fine-tuning after load)."""

    def __init__(self, name: str, concretes: List[Any]):
        self.__name__ = name
        self.concrete_functions = list(concretes)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        failures = []
        for concrete in self.concrete_functions:
            try:
                if ctx.tapes or ctx.graph is not None:
                    return _sorted_dicts(call_replaying(concrete, args, kwargs))
                return _sorted_dicts(concrete(*args, **kwargs))
            except (TypeError, ValueError) as exc:
                failures.append(f"  {concrete}: {exc}")
        raise ValueError(f"Could not find a matching function to call loaded function "
                         f"{self.__name__!r} with these arguments; its signatures:\n"
                         + "\n".join(failures))

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> Any:
        return self.concrete_functions[0]

    def __repr__(self) -> str:
        return f"<RestoredFunction {self.__name__} ({len(self.concrete_functions)} signatures)>"


def _sorted_dicts(value: Any) -> Any:
    """As TF's loaded functions return them: dicts keyed in sorted order (a saved model
    keeps a dict's structure, not the order its keys were inserted in)."""
    if isinstance(value, dict):
        return {k: _sorted_dicts(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_sorted_dicts(v) for v in value)
    return value


def rebuild(tree: dict, root: Any, variables: Dict[str, Variable],
            functions: Dict[str, Any]) -> Any:
    """Fill `root` (a LoadedObject) from `tree`, every reference checked."""

    def node(data: Any) -> Any:
        if not isinstance(data, dict) or len(data) != 1:
            raise TreeError(f"malformed object tree node {data!r}")
        (kind, value), = data.items()
        if kind == "variable":
            if value not in variables:
                raise TreeError(f"the object tree names variable {value!r}, which is not saved")
            return variables[value]
        if kind == "value":
            if not isinstance(value, SCALARS):
                raise TreeError(f"malformed attribute value {value!r}")
            return value
        if kind in ("list", "tuple"):
            items = [node(v) for v in _checked(value, list)]
            return items if kind == "list" else tuple(items)
        if kind == "dict":
            return {str(k): node(v) for k, v in _checked(value, dict).items()}
        if kind == "object":
            return fill(LoadedObject(), value)
        raise TreeError(f"unknown object tree node kind {kind!r}")

    def fill(target: Any, data: Any) -> Any:
        data = _checked(data, dict)
        target._saved_class = str(data.get("class", ""))
        for name, child in _checked(data.get("children", {}), dict).items():
            setattr(target, str(name), node(child))
        for name, keys in _checked(data.get("functions", {}), dict).items():
            missing = [k for k in _checked(keys, list) if k not in functions]
            if missing:
                raise TreeError(f"function {name!r} names missing concrete functions {missing}")
            setattr(target, str(name), RestoredFunction(str(name), [functions[k] for k in keys]))
        return target

    return fill(root, tree)


def _checked(value: Any, kind: type) -> Any:
    if not isinstance(value, kind):
        raise TreeError(f"malformed object tree: expected a {kind.__name__}, got {value!r}")
    return value


# ---------------------------------------------------------------- signatures

def output_names(template: Any) -> List[str]:
    """Names of a serving signature's outputs: the returned dict's keys (in flattening
    order), else output_0, output_1, ..."""
    if isinstance(template, dict) and all(isinstance(k, str) for k in template):
        return sorted(template)
    return [f"output_{i}" for i in range(len(nest.flatten(template)))]


class ServingSignature:
    """A signature function (`loaded.signatures["serving_default"]`): called with keyword
    arguments named after its inputs, it returns a dict of named output tensors;
    `structured_outputs` is the dict of their TensorSpecs."""

    def __init__(self, concrete: Any, names: List[str]):
        self._concrete = concrete
        self._names = names
        self.structured_input_signature = ((), {n: TensorSpec(s.shape, s.dtype, n)
                                                for n, s in concrete._input_specs})

    @property
    def structured_outputs(self) -> Dict[str, TensorSpec]:
        flat = [t for t in nest.flatten(self._concrete.structured_outputs)]
        return {n: TensorSpec(t.shape, t.dtype, n) for n, t in zip(self._names, flat)}

    def __call__(self, *args: Any, **kwargs: Any) -> Dict[str, Any]:
        out = RestoredFunction("signature", [self._concrete])(*args, **kwargs)
        if isinstance(out, dict):
            return {n: out[n] for n in self._names}
        flat = list(out) if isinstance(out, (list, tuple)) else [out]
        return dict(zip(self._names, flat))

    def __repr__(self) -> str:
        return f"<ServingSignature outputs={self._names}>"
