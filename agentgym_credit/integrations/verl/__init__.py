"""The verl bridge: our estimators in verl's registry, ``RolloutBatch`` <-> ``DataProto``, an agent loop.

Tested with verl 0.9.1 (``pip install -e '.[verl]'``). Importing this package registers the
estimators (``agc_gigpo``, ``agc_gigpo_obs``, ``agc_verl_agent``, ``agc_hgpo``, ``agc_grpo``, ``agc_rloo``,
``agc_graph``, ``agc_graph_obs``, ``agc_graphgpo``, ``agc_gagpo``) and the agent loop (``agc_credit_env``) with verl; :func:`.trainer.install` puts our trainer under verl's
``"sync"`` trainer mode.

- :mod:`.columns`: the step columns (``uid``, ``traj_uid``, ``agc_*``) and ``StepArrays`` from them;
- :mod:`.estimators`: :func:`register`, :data:`VERL_ESTIMATORS`, :func:`estimator_fn`;
- :mod:`.dataproto`: :func:`to_dataproto`, :func:`from_dataproto`;
- :mod:`.agent_loop`: :class:`CreditEnvAgentLoop`, :func:`group_dataset` (the verl dataset rows),
  :func:`outputs_to_dataproto`.

>>> from agentgym_credit.integrations import verl as agc_verl   # doctest: +SKIP
>>> agc_verl.register()                                         # doctest: +SKIP
['agc_gigpo', 'agc_gigpo_obs', 'agc_verl_agent', 'agc_hgpo', 'agc_grpo', 'agc_rloo', 'agc_graph', ...]
"""

from __future__ import annotations

from agentgym_credit.errors import DependencyNotInstalled

try:
    import cachetools  # noqa: F401  (verl's agent loop imports it without declaring it)
    import verl  # noqa: F401
    from verl.trainer.ppo import core_algos  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised by the import test with verl hidden
    raise DependencyNotInstalled(e.name or "verl", "verl") from None

from agentgym_credit.integrations.verl.agent_loop import (
    AGENT_NAME,
    CreditEnvAgentLoop,
    group_dataset,
    outputs_to_dataproto,
)
from agentgym_credit.integrations.verl.columns import (
    STEP_COLUMNS,
    MissingStepColumns,
    TruncatedTrajectory,
    steps_from_columns,
)
from agentgym_credit.integrations.verl.dataproto import from_dataproto, to_dataproto
from agentgym_credit.integrations.verl.estimators import VERL_ESTIMATORS, estimator_fn, register

register()

__all__ = [
    "AGENT_NAME",
    "CreditEnvAgentLoop",
    "group_dataset",
    "outputs_to_dataproto",
    "STEP_COLUMNS",
    "MissingStepColumns",
    "TruncatedTrajectory",
    "steps_from_columns",
    "to_dataproto",
    "from_dataproto",
    "VERL_ESTIMATORS",
    "estimator_fn",
    "register",
]
