"""Each converter alone (or with the ones it relies on) on source strings."""
import ast
import textwrap
import types

from kilnflow.autograph.converters import asserts
from kilnflow.autograph.converters import break_statements
from kilnflow.autograph.converters import call_trees
from kilnflow.autograph.converters import conditional_expressions
from kilnflow.autograph.converters import continue_statements
from kilnflow.autograph.converters import control_flow
from kilnflow.autograph.converters import lists
from kilnflow.autograph.converters import logical_expressions
from kilnflow.autograph.converters import return_statements
from kilnflow.autograph.pyct import transformer


def convert(source: str, *converters, namespace=None, class_name=None) -> str:
    node = ast.parse(textwrap.dedent(source)).body[0]
    info = types.SimpleNamespace(namespace=namespace or {}, filename="<test>", name=node.name,
                                 class_name=class_name)
    ctx = transformer.Context(info, node)
    for converter in converters:
        node = converter.transform(node, ctx)
    return ast.unparse(node)


def same(actual: str, expected: str) -> bool:
    expected = ast.unparse(ast.parse(textwrap.dedent(expected)))
    if actual != expected:
        print("actual:\n" + actual + "\nexpected:\n" + expected)
    return actual == expected


def contains(actual: str, snippet: str) -> bool:
    """The snippet's lines appear, consecutively and ignoring indentation, in actual."""
    snippet = textwrap.dedent(snippet).strip()
    try:
        snippet = ast.unparse(ast.parse(snippet))
    except SyntaxError:  # a partial statement such as a def line: compare as written
        pass
    want = [line.strip() for line in snippet.splitlines() if line.strip()]
    have = [line.strip() for line in actual.splitlines() if line.strip()]
    found = any(have[i:i + len(want)] == want for i in range(len(have)))
    if len(want) == 1:
        found = any(want[0] in line for line in have)
    if not found:
        print("actual:\n" + actual + "\nmissing:\n" + snippet)
    return found


# ---------------------------------------------------------------- expressions

def test_assert_with_and_without_message():
    out = convert("""
        def f(x):
            assert x > 0, 'bad'
            assert x
    """, asserts)
    assert same(out, """
        def f(x):
            ag__.assert_stmt(x > 0, lambda: 'bad')
            ag__.assert_stmt(x, lambda: None)
    """)


def test_logical_expressions_are_lazy_and_nested():
    out = convert("""
        def f(a, b, c):
            return a and b and not c or b
    """, logical_expressions)
    assert contains(out, "return ag__.or_(lambda: ag__.and_(lambda: a, lambda: ag__.and_("
                         "lambda: b, lambda: ag__.not_(c))), lambda: b)")


def test_logical_leaves_walrus_alone():
    out = convert("""
        def f(a, b):
            return a and (c := b)
    """, logical_expressions)
    assert contains(out, "return a and (c := b)")


def test_conditional_expression():
    out = convert("""
        def f(x):
            return 1 if x else 2
    """, conditional_expressions)
    assert contains(out, "return ag__.if_exp(x, lambda: 1, lambda: 2)")


def test_call_trees():
    out = convert("""
        def f(x, *rest, **kw):
            y = g(x, *rest, k=1, **kw)
            print(y, len(x), range(3))
            return obj.method(), super().m()
    """, call_trees)
    assert contains(out, "y = ag__.converted_call(g, (x, *rest), {'k': 1, **kw})")
    assert contains(out, "print(y, ag__.len_(x), ag__.range_(3))")
    assert contains(out, "return (ag__.converted_call(obj.method, (), None), "
                         "ag__.converted_call(super().m, (), None))")


def test_call_trees_respect_shadowed_builtins():
    local = convert("""
        def f(x, len):
            return len(x)
    """, call_trees)
    assert contains(local, "return ag__.converted_call(len, (x,), None)")
    module = convert("""
        def f(x):
            return range(x)
    """, call_trees, namespace={"range": object()})
    assert contains(module, "return ag__.converted_call(range, (x,), None)")


def test_super_in_a_method_becomes_explicit():
    out = convert("""
        def m(self, x):
            return super().m(x)
    """, call_trees, class_name="C")
    assert contains(out, "ag__.converted_call(super(__class__, self).m, (x,), None)")


