"""if / while / for -> ag__.if_stmt / while_stmt / for_stmt with functional bodies.

Each body becomes a local function that takes the statement's state variables as
arguments and returns them; the operator decides at run time whether to run it as
Python or build a cond / while op. The state of a statement is what scope.analyze
found: names it modifies that are live after it or carried between iterations.

    while i < n:                 def loop_test(s, i):
        s = s + x                    return i < n
        i += 1          ->       def loop_body(s, i):
                                     s = s + x
                                     i += 1
                                     return s, i
                                 s, i = ag__.while_stmt(loop_test, loop_body, (s, i), ('s', 'i'))

A state name not bound before the statement is first set to ag__.Undefined('name').
Attribute targets (`self.count += 1`, `obj.total = ...`) are TF's composite names: each
becomes a state variable `self_count` read before the statement, set back on the object
when a body starts (so code the body calls sees it), read off it when the body ends, and
set on the object after the statement:

    while i < n:                 self_count = ag__.ld_attr(self, 'count')
        self.count += 1  ->      def loop_body(self_count, i):
        i += 1                       ag__.set_attr(self, 'count', self_count)
                                     self.count += 1
                                     i += 1
                                     self_count = ag__.ld_attr(self, 'count')
                                     return self_count, i
                                 self_count, i = ag__.while_stmt(...)
                                 ag__.set_attr(self, 'count', self_count)

`set_loop_options(shape_invariants=..., maximum_iterations=...)` in a loop body
moves out of it, into the operator's `loop_options` argument.
"""
import ast

from ..pyct import scope
from ..pyct import templates
from ..pyct import transformer
from . import _shared_names


def _has_walrus(node: ast.AST) -> bool:
    return any(isinstance(n, ast.NamedExpr) for n in ast.walk(node))


def is_set_loop_options(stmt: ast.stmt) -> bool:
    """True for a statement `[...]set_loop_options(...)` (keywords only)."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name == "set_loop_options" and not stmt.value.args


def _loop_options(node) -> ast.expr:
    """Take set_loop_options(...) calls out of a loop body: {'keyword': value, ...}."""
    calls = [stmt for stmt in node.body if is_set_loop_options(stmt)]
    node.body = [stmt for stmt in node.body if stmt not in calls]
    keywords = [k for stmt in calls for k in stmt.value.keywords if k.arg is not None]
    if not keywords:
        return None
    return ast.Dict(keys=[ast.Constant(value=k.arg) for k in keywords],
                    values=[k.value for k in keywords])


def _dotted(node: ast.expr):
    """'a.b.c' for an attribute chain on a plain name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id] + parts[::-1])


def _attribute_targets(stmts: list) -> list:
    """Dotted attribute targets assigned in `stmts` (nested defs and classes excluded)."""
    found = {}
    stack = list(stmts)[::-1]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        target = None
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            target = node
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            base = node.value  # `obj.items[k] = v` changes the container obj.items
            while isinstance(base, ast.Subscript):
                base = base.value
            target = base if isinstance(base, ast.Attribute) else None
        dotted = _dotted(target) if target is not None else None
        if dotted is not None:
            found.setdefault(dotted, None)
        stack.extend(list(ast.iter_child_nodes(node))[::-1])
    return list(found)


def _object_and_attr(dotted: str) -> tuple:
    """('a.b', 'c') as an expression for the owner and the attribute's name."""
    owner, attr = dotted.rsplit(".", 1)
    return templates.replace_expr(owner), templates.constant(attr)


