"""@kf.function: tracing Python into graphs, the trace cache, ConcreteFunction."""
