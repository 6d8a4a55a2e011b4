"""Keras 3 object serialization: `{"module", "class_name", "config", "registered_name"}`
dicts for layers, losses, metrics, optimizers, initializers and models, the registry of
custom classes (`register_keras_serializable`), and `custom_objects` lookups."""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator, Optional

_REGISTERED: dict = {}   # "package>name" -> class or function
_REGISTERED_NAMES: dict = {}  # id(object) -> "package>name"
_SCOPE = threading.local()


def register_keras_serializable(package: str = "Custom", name: Optional[str] = None) -> Callable:
    """Decorator: registers a class or function under "package>name" so that saved models
    that use it load without `custom_objects`.

    >>> from kilnflow import keras
    >>> @keras.saving.register_keras_serializable(package="doc")
    ... def my_loss(y_true, y_pred):
    ...     return (y_true - y_pred) ** 2
    >>> keras.saving.get_registered_name(my_loss)
    'doc>my_loss'
    """
    if ">" in package:
        raise ValueError(f"The package name must not contain '>', got {package!r}")

    def decorator(obj: Any) -> Any:
        key = f"{package}>{name or obj.__name__}"
        if isinstance(obj, type) and not hasattr(obj, "get_config"):
            raise ValueError(f"Cannot register {obj.__name__}: a registered class needs "
                             "get_config()")
        _REGISTERED[key] = obj
        _REGISTERED_NAMES[id(obj)] = key
        return obj
    return decorator


def get_registered_name(obj: Any) -> str:
    """The "package>name" an object was registered under, else its __name__."""
    return _REGISTERED_NAMES.get(id(obj), getattr(obj, "__name__", type(obj).__name__))


def get_registered_object(name: str, custom_objects: Optional[dict] = None,
                          module_objects: Optional[dict] = None) -> Any:
    """Look `name` up in scoped custom objects, `custom_objects`, the registry, then
    `module_objects`; None when absent."""
    for table in (_scoped(), custom_objects or {}, _REGISTERED, module_objects or {}):
        if name in table:
            return table[name]
    return None


def get_custom_objects() -> dict:
    """The global registry (name -> object); adding to it registers an object."""
    return _REGISTERED


def _scoped() -> dict:
    merged: dict = {}
    for scope in getattr(_SCOPE, "stack", []):
        merged.update(scope)
    return merged


@contextlib.contextmanager
def custom_object_scope(*scopes: dict) -> Iterator[None]:
    """Within the block, these name -> object maps resolve names in saved configs."""
    stack = getattr(_SCOPE, "stack", [])
    _SCOPE.stack = stack
    merged: dict = {}
    for scope in scopes:
        merged.update(scope or {})
    stack.append(merged)
    try:
        yield
    finally:
        stack.pop()


CustomObjectScope = custom_object_scope


def _module_of(obj: Any) -> str:
    """Keras's `module` field: the public Keras namespace of built-in objects."""
    module = type(obj).__module__ if not isinstance(obj, type) else obj.__module__
    for part, public in (("keras.layers", "keras.layers"), ("keras.losses", "keras.losses"),
                         ("keras.metrics", "keras.metrics"),
                         ("keras.optimizers", "keras.optimizers"),
                         ("keras.initializers", "keras.initializers"),
                         ("keras.regularizers", "keras.regularizers"),
                         ("keras.models", "keras")):
        if module.startswith("kilnflow." + part):
            return public
    return module


def _builtin(obj: Any) -> bool:
    return type(obj).__module__.startswith("kilnflow.")


def _jsonable(value: Any) -> Any:
    """Configs as JSON: tuples become lists, NumPy scalars and arrays become Python."""
    import numpy as np
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "as_list") and hasattr(value, "rank"):  # a TensorShape
        return value.as_list() if value.rank is not None else None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "get_config"):
        return serialize_keras_object(value)
    if callable(value):
        return {"module": "builtins", "class_name": "function",
                "config": get_registered_name(value), "registered_name": "function"}
    if hasattr(value, "name") and isinstance(getattr(value, "name"), str):  # a DType
        return value.name
    raise TypeError(f"Cannot serialize {value!r} ({type(value).__name__}) in a Keras config")


