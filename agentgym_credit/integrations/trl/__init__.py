"""TRL bridge: ``credit/*`` envs for ``GRPOTrainer(environment_factory=...)`` and step-level credit in it.

Needs the ``trl`` extra (``pip install -e '.[trl]'``; tested with trl 1.16.0). Importing this
package without trl raises :class:`~agentgym_credit.errors.DependencyNotInstalled`.

- :mod:`.env`: :class:`CreditEnvFactory` (``observation="compact"``, ``max_result_chars``: bounded tool
  results), :class:`CreditToolEnv` (one tool, ``act``),
  :class:`StepRecord`, :func:`task_dataset` (one row per task and reset seed);
- :mod:`.trainer`: :class:`StepCreditGRPOTrainer` (GiGPO/HGPO/... advantages per turn, as ``(B, T)``
  token advantages in TRL's loss), :class:`TurnCredit`, :func:`turn_spans`;
- :mod:`.tiny` (import it explicitly): :func:`~.tiny.tiny_tool_policy`, an offline tiny Qwen2 model
  whose sampling is constrained to ``act`` calls, for CPU runs, the example and the tests.

>>> from agentgym_credit.integrations.trl import CreditEnvFactory, StepCreditGRPOTrainer, task_dataset
>>> factory = CreditEnvFactory("credit/GridWorld-v0", env_kwargs={"size": 4})
>>> len(task_dataset("credit/GridWorld-v0", 3))
3
"""

from __future__ import annotations

import warnings

from agentgym_credit.errors import DependencyNotInstalled

try:
    import trl as _trl
except ImportError:  # pragma: no cover - exercised only without the extra
    raise DependencyNotInstalled("trl", "trl") from None

TESTED_TRL = ("1.16", "1.17")
"""The trl versions this bridge is tested with: ``>= TESTED_TRL[0], < TESTED_TRL[1]`` (the extra's pin)."""


def _check_version(version: str) -> None:
    from packaging.version import Version

    if not Version(TESTED_TRL[0]) <= Version(version) < Version(TESTED_TRL[1]):
        warnings.warn(f"agentgym_credit.integrations.trl is tested with trl>={TESTED_TRL[0]},<{TESTED_TRL[1]}; "
                      f"trl {version} is installed (it hooks GRPOTrainer internals that may change)",
                      UserWarning, stacklevel=3)


_check_version(_trl.__version__)

from agentgym_credit.integrations.trl.env import (  # noqa: E402
    DEFAULT_INSTRUCTION,
    EPISODE_OVER,
    OBSERVATIONS,
    TOOL_NAME,
    CreditEnvFactory,
    CreditToolEnv,
    StepRecord,
    credit_env_id,
    task_dataset,
)
from agentgym_credit.integrations.trl.trainer import StepCreditGRPOTrainer, TurnCredit, turn_spans  # noqa: E402

__all__ = [
    "CreditEnvFactory",
    "CreditToolEnv",
    "DEFAULT_INSTRUCTION",
    "EPISODE_OVER",
    "OBSERVATIONS",
    "StepCreditGRPOTrainer",
    "StepRecord",
    "TESTED_TRL",
    "TOOL_NAME",
    "TurnCredit",
    "credit_env_id",
    "task_dataset",
    "turn_spans",
]
