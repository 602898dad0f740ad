"""agentgym-credit: Gymnasium text environments, grouped rollouts and step-level credit assignment.

``import agentgym_credit`` registers the ``credit/`` env namespace with gymnasium:

>>> import gymnasium as gym, agentgym_credit
>>> env = gym.make("credit/GridWorld-v0")
"""

from agentgym_credit.envs.registration import register_all
from agentgym_credit.keys import MISSING, stable_hash

__version__ = "0.1.0"

register_all()

__all__ = ["__version__", "MISSING", "stable_hash", "register_all"]
