"""``agentgym-credit train``: train a causal LM on a ``credit/*`` env from the command line.

:func:`main` parses ``argv`` into a :class:`~agentgym_credit.trainer.config.TrainerConfig` — the
common knobs have flags, every other field is reachable with ``--set FIELD=VALUE`` (VALUE read as
JSON when it parses, else as a string) or a JSON file with ``--config`` — then runs
:class:`~agentgym_credit.trainer.loop.Trainer` and prints where the logs went.

Examples::

    agentgym-credit train --env credit/GridWorld-v0 --model tiny --estimator gigpo --iterations 20
    agentgym-credit train --env credit/ALFWorld-v0 --model ~/models/Qwen2.5-0.5B-Instruct \\
        --estimator gigpo --group-size 8 --groups 16 --max-steps 30 --lr 1e-6 --lora --out runs/alf
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from agentgym_credit.trainer.config import TrainerConfig

FLAGS: dict[str, tuple[str, type, str]] = {
    "env": ("env_id", str, "env id, e.g. credit/GridWorld-v0"),
    "model": ("model", str, "Hugging Face name or local path; 'tiny' = offline tiny model"),
    "estimator": ("estimator", str, "grpo, drgrpo, rloo, gigpo, hgpo, hgpo_precision, ..."),
    "iterations": ("iterations", int, "training iterations"),
    "group-size": ("group_size", int, "rollouts per task (N)"),
    "groups": ("groups_per_iter", int, "tasks (groups) per iteration"),
    "max-steps": ("max_steps", int, "step limit per episode"),
    "lr": ("lr", float, "learning rate"),
    "kl": ("kl_coef", float, "KL coefficient to the model RL starts from, after any warm-up (0 = off)"),
    "max-new-tokens": ("max_new_tokens", int, "tokens generated per action"),
    "temperature": ("temperature", float, "sampling temperature"),
    "history-len": ("history_len", int, "(observation, action) pairs shown in the prompt"),
    "token-budget": ("token_budget", int, "padded tokens per micro-batch"),
    "format-warmup-steps": ("format_warmup_steps", int, "supervised steps on random admissible actions first"),
    "seed": ("seed", int, "run seed"),
    "device": ("device", str, "auto, cpu, cuda, cuda:1, ..."),
    "out": ("out_dir", str, "output folder (logs, checkpoints, curves.png)"),
    "threads": ("torch_threads", int, "torch CPU threads (0 = default)"),
}


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentgym-credit train",
                                description="GiGPO/HGPO/GRPO training of a Hugging Face causal LM on a credit/* env.")
    p.add_argument("--config", help="JSON file of TrainerConfig fields (flags override it)")
    for flag, (_, typ, help_) in FLAGS.items():
        p.add_argument(f"--{flag}", type=typ, default=None, help=help_)
    p.add_argument("--lora", action="store_true", default=None, help="train LoRA adapters only (needs peft)")
    p.add_argument("--gradient-checkpointing", action="store_true", default=None)
    p.add_argument("--resume", action="store_true", default=None, help="continue from the last checkpoint in --out")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-plot", action="store_true", help="no curves.png at the end")
    p.add_argument("--export", metavar="DIR", default=None,
                   help="at the end, save the policy as a Hugging Face folder (LoRA merged) that "
                        "AutoModelForCausalLM.from_pretrained loads")
    p.add_argument("--export-dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"),
                   help="dtype of the exported weights (auto: the dtype the model was loaded in)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="any other TrainerConfig field, e.g. --set env_kwargs='{\"size\": 4}' (repeatable)")
    return p


def config_from_args(args: argparse.Namespace) -> TrainerConfig:
    """The :class:`TrainerConfig` the parsed arguments describe (file, then flags, then ``--set``)."""
    data: dict[str, Any] = {}
    if args.config:
        with open(args.config) as f:
            data.update(json.load(f))
    for flag, (field_name, _, _) in FLAGS.items():
        v = getattr(args, flag.replace("-", "_"))
        if v is not None:
            data[field_name] = v
    for name in ("lora", "gradient_checkpointing", "resume"):
        if getattr(args, name):
            data[name] = True
    if args.no_progress:
        data["progress"] = False
    if args.no_plot:
        data["plot"] = False
    for item in args.set:
        if "=" not in item:
            raise ValueError(f"--set needs FIELD=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        data[k.strip()] = _value(v)
    return TrainerConfig.from_dict(data)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentgym-credit train``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(None if argv is None else list(argv))
    try:
        cfg = config_from_args(args)
    except (ValueError, TypeError, OSError) as e:
        parser.error(str(e))
    from agentgym_credit.trainer.loop import Trainer

    trainer = Trainer(cfg)
    cfg.save(trainer.out_dir / "config.json")
    try:
        log = trainer.train()
        if args.export:
            print(f"exported: {trainer.export(args.export, dtype=args.export_dtype)}")
    finally:
        trainer.close()
    if log:
        last = log[-1]
        print(f"iteration {int(last['iteration'])}: success {last['success_rate']:.3f}, "
              f"return {last['mean_return']:.3f}, loss {last['loss']:.4f}")
    print(f"logs: {trainer.out_dir / 'log.jsonl'}, {trainer.out_dir / 'log.csv'}; "
          f"checkpoints: {trainer.out_dir / 'checkpoints'}")
    return 0


__all__ = ["main", "build_parser", "config_from_args", "FLAGS"]
