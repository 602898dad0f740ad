"""ALFWorld and TextWorld on the real text engines, offline (extra ``alfworld``; see README).

Modules (imported lazily: ``import agentgym_credit`` does not need the engine):

- :mod:`~agentgym_credit.envs.alfworld.env` — ``ALFWorldEnv`` (``credit/ALFWorld-v0``);
- :mod:`~agentgym_credit.envs.alfworld.textworld_env` — ``TextWorldEnv`` (``credit/TextWorld-v0``);
- :mod:`~agentgym_credit.envs.alfworld.engine` — engine construction, game upgrade to the installed
  domain/grammar, the engine planner;
- :mod:`~agentgym_credit.envs.alfworld.fast` — ``FastPddlEnv``: same transcripts as the stock engine, faster;
- :mod:`~agentgym_credit.envs.alfworld.games` — real game folders, generated game lists, splits;
- :mod:`~agentgym_credit.envs.alfworld.generator` — ALFWorld-style PDDL problems for the six task types;
- :mod:`~agentgym_credit.envs.alfworld.expert` — the fact oracle expert.
"""

__all__: list[str] = []
