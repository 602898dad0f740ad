"""Gymnasium wrappers (history fingerprints, action projection) and the grouped rollout collector."""

from agentgym_credit.wrappers.history import HistoryFingerprint

__all__ = ["HistoryFingerprint"]
