"""Samples of the ops in kilnflow/ops/graph.py (see tests/ops/samples/__init__.py)."""



from tests.ops.samples import add, direct


add("NoOp", direct("NoOp"), (), lambda: [])
