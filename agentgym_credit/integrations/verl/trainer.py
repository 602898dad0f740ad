"""verl's v1 PPO trainer with our step columns at the advantage step, and the launcher that runs it.

What lives here:

- :func:`trainer_class`: ``CreditPPOTrainerSync``, verl's ``PPOTrainerSync`` (verl 0.9.1,
  ``trainer.use_v1=True``) with one method changed, ``_compute_advantage``: it fetches the outputs'
  ``extra_fields`` from verl's TransferQueue (as verl's own trainer does for its speculative-decoding
  metrics) and runs verl's advantage step inside
  :func:`~agentgym_credit.integrations.verl.columns.pending_step_columns`, so that our registered estimators
  see the step columns (verl's step hands them a DataProto with ``uid`` only); first it writes each row's
  own score (the agent loop's ``agc_score``) back into ``rm_scores``, which verl's v1 worker had overwritten with
  the trajectory's last score, so that verl's built-in estimators read the per-row ``token_level_rewards``
  (with ``token_rewards="verl-agent"``: verl-agent's per-row invalid-action penalty);
- :func:`install`: puts that class in verl's trainer registry **under verl's own mode name** ``"sync"``
  (:data:`TRAINER_MODE`), in the calling process. verl's ``trainer_base`` compares ``trainer_mode`` with the
  literal ``"sync"`` (replay buffer, refill, checkpoint and resubmission branches) and reads the
  ``trainer.v1.<mode>`` config section, so a new mode name would switch verl into its async paths; keeping
  ``"sync"`` keeps every sync branch. The config needs nothing of ours here: verl's default
  ``trainer.v1.trainer_mode`` is ``sync``;
- :func:`main`: ``python -m agentgym_credit.integrations.verl.trainer <hydra overrides>`` — verl's
  ``main_ppo`` with a task runner that imports this bridge and calls :func:`install` first in its Ray actor
  (where verl's ``get_trainer_cls`` looks the mode up).

verl's padding rows (``_balance_batch`` pads every step to a multiple of lcm(dp, ppo_mini_batch_size x n))
reach the estimator with an empty response mask and get advantage 0
(:mod:`~agentgym_credit.integrations.verl.estimators`). Tested on CPU against a real TransferQueue
(``tests/test_integration_verl_v1.py``); rollouts (vLLM/SGLang) and the FSDP update need GPUs.
"""

from __future__ import annotations

from typing import Any

from agentgym_credit.errors import DependencyNotInstalled

TRAINER_MODE = "sync"
"""The verl trainer mode our trainer is installed under: verl's own (see the module docstring)."""
GPU_STACK = ("pip install -e '.[verl]'", "pip install 'verl[vllm]==0.9.1'")
"""What verl's v1 trainer needs: our ``verl`` extra (verl, TransferQueue) and, for rollouts, vLLM."""

_CLASS: list[type] = []


def trainer_class() -> type:
    """``CreditPPOTrainerSync`` (created on first call; not registered: see :func:`install`)."""
    if _CLASS:
        return _CLASS[0]
    try:
        import torch
        import transfer_queue as tq
        from tensordict import TensorDict
        from verl.trainer.ppo.v1 import PPOTrainerSync
    except ImportError as e:
        raise DependencyNotInstalled(e.name or "transfer_queue", "verl", commands=GPU_STACK) from None

    from agentgym_credit.integrations.verl.columns import columns_from_extra_fields, pending_step_columns

    class CreditPPOTrainerSync(PPOTrainerSync):
        """``PPOTrainerSync`` whose advantage step sees the agent loop's step columns."""

        def _compute_advantage(self, batch: Any, metrics: dict) -> Any:
            got = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=["extra_fields"])
            columns = columns_from_extra_fields(list(got.pop("extra_fields").tolist()))
            _put_row_scores(batch, columns)
            with pending_step_columns(columns):
                return super()._compute_advantage(batch, metrics)

    def _put_row_scores(batch: Any, columns: dict) -> None:
        """Each row's own score (``agc_score``) into its ``rm_scores``, on its last response token: verl's v1
        worker gave every output of a trajectory the last output's score (``agent_loop_tq.py`` 172-174)."""
        score = columns.get("agc_score")
        if score is None:
            return
        rows = [i for i, s in enumerate(score.tolist()) if s is not None and not str(batch.keys[i]).startswith("pad")]
        if not rows:
            return
        keys = [batch.keys[i] for i in rows]
        got = tq.kv_batch_get(keys=keys, partition_id=batch.partition_id, select_fields=["rm_scores"])
        fixed = []
        for i, old in zip(rows, got["rm_scores"].unbind()):
            new = torch.zeros_like(old, dtype=torch.float32)
            if new.numel():
                new[-1] = float(score[i])
            fixed.append(new)
        nested = torch.nested.as_nested_tensor(fixed, layout=torch.jagged)
        tq.kv_batch_put(keys=keys, partition_id=batch.partition_id, fields=TensorDict({"rm_scores": nested},
                                                                                        batch_size=len(keys)))

    _CLASS.append(CreditPPOTrainerSync)
    return CreditPPOTrainerSync


def install() -> type:
    """Make verl's ``get_trainer_cls("sync")`` return :func:`trainer_class` in this process (idempotent).

    Refuses when ``"sync"`` holds a class that is neither verl's ``PPOTrainerSync`` nor ours."""
    cls = trainer_class()
    from verl.trainer.ppo.v1 import PPOTrainerSync
    from verl.trainer.ppo.v1.trainer_base import TRAINER_REGISTRY

    current = TRAINER_REGISTRY.get(TRAINER_MODE)
    if current is not cls and current is not PPOTrainerSync and current is not None:
        raise RuntimeError(f"verl's trainer mode {TRAINER_MODE!r} is registered to {current!r}, not verl's "
                           "PPOTrainerSync; refusing to replace another library's trainer")
    TRAINER_REGISTRY[TRAINER_MODE] = cls
    return cls


def _task_runner() -> Any:
    import ray
    from verl.trainer.main_ppo import TaskRunnerV1

    base = TaskRunnerV1.__ray_actor_class__

    class CreditTaskRunner(base):  # type: ignore[misc, valid-type]
        """verl's V1 task runner that registers this bridge in its own process before running."""

        def run(self, config: Any) -> None:
            import agentgym_credit.integrations.verl  # noqa: F401  (estimators, agent loop)

            install()
            return super().run(config)

    return ray.remote(CreditTaskRunner)


def main() -> None:
    """verl's ``main_ppo`` entry point (hydra, verl's ``ppo_trainer`` config) with our task runner."""
    from verl.trainer import main_ppo

    import agentgym_credit.integrations.verl  # noqa: F401

    main_ppo.TaskRunnerV1 = _task_runner()
    main_ppo.main()


__all__ = ["TRAINER_MODE", "GPU_STACK", "trainer_class", "install", "main"]

if __name__ == "__main__":
    main()
