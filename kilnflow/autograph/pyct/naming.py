"""Fresh names for generated code that never clash with a user's names.

A Namer is created per converted entity from every identifier already in its
tree, so `loop_body` becomes `loop_body_1` when the user has a `loop_body`.
Imports nothing from kilnflow.
"""
import ast


def identifiers(tree: ast.AST) -> set:
    """Every identifier spelled in `tree`: variables, arguments, defs, imports, ..."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            found.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            found.add(node.rest)
    return found


class Namer:
    """Hands out names: the base itself if free, else base_1, base_2, ..."""

    def __init__(self, used=()):
        self._used = set(used)

    def new(self, base: str) -> str:
        name = base
        count = 1
        while name in self._used:
            name = f"{base.rstrip('_')}_{count}"
            count += 1
        self._used.add(name)
        return name

