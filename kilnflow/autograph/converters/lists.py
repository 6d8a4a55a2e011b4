"""lst.append(v) inside a loop -> lst = ag__.list_append(lst, v).

Only for a list variable of the function that the loop neither rebinds nor uses
for anything but appends:
the assignment makes `lst` part of the loop state, and the loop node records it in
`ag_appended` (control_flow passes that on), so when the loop turns out to
be a tensor loop the operator can accumulate into a TensorArray and stack it
after the loop. For a Python loop list_append appends in place, as before.
"""
import ast

from ..pyct import scope
from ..pyct import templates
from ..pyct import transformer


def _is_append(node: ast.AST) -> bool:
    """True for a statement `name.append(value)`."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    call = node.value
    return (isinstance(call.func, ast.Attribute) and call.func.attr == "append"
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1
            and not call.keywords and not isinstance(call.args[0], ast.Starred))


class _ListTransformer(transformer.Transformer):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.loops = []  # enclosing loops as (node, names bound in its body); None: a def

    def visit_function(self, node):
        self.loops.append(None)
        try:
            return self.generic_visit(node)
        finally:
            self.loops.pop()

    def _visit_loop(self, node):
        node.ag_appended = []
        # Names the body binds, or uses other than as `name.append(...)`: not eligible.
        excluded = set(scope.writes(node.body))
        appends = {}
        for child in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if _is_append(child):
                name = child.value.func.value.id
                appends[name] = appends.get(name, 0) + 1
        for name, count in appends.items():
            loads = sum(1 for child in ast.walk(ast.Module(body=node.body, type_ignores=[]))
                        if isinstance(child, ast.Name) and child.id == name)
            if loads != count:
                excluded.add(name)
        self.loops.append((node, excluded))
        try:
            return self.generic_visit(node)
        finally:
            self.loops.pop()

    visit_While = visit_For = _visit_loop

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        if not (self.loops and self.loops[-1] is not None and self.functions
                and _is_append(node)):
            return self.generic_visit(node)
        name = node.value.func.value.id
        function = self.functions[-1]
        if name in self.loops[-1][1] or name not in scope.local_names(function) \
                or name in scope.declared(function):
            return self.generic_visit(node)
        node = self.generic_visit(node)
        # The list is state of every enclosing loop up to the one that binds it.
        for entry in reversed(self.loops):
            if entry is None or name in entry[1]:
                break
            if name not in entry[0].ag_appended:
                entry[0].ag_appended.append(name)
        self.ctx.record(node, "list append", f"{name}.append in a loop -> ag__.list_append "
                                             "(a TensorArray in a tensor loop)")
        return templates.replace("lst = ag__.list_append(lst, value)", origin=node,
                                 lst=name, value=node.value.args[0])


def transform(tree: ast.AST, ctx) -> ast.AST:
    return _ListTransformer(ctx).visit(tree)
