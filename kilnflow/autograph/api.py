"""AutoGraph's entry points: convert, to_code, converted_call, do_not_convert, explain.

A function is converted by parsing its source, running the converters below in
order, and compiling the result with the user's file name and line numbers (so
tracebacks and kilnflow errors name the user's lines). The new function shares
the original's globals, closure cells and defaults. Conversions are cached per
code object. function/ calls AutoGraph only through converted_call().
"""
import ast
import collections
import copy
import enum
import functools
import inspect
import linecache
import logging
import os
import sysconfig
import threading
import types
import warnings
import weakref

from . import operators
from .converters import asserts
from .converters import break_statements
from .converters import call_trees
from .converters import conditional_expressions
from .converters import continue_statements
from .converters import control_flow
from .converters import lists
from .converters import logical_expressions
from .converters import return_statements
from .operators import records
from .pyct import origin
from .pyct import parser
from .pyct import transformer

# The converters, in the order they run. Each sees the output of the ones before.
CONVERTERS = (
    asserts,
    lists,  # before control_flow: `lst = list_append(lst, v)` makes lst loop state
    break_statements,  # also moves loop `else:` after the loop
    continue_statements,
    return_statements,  # after break: loops have no `else:` left to skip
    call_trees,  # before the converters that generate ag__ calls of their own
    control_flow,  # needs break/continue/return already turned into plain assignments
    conditional_expressions,
    logical_expressions,  # last: also converts the `not flag` tests generated above
)

ConversionError = parser.ConversionError


class ConversionOptions:
    """recursive: also convert the functions the converted one calls; user_requested:
    convert even code that looks like a library's (kf.function asked for it)."""

    def __init__(self, recursive: bool = True, user_requested: bool = False):
        self.recursive = recursive
        self.user_requested = user_requested


def _make_ag_module() -> types.ModuleType:
    module = types.ModuleType("ag__", "What converted code calls: kilnflow.autograph operators.")
    for name in operators.__all__:
        setattr(module, name, getattr(operators, name))
    module.converted_call = converted_call
    return module


class _Conversion:
    """A converted entity: its code (to rebuild functions from), source and report."""

    def __init__(self, tree, source, code, info, report):
        self.tree = tree
        self.source = source
        self.code = code
        self.info = info
        self.report = report
        self.source_map = origin.source_map(tree, source)


# code object -> _Conversion, or the exception converting it raised; least recently used
# first, bounded so that redefining functions in a loop does not grow memory without end
_CACHE: "collections.OrderedDict" = collections.OrderedDict()
CACHE_SIZE = 1024
_FUNCTIONS = weakref.WeakKeyDictionary()  # function -> its converted function
_CONVERTED_CODES = weakref.WeakSet()  # code objects compiled from converted source
_LOCK = threading.RLock()
_LOCAL = threading.local()
_LIBRARY_DIRS = tuple({os.path.join(os.path.realpath(sysconfig.get_paths()[key]), "")
                       for key in ("stdlib", "platstdlib", "purelib", "platlib")})


def _for_compiling(tree, info, func) -> ast.Module:
    """The converted def (or lambda) inside a factory def that declares the original's
    free variables, so the compiled def reads them from closure cells."""
    tree = copy.deepcopy(tree)
    args = tree.args
    # Defaults and annotations are taken from the original function object instead.
    args.defaults = [ast.Constant(value=None) for _ in args.defaults]
    args.kw_defaults = [None if d is None else ast.Constant(value=None)
                        for d in args.kw_defaults]
    if isinstance(tree, ast.FunctionDef):
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if arg is not None:
                arg.annotation = None
        tree.returns = None
        entity = [tree]
    else:
        entity = [ast.Assign(targets=[ast.Name(id="tf__lambda", ctx=ast.Store())], value=tree)]
    freevars = ("ag__",) + func.__code__.co_freevars
    factory = ast.parse(f"def ag__factory():\n    {' = '.join(freevars)} = None").body[0]
    for node in ast.walk(factory):
        origin.clear_location(node)
    factory.body += entity
    module = ast.Module(body=[factory], type_ignores=[])
    origin.fill_locations(factory, tree)
    return ast.fix_missing_locations(module)


