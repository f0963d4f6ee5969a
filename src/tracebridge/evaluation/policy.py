"""A release policy: what a run must show for the gate to pass it (TOML).

```toml
review_blocks = true          # a case in review blocks the release (default: true)
max_evaluator_errors = 0      # judge or provider failures allowed in the run (default: 0)
max_unrun = 0                 # cases left unrun allowed, critical ones never (default: 0)
max_cost = 0.50               # dollars the run may have cost (needs the run's --price)
required_slices = ["ticket-creation"]
required_controls = ["positive", "negative_false_claim", "duplicate_side_effect"]
required_evidence = ["reference_version", "session_id"]
binary_metrics = []           # metrics valued 0 or 1, besides the two goal metrics

[slices.ticket-creation]
max_failures = 0              # failed cases allowed in the slice (controls not counted)
```

Every slice of the run needs a ``[slices.NAME]`` table (cases without a slice are the slice
``""``: ``[slices.""]``). TOML is read with ``tomllib`` (Python 3.11+) or, on 3.10, ``tomli``
(a dependency there).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..metrics.cli import DETERMINISTIC, JUDGED
from .cases import ControlRole

__all__ = ["EVIDENCE_FIELDS", "Policy", "PolicyError", "SlicePolicy", "load_policy"]

_CONFIG = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
# Counts, switches and the cost are strict: TOML has its own booleans and numbers, and
# ``true`` is not a count of 1 (nor 1 a switch).

EvidenceField = Literal[
    "reference_version", "session_id", "human_goal_achieved", "transcript_hash", "source_hash"
]
EVIDENCE_FIELDS: tuple[str, ...] = EvidenceField.__args__  # type: ignore[attr-defined]
"""The ``cases.jsonl`` fields a policy can require on every case."""


class PolicyError(Exception):
    """The policy file cannot be used (one line)."""


class SlicePolicy(BaseModel):
    """What one slice may show."""

    model_config = _CONFIG

    max_failures: int = Field(ge=0, strict=True)
    """Failed cases allowed in the slice (controls are judged by their own rule)."""


class Policy(BaseModel):
    """What a run must show for the gate to pass it."""

    model_config = _CONFIG

    slices: dict[str, SlicePolicy] = {}
    """Each slice's limits; a slice of the run with no entry blocks."""
    review_blocks: bool = Field(default=True, strict=True)
    """Whether a case in ``review`` blocks."""
    max_evaluator_errors: int = Field(default=0, ge=0, strict=True)
    """Results with a judge or provider failure allowed in the whole run."""
    max_unrun: int = Field(default=0, ge=0, strict=True)
    """Cases left unrun (or errored) allowed; a critical one always blocks."""
    max_cost: float | None = Field(default=None, ge=0, strict=True)
    """Dollars the run may have cost; the run must know its cost (``--price``)."""
    required_slices: list[str] = []
    """Slices the run must have cases in."""
    required_controls: list[ControlRole] = []
    """Control roles the run must have a control of."""
    required_evidence: list[EvidenceField] = []
    """``cases.jsonl`` fields every case must have (not null)."""
    binary_metrics: list[str] = []
    """Metrics valued 0 or 1, besides the goal metrics."""

    @field_validator("binary_metrics")
    @classmethod
    def _known_metrics(cls, names: list[str]) -> list[str]:
        """A name that is no metric is a typo, never a rule that silently applies to none."""
        for name in names:
            if name not in DETERMINISTIC and name not in JUDGED:
                raise ValueError(f"{name!r} is no metric; known: "
                                 f"{', '.join([*DETERMINISTIC, *JUDGED])}")
        return names


def load_policy(path: str) -> Policy:
    """Read and check a policy file; ``PolicyError`` says what is wrong in one line."""
    toml = _toml()
    try:
        with open(path, "rb") as stream:
            data = toml.load(stream)
    except OSError as exc:
        raise PolicyError(f"cannot read {path}: {exc}") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8 text
        raise PolicyError(f"{path}: not UTF-8 text: {exc.reason}") from None
    except toml.TOMLDecodeError as exc:
        raise PolicyError(f"{path}: not TOML: {exc}") from None
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise PolicyError(f"{path}: {where}: {error['msg']}{more}") from None


def _toml() -> Any:
    name = "tomllib" if sys.version_info >= (3, 11) else "tomli"
    try:
        return importlib.import_module(name)
    except ImportError:  # only on 3.10 without the dependency
        raise PolicyError("reading a policy needs tomli on Python 3.10: pip install "
                          "'tracebridge[gate]'") from None
