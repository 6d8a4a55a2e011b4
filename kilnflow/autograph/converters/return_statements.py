"""return inside if/while/for -> do_return / retval_ flags and one final return.

    def f(x):                        def f(x):
        for v in x:                      do_return = False
            if v > 0:                    retval_ = ag__.UndefinedReturnValue()
                return v     ->          for v in x:          # stops once do_return
        return -1                            if v > 0:
                                                 do_return = True
                                                 retval_ = v
                                         if not do_return:
                                             do_return = True
                                             retval_ = -1
                                         return ag__.retval(retval_)

Functions whose returns are not inside if/while/for are left as they are.
"""
import ast

from ..pyct import templates
from ..pyct import transformer
from . import _jumps

_CONTROL_FLOW = (ast.If, ast.While, ast.For)


def _always_returns(stmts: list) -> bool:
    """True if running `stmts` ends in a return on every path (conservative for loops)."""
    for stmt in stmts:
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return True
        if isinstance(stmt, ast.If) and _always_returns(stmt.body) \
                and _always_returns(stmt.orelse):
            return True
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and _always_returns(stmt.body):
            return True
        if isinstance(stmt, ast.Try) and (_always_returns(stmt.finalbody) or (
                _always_returns(stmt.body + stmt.orelse)
                and all(_always_returns(h.body) for h in stmt.handlers))):
            return True
    return False


def _needs_lowering(stmts: list, inside: bool = False) -> bool:
    """True if some return of this def sits inside an if, while or for."""
    for stmt in stmts:
        if isinstance(stmt, ast.Return) and inside:
            return True
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        nested = inside or isinstance(stmt, _CONTROL_FLOW)
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, (ast.excepthandler, ast.match_case)):
                if _needs_lowering(child.body, nested):
                    return True
        for field in ("body", "orelse", "finalbody"):
            if _needs_lowering(getattr(stmt, field, []), nested):
                return True
    return False


class _ReturnTransformer(transformer.Transformer):
    def visit_function(self, node):
        node = self.generic_visit(node)
        if isinstance(node, ast.Lambda) or not _needs_lowering(node.body):
            return node
        do_return = self.ctx.namer.new("do_return")
        retval = self.ctx.namer.new("retval_")

        def replace(stmt: ast.Return) -> list:
            self.ctx.record(stmt, "return", "early return -> do_return / retval_ flags")
            value = stmt.value or ast.Constant(value=None)
            return templates.replace("do_return = True\nretval = value", origin=stmt,
                                     do_return=do_return, retval=retval, value=value)

        lowering = _jumps.JumpLowering(lambda s: isinstance(s, ast.Return), replace, do_return,
                                       crosses_loops=True,
                                       on_loop=lambda loop: _jumps.add_loop_test(loop,
                                                                                 do_return))
        body = node.body
        docstring = []
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            docstring, body = body[:1], body[1:]
        start = templates.replace("""
            do_return = False
            retval = ag__.UndefinedReturnValue()
        """, origin=body[0], do_return=do_return, retval=retval)
        if _always_returns(body):
            end = templates.replace("return ag__.retval(retval)", origin=body[-1],
                                    retval=retval)
        else:  # some path falls off the end: Python returns None there
            end = templates.replace("return ag__.retval(retval, do_return)", origin=body[-1],
                                    retval=retval, do_return=do_return)
        node.body = docstring + start + lowering.block(body) + end
        return node


def transform(tree: ast.AST, ctx) -> ast.AST:
    return _ReturnTransformer(ctx).visit(tree)
