"""Advantage estimators over flat step arrays (numpy only) and the ground-truth oracle."""

from agentgym_credit.credit.steps import MISSING, StepArrays

__all__ = ["StepArrays", "MISSING"]
