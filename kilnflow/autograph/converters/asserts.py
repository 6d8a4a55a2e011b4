"""assert -> ag__.assert_stmt, so a tensor test becomes an Assert op.

    assert x > 0, 'x must be positive'
    ->  ag__.assert_stmt(x > 0, lambda: 'x must be positive')

The message stays lazy, as in Python: it is only built when the test fails.
"""
import ast

from ..pyct import templates
from ..pyct import transformer


class _AssertTransformer(transformer.Transformer):
    def visit_Assert(self, node: ast.Assert) -> list:
        node = self.generic_visit(node)
        self.ctx.record(node, "assert", "assert -> ag__.assert_stmt (Assert op if the test "
                                        "is a tensor)")
        msg = node.msg if node.msg is not None else ast.Constant(value=None)
        return templates.replace("ag__.assert_stmt(test, lambda: msg)", origin=node,
                                 test=node.test, msg=msg)


def transform(tree: ast.AST, ctx) -> ast.AST:
    return _AssertTransformer(ctx).visit(tree)
