"""Loading and preparing the model a trainer trains (torch and transformers: extra ``trainer``).

- :func:`resolve_device` / :func:`resolve_dtype`: ``"auto"`` settings made concrete;
- :func:`load_model_and_tokenizer`: a Hugging Face model and tokenizer by name or path, or the
  offline tiny model (``model="tiny"``) with a tokenizer trained on the env's own text;
- :func:`prepare_precision`: **fp32 master weights** — a model loaded in bf16/fp16 gets its trainable
  weights in float32 (all of them for full fine-tuning; LoRA keeps the frozen base in low precision)
  and the run computes under bf16/fp16 autocast. AdamW's small updates then land: on bf16 weights,
  an update below half a bf16 step (``2**-8`` relative) rounds away, so at lr 1e-6 almost no weight
  moved (2.0% after three steps against 100% in fp32);
- :func:`disable_dropout`, :func:`apply_lora`, :func:`make_env`, :func:`tiny_tokenizer_corpus`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentgym_credit.errors import DependencyNotInstalled
from agentgym_credit.trainer.config import TrainerConfig
from agentgym_credit.trainer.policy import TEMPLATES

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None  # type: ignore[assignment]

LOW_PRECISION = ("bfloat16", "float16")


def _torch():
    if torch is None:  # pragma: no cover
        raise DependencyNotInstalled("torch", "trainer")
    return torch


def resolve_device(cfg: TrainerConfig) -> Any:
    t = _torch()
    if cfg.device == "auto":
        return t.device("cuda" if t.cuda.is_available() else "cpu")
    return t.device(cfg.device)


def resolve_dtype(cfg: TrainerConfig, device: Any) -> Any:
    t = _torch()
    if cfg.dtype == "auto":
        return t.bfloat16 if device.type == "cuda" else t.float32
    return getattr(t, cfg.dtype)


def make_env(env_id: str, env_kwargs: dict[str, Any] | None = None, invalid_action_penalty: float = 0.0) -> Any:
    """``ActionProjection(gym.make(env_id, **env_kwargs))``: free text in, admissible action to the env."""
    import gymnasium as gym

    import agentgym_credit  # noqa: F401  (registers credit/)
    from agentgym_credit.wrappers.action_projection import ActionProjection

    return ActionProjection(gym.make(env_id, **(env_kwargs or {})), invalid_action_penalty=invalid_action_penalty)


def tiny_tokenizer_corpus(cfg: TrainerConfig) -> list[str]:
    """Texts the tiny model's tokenizer is trained on: the env's own text and the prompt scaffolding."""
    from agentgym_credit.trainer.tiny import env_corpus

    texts = env_corpus(cfg.env_id, episodes=30, max_steps=cfg.max_steps, seed=cfg.seed, env_kwargs=cfg.env_kwargs)
    scaffold = [t.render("task", [("observation", "action")], "observation", ["a", "b"]) for t in TEMPLATES.values()]
    return texts + scaffold * 20


def load_model_and_tokenizer(cfg: TrainerConfig, tokenizer_dir: str | Path | None = None) -> tuple[Any, Any]:
    """The model (on CPU, in the configured dtype) and its tokenizer (a pad token is ensured)."""
    _torch()
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:  # pragma: no cover
        raise DependencyNotInstalled("transformers", "trainer") from None
    device = resolve_device(cfg)
    dtype = resolve_dtype(cfg, device)
    if cfg.model == "tiny":
        from agentgym_credit.trainer.tiny import build_tiny_model, build_tokenizer

        if tokenizer_dir is not None:
            tok = AutoTokenizer.from_pretrained(str(tokenizer_dir))
        else:
            tok = build_tokenizer(tiny_tokenizer_corpus(cfg), vocab_size=cfg.tiny_vocab)
        model = build_tiny_model(tok, arch=cfg.tiny_arch, hidden_size=cfg.tiny_hidden, num_layers=cfg.tiny_layers,
                                 seed=cfg.seed, dtype=dtype)
        return model, tok
    tok = AutoTokenizer.from_pretrained(cfg.tokenizer or cfg.model, trust_remote_code=cfg.trust_remote_code)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(cfg.model, dtype=dtype, trust_remote_code=cfg.trust_remote_code)
    return model, tok


def disable_dropout(model: Any) -> None:
    """Dropout off everywhere, so that train-mode and eval-mode log-probs agree (PPO ratios start at 1)."""
    t = _torch()
    for m in model.modules():
        if isinstance(m, t.nn.Dropout):
            m.p = 0.0
        if isinstance(getattr(m, "attention_dropout", None), float):
            m.attention_dropout = 0.0


def apply_lora(model: Any, cfg: TrainerConfig) -> Any:
    """Wrap ``model`` with LoRA adapters (``peft``); only the adapters are trained."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError:
        raise DependencyNotInstalled("peft", "lora") from None
    targets: Any = cfg.lora_target_modules
    if targets != "all-linear":
        targets = [s.strip() for s in targets.split(",") if s.strip()]
    lcfg = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=targets, task_type="CAUSAL_LM")
    return get_peft_model(model, lcfg)


def prepare_precision(model: Any, cfg: TrainerConfig, device: Any) -> Any:
    """Make the trainable weights float32 when ``cfg.master_weights == "fp32"`` and return the autocast
    dtype of the run (``None``: no autocast).

    Autocast: ``mixed_precision="bf16"`` always; ``"auto"`` on CUDA, or when the model came in bf16/fp16
    (then in that dtype); ``"no"`` never. Call after LoRA is applied (only trainable weights are upcast).
    """
    t = _torch()
    trainable = [p for p in model.parameters() if p.requires_grad]
    low = sorted({str(p.dtype).split(".")[-1] for p in model.parameters()} & set(LOW_PRECISION))
    loaded = getattr(t, low[0]) if low else None
    if cfg.master_weights == "fp32" and loaded is not None:
        if len(trainable) == sum(1 for _ in model.parameters()):
            model.float()  # full fine-tuning: every weight (and buffer) in float32
        else:
            for p in trainable:  # LoRA: the adapters only; the frozen base stays in low precision
                if p.is_floating_point() and p.dtype != t.float32:
                    p.data = p.data.float()
    if cfg.mixed_precision == "no":
        return None
    if cfg.mixed_precision == "bf16":
        return t.bfloat16
    if loaded is not None:
        return loaded
    return t.bfloat16 if device.type == "cuda" else None


__all__ = ["make_env", "load_model_and_tokenizer", "disable_dropout", "apply_lora", "prepare_precision",
           "resolve_device", "resolve_dtype", "tiny_tokenizer_corpus", "LOW_PRECISION"]
