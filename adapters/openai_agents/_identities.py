"""The keys that tell same-name agents apart, as ``RunState.to_json()`` writes them.

``RunState.to_json()`` serializes each agent reference as ``{"name": ...}`` and, for an agent
that shares its name with another of the run's agent graph, ``"identity": "<name>#<n>"``. The
SDK builds those keys from the run's starting agent; a ``RunItem`` object is serialized with
the same keys, so that it reads as the dict the stored state holds.
"""

from __future__ import annotations

from typing import Any

from tracebridge._changed import FELL
from tracebridge._optional import require

from ._bridge import NAME


def identity_keys(result: Any, objects: list[Any]) -> dict[int, str] | None:
    """The SDK's keys (by ``id()`` of each agent) for a run's RunItem ``objects``.

    Built from the agent ``result.to_state()`` starts from; for an item list, or a result that
    has no state (an exception's ``run_data``), from the agent of the first object, which the
    run's starting agent made. None when there is no object, or the SDK cannot build the keys
    from what the agents hold (changed after the run: then it cannot store them either)."""
    if not objects:
        return None
    sdk = require("agents", adapter=NAME, extra="agents", package="openai-agents")
    state = require("agents.run_state", adapter=NAME, extra="agents", package="openai-agents")
    root = _starting_agent(sdk, result) if result is not None else None
    if root is None:
        root = getattr(objects[0], "agent", None)
    if not isinstance(root, sdk.Agent):
        return None
    try:
        keys: dict[int, str] = state._build_agent_identity_keys_by_id(root)
    except FELL:  # an agent changed after the run (a name that is no key): none to tell
        return None
    return keys


def _starting_agent(sdk: Any, result: Any) -> Any:
    """The agent ``result.to_state()`` starts the state from (as the SDK's
    ``_starting_agent_for_state``: the last agent only when the run recorded none); None for
    a result that has no ``to_state``."""
    if not hasattr(result, "to_state"):
        return None
    for holder, key in ((getattr(result, "_state", None), "_starting_agent"),
                        (result, "_starting_agent_for_state"),
                        (result, "last_agent")):
        try:
            candidate = getattr(holder, key, None)
        except sdk.AgentsException:  # a released last agent: to_state() falls too
            candidate = None
        if isinstance(candidate, sdk.Agent):
            return candidate
    return None
