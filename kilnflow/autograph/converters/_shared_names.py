"""Names a closure in a loop or branch body reads and the body assigns: shared, not copied.

Python closures see a variable's latest value (late binding). A body function taking the
name as a parameter would hand each closure a private per-iteration copy, so such a body
function declares the name nonlocal, copies its argument in, and the enclosing def binds
the name first (nonlocal needs a binding):

    for i in range(3):                i = ag__.ld_or_undefined(locals(), 'i')
        fns.append(lambda: i)   ->    def loop_body(i_arg):
                                          nonlocal i
                                          i = i_arg
                                          fns.append(lambda: i)

so `[f() for f in fns]` is [2, 2, 2] after the loop, as in plain Python.
"""
import ast

from ..pyct import scope
from ..pyct import templates

_CLOSURES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def closure_reads(stmts: list) -> set:
    """Names the defs and lambdas in `stmts` read from their enclosing scope."""
    found = set()
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, _CLOSURES):
            found |= scope.free_reads(node)
        elif not isinstance(node, ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))
    return found


def shared_names(stmts: list, extra_writes=(), declared=()) -> list:
    """Names assigned in `stmts` (or in `extra_writes`, e.g. a loop target) that a closure
    in `stmts` reads; names already declared global/nonlocal are shared anyway."""
    reads = closure_reads(stmts)
    if not reads:
        return []
    written = list(scope.writes(stmts)) + list(extra_writes)
    return sorted({n for n in written if n in reads and n not in declared})


def bind_first(names: list, origin: ast.AST) -> list:
    """Lines binding each name in the enclosing def (keeping a value it already has)."""
    lines = []
    for name in names:
        lines += templates.replace("name = ag__.ld_or_undefined(locals(), symbol)",
                                   origin=origin, name=name,
                                   symbol=templates.constant(name))
    return lines


def share(functions: list, names: list, namer) -> list:
    """Make `names` nonlocal in each generated def of `functions`, renaming parameters
    of those names and copying them in at the start."""
    if not names:
        return functions
    for fn in functions:
        if not isinstance(fn, ast.FunctionDef):
            continue
        copies = []
        for arg in fn.args.args:
            if arg.arg in names:
                renamed = namer.new(arg.arg + "_arg")
                copies += templates.replace("name = renamed", origin=fn, name=arg.arg,
                                            renamed=renamed)
                arg.arg = renamed
        declaration = templates.replace(f"nonlocal {', '.join(names)}", origin=fn)
        fn.body = declaration + copies + fn.body
    return functions