def _function_codes(code: types.CodeType):
    """A code object and the function code objects nested in it (not class bodies)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_flags & inspect.CO_OPTIMIZED:
            yield from _function_codes(const)


def _convert_entity(func) -> _Conversion:
    node, info = parser.parse_entity(func)
    if isinstance(node, ast.AsyncFunctionDef):
        raise ConversionError(f"{func.__qualname__} is an async function")
    if isinstance(node, ast.FunctionDef):
        node.decorator_list = []
        node.name = "tf__" + node.name
    ctx = transformer.Context(info, node)
    tree = node
    for converter in CONVERTERS:
        tree = converter.transform(tree, ctx)
    source = _compact(ast.unparse(tree))
    module_code = compile(_for_compiling(tree, info, func), info.filename, "exec",
                          dont_inherit=True)
    factory_code, = [c for c in module_code.co_consts if isinstance(c, types.CodeType)]
    name = tree.name if isinstance(tree, ast.FunctionDef) else "<lambda>"
    code, = [c for c in factory_code.co_consts
             if isinstance(c, types.CodeType) and c.co_name == name]
    _CONVERTED_CODES.update(_function_codes(code))
    return _Conversion(tree, source, code, info, ctx.report)


def _compact(source: str) -> str:
    """Drop the blank lines ast.unparse puts before each nested def."""
    lines = source.splitlines()
    kept = [line for index, line in enumerate(lines)
            if line.strip() or index + 1 >= len(lines)
            or not lines[index + 1].lstrip().startswith(("def ", "async def ", "class ", "@"))]
    return "\n".join(kept)


def _conversion(func) -> _Conversion:
    """The cached conversion of a Python function; raises ConversionError."""
    code = func.__code__
    with _LOCK:
        if code not in _CACHE:
            try:
                _CACHE[code] = _convert_entity(func)
            except Exception as e:  # noqa: BLE001 - any failure: the function runs as is
                detail = str(e) if isinstance(e, (ConversionError, SyntaxError)) \
                    else f"{type(e).__name__}: {e}"
                _CACHE[code] = ConversionError(f"AutoGraph could not convert "
                                               f"{func.__qualname__}: {detail}")
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
        else:
            _CACHE.move_to_end(code)
        result = _CACHE[code]
    if isinstance(result, Exception):
        raise result
    return result


def _rebuild(func, conversion: _Conversion):
    """A function running the converted code with func's globals, cells and defaults."""
    original = func.__code__.co_freevars
    cells = []
    for name in conversion.code.co_freevars:
        if name == "ag__":
            cells.append(types.CellType(_AG))
        else:
            cells.append(func.__closure__[original.index(name)])
    new = types.FunctionType(conversion.code, func.__globals__, conversion.code.co_name,
                             func.__defaults__, tuple(cells))
    new.__kwdefaults__ = func.__kwdefaults__
    new.__annotations__ = func.__annotations__
    new.__doc__ = func.__doc__
    new.__module__ = func.__module__
    new.__qualname__ = func.__qualname__.rpartition(".")[0] + "." + new.__name__ \
        if "." in func.__qualname__ else new.__name__
    return new


def _converted_function(func):
    """The converted version of a Python function (cached per function object)."""
    with _LOCK:
        new = _FUNCTIONS.get(func)
        if new is not None and new.__defaults__ is func.__defaults__:
            return new
    new = _rebuild(func, _conversion(func))
    with _LOCK:
        _FUNCTIONS[func] = new
    return new


def _is_library(func) -> bool:
    """Code of kilnflow itself, NumPy, the standard library or installed packages."""
    module = getattr(func, "__module__", None) or ""
    if module.split(".")[0] in ("kilnflow", "numpy"):
        return True
    # By file, not module name: a user's own test.py or random.py is still user code.
    if func.__code__.co_filename.startswith("<frozen"):
        return True
    filename = os.path.realpath(func.__code__.co_filename)
    return filename.startswith(_LIBRARY_DIRS) or os.sep + "site-packages" + os.sep in filename


def _convertible(func, options: ConversionOptions) -> bool:
    if getattr(func, "__ag_do_not_convert__", False) or func.__code__ in _CONVERTED_CODES:
        return False
    if func.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE
                                 | inspect.CO_ASYNC_GENERATOR):
        return False
    if options.user_requested:
        return not (func.__module__ or "").startswith("kilnflow.")
    return not _is_library(func)


def _target(f, options: ConversionOptions):
    """What to call instead of f: its converted version, or None to call f as it is."""
    if isinstance(f, functools.partial):
        inner = _target(f.func, options)
        return None if inner is None else functools.partial(inner, *f.args, **f.keywords)
    if isinstance(f, types.MethodType):
        inner = _target(f.__func__, options)
        return None if inner is None else types.MethodType(inner, f.__self__)
    if isinstance(f, types.FunctionType):
        if not _convertible(f, options):
            return None
        try:
            return _converted_function(f)
        except ConversionError as e:
            if options.user_requested:
                raise
            _warn_once(f, e)
            return None
    call = getattr(type(f), "__call__", None)
    if isinstance(call, types.FunctionType) and not isinstance(f, type):
        inner = _target(call, options)
        return None if inner is None else types.MethodType(inner, f)
    return None


