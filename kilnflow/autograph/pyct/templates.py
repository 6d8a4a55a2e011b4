"""Code templates: write generated code as Python text, then fill in names and ASTs.

    templates.replace('''
        def body_fn(state):
            body
            return state_out
    ''', body_fn='loop_body', state=['s', 'i'], body=stmts, state_out=expr)

A value replaces a placeholder identifier: a str gives a name, an ast.expr a copy of
that expression, a list of str a tuple of names (or, in a def's parameters, several
parameters), a list of statements replaces a placeholder statement. Nodes that come
from the template text are marked `ag_generated` and take the position of `origin`.
Imports nothing from kilnflow.
"""
import ast
import copy
import textwrap

from . import origin as origin_lib


def _set_ctx(node: ast.AST, ctx: ast.expr_context) -> None:
    """Make an expression a load or store target (recursing into tuples and starred)."""
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Starred, ast.Tuple,
                         ast.List)):
        node.ctx = type(ctx)()
    if isinstance(node, (ast.Tuple, ast.List)):
        for elt in node.elts:
            _set_ctx(elt, ctx)
    elif isinstance(node, ast.Starred):
        _set_ctx(node.value, ctx)


def _is_names(value) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


def _is_block(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, ast.stmt) for v in value)


def _generated(node: ast.AST) -> ast.AST:
    node.ag_generated = True
    return node


class _Replacer(ast.NodeTransformer):
    def __init__(self, subs: dict):
        self.subs = subs

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id not in self.subs:
            return node
        value = self.subs[node.id]
        if isinstance(value, str):
            return _generated(ast.Name(id=value, ctx=node.ctx))
        if _is_names(value):
            elts = [_generated(ast.Name(id=v, ctx=type(node.ctx)())) for v in value]
            return _generated(ast.Tuple(elts=elts, ctx=node.ctx))
        if isinstance(value, ast.expr):
            new = copy.deepcopy(value)
            _set_ctx(new, node.ctx)
            return new
        raise ValueError(f"template placeholder {node.id!r} cannot take {value!r}")

    def visit_Expr(self, node: ast.Expr):
        if isinstance(node.value, ast.Name) and _is_block(self.subs.get(node.value.id)):
            return self.subs[node.value.id]
        return self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if isinstance(self.subs.get(node.name), str):
            node.name = self.subs[node.name]
        return self.generic_visit(node)

    def visit_arguments(self, node: ast.arguments) -> ast.AST:
        params = []
        for param in node.args:
            value = self.subs.get(param.arg, param.arg)
            for name in ([value] if isinstance(value, str) else value):
                params.append(_generated(ast.arg(arg=name)))
        node.args = params
        return self.generic_visit(node)


def replace(template: str, origin: ast.AST = None, **subs) -> list:
    """The statements of `template` with placeholders filled in from `subs`."""
    tree = ast.parse(textwrap.dedent(template))
    for node in ast.walk(tree):
        origin_lib.clear_location(node)
        _generated(node)
    tree = _Replacer(subs).visit(tree)
    if origin is not None:
        for stmt in tree.body:
            origin_lib.fill_locations(stmt, origin)
    return tree.body


def replace_expr(template: str, origin: ast.AST = None, **subs) -> ast.expr:
    """Like replace() for a template that is one expression."""
    stmt, = replace(template, origin, **subs)
    return stmt.value


def names_expr(names, ctx=None) -> ast.expr:
    """`a` for one name, `(a, b)` for several, `()` for none (a load unless ctx given)."""
    ctx = ctx or ast.Load()
    if len(names) == 1:
        return _generated(ast.Name(id=names[0], ctx=ctx))
    elts = [_generated(ast.Name(id=n, ctx=type(ctx)())) for n in names]
    return _generated(ast.Tuple(elts=elts, ctx=ctx))


def tuple_expr(elts) -> ast.expr:
    """A tuple display `(e1, e2)`, also for one element or none."""
    return _generated(ast.Tuple(elts=list(elts), ctx=ast.Load()))


def constant(value) -> ast.expr:
    """A constant, or a tuple of constants for a tuple value."""
    if isinstance(value, tuple):
        return tuple_expr(constant(v) for v in value)
    return _generated(ast.Constant(value=value))
