"""A local Ray cluster that listens on the loopback interface only.

Ray binds its servers (GCS, raylet, workers, the runtime-env agent) to the node's address,
which it takes from the machine's external interface, and ``_node_ip_address="127.0.0.1"``
alone does not change that (Ray 2.60 resolves "127.0.0.1" back to the external address).
Ray's own switch for clusters on one machine, ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, makes
it take the loopback address. Ray reads it when it is imported (its
``ray_constants.ENABLE_RAY_CLUSTER``), so it is set both in the environment (for the processes
the cluster starts) and in that constant (for a Ray imported before).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["LOOPBACK_SWITCH", "init_local"]

LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def init_local(num_cpus: int = 2, *, object_store_megabytes: int = 100, **options: Any) -> None:
    """Start a Ray cluster of this machine for this process, on 127.0.0.1 only.

    No dashboard, worker logs kept out of this process's output, progress bars off, a small
    object store; ``options`` go to ``ray.init``.
    """
    os.environ[LOOPBACK_SWITCH] = "0"
    import ray
    import ray.data
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False

    ray.init(num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, object_store_memory=object_store_megabytes << 20,
             **options)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
