"""pyct: the Python-source toolkit AutoGraph's converters are written with.

parser (source -> AST), templates (code templates -> AST), transformer (converter
base class and context), naming (clash-free new names), origin (positions and the
generated-line -> user-line map) and scope (reads, writes, liveness, definedness).
Sees only ASTs: it must import nothing from kilnflow outside autograph/pyct.
"""
