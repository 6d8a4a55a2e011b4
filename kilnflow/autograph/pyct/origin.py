"""Source positions: where each generated statement came from in the user's file.

Converted code keeps the user's nodes with their real positions (file line and
column); generated nodes take the position of the user statement they replace.
So the compiled code reports the user's file and line in every traceback, and
`source_map` recovers, for each line of `to_code()` output, the user's line.
Imports nothing from kilnflow.
"""
import ast

_POSITION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def has_location(node: ast.AST) -> bool:
    return getattr(node, "lineno", None) is not None


def clear_location(node: ast.AST) -> None:
    for attr in _POSITION:
        if attr in node._attributes and hasattr(node, attr):
            delattr(node, attr)


def fill_locations(tree: ast.AST, origin: ast.AST) -> None:
    """Give every node of `tree` that has no position the first line of `origin`.

    One line only: for a call spanning lines the compiler reports the line where
    its function expression ends, which must be the user statement's first line.
    """
    if not has_location(origin):
        return
    end = origin.end_col_offset
    if origin.end_lineno != origin.lineno or end is None:
        # The furthest column reached on the first line by the statement's parts.
        end = max([n.end_col_offset for n in ast.walk(origin) if has_location(n)
                   and n.lineno == n.end_lineno == origin.lineno] + [origin.col_offset])
    position = (origin.lineno, origin.col_offset, origin.lineno, end)
    for node in ast.walk(tree):
        if "lineno" in node._attributes and not has_location(node):
            for attr, value in zip(_POSITION, position):
                setattr(node, attr, value)


def shift(tree: ast.AST, lines: int, columns: int) -> None:
    """Move parsed positions by a line offset and a column offset (undoing a dedent)."""
    for node in ast.walk(tree):
        if not has_location(node):
            continue
        node.lineno += lines
        node.end_lineno = (node.end_lineno or node.lineno - lines) + lines
        node.col_offset += columns
        if node.end_col_offset is not None:
            node.end_col_offset += columns


def source_map(tree: ast.AST, generated_source: str) -> dict:
    """{line of generated_source: user line} for a tree and its ast.unparse() text.

    Parsing the text again gives a tree of the same shape, so walking both trees
    side by side pairs each generated node with the user position it carries.
    Statements claim a line first; expressions fill lines no statement claimed.
    """
    reparsed = ast.parse(generated_source)
    if not isinstance(tree, ast.Module):
        reparsed = reparsed.body[0]
    pairs = list(zip(ast.walk(tree), ast.walk(reparsed)))
    mapping = {}
    for want_statements in (True, False):
        for original, regenerated in pairs:
            if type(original) is not type(regenerated):
                break
            if isinstance(original, ast.stmt) != want_statements:
                continue
            if has_location(original) and has_location(regenerated):
                mapping.setdefault(regenerated.lineno, original.lineno)
    return mapping
