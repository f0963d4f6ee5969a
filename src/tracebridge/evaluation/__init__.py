"""Evaluation runs: cases, deterministic checks before any judge, controls, a budget for the
judge and a cache of its results, and a run record that says what ran, what did not, and why.
"""

from __future__ import annotations
