"""Gymnasium wrappers (history fingerprints, action projection) and the grouped rollout collector."""

from agentgym_credit.wrappers.action_projection import ActionProjection
from agentgym_credit.wrappers.collector import CollectionFailed, GroupedRolloutCollector, PolicyOutput
from agentgym_credit.wrappers.history import HistoryFingerprint
from agentgym_credit.wrappers.rollout_batch import RolloutBatch, Trajectory, TrajectoryTable

__all__ = [
    "HistoryFingerprint",
    "ActionProjection",
    "GroupedRolloutCollector",
    "CollectionFailed",
    "PolicyOutput",
    "RolloutBatch",
    "Trajectory",
    "TrajectoryTable",
]
