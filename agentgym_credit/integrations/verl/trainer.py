"""verl's v1 PPO trainer with our step columns at the advantage step, and the launcher that runs it.

What lives here:

- :func:`trainer_class`: ``PPOTrainerSync`` (verl 0.9.1, ``trainer.use_v1=True``) with one method
  changed, ``_compute_advantage``: it fetches the outputs' ``extra_fields`` from verl's TransferQueue
  (as verl's own trainer does for its speculative-decoding metrics) and runs verl's advantage step
  inside :func:`~agentgym_credit.integrations.verl.columns.pending_step_columns`, so that our
  registered estimators see the step columns (verl's step hands them a DataProto with ``uid`` only).
  It is registered as trainer mode ``agc_sync`` (``trainer.v1.trainer_mode=agc_sync``);
- :func:`main`: ``python -m agentgym_credit.integrations.verl.trainer <hydra overrides>`` — verl's
  ``main_ppo`` with a task runner that imports this bridge first in its Ray actor (so the estimators,
  the agent loop and the trainer mode are registered where verl looks them up).

Nothing here runs without verl's GPU stack (TransferQueue, vLLM/SGLang, FSDP); see ``examples/verl/``.
"""

from __future__ import annotations

from typing import Any

from agentgym_credit.errors import DependencyNotInstalled

TRAINER_MODE = "agc_sync"
GPU_STACK = ("pip install -e '.[verl]'", "pip install 'verl[vllm]==0.9.1' 'TransferQueue>=0.1.10'")
"""What verl's v1 trainer needs beyond our ``verl`` extra (vLLM for rollouts, TransferQueue for its data)."""


def trainer_class() -> type:
    """The registered ``agc_sync`` trainer class (created and registered on first call)."""
    try:
        import transfer_queue as tq
        from verl.trainer.ppo.v1 import PPOTrainerSync, register_trainer
        from verl.trainer.ppo.v1.trainer_base import TRAINER_REGISTRY
    except ImportError as e:
        raise DependencyNotInstalled(e.name or "transfer_queue", "verl",
                                     commands=GPU_STACK) from None

    from agentgym_credit.integrations.verl.columns import columns_from_extra_fields, pending_step_columns

    if TRAINER_MODE in TRAINER_REGISTRY:
        return TRAINER_REGISTRY[TRAINER_MODE]

    class CreditPPOTrainerSync(PPOTrainerSync):
        """``PPOTrainerSync`` whose advantage step sees the agent loop's step columns."""

        def _compute_advantage(self, batch: Any, metrics: dict) -> Any:
            got = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=["extra_fields"])
            columns = columns_from_extra_fields(list(got.pop("extra_fields").tolist()))
            with pending_step_columns(columns):
                return super()._compute_advantage(batch, metrics)

    return register_trainer(TRAINER_MODE)(CreditPPOTrainerSync)


def _task_runner() -> Any:
    import ray
    from verl.trainer.main_ppo import TaskRunnerV1

    base = TaskRunnerV1.__ray_actor_class__

    class CreditTaskRunner(base):  # type: ignore[misc, valid-type]
        """verl's V1 task runner that registers this bridge in its own process before running."""

        def run(self, config: Any) -> None:
            import agentgym_credit.integrations.verl  # noqa: F401  (estimators, agent loop)

            trainer_class()
            return super().run(config)

    return ray.remote(CreditTaskRunner)


def main() -> None:
    """verl's ``main_ppo`` entry point (hydra, verl's ``ppo_trainer`` config) with our task runner."""
    from verl.trainer import main_ppo

    import agentgym_credit.integrations.verl  # noqa: F401

    main_ppo.TaskRunnerV1 = _task_runner()
    main_ppo.main()


__all__ = ["TRAINER_MODE", "GPU_STACK", "trainer_class", "main"]

if __name__ == "__main__":
    main()
