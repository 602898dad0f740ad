"""``TrainerConfig``: every knob of the companion trainer in one dataclass.

Grouped as environment, model, prompt, sampling, credit, update (PPO-clip), LoRA and loop.
``to_dict``/``from_dict`` round-trip through JSON (saved beside every checkpoint), and
``from_dict`` rejects unknown keys with the list of the known ones, so a typo never passes silently.

>>> cfg = TrainerConfig(env_id="credit/GridWorld-v0", estimator="grpo", iterations=3)
>>> TrainerConfig.from_dict(cfg.to_dict()) == cfg
True
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

MIXED_PRECISION = ("auto", "no", "bf16")
MASTER_WEIGHTS = ("fp32", "model")
LR_SCHEDULES = ("constant", "linear", "cosine")
SWITCHES = ("auto", "yes", "no")
SAMPLER_CACHES = ("auto", "dynamic", "static")
DTYPES = ("auto", "float32", "float64", "bfloat16", "float16")


@dataclass
class TrainerConfig:
    """All settings of one training run (see the field comments; defaults suit a CPU smoke run)."""

    # -- environment ----------------------------------------------------------------------------
    env_id: str = "credit/GridWorld-v0"
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    group_size: int = 8  # N rollouts per task, all from the same seed and task
    groups_per_iter: int = 4  # tasks (groups) per iteration
    max_steps: int = 20  # step limit per episode
    task_seed_offset: int = 0  # group g of iteration i resets with seed = offset + i * groups_per_iter + g
    # -- model ----------------------------------------------------------------------------------
    model: str = "tiny"  # a Hugging Face name or local path; "tiny" = offline tiny Qwen2 on the env's text
    tokenizer: str | None = None  # defaults to `model`
    dtype: str = "auto"  # dtype the model is loaded in ("auto": bfloat16 on CUDA, float32 on CPU)
    master_weights: str = "fp32"  # "fp32": trainable weights held in float32 (bf16/fp16 compute via autocast)
    device: str = "auto"  # "auto": cuda if available, else cpu
    trust_remote_code: bool = False
    tiny_arch: str = "qwen2"  # "qwen2" or "gpt2" (model="tiny" only)
    tiny_hidden: int = 64
    tiny_layers: int = 2
    tiny_vocab: int = 512
    # -- prompt ---------------------------------------------------------------------------------
    template: str = "auto"  # prompt template family ("auto": from env_id)
    history_len: int = 4  # last H (observation, action) pairs shown
    chat_template: str = "auto"  # "auto": use the tokenizer's chat template when it has one; "yes"/"no"
    max_prompt_tokens: int = 2048  # longer prompts drop their oldest history turns (never system/task/observation)
    # -- sampling -------------------------------------------------------------------------------
    max_new_tokens: int = 16
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    sampler_cache: str = "auto"  # "auto": static on CUDA, dynamic on CPU
    compile_decode: bool = False  # torch.compile the decode step (static cache in shape buckets, CUDA)
    share_prefix: bool = True
    max_sample_batch: int | None = None
    # -- credit ---------------------------------------------------------------------------------
    estimator: str = "gigpo"  # any name agentgym_credit.credit.advantages accepts
    estimator_opts: dict[str, Any] = field(default_factory=dict)
    history_depth: int = 2  # K of HistoryFingerprint (HGPO levels 0..K)
    invalid_action_penalty: float = 0.1  # subtracted from the reward of a step whose action was invalid
    # -- update (PPO-clip) ----------------------------------------------------------------------
    lr: float = 1e-5
    lr_warmup_iters: int = 0  # linear LR warm-up over the first iterations
    lr_schedule: str = "constant"  # after warm-up: "constant", "linear" or "cosine" decay to min_lr_ratio * lr
    min_lr_ratio: float = 0.0
    weight_decay: float = 0.0
    ppo_epochs: int = 1
    minibatches: int = 1  # optimizer steps per epoch
    clip_eps: float = 0.2
    clip_eps_high: float | None = None  # asymmetric upper clip ("clip-higher"); None = clip_eps
    max_grad_norm: float = 1.0
    kl_coef: float = 0.0  # KL (k3) to a frozen copy of the model RL starts from (after any warm-up); 0 = none
    token_budget: int = 16384  # padded tokens per forward/backward micro-batch (gradient accumulation)
    mixed_precision: str = "auto"  # "auto": bf16 autocast on CUDA or for a model loaded in bf16; "bf16"; "no"
    recompute_old_logprobs: str = "auto"  # old log-probs from the update's forward ("auto": yes under bf16)
    gradient_checkpointing: bool = False
    # -- LoRA (peft) ----------------------------------------------------------------------------
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_target_modules: str = "all-linear"
    # -- format warm-up (models trained from scratch) ---------------------------------------------
    format_warmup_steps: int = 0  # supervised steps on uniformly random admissible actions before RL
    format_warmup_lr: float = 3e-3
    # -- loop -----------------------------------------------------------------------------------
    iterations: int = 50
    seed: int = 0
    out_dir: str = "runs/agentgym-credit"
    save_every: int = 10  # iterations between checkpoints (0 = only at the end)
    resume: bool = False  # continue from the last checkpoint in out_dir
    progress: bool = True  # tqdm bar when tqdm is installed
    plot: bool = True  # PNG of the logged curves at the end when matplotlib is installed
    torch_threads: int = 0  # torch.set_num_threads (0 = leave torch's default); 1 helps on busy small CPUs

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad setting."""
        positive = ("group_size", "groups_per_iter", "max_steps", "max_new_tokens", "ppo_epochs",
                    "minibatches", "token_budget", "iterations", "tiny_hidden", "tiny_layers",
                    "max_prompt_tokens")
        for name in positive:
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        checks = {
            "mixed_precision": MIXED_PRECISION, "sampler_cache": SAMPLER_CACHES, "dtype": DTYPES,
            "chat_template": SWITCHES, "tiny_arch": ("qwen2", "gpt2"), "master_weights": MASTER_WEIGHTS,
            "lr_schedule": LR_SCHEDULES, "recompute_old_logprobs": SWITCHES,
        }
        for name, allowed in checks.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if min(self.history_len, self.history_depth, self.save_every, self.format_warmup_steps,
               self.torch_threads, self.lr_warmup_iters) < 0:
            raise ValueError("history_len, history_depth, save_every, format_warmup_steps, torch_threads and "
                             "lr_warmup_iters must be >= 0")
        if not 0.0 <= self.min_lr_ratio <= 1.0:
            raise ValueError(f"min_lr_ratio must be in [0, 1], got {self.min_lr_ratio}")
        if self.lora and self.format_warmup_steps and self.kl_coef > 0:
            raise ValueError("lora with format_warmup_steps and kl_coef > 0 is not supported: the LoRA reference is "
                             "the base model without adapters, i.e. before the warm-up. Use full fine-tuning, or "
                             "kl_coef=0, or skip the warm-up")
        if self.temperature < 0 or not 0 < self.top_p <= 1 or self.top_k < 0:
            raise ValueError("need temperature >= 0, 0 < top_p <= 1 and top_k >= 0")
        if self.clip_eps <= 0 or (self.clip_eps_high is not None and self.clip_eps_high <= 0):
            raise ValueError("clip_eps (and clip_eps_high) must be > 0")
        if self.lr <= 0 or self.kl_coef < 0 or self.max_grad_norm <= 0:
            raise ValueError("need lr > 0, kl_coef >= 0 and max_grad_norm > 0")
        if self.compile_decode and self.sampler_cache == "dynamic":
            raise ValueError("compile_decode needs sampler_cache='static' or 'auto'")
        from agentgym_credit.credit.registry import ESTIMATORS, unknown_estimator_message

        if self.estimator not in ESTIMATORS:  # before any model is built (a typo used to fail 20 s in)
            raise ValueError(unknown_estimator_message(self.estimator))

    # -- serialisation --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainerConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown TrainerConfig keys {unknown}; known keys: {sorted(known)}")
        return cls(**data)

    def save(self, path: str | Path) -> None:
        path = Path(path)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | Path) -> TrainerConfig:
        return cls.from_dict(json.loads(Path(path).read_text()))


__all__ = ["TrainerConfig", "MIXED_PRECISION", "SAMPLER_CACHES", "DTYPES", "MASTER_WEIGHTS", "LR_SCHEDULES",
           "SWITCHES"]
