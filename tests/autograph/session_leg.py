"""The Session leg of the generated three-mode tests: a program of one int32 scalar,
converted with kf.autograph.to_graph, run in a compat.v1 Session for each input."""
import numpy as np

import kilnflow as kf
from kilnflow.compat import v1


def session_ints(fn, inputs) -> list:
    """`fn` converted into a graph over an int32 placeholder, run once per input."""
    graph = kf.Graph()
    with graph.as_default():
        n = v1.placeholder(kf.int32, [])
        out = kf.autograph.to_graph(fn)(n)
    with v1.Session(graph=graph) as sess:
        return [int(np.asarray(sess.run(out, {n: value}))) for value in inputs]
