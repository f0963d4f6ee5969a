"""Law kit for tracebridge's own JSON form."""

from __future__ import annotations

from hypothesis import strategies as st

from law_kits import BrokenTrace, LawKit
from strategies import Broken, conversations, mutate_unknown_role, mutations


def _as_json(broken: Broken) -> BrokenTrace:
    trace = [m if isinstance(m, dict) else m.model_dump(mode="json") for m in broken.messages]
    return BrokenTrace(trace, broken.code, broken.index)


KIT = LawKit(
    traces=conversations().map(lambda ms: [m.model_dump(mode="json") for m in ms]),
    conversations=conversations(),
    broken=st.one_of(mutations(), mutations(), mutate_unknown_role()).map(_as_json),
)
