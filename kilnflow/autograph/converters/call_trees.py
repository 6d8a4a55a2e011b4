"""Calls -> ag__.converted_call, so called user functions are converted too.

    y = helper(x, *rest, k=2)
    ->  y = ag__.converted_call(helper, (x, *rest), {'k': 2})

Builtins the function does not shadow stay plain calls (print keeps its trace-time
meaning), except len, range, enumerate and zip -> ag__.len_, range_, enumerate_,
zip_, which handle tensors.
Calls of ag__ itself are left alone; a method's `super()` becomes
`super(__class__, self)`, which still works inside generated functions.
"""
import ast
import builtins

from ..pyct import scope
from ..pyct import templates
from ..pyct import transformer

_BUILTINS = frozenset(dir(builtins))
_OPERATORS = {"len": "len_", "range": "range_", "enumerate": "enumerate_", "zip": "zip_"}


def _names_set_loop_options(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name == "set_loop_options"


class _CallTransformer(transformer.Transformer):
    def _is_builtin(self, name: str) -> bool:
        if name not in _BUILTINS or name in self.ctx.info.namespace:
            return False
        return not any(name in scope.local_names(fn) for fn in self.functions)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node = self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id == "ag__":
            return node
        if isinstance(func, ast.Name) and func.id == "super" and not node.args \
                and self._is_builtin("super"):
            return self._explicit_super(node)
        if isinstance(func, ast.Name) and self._is_builtin(func.id):
            if func.id in _OPERATORS:
                self.ctx.record(node, func.id, f"{func.id}() -> ag__.{_OPERATORS[func.id]} "
                                               "(handles tensors)")
                return self._operator_call(node, _OPERATORS[func.id])
            if func.id == "print":
                self.ctx.record(node, "print", "print() stays Python: it runs while tracing; "
                                               "kf.print runs on every call")
            return node
        if transformer.is_generated(node) or _names_set_loop_options(func):
            return node  # set_loop_options is read by control_flow, not called
        kwargs = ast.Constant(value=None)
        if node.keywords:
            kwargs = ast.Dict(keys=[None if k.arg is None else ast.Constant(value=k.arg)
                                    for k in node.keywords],
                              values=[k.value for k in node.keywords])
        return templates.replace_expr("ag__.converted_call(func, args, kwargs)", origin=node,
                                      func=func, args=templates.tuple_expr(node.args),
                                      kwargs=kwargs)

    def _explicit_super(self, node: ast.Call) -> ast.expr:
        """super() -> super(__class__, self) in a method, so it keeps working once the
        call moves into a generated loop or branch function."""
        method = self.functions[0] if len(self.functions) == 1 else None
        if self.ctx.info.class_name is None or method is None or not scope.params(method):
            return node
        return templates.replace_expr("super(__class__, first)", origin=node,
                                      first=scope.params(method)[0])

    @staticmethod
    def _operator_call(node: ast.Call, operator: str) -> ast.expr:
        call = templates.replace_expr(f"ag__.{operator}()", origin=node)
        call.args = node.args
        call.keywords = node.keywords
        return call


def transform(tree: ast.AST, ctx) -> ast.AST:
    return _CallTransformer(ctx).visit(tree)
