"""Samples of the ops in kilnflow/ops/cond.py (see tests/ops/samples/__init__.py)."""



import kilnflow as kf
from tests.ops.samples import add, rand


add("StatelessIf", lambda x: kf.cond(kf.reduce_sum(x) > 0, lambda: x * x, lambda: -x),
     (rand(2, 3),), lambda x: x * x if x.sum() > 0 else -x, differentiable=True,
     graph_only=True)


add("StatelessIf", lambda x, y: kf.cond(kf.reduce_sum(x) < 0, lambda: x * y, lambda: x + y),
     (rand(3), rand(3)), lambda x, y: x * y if x.sum() < 0 else x + y, differentiable=True,
     name="captures", graph_only=True)