def test_lists_append_in_loop_only():
    out = convert("""
        def f(n):
            out = []
            other = []
            out.append(0)
            for i in range(n):
                out.append(i)
                tmp = []
                tmp.append(i)
                other.append(i)
                print(other)
            return out
    """, lists)
    assert contains(out, "out.append(0)")  # not in a loop
    assert contains(out, "out = ag__.list_append(out, i)")
    assert contains(out, "tmp.append(i)")  # bound inside the loop
    assert contains(out, "other.append(i)")  # read for something else too


# ---------------------------------------------------------------- jumps

def test_break_in_while_with_else():
    out = convert("""
        def f(x):
            while x > 0:
                x -= 1
                if x == 3:
                    break
                x -= 1
            else:
                x = -1
            return x
    """, break_statements)
    assert same(out, """
        def f(x):
            break_ = False
            while not break_ and x > 0:
                x -= 1
                if x == 3:
                    break_ = True
                else:
                    x -= 1
            if not break_:
                x = -1
            return x
    """)


def test_break_in_for_becomes_extra_test_and_guard():
    src = """
        def f(xs):
            for x in xs:
                try:
                    if x:
                        break
                finally:
                    pass
                print(x)
    """
    node = ast.parse(textwrap.dedent(src)).body[0]
    ctx = transformer.Context(types.SimpleNamespace(namespace={}), node)
    node = break_statements.transform(node, ctx)
    loop = node.body[1]
    assert ast.unparse(loop.ag_extra_tests[0]) == "not break_"
    assert contains(ast.unparse(node), "if not break_:\n        print(x)")


def test_loop_else_without_break_follows_the_loop():
    out = convert("""
        def f(xs):
            for x in xs:
                pass
            else:
                done()
    """, break_statements)
    assert same(out, """
        def f(xs):
            for x in xs:
                pass
            done()
    """)


def test_continue_moves_rest_into_else_without_flag():
    out = convert("""
        def f(xs):
            for x in xs:
                if x:
                    continue
                print(x)
    """, continue_statements)
    assert same(out, """
        def f(xs):
            for x in xs:
                if x:
                    pass
                else:
                    print(x)
    """)


def test_continue_needing_a_flag():
    out = convert("""
        def f(xs):
            for x in xs:
                if x:
                    if x > 1:
                        continue
                    x += 1
                print(x)
    """, continue_statements)
    assert same(out, """
        def f(xs):
            for x in xs:
                continue_ = False
                if x:
                    if x > 1:
                        continue_ = True
                    else:
                        x += 1
                if not continue_:
                    print(x)
    """)


def test_return_lowering():
    out = convert("""
        def f(x):
            '''Doc.'''
            for v in x:
                if v > 0:
                    return v
            return -1
    """, return_statements)
    assert same(out, """
        def f(x):
            '''Doc.'''
            do_return = False
            retval_ = ag__.UndefinedReturnValue()
            for v in x:
                if v > 0:
                    do_return = True
                    retval_ = v
            if not do_return:
                do_return = True
                retval_ = -1
            return ag__.retval(retval_)
    """)


def test_return_in_one_branch_moves_the_rest_to_the_other():
    out = convert("""
        def f(x):
            if x > 0:
                return 1
            y = 2
            return y
    """, return_statements)
    assert contains(out, """
        if x > 0:
            do_return = True
            retval_ = 1
        else:
            y = 2
            do_return = True
            retval_ = y
    """)


def test_plain_returns_are_left_alone():
    src = """
        def f(x):
            with x:
                return 1
    """
    assert same(convert(src, return_statements), src)


def test_return_stops_while_loops():
    out = convert("""
        def f(x):
            while x:
                return 1
    """, return_statements)
    assert contains(out, "while not do_return and x:")


# ---------------------------------------------------------------- control flow

def test_while_matches_the_documented_shape():
    out = convert("""
        def f(x, n):
            s = 0.
            i = 0
            while i < n:
                s = s + x
                i += 1
            return s
    """, control_flow)
    assert same(out, """
        def f(x, n):
            s = 0.
            i = 0
            def loop_test(s, i):
                return i < n
            def loop_body(s, i):
                s = s + x
                i += 1
                return s, i
            s, i = ag__.while_stmt(loop_test, loop_body, (s, i), ('s', 'i'))
            return s
    """)


