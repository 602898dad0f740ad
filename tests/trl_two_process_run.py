"""Helper of ``tests/test_integration_trl.py``: one StepCreditGRPOTrainer step on this process of a
two-process CPU run started by ``accelerate launch --multi_gpu --num_processes 2 --num_machines 1
--mixed_precision no --dynamo_backend no`` (no accelerate config file). Each rank writes, to
``<out>/rank<k>.pt``, its rollouts' step records and act calls, its (B, T) advantages and loss masks, and the
distributed setup accelerate gave it, so the test can recompute the advantages from every rank's records (a
group of 8 generations split 4 + 4 over the two processes).

Why ``--multi_gpu`` on a machine without GPUs: accelerate 1.x's ``--cpu`` launch goes to its
``simple_launcher``, which starts ONE process unless an MPI hostfile is given (``--mpirun_hostfile``;
``accelerate/utils/launch.py``, ``prepare_simple_launcher_cmd_env``), so ``--cpu --num_processes 2`` trains on
one process here (no MPI installed). ``--multi_gpu`` starts the processes with ``torch.distributed.run``
(``multi_gpu_launcher``), and ``GRPOConfig(use_cpu=True)`` below puts each on the CPU, where accelerate
initializes gloo.

Each rank ends with ``accelerator.wait_for_everyone()`` (a barrier) and ``accelerator.end_training()`` (which
calls ``destroy_process_group``) before it exits. Without them, a rank that leaves with its gloo process group
alive can abort at interpreter exit ("terminate called without an active exception", SIGABRT): gloo's worker
threads may still hold work with Python references while the interpreter is torn down, as the unmerged
pytorch/pytorch#179291 describes. It happened once in CI, after both ranks had trained."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import torch  # noqa: E402
from trl import GRPOConfig  # noqa: E402

from agentgym_credit.integrations.trl import CreditEnvFactory, StepCreditGRPOTrainer, task_dataset  # noqa: E402
from agentgym_credit.integrations.trl.tiny import tiny_tool_policy  # noqa: E402

ENV_ID = "credit/GridWorld-v0"
ENV_KW = {"size": 3, "n_tasks": 4, "max_steps": 4}


class Recording(StepCreditGRPOTrainer):
    def _generate_and_score_completions(self, inputs):
        out = super()._generate_and_score_completions(inputs)
        self.recorded = {"records": [list(e.records) for e in self.environments],
                         "calls": [list(e.calls) for e in self.environments],
                         "mask": (out["completion_mask"] * out["tool_mask"]).clone(),
                         "advantages": out["advantages"].clone()}
        return out


def main(out_dir: str) -> None:
    torch.set_num_threads(1)
    model, tok = tiny_tool_policy(ENV_ID, ["go north", "go south", "go east", "go west"], env_kwargs=ENV_KW,
                                  stop_bias=-3.0, seed=0)
    args = GRPOConfig(output_dir=out_dir, use_cpu=True, report_to="none", save_strategy="no", logging_steps=1,
                      per_device_train_batch_size=4, num_generations=8, max_steps=1, max_completion_length=320,
                      max_tool_calling_iterations=5, learning_rate=1e-3, beta=0.0, seed=0, shuffle_dataset=False,
                      disable_tqdm=True, bf16=False)
    trainer = Recording(model, args=args, train_dataset=task_dataset(ENV_ID, 2), processing_class=tok,
                        environment_factory=CreditEnvFactory(ENV_ID, env_kwargs=ENV_KW), estimator="gigpo")
    trainer.train()
    rank = trainer.accelerator.process_index
    state = trainer.accelerator.state
    record = {**trainer.recorded, "num_processes": trainer.accelerator.num_processes,
              "backend": state.backend, "device": str(state.device), "distributed_type": str(state.distributed_type)}
    trainer.accelerator.wait_for_everyone()
    trainer.accelerator.end_training()
    record["process_group_alive_at_exit"] = torch.distributed.is_initialized()
    torch.save(record, os.path.join(out_dir, f"rank{rank}.pt"))


if __name__ == "__main__":
    main(sys.argv[1])
