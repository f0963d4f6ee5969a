"""Metrics over a MultiTurnSample (see docs/metrics.md)."""
