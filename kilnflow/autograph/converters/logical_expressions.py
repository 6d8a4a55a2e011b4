"""and / or / not -> ag__.and_ / or_ / not_, keeping Python's laziness.

    a and b or not c
    ->  ag__.or_(lambda: ag__.and_(lambda: a, lambda: b), lambda: ag__.not_(c))

Each operand is wrapped in a lambda so it is evaluated only when Python would
evaluate it; with tensors the right operand goes into a cond branch. Operands
containing `:=` are left alone (a lambda would change where the name is bound).
"""
import ast

from ..pyct import templates
from ..pyct import transformer

_NAMES = {ast.And: "and_", ast.Or: "or_"}


def _has_walrus(node: ast.AST) -> bool:
    return any(isinstance(n, ast.NamedExpr) for n in ast.walk(node))


class _LogicalTransformer(transformer.Transformer):
    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        node = self.generic_visit(node)
        if _has_walrus(node):
            return node
        operator = _NAMES[type(node.op)]
        self.ctx.record(node, operator.rstrip("_"), f"{operator.rstrip('_')} -> "
                                                    f"ag__.{operator} (lazy; a cond on tensors)")
        result = node.values[-1]
        for left in reversed(node.values[:-1]):
            result = templates.replace_expr(f"ag__.{operator}(lambda: left, lambda: right)",
                                            origin=node, left=left, right=result)
        return result

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        node = self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        self.ctx.record(node, "not", "not -> ag__.not_ (logical_not on tensors)")
        return templates.replace_expr("ag__.not_(operand)", origin=node, operand=node.operand)


def transform(tree: ast.AST, ctx) -> ast.AST:
    return _LogicalTransformer(ctx).visit(tree)
