"""AutoGraph: Python control flow in functions becomes graph control flow on tensors.

Two layers (STYLE.md rule 6): pyct/ and converters/ rewrite the AST and import no
framework code; operators/ run in the converted code and decide on every call
between Python semantics and graph ops. api.py ties them together.
"""
import types as _types

from .operators import set_loop_options as _set_loop_options

from .api import ConversionError as ConversionError
from .api import ConversionOptions as ConversionOptions
from .api import Feature as _Feature
from .api import convert as convert
from .api import converted_call as converted_call
from .api import do_not_convert as do_not_convert
from .api import explain as explain
from .api import get_verbosity as get_verbosity
from .api import set_verbosity as set_verbosity
from .api import source_map as source_map
from .api import to_code as to_code
from .api import to_graph as to_graph
from .api import trace as trace

experimental = _types.SimpleNamespace(do_not_convert=do_not_convert,
                                      set_loop_options=_set_loop_options, Feature=_Feature)