_WARNED = set()


def _warn_once(func, error: Exception) -> None:
    if func.__code__ not in _WARNED:
        _WARNED.add(func.__code__)
        warnings.warn(f"{error}. It will run as written (Python semantics only).",
                      stacklevel=4)


def _disabled() -> bool:
    return getattr(_LOCAL, "disabled", 0) > 0


class conversion_disabled:
    """Context manager: converted_call calls functions unconverted inside it."""

    def __enter__(self):
        _LOCAL.disabled = getattr(_LOCAL, "disabled", 0) + 1
        return self

    def __exit__(self, *exc_info):
        _LOCAL.disabled -= 1
        return False


def converted_call(f, args, kwargs=None, options=None):
    """Call f(*args, **kwargs), converting f first if it is user code.

    Never converts kilnflow, NumPy, the standard library, installed packages,
    builtins, generators, functions marked do_not_convert, or anything while
    conversion is disabled. With options.recursive False, the functions f calls
    run unconverted.

    >>> def clip(x):
    ...     return x if x < 10 else 10
    >>> converted_call(clip, (42,), None)
    10
    """
    options = options or _DEFAULT_OPTIONS
    kwargs = kwargs or {}
    overload = operators.overload_of(f)  # kf.range: remembered, so loops index it
    if overload is not None:
        return overload(*args, **kwargs)
    target = None if _disabled() else _target(f, options)
    if target is None:
        return f(*args, **kwargs)
    if options.recursive:
        return target(*args, **kwargs)
    with conversion_disabled():
        return target(*args, **kwargs)


def convert(f):
    """The AutoGraph-converted version of a function, method or lambda.

    Callables AutoGraph leaves alone (generators, library code, builtins, functions
    marked do_not_convert) come back unchanged; unconvertible user code raises
    ConversionError.

    >>> def absolute(x):
    ...     if x < 0:
    ...         x = -x
    ...     return x
    >>> convert(absolute)(-3)
    3
    """
    options = ConversionOptions(user_requested=True)
    target = _target(f, options)
    return f if target is None else target


class Feature(enum.Enum):
    """TF's tf.autograph.experimental.Feature: optional conversions a caller may ask for.

    kilnflow always applies all of them (lists, asserts, builtins, equality operators and
    name scopes are converted whenever tensors are involved), so these are accepted and
    checked, never needed.
    """
    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


def check_features(features) -> tuple:
    """`features` (None, one Feature or a sequence of them) as a tuple; TypeError else."""
    if features is None:
        return ()
    items = (features,) if isinstance(features, Feature) else tuple(features)
    for item in items:
        if not isinstance(item, Feature):
            raise TypeError(f"experimental_optional_features: expected "
                            f"kf.autograph.experimental.Feature members, got {item!r}")
    return items


def to_graph(entity, recursive: bool = True, experimental_optional_features=None):
    """TF's tf.autograph.to_graph: the converted version of a function, method or lambda.

    Called on graph tensors (inside kf.function or a graph) its tensor conditions and
    loops build cond / while ops; on Python values it behaves as the original. With
    recursive=False the functions it calls run unconverted.

    >>> def countdown(n):
    ...     while n > 0:
    ...         n -= 3
    ...     return n
    >>> to_graph(countdown)(10)
    -2
    """
    check_features(experimental_optional_features)  # all are always on
    converted = convert(entity)
    if recursive or converted is entity:
        return converted

    @functools.wraps(entity)
    def call_without_recursion(*args, **kwargs):
        with conversion_disabled():
            return converted(*args, **kwargs)
    return call_without_recursion


def _function_of(f):
    while isinstance(f, (functools.partial, types.MethodType)):
        f = f.func if isinstance(f, functools.partial) else f.__func__
    f = getattr(f, "python_function", f)  # a kf.function
    if not isinstance(f, types.FunctionType):
        raise ConversionError(f"{f!r} is not a Python function")
    return f


def to_code(f) -> str:
    """The converted source of f, as AutoGraph generated it (a def named tf__<name>).

    >>> def double_until(x, limit):
    ...     while x < limit:
    ...         x = x * 2
    ...     return x
    >>> print(to_code(double_until))
    def tf__double_until(x, limit):
        def loop_test(x):
            return x < limit
        def loop_body(x):
            x = x * 2
            return x
        x = ag__.while_stmt(loop_test, loop_body, (x,), ('x',))
        return x
    <BLANKLINE>
    """
    return _conversion(_function_of(f)).source + "\n"


