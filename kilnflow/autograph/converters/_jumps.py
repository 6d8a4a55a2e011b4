"""Shared by break_statements, continue_statements and return_statements.

A jump (break, continue, return) becomes an assignment to a flag, and every
statement that may run after a jump is guarded by `if not flag:`:

    for x in xs:               for x in xs:
        if x < 0:                  if x < 0:
            break        ->            break_ = True
        total += x                 else:
                                       total += x

When one branch of an `if` always jumps, the statements that follow move into
the other branch instead of getting a guard (as above). Imports nothing from kilnflow.
"""
import ast

from ..pyct import templates

_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_LOOPS = (ast.For, ast.While, ast.AsyncFor)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class JumpLowering:
    """Lowers the jumps of one kind in a block.

    is_jump(stmt): the statement is a jump to lower; replace(stmt): its replacement
    statements; flag: the name guarding later statements; crosses_loops: whether
    jumps inside nested loops belong to us (return) or to those loops (break);
    on_loop(loop): called for each nested loop that contains a jump.
    """

    def __init__(self, is_jump, replace, flag: str, crosses_loops: bool, on_loop=None):
        self.is_jump = is_jump
        self.replace = replace
        self.flag = flag
        self.crosses_loops = crosses_loops
        self.on_loop = on_loop
        self.guarded = False  # whether some statement got an `if not flag:` guard

    def _enters(self, node: ast.AST) -> bool:
        if isinstance(node, _SCOPES):
            return False
        return self.crosses_loops or not isinstance(node, _LOOPS)

    def contains(self, node: ast.AST) -> bool:
        if self.is_jump(node):
            return True
        if not self._enters(node):
            return False
        return any(self.contains(child) for child in ast.iter_child_nodes(node)
                   if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)))

    def always(self, stmts: list) -> bool:
        """True when running the block surely ends in a jump."""
        for stmt in stmts:
            if self.is_jump(stmt):
                return True
            if isinstance(stmt, ast.If) and self.always(stmt.body) and self.always(stmt.orelse):
                return True
        return False

    def _lower_inside(self, node: ast.stmt) -> None:
        for field in _BLOCK_FIELDS:
            if getattr(node, field, None):
                setattr(node, field, self.block(getattr(node, field)))
        for sub in getattr(node, "handlers", []) + getattr(node, "cases", []):
            sub.body = self.block(sub.body)
        if isinstance(node, _LOOPS) and self.on_loop is not None:
            self.on_loop(node)

    def block(self, stmts: list) -> list:
        out = []
        for index, stmt in enumerate(stmts):
            rest = stmts[index + 1:]
            if self.is_jump(stmt):
                return out + self.replace(stmt)  # what follows a jump never runs
            if not self.contains(stmt):
                out.append(stmt)
                continue
            if isinstance(stmt, ast.If) and rest:
                if self.always(stmt.body):
                    stmt.orelse, rest = stmt.orelse + rest, []
                elif self.always(stmt.orelse):
                    stmt.body, rest = stmt.body + rest, []
            self._lower_inside(stmt)
            out.append(stmt)
            if rest and not self.always([stmt]):
                self.guarded = True
                out += templates.replace("if not flag:\n    rest", origin=rest[0],
                                         flag=self.flag, rest=self.block(rest))
            return out
        return out


def add_loop_test(loop: ast.stmt, flag: str) -> None:
    """Make a loop stop once `flag` is set: `while not flag and test` / a for extra test."""
    stop = templates.replace_expr("not flag", origin=loop, flag=flag)
    if isinstance(loop, ast.While):
        if isinstance(loop.test, ast.Constant) and loop.test.value is True:
            loop.test = stop
        else:
            loop.test = templates.replace_expr("stop and test", origin=loop.test, stop=stop,
                                               test=loop.test)
    else:
        loop.ag_extra_tests = [stop] + getattr(loop, "ag_extra_tests", [])


def remove(tree: list, doomed: list) -> list:
    """The block `tree` without the statements in `doomed` (an empty block gets `pass`)."""
    doomed_ids = {id(node) for node in doomed}

    class _Remover(ast.NodeTransformer):
        def generic_visit(self, node):
            node = super().generic_visit(node)
            for field in _BLOCK_FIELDS:
                if isinstance(getattr(node, field, None), list) and field in node._fields:
                    block = getattr(node, field)
                    if not block and field == "body":
                        block.append(ast.Pass())
            return node

        def visit(self, node):
            return None if id(node) in doomed_ids else super().visit(node)

    remover = _Remover()
    result = [remover.visit(stmt) for stmt in tree if id(stmt) not in doomed_ids]
    return result or [ast.Pass()]
