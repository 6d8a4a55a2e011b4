"""The layer order of docs/architecture.md, enforced: no module imports one of a higher
layer, at module level or inside a function, except the sanctioned edges listed below.

Layers, lowest first (modules of one layer may import each other):
  0 dtypes, shapes, errors, context, nest    4 ops (the op families), variables
  1 tensor                                   5 autodiff
  2 core (OpDef, defop, bind, rules, Const)  6 passes
  3 graph, function.func_graph, runtime      7 function
                                             8 autograph (converters and pyct: no framework)
  9 everything built on top: keras, saving, compat, train, module, the public namespaces...
"""
from __future__ import annotations

import ast
import os
from typing import Iterator, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "kilnflow")

LAYERS = [
    (0, ("kilnflow.dtypes", "kilnflow.shapes", "kilnflow.errors", "kilnflow.context",
         "kilnflow.nest")),
    (1, ("kilnflow.tensor",)),
    (2, ("kilnflow.core",)),
    (3, ("kilnflow.graph", "kilnflow.function.func_graph", "kilnflow.runtime")),
    (4, ("kilnflow.ops", "kilnflow.variables")),
    (5, ("kilnflow.autodiff",)),
    (6, ("kilnflow.passes",)),
    (7, ("kilnflow.function",)),
    (8, ("kilnflow.autograph",)),
]
TOP = 9

# (importer, imported): why the upward edge is fine. Each is a function-level import.
SANCTIONED = {
    ("kilnflow.ops.cond", "kilnflow.autodiff.tape"):
        "cond's gradient replays the taken branch under a GradientTape",
    ("kilnflow.ops.critical_section", "kilnflow.autodiff.tape"):
        "a critical section's gradient replays its body under a tape, as cond's does",
    ("kilnflow.ops.while_loop", "kilnflow.autodiff.tape"):
        "while's second-order gradient is built from public loops under a tape",
    ("kilnflow.ops.while_loop", "kilnflow.autodiff.accumulate"):
        "the while gradient asks which inputs need gradients",
    ("kilnflow.dtypes", "kilnflow.ops.math"):
        "kf.dtypes.cast (TF's name there) is looked up on use by the module's __getattr__",
    ("kilnflow.dtypes", "kilnflow.ops.complex"):
        "kf.dtypes.complex, looked up on use as kf.dtypes.cast is",
    ("kilnflow.dtypes", "kilnflow.ops.math_extra"):
        "kf.dtypes.saturate_cast, looked up on use as kf.dtypes.cast is",
    ("kilnflow.function.tracing", "kilnflow.autograph.api"):
        "a kf.function converts its Python function with AutoGraph, whose operators build "
        "graphs through function/",
}
FRAMEWORK_FREE = ("kilnflow.autograph.converters", "kilnflow.autograph.pyct")


def layer_of(module: str) -> int:
    best, length = TOP, -1
    for rank, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = rank, len(prefix)
    return best


def _module_name(path: str, root: str) -> str:
    rel = os.path.relpath(path, os.path.dirname(root))[:-3].replace(os.sep, ".")
    return rel[:-len(".__init__")] if rel.endswith(".__init__") else rel


def imports_of(source: str, module: str, is_package: bool) -> Iterator[Tuple[str, int, bool]]:
    """(imported name, line, inside a function) for every kilnflow import in `source`."""
    package = module if is_package else module.rsplit(".", 1)[0]

    def visit(node: ast.AST, late: bool) -> Iterator[Tuple[str, int, bool]]:
        for child in ast.iter_child_nodes(node):
            inner = late or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, child.lineno, late
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    parts = package.split(".")[:len(package.split(".")) - child.level + 1]
                    base = ".".join(parts + ([child.module] if child.module else []))
                else:
                    base = child.module or ""
                for alias in child.names:
                    yield f"{base}.{alias.name}", child.lineno, late
            yield from visit(child, inner)

    for name, line, late in visit(ast.parse(source), False):
        if name == "kilnflow" or name.startswith("kilnflow."):
            yield name, line, late


def modules(root: str = PACKAGE) -> dict:
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                found[_module_name(path, root)] = path
    return found


def upward_imports(root: str = PACKAGE) -> List[str]:
    """Every import of a higher layer (or, from converters/pyct, of any framework module)."""
    known = modules(root)
    problems = []
    for module, path in sorted(known.items()):
        with open(path, encoding="utf-8") as f:
            source = f.read()
        for name, line, late in imports_of(source, module, path.endswith("__init__.py")):
            target = name
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            where = f"{os.path.relpath(path, os.path.dirname(root))}:{line}"
            kind = "function-level" if late else "module-level"
            if module.startswith(FRAMEWORK_FREE) and not target.startswith(FRAMEWORK_FREE):
                problems.append(f"{where}: {module} imports {target} ({kind}); converters and "
                                "pyct must not import the framework")
                continue
            if layer_of(target) > layer_of(module) and (module, target) not in SANCTIONED:
                problems.append(f"{where}: {module} (layer {layer_of(module)}) imports "
                                f"{target} (layer {layer_of(target)}), {kind}")
    return problems


def test_no_module_imports_a_higher_layer():
    problems = upward_imports()
    assert not problems, "upward imports:\n" + "\n".join(problems)


def test_every_sanctioned_edge_still_exists():
    """A stale exception would silently allow a new upward import later."""
    known = modules()
    edges = set()
    for module, path in known.items():
        with open(path, encoding="utf-8") as f:
            for name, _, _ in imports_of(f.read(), module, path.endswith("__init__.py")):
                while name not in known and "." in name:
                    name = name.rsplit(".", 1)[0]
                edges.add((module, name))
    assert set(SANCTIONED) <= edges, set(SANCTIONED) - edges


def test_the_checker_catches_an_upward_import(tmp_path):
    """The test of the test: plant upward imports, module-level and inside a function."""
    package = tmp_path / "kilnflow"
    for sub in ("", "core", "ops", "keras", "autograph/pyct"):
        (package / sub).mkdir(parents=True, exist_ok=True)
        (package / sub / "__init__.py").write_text("")
    (package / "core" / "opdef.py").write_text("from kilnflow.ops import array\n")
    (package / "ops" / "array.py").write_text(
        "from kilnflow.core import opdef\n\ndef f():\n    from kilnflow.keras import layers\n")
    (package / "keras" / "layers.py").write_text("from kilnflow.ops import array\n")
    (package / "autograph" / "pyct" / "parser.py").write_text("import kilnflow.core\n")
    problems = upward_imports(str(package))
    assert len(problems) == 3, problems
    assert any("kilnflow.core.opdef (layer 2) imports kilnflow.ops.array (layer 4), "
               "module-level" in p for p in problems)
    assert any("kilnflow.ops.array (layer 4) imports kilnflow.keras.layers (layer 9), "
               "function-level" in p for p in problems)
    assert any("converters and pyct must not import the framework" in p for p in problems)
