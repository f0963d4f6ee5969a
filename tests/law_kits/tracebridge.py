"""Law kit for tracebridge's own JSON form: conversations with call ids, and without them
(results paired with their calls by position)."""

from __future__ import annotations

from hypothesis import strategies as st

from law_kits import BrokenTrace, LawKit
from strategies import Broken, Shape, conversations, mutate_unknown_role, rule_mutations

NO_IDS = Shape(ids=False)


def _as_json(broken: Broken) -> BrokenTrace:
    trace = [m if isinstance(m, dict) else m.model_dump(mode="json") for m in broken.messages]
    return BrokenTrace(trace, broken.code, broken.index, broken.path)


WITH_IDS, WITHOUT_IDS = rule_mutations(), rule_mutations(NO_IDS)
RULES = {
    "unknown_role": st.one_of(mutate_unknown_role(), mutate_unknown_role(NO_IDS)).map(_as_json),
    **{
        code: st.one_of(WITH_IDS[code], *([WITHOUT_IDS[code]] if code in WITHOUT_IDS else []))
        .map(_as_json)
        for code in WITH_IDS
    },
}
ANY_CONVERSATION = st.one_of(conversations(), conversations(NO_IDS))

KIT = LawKit(
    traces=ANY_CONVERSATION.map(lambda ms: [m.model_dump(mode="json") for m in ms]),
    conversations=ANY_CONVERSATION,
    broken=st.one_of(*RULES.values()),
    rules=RULES,
)
