"""GiGPO inside TRL's GRPOTrainer on credit/GridWorld-v0, in one file.

    python examples/trl/grpo_gigpo_gridworld.py --max-steps 2          # offline tiny model, ~40 s of CPU
    python examples/trl/grpo_gigpo_gridworld.py --model Qwen/Qwen2.5-0.5B-Instruct --max-steps 50
                                                                      # a real model (downloads; a GPU helps)

The loop, top to bottom:
1. ``CreditEnvFactory`` turns the env into TRL environments with one tool, ``act(action)``;
   ``task_dataset`` gives one prompt per (task, reset seed), which TRL repeats ``num_generations`` times:
   the generations of one prompt are one group, sharing one initial state.
2. ``StepCreditGRPOTrainer`` is TRL's ``GRPOTrainer`` (generation, tool loop, masks, loss unchanged)
   whose advantages are ours: each env step's GiGPO advantage on the tokens of the turn that played it.
3. The log lines show TRL's reward (episode return) and ours: ``credit/steps_per_episode``,
   ``credit/no_tool_call_frac`` (rollouts that never called ``act``: scored as one invalid no-op).

``--model tiny`` (default) is a random 2-layer Qwen2 from a config whose sampling is constrained to
``act`` calls (``agentgym_credit.integrations.trl.tiny``): it shows the plumbing offline, it is not
expected to learn in a few steps.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, fields

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

from trl import GRPOConfig  # noqa: E402

from agentgym_credit.integrations.trl import CreditEnvFactory, StepCreditGRPOTrainer, task_dataset  # noqa: E402


@dataclass
class Args:
    model: str = "tiny"  # "tiny" (offline) or a Hugging Face model id with a tool-calling chat template
    env_id: str = "credit/GridWorld-v0"
    size: int = 3  # GridWorld side
    max_env_steps: int = 8  # env truncation
    n_tasks: int = 8  # layouts, one prompt (= one group) each
    num_generations: int = 4  # rollouts per prompt: the group of GRPO/GiGPO
    batch_size: int = 8  # completions per optimizer step (a multiple of num_generations)
    max_steps: int = 2  # optimizer steps
    max_turns: int = 8  # TRL's max_tool_calling_iterations
    max_completion_length: int = 512
    observation: str = "full"  # tool results: "full", or "compact" (admissible actions only where they changed)
    max_result_chars: int = 0  # cut each tool result to this many characters (0: no cut)
    estimator: str = "gigpo"  # any name in agentgym_credit.credit.ESTIMATORS but gae
    gamma: float = 0.95
    lr: float = 1e-5
    out_dir: str = "runs/trl_gigpo_gridworld"
    seed: int = 0


def parse() -> Args:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for f in fields(Args):
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    return Args(**vars(p.parse_args()))


def main(a: Args) -> None:
    env_kwargs = {"size": a.size, "n_tasks": a.n_tasks, "max_steps": a.max_env_steps}
    if a.model == "tiny":
        from agentgym_credit.integrations.trl.tiny import tiny_tool_policy

        model, tokenizer = tiny_tool_policy(a.env_id, ["go north", "go south", "go east", "go west"],
                                            env_kwargs=env_kwargs, seed=a.seed)
        lr, use_cpu = 1e-3, True
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model, tokenizer = AutoModelForCausalLM.from_pretrained(a.model), AutoTokenizer.from_pretrained(a.model)
        tokenizer.padding_side = "left"
        lr, use_cpu = a.lr, False
    args = GRPOConfig(
        output_dir=a.out_dir, use_cpu=use_cpu, report_to="none", save_strategy="no", logging_steps=1,
        per_device_train_batch_size=a.batch_size, num_generations=a.num_generations, max_steps=a.max_steps,
        max_completion_length=a.max_completion_length, max_tool_calling_iterations=a.max_turns,
        learning_rate=lr, beta=0.0, seed=a.seed, bf16=False,
    )
    trainer = StepCreditGRPOTrainer(
        model, args=args, train_dataset=task_dataset(a.env_id, a.n_tasks, seed=a.seed), processing_class=tokenizer,
        environment_factory=CreditEnvFactory(a.env_id, env_kwargs=env_kwargs, observation=a.observation,
                                             max_result_chars=a.max_result_chars or None),
        estimator=a.estimator, estimator_options={"gamma": a.gamma},
    )
    trainer.train()
    trainer.accelerator.end_training()  # under `accelerate launch`: destroy the process group before exit
    for row in trainer.state.log_history:
        if "reward" in row:
            print(f"step {row['step']}: reward {row['reward']:.3f}  steps/episode "
                  f"{row['credit/steps_per_episode']:.2f}  no-tool-call {row['credit/no_tool_call_frac']:.2f}")


if __name__ == "__main__":
    main(parse())
