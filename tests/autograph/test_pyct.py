"""pyct: names, templates, parsing, positions and scope analysis."""
import ast
import textwrap

import pytest

from kilnflow.autograph.pyct import naming
from kilnflow.autograph.pyct import origin
from kilnflow.autograph.pyct import parser
from kilnflow.autograph.pyct import scope
from kilnflow.autograph.pyct import templates


def parse_def(source: str) -> ast.FunctionDef:
    return ast.parse(textwrap.dedent(source)).body[0]


# ---------------------------------------------------------------- naming

def test_namer_avoids_used_and_given_names():
    namer = naming.Namer({"loop_body", "loop_body_1", "x"})
    assert namer.new("loop_body") == "loop_body_2"
    assert namer.new("loop_body") == "loop_body_3"
    assert namer.new("if_true") == "if_true"
    assert naming.Namer({"break_"}).new("break_") == "break_1"


def test_identifiers_cover_all_binding_forms():
    tree = ast.parse("import a.b as c\nfrom d import e\ndef f(g, *h, i=1, **j):\n"
                     "    global k\n    try:\n        pass\n    except E as l:\n        pass\n"
                     "class M: pass\n")
    assert {"c", "e", "f", "g", "h", "i", "j", "k", "l", "M", "E"} <= naming.identifiers(tree)


# ---------------------------------------------------------------- templates

def test_template_replaces_names_expressions_blocks_and_params():
    body = [ast.parse("x += 1").body[0]]
    stmts = templates.replace(origin=body[0], template="""
        def fn(state):
            body
            return out
        result = call(fn, value)
    """, fn="loop_body", state=["x", "y"], body=body, out=templates.names_expr(["x", "y"]),
        result=templates.names_expr(["x", "y"], ast.Store()), call="ag__.while_stmt",
        value=ast.parse("a + 1", mode="eval").body)
    text = "\n".join(ast.unparse(s) for s in stmts)
    assert "def loop_body(x, y):\n    x += 1\n    return (x, y)" in text
    assert "(x, y) = ag__.while_stmt(loop_body, a + 1)" in text or \
        "x, y = ag__.while_stmt(loop_body, a + 1)" in text


def test_template_nodes_take_the_origin_position_and_are_marked():
    user = ast.parse("\n\nz = f(q)").body[0]
    stmts = templates.replace("target = wrap(value)", origin=user, target="z",
                              value=user.value)
    assign = stmts[0]
    assert assign.lineno == 3 and assign.ag_generated
    call_arg = assign.value.args[0]  # the user's expression keeps its own position
    assert call_arg.lineno == 3 and not getattr(call_arg, "ag_generated", False)


def test_template_store_context_for_substituted_targets():
    stmts = templates.replace("target = 1", target=ast.parse("a.b", mode="eval").body)
    assert isinstance(stmts[0].targets[0].ctx, ast.Store)
    compile(ast.fix_missing_locations(ast.Module(body=stmts, type_ignores=[])), "t", "exec")


# ---------------------------------------------------------------- parser

class _Holder:
    def method(self, x):
        s = '''not
dedented'''
        return self.__hidden + x + len(s)

    __hidden = 1


LAMBDAS = [lambda a: a + 1, lambda b, c=2: b * c]


def test_parse_method_with_odd_string_and_mangling():
    node, info = parser.parse_entity(_Holder.method)
    assert isinstance(node, ast.FunctionDef) and info.class_name == "_Holder"
    assert "self._Holder__hidden" in ast.unparse(node)
    # Positions are the file's own: the def line of the method in this file.
    assert node.lineno == _Holder.method.__code__.co_firstlineno


def test_parse_lambdas_on_one_line():
    first, _ = parser.parse_entity(LAMBDAS[0])
    second, _ = parser.parse_entity(LAMBDAS[1])
    assert ast.unparse(first) == "lambda a: a + 1"
    assert ast.unparse(second) == "lambda b, c=2: b * c"


def test_parse_without_source_fails_clearly():
    namespace = {}
    exec("def nosource(x):\n    return x\n", namespace)
    with pytest.raises(parser.ConversionError, match="no source"):
        parser.parse_entity(namespace["nosource"])


# ---------------------------------------------------------------- origin

def test_source_map_pairs_generated_lines_with_user_lines():
    tree = ast.parse("\n\n\ndef f(x):\n    if x:\n        x = 1\n    return x\n").body[0]
    extra = templates.replace("print('generated')", origin=tree.body[0])
    tree.body.insert(1, extra[0])
    source = ast.unparse(tree)
    mapping = origin.source_map(tree, source)
    lines = source.splitlines()
    generated_line = lines.index("    print('generated')") + 1
    assert mapping[generated_line] == 5  # the user's `if` line
    assert mapping[lines.index("    return x") + 1] == 7


# ---------------------------------------------------------------- scope

def test_reads_and_writes_respect_nested_scopes():
    node = parse_def("""
        def f(a):
            b = a + c
            def g(d):
                return d + e
            h = lambda k: k + m
            n = [p for p in q if r]
            (w := 1)
            import os.path
            for t in u:
                del v
    """)
    assert scope.writes(node.body) == ["b", "g", "h", "n", "w", "os", "t", "v"]
    reads = scope.reads(node.body)
    assert {"a", "c", "e", "m", "q", "r", "u"} <= reads
    assert not {"d", "k", "p"} & reads


def test_free_reads_and_locals():
    node = parse_def("""
        def f(x):
            nonlocal z
            y = x + w
            z = 1
    """)
    assert scope.local_names(node) == {"x", "y"}
    assert scope.free_reads(node) == {"w", "z"}


def test_generator_detection():
    assert scope.is_generator(parse_def("def f():\n    if x:\n        yield 1"))
    assert not scope.is_generator(parse_def("def f():\n    def g():\n        yield 1"))


def test_liveness_state_of_if():
    node = parse_def("""
        def f(c, a):
            b = 0
            if c:
                a = 1
                t = 2
                u = t
                b = u
            return a
    """)
    scope.analyze(node)
    branch = node.body[1]
    assert branch.ag_state == ["a"]  # b, t, u are not read afterwards
    assert branch.ag_live_out == {"a"}


def test_liveness_loop_carried_and_read_before_write():
    node = parse_def("""
        def f(n):
            i = 0
            total = 0
            last = None
            while i < n:
                total = total + i
                last = i
                scratch = i * 2
                i = scratch // 2 + 1
            return total
    """)
    scope.analyze(node)
    loop = node.body[3]
    assert loop.ag_state == ["i", "total"]


def test_liveness_for_target_live_after():
    node = parse_def("""
        def f(xs):
            for x in xs:
                pass
            return x
    """)
    scope.analyze(node)
    assert node.body[0].ag_state == ["x"]


def test_definedness():
    node = parse_def("""
        def f(a, c):
            if c:
                b = 1
            else:
                b = 2
            if c:
                d = 1
            if a:
                b = d
            return b
    """)
    scope.analyze(node)
    first, second, third = node.body[:3]
    assert "b" not in first.ag_defined
    assert "d" not in second.ag_defined and "d" not in second.ag_maybe
    assert {"b", "d"} <= third.ag_defined
    body_load = third.body[0].value
    assert getattr(body_load, "ag_maybe_undefined", False)  # d may be unbound
    ret = node.body[3].value
    assert not getattr(ret, "ag_maybe_undefined", False)  # b is bound on every path
