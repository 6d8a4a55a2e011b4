"""The op machinery below every op family: OpDef, defop() and bind() (opdef.py), shared
shape rules (rules.py), and the Const op (const.py). Imports dtypes, shapes, errors,
context and tensor only, so graph, runtime and passes can use it without the families."""
