"""What the passes know about an op, read from its OpDef: never from its name.

Most facts come from the `fusable` template, which states the op's meaning as a NumPy
expression: `({0} * {1})` is a multiplication whatever the op is called, so `x * 1 -> x`
holds for it; `(-{0})` is its own inverse; `{0}.astype({dtype})` is a cast.

The rest (identity, permutation, reshape, matmul transpose flags, reductions, shape-only
results, fresh outputs) are keyword fields of each op's defop() call.
"""
from __future__ import annotations

import ast
import functools
from typing import Any, Optional, Tuple

from kilnflow.ops.fused import parse_template

# template operator -> (identity element, which operand may be the identity)
_IDENTITY_ELEMENTS = {ast.Add: (0, "both"), ast.Sub: (0, "right"), ast.Mult: (1, "both"),
                      ast.Div: (1, "right"), ast.Pow: (1, "right"), ast.BitOr: (0, "both"),
                      ast.BitXor: (0, "both"), ast.LShift: (0, "right"),
                      ast.RShift: (0, "right")}


@functools.lru_cache(maxsize=None)
def _template(opdef: Any) -> Optional[ast.expr]:
    return parse_template(opdef.fusable) if opdef.fusable else None


def _is_operand(node: Any, index: int) -> bool:
    return isinstance(node, ast.Name) and node.id == f"_in{index}"


def identity_element(opdef: Any) -> Optional[Tuple[Any, str]]:
    """(e, sides) when the op is `x op e == x` (sides 'both' or 'right'), from its template."""
    tree = _template(opdef)
    if isinstance(tree, ast.BinOp) and type(tree.op) in _IDENTITY_ELEMENTS and \
            _is_operand(tree.left, 0) and _is_operand(tree.right, 1):
        return _IDENTITY_ELEMENTS[type(tree.op)]
    if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.BitAnd) and \
            _is_operand(tree.left, 0) and _is_operand(tree.right, 1):
        return (True, "bool")  # x & True == x for bools only (an int's identity is -1)
    return None


def is_involution(opdef: Any) -> bool:
    """f(f(x)) == x exactly: negation, logical / bitwise not (templates `(-{0})`, `(~{0})`)."""
    tree = _template(opdef)
    return isinstance(tree, ast.UnaryOp) and isinstance(tree.op, (ast.USub, ast.Invert)) and \
        _is_operand(tree.operand, 0)


def cast_attr(opdef: Any) -> Optional[str]:
    """The attr holding the target dtype when the op is a cast (`{0}.astype({dtype})`)."""
    tree = _template(opdef)
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Attribute) and \
            tree.func.attr == "astype" and _is_operand(tree.func.value, 0) and \
            len(tree.args) == 1 and isinstance(tree.args[0], ast.Name) and \
            tree.args[0].id.startswith("_at_"):
        return tree.args[0].id[4:]
    return None


def is_identity(opdef: Any) -> bool:
    return opdef.identity


def permutation_attr(opdef: Any) -> Optional[str]:
    return opdef.permutation_attr


def reshape_attr(opdef: Any) -> Optional[str]:
    return opdef.reshape_attr


def transpose_flags(opdef: Any) -> Optional[Tuple[str, str]]:
    return opdef.transpose_flags


def reduction(opdef: Any) -> Optional[str]:
    return opdef.reduction


def shape_only(opdef: Any) -> bool:
    """The result depends only on the input's static shape (foldable when it is known)."""
    return opdef.shape_only


def fresh_output(opdef: Any) -> bool:
    """The kernel always returns a new array, never a view of an input."""
    return opdef.fresh_output