def test_if_state_and_undefined_names():
    out = convert("""
        def f(c, a):
            b = 1
            if c:
                a = a + 1
                b = 2
                tmp = 3
                d = tmp
            else:
                d = 0
            return a, b, d
    """, control_flow)
    assert same(out, """
        def f(c, a):
            b = 1
            d = ag__.Undefined('d')
            def if_true(a, b, d):
                a = a + 1
                b = 2
                tmp = 3
                d = tmp
                return a, b, d
            def if_false(a, b, d):
                d = 0
                return a, b, d
            a, b, d = ag__.if_stmt(c, if_true, if_false, (a, b, d), ('a', 'b', 'd'))
            return a, b, d
    """)


def test_if_without_state():
    out = convert("""
        def f(c):
            if c:
                print(c)
    """, control_flow)
    assert same(out, """
        def f(c):
            def if_true():
                print(c)
            def if_false():
                pass
            ag__.if_stmt(c, if_true, if_false, (), ())
    """)


def test_for_with_extra_test_and_live_target():
    out = convert("""
        def f(xs):
            s = 0
            for x in xs:
                s += x
            return s, x
    """, control_flow)
    assert same(out, """
        def f(xs):
            s = 0
            x = ag__.Undefined('x')
            def loop_body(itr, s, x):
                x = itr
                s += x
                return s, x
            s, x = ag__.for_stmt(xs, None, loop_body, (s, x), ('s', 'x'))
            return s, ag__.ld(x)
    """)


def test_for_tuple_target_and_break_flag():
    out = convert("""
        def f(d):
            n = 0
            for k, v in d:
                if v:
                    break
                n += k
            return n
    """, break_statements, control_flow)
    assert contains(out, """
        def extra_test(n, break_):
            return not break_
    """)
    assert contains(out, """
        def loop_body(itr, n, break_):
            k, v = itr
    """)
    assert contains(out, "n, break_ = ag__.for_stmt(d, extra_test, loop_body, (n, break_), "
                         "('n', 'break_'))")


def test_temporaries_are_not_state():
    out = convert("""
        def f(n):
            i = 0
            while i < n:
                t = i * 2
                i = t
    """, control_flow)
    assert contains(out, "i = ag__.while_stmt(loop_test, loop_body, (i,), ('i',))")


def test_global_names_are_declared_not_passed():
    out = convert("""
        def f(x):
            global g
            if x:
                g = 1
    """, control_flow)
    assert contains(out, """
        def if_true():
            global g
            g = 1
    """)
    assert contains(out, "ag__.if_stmt(x, if_true, if_false, (), ())")


def test_maybe_bound_names_use_locals():
    out = convert("""
        def f(x):
            try:
                y = x()
            except ValueError:
                pass
            if x:
                y = 2
            return y
    """, control_flow)
    assert contains(out, "y = ag__.ld_or_undefined(locals(), 'y')")
    assert contains(out, "return ag__.ld(y)")


def test_walrus_in_while_test_stays_python():
    out = convert("""
        def f(it):
            while (v := next(it)):
                print(v)
    """, control_flow)
    assert contains(out, "while (v := next(it)):")


def test_appended_lists_are_named_in_the_loop_call():
    out = convert("""
        def f(n):
            out = []
            for i in range(n):
                out.append(i)
            return out
    """, lists, control_flow)
    assert contains(out, "out = ag__.for_stmt(range(n), None, loop_body, (out,), ('out',), "
                         "appended=('out',))")


def test_generated_names_avoid_user_names():
    out = convert("""
        def f(loop_body, if_true):
            while loop_body:
                loop_body -= 1
            return loop_body
    """, control_flow)
    assert contains(out, "def loop_body_1(loop_body):")
    assert contains(out, "ag__.while_stmt(loop_test, loop_body_1, (loop_body,)")


def test_generators_and_classes_are_not_converted():
    src = """
        def f(x):
            def gen():
                if x:
                    yield 1
            class C:
                y = x and 2
            return gen, C
    """
    out = convert(src, control_flow, logical_expressions)
    assert contains(out, "if x:\n        yield 1")
    assert contains(out, "y = x and 2")


def test_set_loop_options_moves_out_of_the_loop():
    out = convert("""
        def f(x, n):
            for i in n:
                kf.autograph.experimental.set_loop_options(shape_invariants=[(x, [None])])
                x = g(x)
            return x
    """, call_trees, control_flow)
    assert "set_loop_options" not in out
    assert contains(out, "x = ag__.for_stmt(n, None, loop_body, (x,), ('x',), "
                         "loop_options={'shape_invariants': [(x, [None])]})")
