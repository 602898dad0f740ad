"""Environments: ``gridworld`` (synthetic tasks with an exact model), ``alfworld``, ``webshop``.

Each family is its own sub-package and is imported only when its env is made, so optional
dependencies (the ALFWorld engine, WebShop search) are needed only by their own envs.
"""

from agentgym_credit.envs.base import CONTRACT_INFO_KEYS, CreditEnv, TextSpace
from agentgym_credit.envs.registration import ENVS, registered_ids

__all__ = ["CreditEnv", "TextSpace", "CONTRACT_INFO_KEYS", "ENVS", "registered_ids"]
