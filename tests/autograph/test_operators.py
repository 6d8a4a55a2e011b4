"""Runtime operators on Python values: exactly Python's semantics."""
import pytest

from kilnflow.autograph import operators as ag
from kilnflow.autograph.operators import _dispatch
from kilnflow.autograph.operators import records


def test_if_stmt_runs_one_branch_and_returns_state():
    calls = []

    def if_true(a, b):
        calls.append("true")
        return a + 1, b

    def if_false(a, b):
        calls.append("false")
        return a, b - 1

    assert ag.if_stmt(1, if_true, if_false, (1, 2), ("a", "b")) == (2, 2)
    assert ag.if_stmt([], if_true, if_false, (1, 2), ("a", "b")) == (1, 1)
    assert calls == ["true", "false"]
    assert ag.if_stmt(True, lambda a: a * 3, lambda a: a, (2,), ("a",)) == 6
    assert ag.if_stmt(False, lambda: None, lambda: None, (), ()) is None


def test_while_stmt():
    def test(i, s):
        return i < 4

    def body(i, s):
        return i + 1, s + i

    assert ag.while_stmt(test, body, (0, 0), ("i", "s")) == (4, 6)
    assert ag.while_stmt(lambda i: i < 3, lambda i: i + 1, (0,), ("i",)) == 3


def test_for_stmt_and_extra_test_does_not_consume_an_extra_item():
    iterator = iter(range(10))

    def body(x, stop, seen):
        return x >= 2, seen + [x]

    stop, seen = ag.for_stmt(iterator, lambda stop, seen: not stop, body, (False, []),
                             ("stop", "seen"))
    assert seen == [0, 1, 2] and stop
    assert next(iterator) == 3  # Python's break leaves the rest of the iterator alone
    assert ag.for_stmt("abc", None, lambda c, s: s + c, ("",), ("s",)) == "abc"


def test_and_or_not_are_lazy_and_return_operands():
    seen = []

    def right():
        seen.append("right")
        return "r"

    assert ag.and_(lambda: 0, right) == 0 and seen == []
    assert ag.and_(lambda: "l", right) == "r" and seen == ["right"]
    assert ag.or_(lambda: "l", right) == "l" and seen == ["right"]
    assert ag.or_(lambda: "", right) == "r"
    assert ag.not_([]) is True and ag.not_(3) is False


def test_if_exp():
    assert ag.if_exp(1, lambda: "a", lambda: 1 / 0) == "a"
    assert ag.if_exp(0, lambda: 1 / 0, lambda: "b") == "b"


def test_builtins():
    assert ag.len_([1, 2, 3]) == 3
    assert ag.range_(2, 8, 3) == range(2, 8, 3)


def test_assert_stmt():
    assert ag.assert_stmt(True, lambda: 1 / 0) is None
    with pytest.raises(AssertionError, match="^boom$"):
        ag.assert_stmt(0, lambda: "boom")
    with pytest.raises(AssertionError) as info:
        ag.assert_stmt(0, lambda: None)
    assert info.value.args == ()


def test_list_append_keeps_identity():
    items = [1]
    assert ag.list_append(items, 2) is items
    assert items == [1, 2]


def test_undefined_raises_on_use_like_python():
    y = ag.Undefined("y")
    assert repr(y) == "Undefined('y')"
    for use in (bool, str, len, lambda v: v + 1, lambda v: v.attr, lambda v: v == 1,
                lambda v: v[0], lambda v: v(), iter, ag.ld):
        with pytest.raises(UnboundLocalError, match="'y'"):
            use(y)
    assert ag.ld(5) == 5
    assert ag.ld_or_undefined({"a": 1}, "a") == 1
    assert isinstance(ag.ld_or_undefined({}, "a"), ag.Undefined)


def test_retval():
    assert ag.retval(ag.UndefinedReturnValue()) is None
    assert ag.retval(0) == 0


def test_dispatch_sees_plain_values_as_python():
    assert not _dispatch.is_tensor(3) and not _dispatch.is_symbolic([1])
    assert _dispatch.where(("f.py", 3)) == ' (at "f.py", line 3)'


def test_operators_record_what_they_became():
    ag.if_stmt(True, lambda: None, lambda: None, (), ())
    location = _dispatch.user_location()
    line = location[1] - 1  # the if_stmt call is on the line above
    assert records.lookup(location[0], line) == {"if": {"python"}}
