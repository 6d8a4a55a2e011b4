"""Ternaries -> ag__.if_exp with lazy branches.

    y = a if c else b   ->   y = ag__.if_exp(c, lambda: a, lambda: b)

Only the chosen branch runs, as in Python; with a tensor condition both become
cond branches. Expressions containing `:=` are left alone.
"""
import ast

from ..pyct import templates
from ..pyct import transformer


class _IfExpTransformer(transformer.Transformer):
    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        node = self.generic_visit(node)
        if any(isinstance(n, ast.NamedExpr) for n in ast.walk(node)):
            return node
        self.ctx.record(node, "ternary", "x if c else y -> ag__.if_exp (a cond if c is a "
                                         "tensor)")
        return templates.replace_expr("ag__.if_exp(test, lambda: body, lambda: orelse)",
                                      origin=node, test=node.test, body=node.body,
                                      orelse=node.orelse)


def transform(tree: ast.AST, ctx) -> ast.AST:
    return _IfExpTransformer(ctx).visit(tree)
