"""What TF never tells you: trace-time-only side effects, pruned computation, retracing.

The source scan is static (the decorated function's own body): calls into np.random,
random, time and datetime are frozen at trace time; appending to or updating an outer
list/dict happens once per trace, not per call.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
import warnings
from typing import Any, Callable, List, Optional

from kilnflow.function.trace_key import describe_change
from kilnflow.graph import PLACEHOLDER
from kilnflow.passes.prune import needed_ops


class KilnflowWarning(UserWarning):
    """Base of kilnflow's diagnostics."""


class RetracingWarning(KilnflowWarning):
    pass


class PrunedComputationWarning(KilnflowWarning):
    pass


class TraceTimeSideEffectWarning(KilnflowWarning):
    pass


_FROZEN_MODULES = {"numpy.random": "np.random", "random": "random", "time": "time",
                   "datetime": "datetime"}
_MUTATORS = {"append", "extend", "insert", "update", "setdefault", "add", "pop", "clear",
             "remove"}


def _module_of(node: ast.AST, scope: dict) -> str:
    """'numpy.random' for `np.random.randn`, looked up through the function's globals."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    root = scope.get(node.id)
    name = getattr(root, "__name__", None)
    if name is None or not inspect.ismodule(root):
        return ""
    for attr in reversed(parts[1:]):
        name = f"{name}.{attr}"
    return name


def _callable_module(obj: Any) -> str:
    """The module a plain callable comes from (bound methods: their instance's class)."""
    if obj is None:
        return ""
    module = getattr(obj, "__module__", None)
    if not module and hasattr(obj, "__self__"):
        module = type(obj.__self__).__module__
    module = module or ""
    return "numpy.random" if module.startswith("numpy.random") else module


def _local_names(fn_node: ast.AST) -> set:
    names = {a.arg for a in ast.walk(fn_node) if isinstance(a, ast.arg)}
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


# Functions handed to these run on every call (kf.py_function): their effects are not
# trace-time-only, so their bodies are not scanned.
_RUN_TIME_CALLERS = frozenset({"py_function", "numpy_function", "py_func"})


def _run_time_nodes(tree: ast.AST) -> set:
    skipped: set = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and \
                getattr(node.func, "attr", getattr(node.func, "id", None)) in _RUN_TIME_CALLERS:
            skipped.update(id(n) for n in ast.walk(node.args[0]))
    return skipped


def scan_source(fn: Callable) -> List[str]:
    """Warnings (with file:line) for trace-time-only side effects in `fn`'s own source."""
    target = inspect.unwrap(fn)
    target = getattr(target, "func", target)  # functools.partial (bound methods)
    try:
        lines, first = inspect.getsourcelines(target)
        filename = inspect.getsourcefile(target) or "<unknown>"
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return []
    scope = dict(getattr(target, "__globals__", {}))
    closure = inspect.getclosurevars(target) if inspect.isfunction(target) else None
    if closure is not None:
        scope.update(closure.nonlocals)
    fn_node = tree.body[0] if tree.body else tree
    local = _local_names(fn_node)
    found = []
    run_time = _run_time_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in run_time:
            continue
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and \
                        t.value.id not in local and \
                        isinstance(scope.get(t.value.id), (list, dict)):
                    found.append(
                        f"{filename}:{first + node.lineno - 1}: `{ast.unparse(t)} = ...` "
                        f"mutates the outer Python {type(scope[t.value.id]).__name__} "
                        f"'{t.value.id}' only while tracing, not on every call.")
            continue
        if not isinstance(node, ast.Call):
            continue
        where = f"{filename}:{first + node.lineno - 1}"
        if isinstance(node.func, ast.Name) and node.func.id not in local:
            module = _callable_module(scope.get(node.func.id))
            if any(module == m or module.startswith(m + ".") for m in _FROZEN_MODULES):
                found.append(
                    f"{where}: `{node.func.id}(...)` ({module}) runs only while tracing, so "
                    f"its value is frozen into the graph (the same on every call). Use "
                    f"kf.random / kf ops inside kf.function.")
            continue
        if not isinstance(node.func, ast.Attribute):
            continue
        module = _module_of(node.func, scope)
        for prefix, shown in _FROZEN_MODULES.items():
            if module == prefix or module.startswith(prefix + "."):
                found.append(
                    f"{where}: `{ast.unparse(node.func)}(...)` runs only while tracing, so "
                    f"its value is frozen into the graph (the same on every call). Use "
                    f"kf.random / kf.timestamp-style ops inside kf.function.")
                break
        owner = node.func.value
        if node.func.attr in _MUTATORS and isinstance(owner, ast.Name) and \
                owner.id not in local and isinstance(scope.get(owner.id), (list, dict, set)):
            found.append(
                f"{where}: `{ast.unparse(node.func)}(...)` mutates the outer Python "
                f"{type(scope[owner.id]).__name__} '{owner.id}' only while tracing, not on "
                f"every call; it will hold symbolic tensors. Return the values instead, or "
                f"use a kf.TensorArray / kf.Variable.")
    return found


def warn(message: str, category: type) -> None:
    """Warn at the user's line that called the function (not inside kilnflow)."""
    from kilnflow.errors import user_frame
    frame = user_frame()
    if frame is None:
        warnings.warn(message, category, stacklevel=2)
    else:
        warnings.warn_explicit(message, category, frame[0], frame[1])


def retrace_reasons(previous_keys: List[Any], key: Any, arg_names: List[str]) -> List[str]:
    """Why `key` needed a new trace: the argument changes against the closest earlier key
    (fewest changes; ties go to the most recent)."""
    if not previous_keys:
        return ["first call"]
    best: Optional[List[str]] = None
    for old in previous_keys:
        if not (isinstance(old, tuple) and len(old) == 2 and isinstance(key, tuple)
                and len(key) == 2):
            continue
        changes: List[str] = []
        if len(old[0]) != len(key[0]):
            changes.append(f"number of arguments {len(old[0])} -> {len(key[0])}")
        else:
            for name, a, b in zip(arg_names, old[0], key[0]):
                changes += describe_change(name, a, b)
        kw_old, kw_new = dict(old[1]), dict(key[1])
        for k in sorted(set(kw_old) | set(kw_new)):
            changes += describe_change(k, kw_old.get(k), kw_new.get(k))
        if best is None or len(changes) <= len(best):
            best = changes
    return best or ["new trace key"]


def _expected_to_be_unused(op: Any) -> bool:
    """Ops whose pruning is no news: inputs and constants (no inputs), pass-throughs,
    variable reads, ops AutoGraph builds only to decide, and ops marked quiet."""
    opdef = op.opdef
    return (not op.inputs or opdef.identity or opdef.watch_attr is not None or op.quiet
            or "autograph_decision/" in op.name)


def _state_views(graph: Any) -> set:
    """ids of the ops computed only from state: variable reads, stateful ops' outputs and
    constants. Their pruning is no news either: `metric(y, p)` and `v.assign_add(x)` return
    such a view of the updated state, and the quickstart's train_step ignores it."""
    sources: set = set()
    views: set = set()
    for op in graph.operations:  # topological order: inputs are classified first
        if op.opdef.stateful or op.opdef.watch_attr is not None:
            sources.add(id(op))
            continue
        feeders = [t.op for t in op.inputs]
        if feeders and all(id(f) in sources or id(f) in views
                           or (not f.inputs and f.opdef is not PLACEHOLDER) for f in feeders) \
                and any(id(f) in sources or id(f) in views for f in feeders):
            views.add(id(op))
    return views


def warn_pruned(name: str, graph: Any) -> bool:
    """Warn when a traced function computes work nothing uses (the forgotten `return`);
    True when it warned. Views of state (a metric's result after its update) are not
    dead work: the call that returned them did its work through its stateful ops."""
    needed = needed_ops(graph)
    views = _state_views(graph)
    dropped = [op for op in graph.operations
               if id(op) not in needed and id(op) not in views
               and not _expected_to_be_unused(op)]
    if not dropped:
        return False
    where = next((op.location for op in dropped if op.location), None)
    shown = ", ".join(f"{op.type}" for op in dropped[:6]) + (", ..." if len(dropped) > 6 else "")
    line = f" (first at {where[0]}:{where[1]})" if where else ""
    returns = " The function returns nothing: did you forget a `return`?" \
        if not graph.outputs else ""
    warn(f"kf.function '{name}' computes {len(dropped)} ops whose results are never used: "
         f"{shown}{line}. They are pruned from the graph and never run, so timing this "
         f"function measures none of that work.{returns}", PrunedComputationWarning)
    return True
