"""Running a function on several replicas in one process: one thread per replica, taking
turns, so that `merge_call` (and `all_reduce`, built on it) can pause every replica, run
the merge function once, and resume them with its result.

Only one replica thread runs at a time, in replica order: graph building stays
single-threaded and deterministic, and eager results do not depend on scheduling. Each
thread inherits its caller's mode stack (the graph being traced, control dependencies,
variable-creation hooks), so replicas trace into the caller's kf.function graph.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, List

from kilnflow.context import ctx
from kilnflow.distribute import distribution_context as dctx
from kilnflow.distribute.strategy import ReplicaContext, call_replica_fn
from kilnflow.distribute.values import regroup, select_replica
from kilnflow.variables import creator_stack, replaced_creator_stack


class _Aborted(BaseException):
    """Raised inside a paused replica when another replica failed (not an Exception, so
    user code's `except Exception` does not swallow it)."""


def _caller_state() -> dict:
    return {"graph": ctx.graph, "graph_stack": list(ctx.graph_stack),
            "tapes": list(ctx.tapes), "control_deps": list(ctx.control_deps),
            "variable_hooks": list(ctx.variable_hooks), "eager_default": ctx.eager_default,
            "v1_default_graph": ctx.v1_default_graph,
            "default_session": ctx.default_session, "quiet_ops": ctx.quiet_ops}


def _install(state: dict) -> None:
    for name, value in state.items():
        setattr(ctx, name, value)


class _ReplicaThread(threading.Thread):
    def __init__(self, strategy: Any, replica_id: int, call: Callable, state: dict,
                 stack: list):
        super().__init__(name=f"kilnflow-replica-{replica_id}", daemon=True)
        self.strategy = strategy
        self.replica_id = replica_id
        self.call = call
        self.state = state
        self.stack = stack
        self.creators = creator_stack()  # built in the caller's thread: its creator scopes
        self.should_run = threading.Event()
        self.has_paused = threading.Event()
        self.done = False
        self.aborted = False
        self.result: Any = None
        self.error: Any = None
        self.merge_fn: Any = None
        self.merge_args: Any = None
        self.merge_result: Any = None

    def run(self) -> None:
        self.should_run.wait()
        self.should_run.clear()
        try:
            if not self.aborted:
                _install(self.state)
                with dctx.replaced(self.stack), replaced_creator_stack(self.creators):
                    replica = MirroredReplicaContext(self.strategy, self.replica_id, self)
                    with dctx.pushed(self.strategy, replica):
                        self.result = self.call()
        except BaseException as exc:  # handed to the caller's thread
            self.error = exc
        finally:
            self.done = True
            self.has_paused.set()

    def pause_for_merge(self, merge_fn: Callable, args: tuple, kwargs: dict) -> Any:
        self.merge_fn, self.merge_args = merge_fn, (args, kwargs)
        self.has_paused.set()
        self.should_run.wait()
        self.should_run.clear()
        if self.aborted:
            raise _Aborted()
        return self.merge_result


def run_replicas(strategy: Any, fn: Callable, args: tuple, kwargs: dict) -> List[Any]:
    """fn on every replica (arguments split with select_replica); one result each."""
    n = strategy.num_replicas_in_sync
    state = _caller_state()
    stack = dctx.entries()
    threads = []
    for i in range(n):
        replica_args, replica_kwargs = select_replica(i, args), select_replica(i, kwargs)
        call = (lambda a=replica_args, k=replica_kwargs: call_replica_fn(fn, a, k))
        threads.append(_ReplicaThread(strategy, i, call, state, stack))
    for thread in threads:
        thread.start()
    try:
        while True:
            for thread in threads:
                if thread.done:
                    continue
                thread.should_run.set()  # run it until it finishes or reaches merge_call
                thread.has_paused.wait()
                thread.has_paused.clear()
                if thread.error is not None:
                    raise thread.error
            if all(t.done for t in threads):
                break
            if any(t.done for t in threads):
                waiting = [t.replica_id for t in threads if not t.done]
                raise RuntimeError(f"merge_call (or all_reduce) was called by replicas "
                                   f"{waiting} but not by the others: every replica must make "
                                   "the same cross-replica calls")
            _merge(strategy, threads)
    finally:
        for thread in threads:
            if not thread.done:
                thread.aborted = True
                thread.should_run.set()
        for thread in threads:
            thread.join()
    return [t.result for t in threads]


def _merge(strategy: Any, threads: list) -> None:
    """All replicas are paused in merge_call: run the merge function once, cross-replica."""
    merge_fn = threads[0].merge_fn
    args = regroup([t.merge_args[0] for t in threads])
    kwargs = regroup([t.merge_args[1] for t in threads])
    with dctx.pushed(strategy, None):
        merged = merge_fn(strategy, *args, **kwargs)
    for thread in threads:
        thread.merge_result = select_replica(thread.replica_id, merged)
        thread.merge_fn = thread.merge_args = None


class MirroredReplicaContext(ReplicaContext):
    """A replica of a multi-replica strategy: merge_call pauses until every replica gets
    there."""

    def __init__(self, strategy: Any, replica_id: int, thread: _ReplicaThread):
        super().__init__(strategy, replica_id)
        self._thread = thread

    def merge_call(self, merge_fn: Callable, args: tuple = (), kwargs: Any = None) -> Any:
        return self._thread.pause_for_merge(merge_fn, tuple(args), dict(kwargs or {}))