class _CheckedLoads(ast.NodeTransformer):
    """`y` -> `ag__.ld(y)` where y may hold Undefined (Python would find it unbound)."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if not getattr(node, "ag_maybe_undefined", False):
            return node
        del node.ag_maybe_undefined
        return templates.replace_expr("ag__.ld(name)", origin=node, name=node)


class _ControlFlowTransformer(transformer.Transformer):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.declarations = []  # per enclosing def: {name: 'global' | 'nonlocal'}
        self.composite_names = []  # per enclosing def: {'self.count': 'self_count'}
        self.closures = []  # per enclosing def: its defs and lambdas, before conversion

    def visit_function(self, node):
        kinds = {}
        if isinstance(node, ast.FunctionDef):
            scope.analyze(node)
            kinds = scope.declaration_kinds(node)
        self.declarations.append(kinds)
        self.composite_names.append({})
        self.closures.append(_shared_names.closures(node.body)
                             if isinstance(node, ast.FunctionDef) else [])
        try:
            node = self.generic_visit(node)
        finally:
            self.declarations.pop()
            self.composite_names.pop()
            self.closures.pop()
        return _CheckedLoads().visit(node)

    # Pieces shared by the three statements.

    def _composites(self, node, stmts: list) -> list:
        """(dotted, state name) of the attribute targets in `stmts` whose owner is bound
        before `node` and not rebound inside it (TF's composite names). Call before
        visiting the children: converted children hide their targets in body functions."""
        if not self.composite_names:
            return []
        names = self.composite_names[-1]
        rebound = set(scope.writes(stmts))
        defined = node.ag_defined or ()
        pairs = []
        for dotted in _attribute_targets(stmts):
            root = dotted.split(".", 1)[0]
            if root in rebound or root not in defined:
                continue
            if dotted not in names:
                names[dotted] = self.ctx.namer.new(dotted.replace(".", "_"))
            pairs.append((dotted, names[dotted]))
        return pairs

    def _shared(self, stmts: list, extra_writes=()) -> tuple:
        """Names closures read and `stmts` assign (see _shared_names), and those of them
        that are state because a closure outside `stmts` reads them."""
        kinds = self.declarations[-1] if self.declarations else {}
        if not self.declarations:
            return [], []
        outside = _shared_names.outside_reads(self.closures[-1], stmts)
        shared = _shared_names.shared_names(stmts, extra_writes, set(kinds), outside)
        return shared, [n for n in scope.writes(stmts) if n in outside and n not in kinds]

    @staticmethod
    def _state(node, closed: list, composites: list) -> list:
        return (node.ag_state + [n for n in closed if n not in node.ag_state]
                + [name for _, name in composites])

    @staticmethod
    def _set_attrs(composites: list, origin: ast.AST) -> list:
        lines = []
        for dotted, name in composites:
            owner, attr = _object_and_attr(dotted)
            lines += templates.replace("ag__.set_attr(owner, attr, name)", origin=origin,
                                       owner=owner, attr=attr, name=name)
        return lines

    @staticmethod
    def _load_attrs(composites: list, origin: ast.AST) -> list:
        lines = []
        for dotted, name in composites:
            owner, attr = _object_and_attr(dotted)
            lines += templates.replace("name = ag__.ld_attr(owner, attr)", origin=origin,
                                       owner=owner, attr=attr, name=name)
        return lines

    def _declare(self, body: list) -> list:
        """global / nonlocal lines a body function needs to write the def's names."""
        kinds = self.declarations[-1] if self.declarations else {}
        written = [n for n in scope.writes(body) if n in kinds]
        lines = []
        for kind in ("global", "nonlocal"):
            names = [n for n in written if kinds[n] == kind]
            if names:
                lines += templates.replace(f"{kind} {', '.join(names)}")
        return lines

    def _initialize(self, node, state: list) -> list:
        """Bind state names that may be unbound before the statement."""
        lines = []
        for name in state:
            if node.ag_defined is None or name in node.ag_defined:
                continue
            if name in node.ag_maybe:
                template = "name = ag__.ld_or_undefined(locals(), symbol)"
            else:
                template = "name = ag__.Undefined(symbol)"
            lines += templates.replace(template, origin=node, name=name,
                                       symbol=templates.constant(name))
        return lines

    def _returning(self, body: list, state: list, composites: list = ()) -> list:
        """`body` followed by `return <state>` (body made non-empty); attribute state is
        set on its objects first and read back last."""
        if composites and body:
            body = (self._set_attrs(composites, body[0]) + body
                    + self._load_attrs(composites, body[-1]))
        body = self._declare(body) + [s for s in body if not isinstance(s, ast.Pass)]
        if state:
            return body + templates.replace("return state", state=templates.names_expr(state))
        return body or [ast.Pass()]

    def _call(self, template: str, node, state: list, **subs) -> list:
        """The operator call, assigning the new state back when there is any."""
        dotted = {name: key for key, name in self.composite_names[-1].items()} \
            if self.composite_names else {}
        call = templates.replace_expr(template, origin=node, **subs,
                                      state=templates.tuple_expr(
                                          ast.Name(id=n, ctx=ast.Load()) for n in state),
                                      names=templates.constant(
                                          tuple(dotted.get(n, n) for n in state)))
        appended = [n for n in getattr(node, "ag_appended", []) if n in state]
        if appended:
            call.keywords.append(ast.keyword(arg="appended",
                                             value=templates.constant(tuple(appended))))
        options = getattr(node, "ag_loop_options", None)
        if options is not None:
            call.keywords.append(ast.keyword(arg="loop_options", value=options))
        if not state:
            return templates.replace("call", origin=node, call=call)
        return templates.replace("target = call", origin=node, call=call,
                                 target=templates.names_expr(state, ast.Store()))

    # The statements.

    def visit_If(self, node: ast.If) -> list:
        composites = self._composites(node, node.body + node.orelse)
        shared, closed = self._shared(node.body + node.orelse)
        node = self.generic_visit(node)
        state = self._state(node, closed, composites)
        self.ctx.record(node, "if", "if -> ag__.if_stmt (a cond op if the condition is a "
                                    "tensor, else a Python if)")
        true_name = self.ctx.namer.new("if_true")
        false_name = self.ctx.namer.new("if_false")
        functions = templates.replace("""
            def true_name(state):
                body
            def false_name(state):
                orelse
        """, origin=node, true_name=true_name, false_name=false_name, state=state,
            body=self._returning(node.body, state, composites),
            orelse=self._returning(node.orelse, state, composites))
        functions = _shared_names.share(functions, shared, self.ctx.namer)
        call = self._call("ag__.if_stmt(test, true_fn, false_fn, state, names)", node, state,
                          test=node.test, true_fn=true_name, false_fn=false_name)
        return (self._initialize(node, state) + _shared_names.bind_first(shared, node)
                + self._load_attrs(composites, node) + functions
                + call + self._set_attrs(composites, node))

    def visit_While(self, node: ast.While) -> list:
        node.ag_loop_options = _loop_options(node)
        composites = self._composites(node, node.body)
        shared, closed = self._shared(node.body)
        node = self.generic_visit(node)
        if _has_walrus(node.test) or node.orelse:
            self.ctx.record(node, "while", "stays a Python while (:= in the condition)")
            return node
        state = self._state(node, closed, composites)
        self.ctx.record(node, "while", "while -> ag__.while_stmt (a while op if the condition "
                                       "is a tensor, else a Python loop)")
        test_name = self.ctx.namer.new("loop_test")
        body_name = self.ctx.namer.new("loop_body")
        functions = templates.replace("""
            def test_name(state):
                set_attrs
                return test
            def body_name(state):
                body
        """, origin=node, test_name=test_name, body_name=body_name, state=state,
            set_attrs=self._set_attrs(composites, node), test=node.test,
            body=self._returning(node.body, state, composites))
        _shared_names.share(functions[1:], shared, self.ctx.namer)
        call = self._call("ag__.while_stmt(test_fn, body_fn, state, names)", node, state,
                          test_fn=test_name, body_fn=body_name)
        return (self._initialize(node, state) + _shared_names.bind_first(shared, node)
                + self._load_attrs(composites, node) + functions
                + call + self._set_attrs(composites, node))

    def visit_For(self, node: ast.For) -> list:
        node.ag_loop_options = _loop_options(node)
        composites = self._composites(node, node.body)
        shared, closed = self._shared(node.body, scope.writes([ast.Assign(
            targets=[node.target], value=ast.Constant(0))]))
        node = self.generic_visit(node)
        if node.orelse:
            return node
        state = self._state(node, closed, composites)
        self.ctx.record(node, "for", "for -> ag__.for_stmt (a while op over a tensor's rows "
                                     "or kf.range, else a Python loop)")
        body = node.body
        if isinstance(node.target, ast.Name) and node.target.id not in state:
            iterate = node.target.id
        else:
            iterate = self.ctx.namer.new("itr")
            body = templates.replace("target = iterate", origin=node.target,
                                     target=node.target, iterate=iterate) + body
        functions = []
        extra_test = ast.Constant(value=None)
        tests = getattr(node, "ag_extra_tests", [])
        if tests:
            extra_name = self.ctx.namer.new("extra_test")
            combined = tests[0] if len(tests) == 1 else ast.BoolOp(op=ast.And(), values=tests)
            functions += templates.replace("""
                def extra_name(state):
                    set_attrs
                    return combined
            """, origin=node, extra_name=extra_name, state=state, combined=combined,
                set_attrs=self._set_attrs(composites, node))
            extra_test = ast.Name(id=extra_name, ctx=ast.Load())
        body_name = self.ctx.namer.new("loop_body")
        functions += templates.replace("""
            def body_name(iterate, state):
                body
        """, origin=node, body_name=body_name, iterate=iterate, state=state,
            body=self._returning(body, state, composites))
        _shared_names.share(functions[-1:], shared, self.ctx.namer)
        call = self._call("ag__.for_stmt(iterated, extra_test, body_fn, state, names)", node,
                          state, iterated=node.iter, extra_test=extra_test, body_fn=body_name)
        return (self._initialize(node, state) + _shared_names.bind_first(shared, node)
                + self._load_attrs(composites, node) + functions
                + call + self._set_attrs(composites, node))


def transform(tree: ast.AST, ctx) -> ast.AST:
    return _ControlFlowTransformer(ctx).visit(tree)
