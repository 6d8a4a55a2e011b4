"""Parse a live function or lambda into an AST whose positions are the file's own.

Functions: inspect.getsourcelines + textwrap.dedent (falling back to wrapping the
indented text in `if 1:` when a multi-line string defeats dedent); lambdas: the
file's text is parsed and the lambda found by line and parameters. Methods get
their private names mangled as the class body would. Imports nothing from kilnflow.
"""
import ast
import inspect
import linecache
import textwrap

from . import origin


class ConversionError(Exception):
    """The entity cannot be parsed or converted (no source, unsupported syntax, ...)."""


class EntityInfo:
    """What converters need to know about the entity being converted."""

    def __init__(self, func, filename: str, namespace: dict, class_name: str = None):
        self.name = func.__name__
        self.qualname = getattr(func, "__qualname__", func.__name__)
        self.filename = filename
        self.namespace = namespace
        self.class_name = class_name


def _class_name(func) -> str:
    parts = getattr(func, "__qualname__", "").split(".")
    if len(parts) >= 2 and parts[-2] != "<locals>":
        return parts[-2]
    return None


def _parse_lines(lines: list, first_line: int) -> ast.Module:
    """Parse indented source lines taken from line `first_line` of a file."""
    source = "".join(lines)
    dedented = textwrap.dedent(source)
    first = next(line for line in lines if line.strip())
    first_dedented = next(line for line in dedented.splitlines(True) if line.strip())
    indent = len(first) - len(first_dedented)
    try:
        tree = ast.parse(dedented)
        origin.shift(tree, first_line - 1, indent)
        return tree
    except SyntaxError:
        if not first[:1].isspace():
            raise
    # A multi-line string less indented than the code stops dedent from working.
    tree = ast.parse("if 1:\n" + source)
    origin.shift(tree, first_line - 2, 0)
    return ast.Module(body=tree.body[0].body, type_ignores=[])


def _parse_function(func) -> ast.AST:
    try:
        lines, first_line = inspect.getsourcelines(func.__code__)  # not __wrapped__
    except (OSError, TypeError) as e:
        raise ConversionError(f"no source code for {func.__qualname__}: {e}") from None
    tree = _parse_lines(lines, first_line)
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ConversionError(f"the source of {func.__qualname__} is not a def statement")
    return node


def _lambda_params(node: ast.Lambda) -> tuple:
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    for extra in (args.vararg, args.kwarg):
        if extra is not None:
            names.append(extra.arg)
    return tuple(names)


def _parse_lambda(func) -> ast.Lambda:
    code = func.__code__
    lines = linecache.getlines(code.co_filename)
    if not lines:
        raise ConversionError(f"no source code for the lambda at {code.co_filename}")
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError as e:
        raise ConversionError(f"cannot parse {code.co_filename}: {e}") from None
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                              + bool(code.co_flags & inspect.CO_VARARGS)
                              + bool(code.co_flags & inspect.CO_VARKEYWORDS)]
    found = [node for node in ast.walk(tree)
             if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
             and _lambda_params(node) == params]
    if len(found) != 1:
        raise ConversionError(f"cannot tell which lambda on line {code.co_firstlineno} of "
                              f"{code.co_filename} this is ({len(found)} candidates)")
    return found[0]


def _mangle(tree: ast.AST, class_name: str) -> None:
    """Apply the private-name mangling the compiler does inside `class class_name`."""
    prefix = "_" + class_name.lstrip("_")
    if prefix == "_":
        return

    def mangled(name):
        if name and name.startswith("__") and not name.endswith("__") and "." not in name:
            return prefix + name
        return name

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = mangled(node.id)
        elif isinstance(node, ast.Attribute):
            node.attr = mangled(node.attr)
        elif isinstance(node, ast.arg):
            node.arg = mangled(node.arg)
        elif isinstance(node, ast.keyword):
            node.arg = mangled(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            node.name = mangled(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            node.names = [mangled(n) for n in node.names]


def parse_entity(func) -> tuple:
    """(ast.FunctionDef or ast.Lambda, EntityInfo) for a Python function object."""
    if not inspect.isfunction(func):
        raise ConversionError(f"{func!r} is not a Python function")
    if func.__name__ == "<lambda>":
        node = _parse_lambda(func)
    else:
        node = _parse_function(func)
        if node.name != func.__code__.co_name:
            raise ConversionError(f"the source found for {func.__qualname__} defines "
                                  f"{node.name!r} instead")
    class_name = _class_name(func)
    if class_name:
        _mangle(node, class_name)
    info = EntityInfo(func, func.__code__.co_filename, func.__globals__, class_name)
    return node, info
