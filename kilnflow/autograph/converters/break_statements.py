"""break -> a flag that stops the loop; loop `else:` -> an `if` after the loop.

    while test:                      break_ = False
        body                         while not break_ and test:
        if c:                            body
            break           ->           if c:
    else:                                    break_ = True
        done()                       if not break_:
                                         done()

For `for` loops the stop test becomes the loop's extra test (ag__.for_stmt's
second argument). A loop `else:` without any break simply follows the loop.
"""
import ast

from ..pyct import templates
from ..pyct import transformer
from . import _jumps


class _BreakTransformer(transformer.Transformer):
    def _visit_loop(self, node):
        node = self.generic_visit(node)
        lowering = _jumps.JumpLowering(lambda s: isinstance(s, ast.Break), None, "",
                                       crosses_loops=False)
        before, after = [], []
        flag = None
        if any(lowering.contains(stmt) for stmt in node.body):
            flag = self.ctx.namer.new("break_")
            lowering.flag = flag
            lowering.replace = lambda stmt: templates.replace("flag = True", origin=stmt,
                                                              flag=flag)
            node.body = lowering.block(node.body)
            _jumps.add_loop_test(node, flag)
            before = templates.replace("flag = False", origin=node, flag=flag)
            self.ctx.record(node, "break", "break -> flag variable, part of the loop state")
        if node.orelse:
            after = node.orelse
            if flag is not None:
                after = templates.replace("if not flag:\n    orelse", origin=node.orelse[0],
                                          flag=flag, orelse=node.orelse)
            node.orelse = []
        return before + [node] + after

    visit_While = visit_For = _visit_loop


def transform(tree: ast.AST, ctx) -> ast.AST:
    return _BreakTransformer(ctx).visit(tree)