def source_map(f) -> dict:
    """{line of to_code(f): (user file, user line)}: where each generated line came from.

    >>> def halve(x):
    ...     while x > 1:
    ...         x = x / 2
    ...     return x
    >>> sorted(set(line for _, line in source_map(halve).values()))
    [1, 2, 3, 4]
    """
    conversion = _conversion(_function_of(f))
    filename = conversion.info.filename
    return {line: (filename, user_line) for line, user_line in conversion.source_map.items()}


def do_not_convert(func=None):
    """Decorator: AutoGraph calls this function as written, never converting it.

    >>> @do_not_convert
    ... def keep(x):
    ...     return x
    >>> convert(keep) is keep
    True
    """
    if func is None:
        return do_not_convert
    try:
        func.__ag_do_not_convert__ = True
        return func
    except (AttributeError, TypeError):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)
        wrapper.__ag_do_not_convert__ = True
        return wrapper


class ConversionReport:
    """What AutoGraph did to a function: each converted construct at its user line,
    what stays Python, and what each statement became when it last ran."""

    def __init__(self, name: str, filename: str, entries: list):
        self.name = name
        self.filename = filename
        self.entries = entries  # (line, construct, detail, {construct: outcomes})

    def __str__(self) -> str:
        lines = [f"AutoGraph conversion of {self.name} ({self.filename}):"]
        if not self.entries:
            lines.append("  nothing to convert: the function runs as written")
        previous = None
        for line, construct, detail, outcomes in self.entries:
            if line != previous:
                text = linecache.getline(self.filename, line).strip()
                lines.append(f"  line {line}: {text}")
                previous = line
            lines.append(f"      {detail}")
            if construct in outcomes:
                ran = ", ".join(sorted(outcomes[construct]))
                lines.append(f"        ran as: {ran}")
        return "\n".join(lines)

    __repr__ = __str__


def _python_only(func) -> list:
    """Report entries for constructs that AutoGraph leaves as Python."""
    node, _ = parser.parse_entity(func)
    entries = []
    for child in ast.walk(node):
        if isinstance(child, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            entries.append((child.lineno, "comprehension", "comprehension stays Python: it "
                            "runs while tracing (unrolled for a Python iterable)"))
        elif isinstance(child, (ast.Try, ast.With)):
            kind = type(child).__name__.lower()
            entries.append((child.lineno, kind, f"{kind} statement stays Python"))
        elif isinstance(child, (ast.Yield, ast.YieldFrom)):
            entries.append((child.lineno, "generator", "generator functions are not converted"))
    return entries


def explain(f) -> ConversionReport:
    """A report of what AutoGraph converts in f, by user line (see ConversionReport).

    >>> def count_positive(xs):
    ...     n = 0
    ...     for x in xs:
    ...         if x > 0:
    ...             n += 1
    ...     return n
    >>> report = explain(count_positive)
    >>> [(line, construct) for line, construct, _, _ in report.entries]
    [(3, 'for'), (4, 'if')]
    """
    func = _function_of(f)
    conversion = _conversion(func)
    found = [(e.line, e.construct, e.detail) for e in conversion.report]
    found += _python_only(func)
    entries = []
    for line, construct, detail in sorted(found, key=lambda e: e[0]):
        entries.append((line, construct, detail,
                        records.lookup(conversion.info.filename, line)))
    return ConversionReport(func.__qualname__, conversion.info.filename, entries)


_DEFAULT_OPTIONS = ConversionOptions()
_AG = _make_ag_module()


_verbosity = {"level": 0}


def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    """AutoGraph's verbosity (tf.autograph.set_verbosity): 0 is quiet; higher levels log
    conversions on the 'kilnflow.autograph' logger at DEBUG."""
    _verbosity["level"] = int(level)
    logger = logging.getLogger("kilnflow.autograph")
    logger.setLevel(logging.DEBUG if level > 0 else logging.NOTSET)
    if alsologtostdout and not logger.handlers:
        logger.addHandler(logging.StreamHandler())


def get_verbosity() -> int:
    """The level set_verbosity set (tf.autograph.get_verbosity)."""
    return _verbosity["level"]


def trace(*args: object) -> None:
    """Prints `args` when it runs: under kf.function, once per trace (tf.autograph.trace)."""
    print(*args)
