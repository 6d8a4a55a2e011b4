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

so `[f() for f in fns]` is [2, 2, 2] after the loop, as in plain Python. A closure made
outside the statement (`def f(): return a` before a loop that sets `a`) shares `a` the
same way, and `a` is also the statement's state (TF: closed-over names are live
everywhere), so f sees each iteration's value inside the loop and the last one after it.
"""
import ast

from ..pyct import scope
from ..pyct import templates

_CLOSURES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def closures(stmts: list) -> list:
    """The defs and lambdas in `stmts` (not those nested in them)."""
    found = []
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, _CLOSURES):
            found.append(node)
        elif not isinstance(node, ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))
    return found


def closure_reads(stmts: list) -> set:
    """Names the defs and lambdas in `stmts` read from their enclosing scope."""
    return set().union(*(scope.free_reads(fn) for fn in closures(stmts)))


def outside_reads(everywhere: list, stmts: list) -> set:
    """Names read by the closures of `everywhere` (a def's) that are not in `stmts`:
    TF counts them live anywhere in the def, since a call may hide in any statement."""
    inside = {id(fn) for fn in closures(stmts)}
    return set().union(*(scope.free_reads(fn) for fn in everywhere if id(fn) not in inside))


def shared_names(stmts: list, extra_writes=(), declared=(), reads=()) -> list:
    """Names assigned in `stmts` (or in `extra_writes`, e.g. a loop target) that a closure
    in `stmts` (or one reading `reads`) reads; names declared global/nonlocal are shared
    anyway."""
    reads = closure_reads(stmts) | set(reads)
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
