"""Cluster resolvers (TF's tf.distribute.cluster_resolver): where the workers of a
multi-worker strategy are. Here a worker task is a Ray worker process; the resolver's
`master()` is the Ray address to join ("" or None: start a local Ray instance).
"""
from __future__ import annotations

import json
import os
from typing import Any, Optional

from kilnflow.train import ClusterSpec


class ClusterResolver:
    """Base: a ClusterSpec plus this process's task."""

    task_type: Optional[str] = None
    task_id: Optional[int] = None
    rpc_layer: Optional[str] = None

    def cluster_spec(self) -> ClusterSpec:
        raise NotImplementedError

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        return ""

    def num_accelerators(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                         config_proto: Any = None) -> dict:
        return {}

    @property
    def environment(self) -> str:
        return ""

    def num_workers(self) -> int:
        """Worker processes: the tasks of the `chief` and `worker` jobs."""
        spec = self.cluster_spec()
        return sum(spec.num_tasks(job) for job in ("chief", "worker") if job in spec.jobs)


class SimpleClusterResolver(ClusterResolver):
    """A resolver from a ClusterSpec given directly.

    >>> import kilnflow as kf
    >>> spec = kf.train.ClusterSpec({"worker": ["localhost:1", "localhost:2"]})
    >>> kf.distribute.cluster_resolver.SimpleClusterResolver(spec).num_workers()
    2
    """

    def __init__(self, cluster_spec: Any, master: str = "", task_type: Optional[str] = None,
                 task_id: Optional[int] = None, environment: str = "",
                 num_accelerators: Optional[dict] = None, rpc_layer: Optional[str] = None):
        self._cluster_spec = ClusterSpec(cluster_spec)
        self._master = master
        self.task_type = task_type
        self.task_id = task_id
        self._environment = environment
        self._num_accelerators = dict(num_accelerators or {})
        self.rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        return self._master

    def num_accelerators(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                         config_proto: Any = None) -> dict:
        return dict(self._num_accelerators)

    @property
    def environment(self) -> str:
        return self._environment


class TFConfigClusterResolver(ClusterResolver):
    """A resolver reading the TF_CONFIG environment variable (JSON with `cluster` and
    `task`), as TF's multi-worker scripts set it."""

    def __init__(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                 rpc_layer: Optional[str] = None, environment: Optional[str] = None):
        try:
            config = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"TF_CONFIG is not valid JSON: {exc}") from None
        task = config.get("task", {})
        self._cluster_spec = ClusterSpec(config.get("cluster", {}))
        self.task_type = task_type if task_type is not None else task.get("type")
        self.task_id = task_id if task_id is not None else task.get("index")
        self.rpc_layer = rpc_layer or config.get("rpc_layer")
        self._environment = environment or config.get("environment", "")

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    @property
    def environment(self) -> str:
        return self._environment
