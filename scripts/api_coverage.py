"""kilnflow's coverage of TensorFlow's public API, per namespace, with the missing names.

Reads scripts/data/tf_api_names.json (TF 2.21's public names per namespace, dumped once from
the tensorflow-cpu wheel in a side venv: names only) and scripts/data/api_out_of_scope.txt
(reviewed names kept out of scope, each with its reason; they leave the denominator). A name
counts as covered when the matching kilnflow namespace has an attribute of that name.
Prints a table, then the missing names; never fails (CI prints it for information).

    python3 scripts/api_coverage.py                 # table and missing names
    python3 scripts/api_coverage.py --summary       # table only
    python3 scripts/api_coverage.py -n math -n nn   # these namespaces only
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import textwrap
from typing import Any, Dict, List, Optional, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES_FILE = os.path.join(HERE, "data", "tf_api_names.json")
SCOPE_FILE = os.path.join(HERE, "data", "api_out_of_scope.txt")


def load_names(path: str = NAMES_FILE) -> Tuple[str, Dict[str, Dict[str, str]]]:
    """(TF version, {namespace: {name: kind}}); the top level is namespace "tf"."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return data["tensorflow_version"], data["namespaces"]


def load_out_of_scope(path: str = SCOPE_FILE) -> Dict[str, str]:
    """{qualified name: reason}; a qualified name is `namespace.name` (`tf.tpu`, `nn.lrn`)."""
    entries: Dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition(" ")
            if not reason.strip():
                raise ValueError(f"{path}:{number}: `{name}` has no reason")
            entries[name] = reason.strip()
    return entries


def excluded(namespace: str, name: str, out_of_scope: Dict[str, str]) -> bool:
    """Out of scope itself, or inside an out-of-scope module (`experimental.dtensor.x`)."""
    qualified = f"{namespace}.{name}"
    parts = qualified.split(".")
    return any(".".join(parts[:i]) in out_of_scope for i in range(2, len(parts) + 1))


def kilnflow_namespace(namespace: str) -> Optional[Any]:
    """kilnflow's module (or object) for a TF namespace, or None when it has none."""
    module: Any = importlib.import_module("kilnflow")
    if namespace == "tf":
        return module
    path = "kilnflow"
    for part in namespace.split("."):
        path += "." + part
        if hasattr(module, part):
            module = getattr(module, part)
            continue
        try:
            module = importlib.import_module(path)
        except ImportError:
            return None
    return module


def coverage(namespaces: Dict[str, Dict[str, str]], out_of_scope: Dict[str, str],
             only: Optional[Set[str]] = None) -> List[dict]:
    """One row per namespace: have, in_scope, out (count) and the sorted missing names."""
    rows = []
    for namespace in sorted(namespaces, key=lambda n: (n != "tf", n)):  # top level first
        names = namespaces[namespace]
        if only and namespace not in only:
            continue
        target = kilnflow_namespace(namespace)
        in_scope = [n for n in names if not excluded(namespace, n, out_of_scope)]
        missing = [n for n in in_scope if target is None or not hasattr(target, n)]
        rows.append({"namespace": namespace, "have": len(in_scope) - len(missing),
                     "in_scope": len(in_scope), "out": len(names) - len(in_scope),
                     "missing": sorted(missing)})
    return rows


def report(version: str, rows: List[dict], summary: bool) -> str:
    lines = [f"kilnflow API coverage against TensorFlow {version} public names "
             f"(out-of-scope names, with reasons: scripts/data/api_out_of_scope.txt)",
             f"{'namespace':<26}{'have':>6} / {'in scope':<8}{'%':>7}{'out':>6}"]
    for row in rows:
        percent = 100.0 * row["have"] / row["in_scope"] if row["in_scope"] else 100.0
        lines.append(f"{row['namespace']:<26}{row['have']:>6} / {row['in_scope']:<8}"
                     f"{percent:>6.1f}%{row['out']:>6}")
    have = sum(r["have"] for r in rows)
    total = sum(r["in_scope"] for r in rows)
    lines.append(f"{'all':<26}{have:>6} / {total:<8}{100.0 * have / max(total, 1):>6.1f}%"
                 f"{sum(r['out'] for r in rows):>6}")
    if not summary:
        for row in rows:
            if row["missing"]:
                lines.append(f"\nmissing in {row['namespace']} ({len(row['missing'])}):")
                lines.extend(textwrap.wrap(" ".join(row["missing"]), 96,
                                           initial_indent="  ", subsequent_indent="  "))
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", action="store_true", help="the table only")
    parser.add_argument("-n", "--namespace", action="append", help="only this namespace")
    parser.add_argument("--json", action="store_true", help="rows as JSON")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(HERE))  # the checkout's kilnflow, not an installed one
    version, namespaces = load_names()
    rows = coverage(namespaces, load_out_of_scope(), set(args.namespace or ()))
    print(json.dumps(rows, indent=1) if args.json else report(version, rows, args.summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