def serialize_keras_object(obj: Any) -> Any:
    """The Keras 3 dict of an object with get_config (None, strings and numbers pass
    through; functions become their registered name)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if not hasattr(obj, "get_config"):
        return _jsonable(obj)
    registered = None if _builtin(obj) else get_registered_name(type(obj))
    out = {"module": _module_of(obj), "class_name": type(obj).__name__,
           "config": _jsonable(obj.get_config()), "registered_name": registered}
    build = getattr(obj, "get_build_config", None)
    if build is not None and getattr(obj, "built", False):
        build_config = build()
        if build_config:
            out["build_config"] = _jsonable(build_config)
    return out


def _public_namespace() -> dict:
    """Keras's public classes by name (later namespaces win on a clash, so a config whose
    module says keras.metrics is looked up there: see deserialize_keras_object)."""
    from kilnflow import keras
    table: dict = {}
    for namespace in (keras.layers, keras.losses, keras.metrics, keras.optimizers,
                      keras.initializers, keras.regularizers, keras.models, keras.activations):
        table.update({k: v for k, v in vars(namespace).items() if not k.startswith("_")})
    table.update({"Model": keras.Model, "Sequential": keras.Sequential,
                  "Functional": keras.Model})
    return table


def _namespace_for(module: str) -> dict:
    """Names in the Keras namespace a config's `module` names (losses and metrics share
    class names such as MeanSquaredError), falling back to all of them."""
    from kilnflow import keras
    table = _public_namespace()
    specific = {"keras.losses": keras.losses, "keras.metrics": keras.metrics,
                "keras.optimizers": keras.optimizers, "keras.layers": keras.layers,
                "keras.initializers": keras.initializers,
                "keras.regularizers": keras.regularizers}.get(module)
    if specific is not None:
        table.update({k: v for k, v in vars(specific).items() if not k.startswith("_")})
    return table


def deserialize_keras_object(config: Any, custom_objects: Optional[dict] = None,
                             **kwargs: Any) -> Any:
    """The object a Keras 3 config dict describes (classes found by registered name,
    custom_objects, or Keras's namespaces), built from its build_config when it has one."""
    if config is None or isinstance(config, (bool, int, float)):
        return config
    if isinstance(config, str):
        found = get_registered_object(config, custom_objects)
        return found if found is not None else config
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not deserialize {config!r}: expected a Keras config dict")
    class_name = config["class_name"]
    if class_name == "function":
        name = config.get("config")
        fn = get_registered_object(name, custom_objects)
        if fn is None:
            fn = get_registered_object(str(name).split(">")[-1], custom_objects)
        if fn is None:
            raise ValueError(f"Could not locate function {name!r}. Pass it in "
                             "`custom_objects` or register it with "
                             "@keras.saving.register_keras_serializable()")
        return fn
    registered = config.get("registered_name")
    cls = None
    if registered:
        cls = get_registered_object(registered, custom_objects)
    if cls is None:
        cls = get_registered_object(class_name, custom_objects,
                                    _namespace_for(config.get("module", "")))
    if cls is None:
        raise TypeError(f"Could not locate class {class_name!r}. Make sure custom classes "
                        "are decorated with `@keras.saving.register_keras_serializable()` "
                        "or passed in `custom_objects`.")
    inner = config.get("config", {})
    with custom_object_scope(custom_objects or {}):
        obj = cls.from_config(inner) if hasattr(cls, "from_config") else cls(**inner)
        build = config.get("build_config")
        if build and hasattr(obj, "build_from_config") and not getattr(obj, "built", True):
            obj.build_from_config(build)
    return obj
