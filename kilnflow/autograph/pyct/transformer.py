"""The converter base class and the per-conversion context.

Every converter is a `Transformer` subclass run once over the entity's tree. The
base class keeps the stack of enclosing defs and leaves generators and async defs
alone (their bodies cannot be split into functions). `Context` carries the entity
info, the Namer and the conversion report that `explain()` prints.
Imports nothing from kilnflow outside autograph/pyct.
"""
import ast

from . import naming
from . import scope


class ReportEntry:
    """One converted (or deliberately unconverted) construct at a user line."""

    def __init__(self, line: int, construct: str, detail: str):
        self.line = line
        self.construct = construct
        self.detail = detail

    def __repr__(self) -> str:
        return f"ReportEntry(line={self.line}, {self.construct!r}, {self.detail!r})"


class Context:
    """State shared by the converters during one conversion."""

    def __init__(self, info, tree: ast.AST):
        self.info = info
        self.namer = naming.Namer(naming.identifiers(tree) | {"ag__"})
        self.report = []

    def record(self, node: ast.AST, construct: str, detail: str) -> None:
        """Note a conversion for explain(); generated nodes are not the user's, skip them."""
        if getattr(node, "ag_generated", False) or getattr(node, "lineno", None) is None:
            return
        self.report.append(ReportEntry(node.lineno, construct, detail))


def is_generated(node: ast.AST) -> bool:
    return getattr(node, "ag_generated", False)


class Transformer(ast.NodeTransformer):
    """Base of converters: tracks enclosing defs, never enters generators."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.functions = []  # enclosing FunctionDef / Lambda nodes, innermost last

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if scope.is_generator(node):
            return node
        self.functions.append(node)
        try:
            return self.visit_function(node)
        finally:
            self.functions.pop()

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        # A class body is its own scope; its methods are converted when they are called.
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self.functions.append(node)
        try:
            return self.visit_function(node)
        finally:
            self.functions.pop()

    def visit_function(self, node) -> ast.AST:
        """Override to act once per def or lambda; the default visits the body."""
        return self.generic_visit(node)

    def visit_block(self, stmts: list) -> list:
        """Visit a statement list; visitors may return a node, a list, or None."""
        result = []
        for stmt in stmts:
            new = self.visit(stmt)
            if new is None:
                continue
            result.extend(new if isinstance(new, list) else [new])
        return result
