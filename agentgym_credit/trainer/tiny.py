"""Tiny offline models for tests, CPU runs and benchmarks: nothing is downloaded.

- :func:`build_tokenizer`: a byte-level BPE tokenizer trained with ``tokenizers`` on the given texts
  (typically an environment's own observations and actions), wrapped as ``PreTrainedTokenizerFast``;
- :func:`build_tiny_model`: a randomly initialised causal LM (Qwen2 or GPT-2 architecture) sized
  to that tokenizer, with dropout off, so that sampling and log-prob recomputation agree exactly;
- :func:`env_corpus`: observation and admissible-action texts gathered from a few random episodes
  of any ``credit/*`` env — the corpus :func:`build_tokenizer` is trained on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentgym_credit.errors import DependencyNotInstalled

PAD_TOKEN = "<|pad|>"
EOS_TOKEN = "<|endoftext|>"


def build_tokenizer(texts: Iterable[str], vocab_size: int = 512) -> Any:
    """Train a byte-level BPE tokenizer on ``texts``; return a ``PreTrainedTokenizerFast``.

    Byte-level, so any text (an unseen word, a stray symbol) still encodes; frequent words of the
    corpus become single tokens, which keeps the prompts of a tiny model short.

    >>> tok = build_tokenizer(["go north", "go south"] * 10, vocab_size=300)
    >>> tok.decode(tok("go north")["input_ids"])
    'go north'
    """
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
        from transformers import PreTrainedTokenizerFast
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise DependencyNotInstalled(e.name or "transformers", "trainer") from None
    texts = [t for t in texts if isinstance(t, str) and t]
    if not texts:
        raise ValueError("build_tokenizer needs at least one non-empty text")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=int(vocab_size),
        special_tokens=[PAD_TOKEN, EOS_TOKEN],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS_TOKEN, pad_token=PAD_TOKEN)


def build_tiny_model(
    tokenizer: Any,
    arch: str = "qwen2",
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    max_positions: int = 2048,
    seed: int = 0,
    dtype: Any = None,
) -> Any:
    """A small randomly initialised causal LM for ``tokenizer`` (``arch``: ``"qwen2"`` or ``"gpt2"``)."""
    try:
        import torch
        from transformers import GPT2Config, GPT2LMHeadModel, Qwen2Config, Qwen2ForCausalLM
    except ImportError as e:  # pragma: no cover
        raise DependencyNotInstalled(e.name or "torch", "trainer") from None
    vocab = len(tokenizer)
    common = dict(bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id,
                  pad_token_id=tokenizer.pad_token_id)
    if arch == "qwen2":
        cfg = Qwen2Config(
            vocab_size=vocab, hidden_size=hidden_size, intermediate_size=4 * hidden_size,
            num_hidden_layers=num_layers, num_attention_heads=num_heads,
            num_key_value_heads=max(1, num_heads // 2), max_position_embeddings=max_positions,
            tie_word_embeddings=True, attention_dropout=0.0, **common,
        )
        cls = Qwen2ForCausalLM
    elif arch == "gpt2":
        cfg = GPT2Config(
            vocab_size=vocab, n_embd=hidden_size, n_layer=num_layers, n_head=num_heads,
            n_positions=max_positions, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, **common,
        )
        cls = GPT2LMHeadModel
    else:
        raise ValueError(f"arch must be 'qwen2' or 'gpt2', got {arch!r}")
    torch.manual_seed(seed)
    model = cls(cfg)
    if dtype is not None:
        model = model.to(dtype)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model.eval()


def env_corpus(env_id: str, episodes: int = 20, max_steps: int = 30, seed: int = 0,
               env_kwargs: dict[str, Any] | None = None) -> list[str]:
    """Observation and admissible-action texts of a few uniformly random episodes of ``env_id``."""
    import gymnasium as gym
    import numpy as np

    import agentgym_credit  # noqa: F401  (registers the credit/ namespace)

    rng = np.random.default_rng(seed)
    env = gym.make(env_id, **(env_kwargs or {}))
    texts: list[str] = []
    try:
        for ep in range(episodes):
            obs, info = env.reset(seed=seed + ep)
            for _ in range(max_steps):
                texts.append(obs)
                acts = list(info.get("admissible_actions") or [])
                texts.extend(acts)
                if not acts:
                    break
                obs, _, term, trunc, info = env.step(acts[int(rng.integers(len(acts)))])
                if term or trunc:
                    texts.append(obs)
                    break
    finally:
        env.close()
    return texts


__all__ = ["build_tokenizer", "build_tiny_model", "env_corpus", "PAD_TOKEN", "EOS_TOKEN"]
