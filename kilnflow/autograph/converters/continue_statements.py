"""continue -> a flag, reset at the start of each iteration, guarding what follows.

    for x in xs:                     for x in xs:
        if x < 0:                        continue_ = False
            continue        ->           if x < 0:
        total += x                           continue_ = True
                                         else:
                                             total += x
"""
import ast

from ..pyct import templates
from ..pyct import transformer
from . import _jumps


class _ContinueTransformer(transformer.Transformer):
    def _visit_loop(self, node):
        node = self.generic_visit(node)
        lowering = _jumps.JumpLowering(lambda s: isinstance(s, ast.Continue), None, "",
                                       crosses_loops=False)
        if any(lowering.contains(stmt) for stmt in node.body):
            flag = self.ctx.namer.new("continue_")
            sets = []

            def replace(stmt):
                sets.extend(templates.replace("flag = True", origin=stmt, flag=flag))
                return sets[-1:]

            lowering.flag = flag
            lowering.replace = replace
            body = lowering.block(node.body)
            if lowering.guarded:
                node.body = templates.replace("flag = False", origin=node.body[0],
                                              flag=flag) + body
            else:
                # Every continue ended up with the rest of the body in an else branch:
                # nothing reads the flag, so it is not needed at all.
                node.body = _jumps.remove(body, sets)
            self.ctx.record(node, "continue", "continue -> the rest of the body is skipped "
                                              "(an else branch or a flag guard)")
        return node

    visit_While = visit_For = _visit_loop


def transform(tree: ast.AST, ctx) -> ast.AST:
    return _ContinueTransformer(ctx).visit(tree)
