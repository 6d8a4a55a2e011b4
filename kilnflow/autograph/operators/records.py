"""What each converted statement became when it last ran, for explain().

Operators call record(location, construct, outcome); outcomes are 'python'
(plain Python values), 'eager' (an eager tensor, run with Python semantics) and
'graph' (a graph op was built). Keyed by the user's (file, line).
"""
_RECORDS = {}


def record(location: tuple, construct: str, outcome: str) -> None:
    _RECORDS.setdefault(location, {}).setdefault(construct, set()).add(outcome)


def lookup(filename: str, line: int) -> dict:
    """{construct: set of outcomes} recorded at that user line."""
    return _RECORDS.get((filename, line), {})


def outcome_of(value) -> str:
    from . import _dispatch
    if _dispatch.is_symbolic(value):
        return "graph"
    return "eager" if _dispatch.is_tensor(value) else "python"
