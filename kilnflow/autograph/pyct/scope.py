"""Scope analysis: reads and writes of code, liveness and definedness of names.

`reads`/`writes` look at one scope (a nested def or lambda contributes only the
names it reads from outside). `analyze(fn)` annotates each if/while/for of one
function with what control_flow needs:
  ag_live_out   names read after the statement
  ag_state      names the statement modifies that are live after it, read by a
                later iteration or read in a body before being written (in
                first-write order); these become the bodies' arguments
  ag_defined    state names surely bound before the statement (None: unreachable)
  ag_maybe      state names bound on some path before it
and marks each load of a name that may still hold Undefined `ag_maybe_undefined`.
Imports nothing from kilnflow.
"""
import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class _Collector(ast.NodeVisitor):
    """Reads and writes of code in one scope; nested scopes add their free reads."""

    def __init__(self):
        self.reads = set()
        self.writes = {}  # an ordered set: first write first
        self.declared = set()  # global and nonlocal names

    def _write(self, name: str) -> None:
        self.writes.setdefault(name, None)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.reads.add(node.id)
        else:
            self._write(node.id)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        # `d["a"] = v` / `lst[0] += v` modify the container: it is state of the enclosing
        # tensor loop or branch (TF's composite names), read and written
        if not isinstance(node.ctx, ast.Load):
            base = node.value
            while isinstance(base, ast.Subscript):
                base = base.value
            if isinstance(base, ast.Name):
                self.reads.add(base.id)
                self._write(base.id)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            self.reads.add(node.target.id)
        self.visit(node.value)
        self.visit(node.target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)
            self.visit(node.target)

    def _visit_signature(self, node) -> None:
        args = node.args
        for expr in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(expr)
        if not isinstance(node, ast.Lambda):
            for expr in node.decorator_list:
                self.visit(expr)
            all_args = args.posonlyargs + args.args + args.kwonlyargs
            all_args += [a for a in (args.vararg, args.kwarg) if a is not None]
            for expr in [a.annotation for a in all_args] + [node.returns]:
                if expr is not None:
                    self.visit(expr)
        self.reads |= free_reads(node)

    def visit_FunctionDef(self, node) -> None:
        self._visit_signature(node)
        self._write(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = _visit_signature

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in node.bases + node.keywords + node.decorator_list:
            self.visit(expr)
        inner = _Collector()
        for stmt in node.body:
            inner.visit(stmt)
        self.reads |= inner.reads - set(inner.writes)
        self._write(node.name)

    def _visit_comprehension(self, node) -> None:
        inner = _Collector()
        targets = set()
        for gen in node.generators:
            targets |= set(writes(gen.target))
            inner.visit(gen)
        for field in ("elt", "key", "value"):
            if hasattr(node, field):
                inner.visit(getattr(node, field))
        self.reads |= inner.reads - targets
        for name in inner.writes:  # only := can bind in the enclosing scope
            if name not in targets:
                self._write(name)

    visit_ListComp = visit_SetComp = visit_DictComp = _visit_comprehension
    visit_GeneratorExp = _visit_comprehension

    def visit_Global(self, node) -> None:
        self.declared.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_Import(self, node) -> None:
        for alias in node.names:
            if alias.name != "*":
                self._write((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._write(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node) -> None:
        if node.name:
            self._write(node.name)
        self.generic_visit(node)

    visit_MatchStar = visit_MatchAs

    def visit_MatchMapping(self, node) -> None:
        if node.rest:
            self._write(node.rest)
        self.generic_visit(node)


def _collect(nodes) -> _Collector:
    collector = _Collector()
    for node in (nodes if isinstance(nodes, list) else [nodes]):
        if node is not None:
            collector.visit(node)
    return collector


def reads(nodes) -> set:
    """Names read by a node or list of nodes (free reads of nested scopes included)."""
    return _collect(nodes).reads


def writes(nodes) -> list:
    """Names bound by a node or list of nodes in their own scope, in first-write order."""
    return list(_collect(nodes).writes)


def params(node) -> list:
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    return names + [a.arg for a in (args.vararg, args.kwarg) if a is not None]


def declared(fn) -> set:
    """Names a function declares global or nonlocal (not looking into nested defs)."""
    if isinstance(fn, ast.Lambda):
        return set()
    return _collect(fn.body).declared


def declaration_kinds(fn) -> dict:
    """{name: 'global' or 'nonlocal'} for the declarations of a def's own body."""
    kinds = {}
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            kinds.update(dict.fromkeys(node.names, type(node).__name__.lower()))
        elif not isinstance(node, _SCOPES + (ast.ClassDef,)):
            stack.extend(ast.iter_child_nodes(node))
    return kinds


def local_names(fn) -> set:
    """Names local to a function or lambda: parameters and names it binds."""
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    inner = _collect(body)
    return (set(params(fn)) | set(inner.writes)) - inner.declared


def free_reads(fn) -> set:
    """Names a def or lambda reads from enclosing scopes (or globals)."""
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    inner = _collect(body)
    return (inner.reads | inner.declared) - local_names(fn)


def is_generator(fn) -> bool:
    """True if a def's own body (not nested defs) contains yield or await."""
    stack = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return True
        if not isinstance(node, _SCOPES + (ast.ClassDef,) + _COMPREHENSIONS):
            stack.extend(ast.iter_child_nodes(node))
    return isinstance(fn, ast.AsyncFunctionDef)


class _Liveness:
    """Backward pass over one function body, annotating if/while/for nodes."""

    def __init__(self, excluded: set, order: list):
        self.excluded = excluded
        self.rank = {}
        for name in order:
            self.rank.setdefault(name, len(self.rank))
        self.loops = []  # (names live after the loop, names live at its head)

    def block(self, stmts: list, live: set) -> set:
        for stmt in reversed(stmts):
            live = self.stmt(stmt, live)
        return live

    def stmt(self, node: ast.stmt, live: set) -> set:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is not None:
            return method(node, live)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Import,
                             ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Delete,
                             ast.AsyncFunctionDef, ast.Pass, ast.Global, ast.Nonlocal)):
            activity = _collect(node)
            return (live - set(activity.writes)) | activity.reads
        return live | reads(node)  # anything else: kill nothing (safe)

    def _state(self, node, candidates: list, live: set) -> None:
        state = [n for n in candidates if n in live and n not in self.excluded]
        # One order for the whole function: (s, i) everywhere, never (i, s) somewhere.
        node.ag_state = sorted(state, key=lambda n: self.rank.get(n, len(self.rank)))

    def stmt_If(self, node: ast.If, live: set) -> set:
        node.ag_live_out = set(live)
        body_in = self.block(node.body, live)
        orelse_in = self.block(node.orelse, live)
        self._state(node, writes(node.body + node.orelse), live | body_in | orelse_in)
        return reads(node.test) | body_in | orelse_in

    def _loop(self, node, live: set, head_of) -> set:
        """Fixpoint of the names live at the loop head; head_of(body_in) -> new head."""
        node.ag_live_out = set(live)
        head = set()
        while True:
            self.loops.append((live, head))
            body_in = self.block(node.body, head)
            self.loops.pop()
            new_head = head_of(body_in)
            if new_head <= head:
                return head
            head |= new_head

    def stmt_While(self, node: ast.While, live: set) -> set:
        exit_live = self.block(node.orelse, live)
        head = self._loop(node, live, lambda body_in: reads(node.test) | body_in | exit_live)
        self._state(node, writes(node.body), head)
        return head

    def stmt_For(self, node: ast.For, live: set) -> set:
        exit_live = self.block(node.orelse, live)
        targets = set(writes(node.target))
        extra = reads(getattr(node, "ag_extra_tests", []))

        def head_of(body_in):
            return exit_live | (body_in - targets) | reads(node.target) | extra

        head = self._loop(node, live, head_of)
        self._state(node, writes(node.target) + writes(node.body), head)
        return head | reads(node.iter)

    def stmt_Break(self, node, live: set) -> set:
        return set(self.loops[-1][0]) if self.loops else live

    def stmt_Continue(self, node, live: set) -> set:
        return self.loops[-1][1] if self.loops else live

    def stmt_Return(self, node, live: set) -> set:
        return reads(node.value)

    def stmt_Raise(self, node, live: set) -> set:
        return reads([node.exc, node.cause])

    def stmt_Try(self, node: ast.Try, live: set) -> set:
        final_in = self.block(node.finalbody, live)
        handlers_in = set()
        for handler in node.handlers:
            handler_in = self.block(handler.body, final_in) - {handler.name}
            handlers_in |= handler_in | reads(handler.type)
        orelse_in = self.block(node.orelse, final_in)
        # An exception may leave the body anywhere, so what handlers read stays live.
        return self.block(node.body, orelse_in | handlers_in | final_in) | handlers_in

    stmt_TryStar = stmt_Try

    def stmt_With(self, node: ast.With, live: set) -> set:
        body_in = self.block(node.body, live)
        bound = set(writes([item.optional_vars for item in node.items]))
        return reads([item.context_expr for item in node.items]) | (body_in - bound)

    def stmt_Match(self, node: ast.Match, live: set) -> set:
        result = set(live) | reads(node.subject)
        for case in node.cases:
            case_in = self.block(case.body, live) | reads(case.guard)
            result |= (case_in - set(writes(case.pattern))) | reads(case.pattern)
        return result


class _Definedness:
    """Forward pass over which names are bound, in two senses.

    `must` / `may`: surely / possibly bound in the converted code, where every
    state name of a converted statement is bound after it (maybe to Undefined).
    `real`: surely bound as Python would see it. A load of a name bound but not
    really bound may read Undefined: it is marked `ag_maybe_undefined`.
    `must` and `real` are None where code cannot be reached (after a return).
    """

    def block(self, stmts: list, must, may: set, real) -> tuple:
        for stmt in stmts:
            must, may, real = self.stmt(stmt, must, may, real)
        return must, may, real

    @staticmethod
    def _union(names, more):
        return None if names is None else names | set(more)

    @staticmethod
    def _join(a, b):
        if a is None or b is None:
            return b if a is None else a
        return a & b

    @staticmethod
    def _mark_loads(nodes, must, real) -> None:
        if must is None or real is None:
            return
        doubtful = must - real
        stack = [n for n in (nodes if isinstance(nodes, list) else [nodes]) if n is not None]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                    and node.id in doubtful:
                node.ag_maybe_undefined = True
            if not isinstance(node, _SCOPES + (ast.ClassDef,)):
                stack.extend(ast.iter_child_nodes(node))

    def stmt(self, node: ast.stmt, must, may: set, real) -> tuple:
        if isinstance(node, ast.If):
            node.ag_defined = None if must is None else set(must)
            node.ag_maybe = set(may)
            self._mark_loads(node.test, must, real)
            state = node.ag_state
            entry = (self._union(must, state), may | set(state), real)
            body_must, body_may, body_real = self.block(node.body, *entry)
            else_must, else_may, else_real = self.block(node.orelse, *entry)
            return (self._union(self._join(body_must, else_must), state), body_may | else_may,
                    self._join(body_real, else_real))
        if isinstance(node, (ast.While, ast.For)):
            node.ag_defined = None if must is None else set(must)
            node.ag_maybe = set(may)
            self._mark_loads(node.iter if isinstance(node, ast.For) else node.test, must, real)
            state = node.ag_state
            targets = writes(node.target) if isinstance(node, ast.For) else []
            entry = (self._union(must, state + targets), may | set(state + targets),
                     self._union(real, targets))
            _, body_may, _ = self.block(node.body, *entry)
            return self._union(must, state), body_may | set(state), real
        if isinstance(node, (ast.Return, ast.Raise)):
            self._mark_loads(node, must, real)
            return None, may, None
        if isinstance(node, (ast.Break, ast.Continue)):
            return None, may, None
        if isinstance(node, (ast.Try, ast.TryStar, ast.With, ast.Match)):
            # Not converted: walk the inner blocks for their annotations.
            for expr in [getattr(item, "context_expr", None) for item in
                         getattr(node, "items", [])] + [getattr(node, "subject", None)]:
                self._mark_loads(expr, must, real)
            inner_may = set(may)
            for field in ("body", "orelse", "finalbody"):
                _, block_may, _ = self.block(getattr(node, field, []), must, inner_may, real)
                inner_may |= block_may
            for sub in getattr(node, "handlers", []) + getattr(node, "cases", []):
                _, block_may, _ = self.block(sub.body, must, inner_may, real)
                inner_may |= block_may
            if isinstance(node, ast.With):
                bound = writes([item.optional_vars for item in node.items])
                must, _, real = self.block(node.body, self._union(must, bound), may,
                                           self._union(real, bound))
            return must, inner_may | set(writes(node)), real
        self._mark_loads(node, must, real)
        if isinstance(node, ast.Delete):
            gone = set(writes(node))
            return (None if must is None else must - gone), may, \
                (None if real is None else real - gone)
        bound = writes(node)
        return self._union(must, bound), may | set(bound), self._union(real, bound)


def analyze(fn) -> None:
    """Annotate the if/while/for statements of one def (not nested defs)."""
    excluded = declared(fn)
    _Liveness(excluded, params(fn) + writes(fn.body)).block(fn.body, set())
    first = set(params(fn))
    _Definedness().block(fn.body, first, first, first)
