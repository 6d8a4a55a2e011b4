"""Python-only control-flow programs: converting one must not change what it does.

CASES lists (function, list of argument tuples); test_corpus.py checks that
convert(f)(*args) returns (or raises) exactly what f(*args) does.
"""
import functools

COUNTER = 0


def while_sum(x, n):
    s = 0.
    i = 0
    while i < n:
        s = s + x
        i += 1
    return s


def for_range_squares(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def for_break(xs, stop):
    found = None
    for x in xs:
        if x == stop:
            found = x
            break
        found = -x
    return found


def for_continue(xs):
    odd = []
    for x in xs:
        if x % 2 == 0:
            continue
        odd.append(x)
    return odd


def while_break(n):
    i = 0
    while True:
        i += 3
        if i > n:
            break
    return i


def while_continue(n):
    i = 0
    hits = 0
    while i < n:
        i += 1
        if i % 3:
            continue
        hits += 1
        hits *= 2
    return i, hits


def for_else(xs, target):
    for x in xs:
        if x == target:
            result = 'found'
            break
    else:
        result = 'missing'
    return result


def while_else(n):
    i = 0
    log = []
    while i < n:
        log.append(i)
        if i == 5:
            break
        i += 1
    else:
        log.append('done')
    return log


def return_in_for(xs, target):
    for i, x in enumerate(xs):
        if x == target:
            return i
    return -1


def return_in_while(n):
    i = 0
    while i < 100:
        if i * i >= n:
            return i
        i += 1
    return None


def early_returns(x):
    if x < 0:
        return 'negative'
    elif x == 0:
        return 'zero'
    if x > 100:
        return 'large'
    return 'positive'


def nested_break(rows):
    total = 0
    for row in rows:
        for v in row:
            if v < 0:
                break
            total += v
        total *= 10
    return total


def nested_return(rows, target):
    r = 0
    while r < len(rows):
        for c, v in enumerate(rows[r]):
            if v == target:
                return r, c
        r += 1
    return 'absent'


def ternaries(x):
    kind = 'big' if x > 10 else 'small' if x > 0 else 'none'
    return kind, (x if x % 2 else -x)


def lazy_logic(a, b):
    seen = []

    def probe(name, value):
        seen.append(name)
        return value

    r1 = probe('a', a) and probe('b', b)
    r2 = probe('c', a) or probe('d', b)
    r3 = not probe('e', a)
    return r1, r2, r3, seen


def nested_function_closure(n):
    scale = 3

    def helper(v):
        if v > 2:
            return v * scale
        return v

    return [helper(i) for i in range(n)]


def nonlocal_counter(n):
    count = 0

    def bump():
        nonlocal count
        count += 1

    for _ in range(n):
        if _ % 2:
            bump()
    return count


class Accumulator:
    def __init__(self, start):
        self.value = start
        self.__secret = 7

    def add_all(self, xs):
        for x in xs:
            if x is None:
                continue
            self.value = self._plus(self.value, x)
        return self.value + self.__secret

    def _plus(self, a, b):
        return a + b if b > 0 else a - b


class Base:
    def describe(self, n):
        return f'base{n}'


class Derived(Base):
    def describe(self, n):
        parts = []
        for i in range(n):
            parts.append(super().describe(i))
        return '-'.join(parts)


def method_calls(xs):
    acc = Accumulator(1)
    return acc.add_all(xs)


def super_calls(n):
    return Derived().describe(n)


def lambdas(xs):
    f = lambda v: v * 2 if v > 0 else 0  # noqa: E731
    g = lambda a, b=1: a and b  # noqa: E731
    return [f(x) for x in xs], g(0), g(3), g(3, 0)


def make_adder(k):
    def add(x):
        if x is None:
            return k
        return x + k
    return add


def closures(x):
    add5 = make_adder(5)
    return add5(x), add5(None)


def defaults(a, b=2, *, c=3):
    if a > b:
        return a * c
    return b * c


def star_args(*args, **kwargs):
    total = 0
    for a in args:
        total += a
    for key in sorted(kwargs):
        if key.startswith('skip'):
            continue
        total += kwargs[key]
    return total


def gen_squares(n):
    for i in range(n):
        if i % 2:
            yield i * i


def uses_generator(n):
    return list(gen_squares(n)), sum(gen_squares(n))


def set_global(x):
    global COUNTER
    if x > 0:
        COUNTER = x
    return COUNTER


def asserts(x):
    assert x > 0, f'x must be positive, got {x}'
    assert x < 100
    return x


def len_and_range(xs):
    out = 0
    for i in range(len(xs) - 1, -1, -1):
        out = out * 10 + xs[i]
    return out, len(xs)


def list_alias(n):
    items = []
    alias = items
    for i in range(n):
        items.append(i)
    return items, alias is items, alias


def one_branch_defined(x):
    if x > 0:
        y = x
    return y


def loop_var_after(n):
    for i in range(n):
        pass
    return i


def try_in_loop(xs):
    out = []
    for x in xs:
        try:
            out.append(10 // x)
        except ZeroDivisionError:
            out.append('div0')
            continue
        finally:
            out.append('.')
        if len(out) > 6:
            break
    return out


def recursion(n):
    if n <= 1:
        return 1
    return n * recursion(n - 1)


def dict_items(d):
    keys = []
    total = 0
    for k, v in d.items():
        if v is None:
            continue
        keys.append(k)
        total += v
    return keys, total


def subscript_aug(n):
    counts = [0] * 3
    for i in range(n):
        counts[i % 3] += i
    return counts


def bubble_sort(xs):
    xs = list(xs)
    n = len(xs)
    swapped = True
    while swapped:
        swapped = False
        for i in range(n - 1):
            if xs[i] > xs[i + 1]:
                xs[i], xs[i + 1] = xs[i + 1], xs[i]
                swapped = True
        n -= 1
    return xs


def fibonacci(n):
    a, b = 0, 1
    while n > 0:
        a, b = b, a + b
        n -= 1
    return a


def zip_loop(xs, ys):
    pairs = []
    for x, y in zip(xs, ys):
        if x == y:
            continue
        pairs.append((x, y))
    return pairs


def walrus_while(xs):
    it = iter(xs)
    got = []
    while (v := next(it, None)) is not None:
        got.append(v)
    return got


def raises(x):
    if x < 0:
        raise ValueError(f'negative: {x}')
    return x


def partial_and_callable(x):
    def scale(v, factor):
        return v * factor if factor else v

    double = functools.partial(scale, factor=2)
    return double(x), Accumulator(x)._plus(x, -1)


def with_in_loop(n):
    import contextlib
    log = []
    for i in range(n):
        with contextlib.suppress(KeyError):
            if i == 2:
                raise KeyError(i)
            log.append(i)
    return log


def deep_nesting(n):
    out = []
    i = 0
    while i < n:
        j = 0
        while j < i:
            if (i + j) % 3 == 0:
                j += 1
                continue
            if i * j > 12:
                return out
            out.append((i, j))
            j += 1
        i += 1
    return out


def string_builder(words):
    s = ''
    for w in words:
        s += w[0].upper() if w else '_'
    return s or 'empty'


def comprehension_in_loop(n):
    rows = []
    for i in range(n):
        rows.append([j for j in range(i) if j % 2 == 0])
    return rows


def while_return_else(n):
    i = 0
    while i < n:
        if i == 7:
            return 'seven'
        i += 1
    else:
        return 'no seven'


def maybe_defined(flag):
    try:
        if flag:
            raise KeyError
        value = 1
    except KeyError:
        pass
    if flag == 2:
        value = 2
    return value


CASES = [
    (while_sum, [(2.0, 3), (1.5, 0)]),
    (for_range_squares, [(0,), (5,)]),
    (for_break, [([1, 2, 3, 4], 3), ([1, 2], 9), ([], 1)]),
    (for_continue, [([1, 2, 3, 4, 5],), ([],)]),
    (while_break, [(10,), (0,)]),
    (while_continue, [(10,), (2,)]),
    (for_else, [([1, 2, 3], 2), ([1, 2, 3], 7)]),
    (while_else, [(3,), (9,)]),
    (return_in_for, [([5, 6, 7], 6), ([5, 6], 1)]),
    (return_in_while, [(10,), (0,), (100000,)]),
    (early_returns, [(-1,), (0,), (5,), (500,)]),
    (nested_break, [([[1, 2, -1, 5], [3], [-2]],), ([],)]),
    (nested_return, [([[1, 2], [3, 4]], 4), ([[1]], 9)]),
    (ternaries, [(20,), (5,), (-3,), (4,)]),
    (lazy_logic, [(0, 1), (1, 0), (2, 3), ([], 'x')]),
    (nested_function_closure, [(5,)]),
    (nonlocal_counter, [(7,)]),
    (method_calls, [([1, None, -2, 3],)]),
    (super_calls, [(3,)]),
    (lambdas, [([1, -1, 2],)]),
    (closures, [(3,)]),
    (defaults, [(5,), (1,), (5, 4), (1, 0)]),
    (star_args, [(), (1, 2, 3), (1,)]),
    (uses_generator, [(6,)]),
    (set_global, [(4,), (-1,)]),
    (asserts, [(5,), (0,), (100,)]),
    (len_and_range, [([1, 2, 3],), ([],)]),
    (list_alias, [(3,)]),
    (one_branch_defined, [(2,), (-2,)]),
    (loop_var_after, [(3,), (0,)]),
    (try_in_loop, [([1, 0, 5, 2, 3, 4],)]),
    (recursion, [(6,)]),
    (dict_items, [({'a': 1, 'b': None, 'c': 3},)]),
    (subscript_aug, [(8,)]),
    (bubble_sort, [([5, 1, 4, 2, 8],), ([],)]),
    (fibonacci, [(10,), (0,)]),
    (zip_loop, [([1, 2, 3], [1, 5, 3, 9])]),
    (walrus_while, [([1, 2, 3],)]),
    (raises, [(1,), (-1,)]),
    (partial_and_callable, [(4,)]),
    (with_in_loop, [(4,)]),
    (deep_nesting, [(4,), (8,)]),
    (string_builder, [(['ab', '', 'cd'],), ([],)]),
    (comprehension_in_loop, [(4,)]),
    (while_return_else, [(5,), (9,)]),
    (maybe_defined, [(0,), (1,), (2,)]),
]
