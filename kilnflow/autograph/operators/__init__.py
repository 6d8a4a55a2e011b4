"""AutoGraph's runtime operators: what converted code calls as ag__.<name>.

Each decides on every call: Python values (and eager tensors) get exactly
Python's semantics; graph tensors get graph ops (cond, while_loop, ...), built
through kilnflow's public functions, imported lazily. Errors name the user's line.
"""
from .conditional import if_exp, if_stmt
from .exceptions import assert_stmt
from .lists import list_append
from .logical import and_, not_, or_
from .loops import for_stmt, set_loop_options, while_stmt
from .py_builtins import enumerate_, len_, overload_of, range_, zip_
from .special_values import (Undefined, UndefinedReturnValue, ld, ld_attr, ld_or_undefined,
                             retval, set_attr)

__all__ = ["if_exp", "if_stmt", "assert_stmt", "list_append", "and_", "not_", "or_",
           "for_stmt", "while_stmt", "set_loop_options", "len_", "range_", "enumerate_", "zip_",
           "Undefined", "UndefinedReturnValue", "ld", "ld_attr", "ld_or_undefined", "retval", "set_attr"]
