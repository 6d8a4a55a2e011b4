"""compat.v1 Session: runs the part of a Graph that the fetches need, with feeds.

Each distinct (fetches, feeds) pair is pruned to the ops it needs and compiled once to
generated Python, like a ConcreteFunction; later runs with the same pair reuse it.
"""
from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Dict, Iterator, List, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors, nest
from kilnflow.context import ctx
from kilnflow.graph import Graph, Operation, get_default_graph, ops_needed
from kilnflow.runtime import codegen, loader
from kilnflow.sparse.sparse_tensor import SparseTensorValue, is_sparse
from kilnflow.tensor import EagerTensor, SymbolicTensor


class ConfigProto:
    """Accepted for compatibility (allow_soft_placement, log_device_placement, ...)."""

    def __init__(self, **options: Any):
        self.__dict__.update(options)


class GPUOptions(ConfigProto):
    pass


class _Compiled:
    def __init__(self, fn: Any, feeds: List[SymbolicTensor], fetch_tensors: List[Any]):
        self.fn = fn
        self.feeds = feeds
        self.fetch_tensors = fetch_tensors


class Session:
    """Runs graph elements: `sess.run(fetches, feed_dict)`.

    Devices: every device string is accepted and placed on the CPU (soft placement).
    A `target` served by a kf.distribute.Server, or `config=ConfigProto(cluster_def=...)`,
    runs the ops placed on `/job:J/task:T` in that task's Ray actor (kf.distribute).
    """

    def __init__(self, target: str = "", graph: Optional[Graph] = None,
                 config: Optional[ConfigProto] = None):
        self._cluster: Any = None
        if target or getattr(config, "cluster_def", None):
            # ops run on the Ray actors of the tasks their devices name (kf.distribute)
            from kilnflow.distribute.cluster_session import connect
            self._cluster = connect(target, config)
        self.graph = graph if graph is not None else get_default_graph()
        self.config = config
        self._cache: Dict[tuple, _Compiled] = {}
        self._closed = False
        self._default_stack: List[Any] = []
        self._variable_reads: Dict[int, Any] = {}  # fetching a variable reuses one read

    # ---------------------------------------------------------------- context managers

    def __enter__(self) -> "Session":
        self._default_stack.append(ctx.default_session)
        ctx.default_session = self
        self._graph_context = self.graph.as_default()
        self._graph_context.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._graph_context.__exit__(*exc)
        ctx.default_session = self._default_stack.pop()
        self.close()

    @contextlib.contextmanager
    def as_default(self) -> Iterator["Session"]:
        saved = ctx.default_session
        ctx.default_session = self
        try:
            with self.graph.as_default():
                yield self
        finally:
            ctx.default_session = saved

    def close(self) -> None:
        self._closed = True

    # ---------------------------------------------------------------- running

    def make_callable(self, fetches: Any, feed_list: Optional[list] = None,
                      accept_options: bool = False) -> Any:
        """A Python callable running `fetches`, fed positionally in `feed_list` order:
        `f = sess.make_callable([y], [x]); f(x_value)` is `sess.run([y], {x: x_value})`."""
        feeds = list(feed_list or [])

        def call(*feed_values: Any, **kwargs: Any) -> Any:
            if len(feed_values) != len(feeds):
                raise TypeError(f"make_callable: expected {len(feeds)} feed values, got "
                                f"{len(feed_values)}")
            options = kwargs.pop("options", None) if accept_options else None
            metadata = kwargs.pop("run_metadata", None) if accept_options else None
            if kwargs:
                raise TypeError(f"make_callable: unexpected keyword arguments {sorted(kwargs)}")
            return self.run(fetches, dict(zip(feeds, feed_values)), options, metadata)
        return call

    def run(self, fetches: Any, feed_dict: Optional[dict] = None, options: Any = None,
            run_metadata: Any = None) -> Any:
        """Computes `fetches` (a graph element or a nested structure of them)."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        # a SparseTensor fetch is fetched as its three component tensors (_results
        # gathers them into a SparseTensorValue, as TF returns)
        # gathers them into a SparseTensorValue, as TF returns); eager components (made
        # from Python values) are already known and are not run
        flat = [c if is_sparse(f) and isinstance(c, EagerTensor) else self._element(c)
                for f in nest.flatten(fetches)
                for c in ((f.indices, f.values, f.dense_shape) if is_sparse(f) else (f,))]
        everything, flat = flat, [f for f in flat if not isinstance(f, EagerTensor)]
        feeds, values = self._feeds(feed_dict or {})
        if self._cluster is not None:
            return self._results(fetches, everything, self._cluster.run(self.graph, flat, feeds,
                                                                        values))
        key = (tuple(id(f) for f in flat), tuple(id(f) for f in feeds))
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._compile(flat, feeds)
            self._cache[key] = compiled
        with np.errstate(all="ignore"):
            try:
                outs = compiled.fn(*values)
            except errors.OpError:
                raise
            except Exception as exc:
                raise errors.InvalidArgumentError(f"{type(exc).__name__}: {exc}") from None
        return self._results(fetches, everything, outs)

    def _results(self, fetches: Any, flat: list, outs: Any) -> Any:
        results = []
        position = 0
        for element in flat:
            if isinstance(element, SymbolicTensor):
                results.append(np.asarray(outs[position])[()] if np.ndim(outs[position]) == 0
                               else outs[position])
                position += 1
            elif isinstance(element, EagerTensor):  # a sparse fetch's known component
                results.append(element.numpy())
            else:
                results.append(None)
        results.reverse()
        results = [SparseTensorValue(results.pop(), results.pop(), results.pop())
                   if is_sparse(f) else results.pop() for f in nest.flatten(fetches)]
        return nest.pack_sequence_as(fetches, results) if nest.is_nested(fetches) \
            else results[0]

    def _element(self, fetch: Any) -> Any:
        if isinstance(fetch, str):
            try:
                return self.graph.get_tensor_by_name(fetch) if ":" in fetch else \
                    self.graph.get_operation_by_name(fetch)
            except (KeyError, ValueError) as exc:  # TF's class and words for a bad name
                raise ValueError(f"Argument `fetch` = {fetch} cannot be interpreted as a "
                                 f"Tensor. ({exc.args[0] if exc.args else exc})") from exc
        if hasattr(fetch, "_handle") and hasattr(fetch, "read_value"):  # a Variable
            read = getattr(fetch, "_graph_read", None)
            if read is not None and read.graph is self.graph:
                return read
            read = self._variable_reads.get(id(fetch))
            if read is None:
                with self.graph.as_default():
                    read = self._variable_reads[id(fetch)] = (fetch.read_value(), fetch)
            return read[0]
        if isinstance(fetch, (SymbolicTensor, Operation)):
            graph = fetch.graph
            if graph is not self.graph:
                raise ValueError(f"Fetch argument {fetch!r} is not an element of this graph.")
            return fetch
        raise TypeError(f"Argument `fetch` = {fetch!r} has invalid type "
                        f"\"{type(fetch).__name__}\" must be a string or Tensor. (Can not "
                        f"convert a {type(fetch).__name__} into a Tensor or Operation.)")

    def _feeds(self, feed_dict: Any) -> tuple:
        feeds, values = [], []
        if not isinstance(feed_dict, Mapping):
            raise TypeError(f"Session.run: argument `feed_dict` must be a dictionary or "
                            f"collections.abc.Mapping, got {type(feed_dict).__name__}")
        for key, value in feed_dict.items():
            if isinstance(key, str):
                try:
                    t = self.graph.get_tensor_by_name(key) if ":" in key else \
                        self.graph.get_operation_by_name(key)
                except (KeyError, ValueError) as exc:  # TF's class for a key naming no tensor
                    raise TypeError(f"Cannot interpret feed_dict key as Tensor: "
                                    f"{exc.args[0] if exc.args else exc}") from exc
            elif isinstance(key, (SymbolicTensor, Operation)) or hasattr(key, "read_value"):
                t = self._element(key)
            else:
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: Can not convert "
                                f"a {type(key).__name__} into a Tensor.")
            if not isinstance(t, SymbolicTensor):
                raise TypeError(f"The value of a feed cannot be an Operation: {key!r}")
            try:
                array = np.array(value.numpy() if hasattr(value, "numpy") else value)
                if t.dtype.kind == "s" or array.dtype.kind in "US":
                    array = _dtypes.string_array(array)  # bytes objects, as tf.string holds
            except (TypeError, ValueError) as exc:
                raise TypeError(f"Cannot feed {value!r} to Tensor '{t.name}': {exc}") from None
            if (array.dtype.kind == "O") != (t.dtype.kind == "s"):
                raise TypeError(f"Cannot feed a value of type {array.dtype} to Tensor "
                                f"'{t.name}' of dtype {t.dtype.name}")
            if array.dtype.kind not in "biufcO":
                raise TypeError(f"Cannot feed a value of type {array.dtype} to Tensor "
                                f"'{t.name}' of dtype {t.dtype.name}")
            want = t.dtype.as_numpy_dtype
            if array.dtype != want:
                # an empty list arrives as float64 but holds no value that could be cut
                if array.dtype.kind == "f" and np.dtype(want).kind in "iu" and array.size:
                    raise TypeError(f"Cannot feed a {array.dtype} value to Tensor {t.name} of "
                                    f"dtype {t.dtype.name}")
                try:
                    array = array.astype(want)
                except (TypeError, ValueError) as exc:
                    raise TypeError(f"Cannot feed {value!r} to Tensor '{t.name}' of dtype "
                                    f"{t.dtype.name}: {exc}") from None
            if not t.shape.is_compatible_with(array.shape):
                raise ValueError(f"Cannot feed value of shape {array.shape} for Tensor "
                                 f"'{t.name}', which has shape '{t.shape}'")
            feeds.append(t)
            values.append(array)
        return feeds, values

    def _compile(self, flat: List[Any], feeds: List[SymbolicTensor]) -> _Compiled:
        fed = {id(t) for t in feeds}
        roots = [f.op if isinstance(f, SymbolicTensor) else f for f in flat]
        ops = ops_needed(self.graph, roots, fed)
        for op in ops:
            if op.type == "Placeholder" and id(op.outputs[0]) not in fed:
                p = op.outputs[0]
                shape = p.shape.as_list() if p.shape.rank is not None else "<unknown>"
                raise errors.InvalidArgumentError(
                    f"You must feed a value for placeholder tensor '{op.name}' with dtype "
                    f"{p.dtype.name} and shape {shape}\n\t [[node {op.name}]]")
        tensors = [f for f in flat if isinstance(f, SymbolicTensor)]
        source, globals_, _ = codegen.generate("session_run", ops, feeds, tensors)
        return _Compiled(loader.load(source, globals_, "Session.run"), feeds, tensors)


class InteractiveSession(Session):
    """A Session that installs itself as the default session on construction."""

    def __init__(self, target: str = "", graph: Optional[Graph] = None,
                 config: Optional[ConfigProto] = None):
        super().__init__(target, graph, config)
        self._saved_default = ctx.default_session
        ctx.default_session = self

    def close(self) -> None:
        super().close()
        if ctx.default_session is self:
            ctx.default_session = self._saved_default
