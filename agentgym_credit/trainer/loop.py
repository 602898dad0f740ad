"""The companion trainer: collect -> advantages -> PPO-clip update, iteration after iteration.

- :class:`Trainer`: one object that owns the model, optimizer, sampler, policy and collector;
  :meth:`Trainer.step` runs one iteration, :meth:`Trainer.train` all of them with a progress bar,
  a JSONL and CSV log and a PNG of the curves; checkpoints are saved and resumed, and
  :meth:`Trainer.export` writes a plain Hugging Face folder;
- :func:`batch_stats`: success, return, invalid-action rate and group statistics of a batch;
- re-exported from :mod:`~agentgym_credit.trainer.model`: :func:`make_env` (``gym.make`` plus
  :class:`ActionProjection`, module-level so subprocess and Ray workers can pickle it),
  :func:`load_model_and_tokenizer` and friends.

One iteration, top to bottom:

1. ``groups_per_iter`` groups of ``group_size`` rollouts, the policy called once per step for every
   active env (:class:`~agentgym_credit.trainer.policy.LLMPolicy`), which records prompt/response
   token ids and log-probs in the batch extras;
2. per-step advantages from ``agentgym_credit.credit.advantages(estimator, steps, ...)`` with the
   invalid-action penalty on rows whose action the env rejected — propagated into the returns
   (``propagate_penalty=True``, so GRPO's episode term sees it too; override in
   ``estimator_opts``) — broadcast over response tokens (``credit.broadcast_to_tokens``);
3. :func:`~agentgym_credit.trainer.update.ppo_update` (token-mean PPO-clip, optional KL to the
   reference, gradient accumulation by token budget), at the iteration's learning rate
   (:func:`~agentgym_credit.trainer.update.lr_at`). Under bf16 the old log-probs are first recomputed
   with the update's own forward (``recompute_old_logprobs``, as verl does), so PPO's ratio starts at
   exactly 1; the sampler/update log-prob gap is logged every iteration either way.

**Precision.** Trainable weights are float32 ("master weights") and compute runs under bf16
autocast when the model came in bf16 or on CUDA (:func:`~agentgym_credit.trainer.model.prepare_precision`).

**KL reference** = the model the RL phase starts from: it is copied at the first RL update, i.e.
after the format warm-up, and saved with every checkpoint so that a resumed run keeps it.

**Reproducibility and resume.** Iteration i's group seeds and its sampling generator are derived
from ``(seed, i)`` only, and a checkpoint holds the trainable weights, the optimizer state, the
iteration counter and the log — so a run resumed from iteration i's checkpoint produces the same
rollouts and the same loss as the uninterrupted run (same device, same threads).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.trainer import checkpoint as ckpt
from agentgym_credit.trainer.config import TrainerConfig
from agentgym_credit.trainer.model import (
    _torch,
    apply_lora,
    disable_dropout,
    load_model_and_tokenizer,
    make_env,
    prepare_precision,
    resolve_device,
    resolve_dtype,
    tiny_tokenizer_corpus,
)
from agentgym_credit.trainer.policy import TEMPLATES, LLMPolicy, template_for
from agentgym_credit.trainer.sampling import BatchedSampler
from agentgym_credit.trainer.update import UpdateBatch, logprob_gap, lr_at, ppo_update, recompute_logprobs

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None  # type: ignore[assignment]

LOG_COLUMNS = (
    "iteration", "success_rate", "mean_return", "mean_length", "invalid_rate", "n_steps", "n_trajectories",
    "groups_no_signal", "group_return_std", "anchor_nonsingleton", "adv_mean", "adv_std", "loss", "clip_frac",
    "approx_kl", "kl_ref", "grad_norm", "entropy", "lr", "logprob_gap", "skipped_steps", "truncated_prompts",
    "new_tokens", "prefill_share", "collect_s", "update_s", "tokens_per_s", "update_tokens_per_s",
)
"""Columns of the per-iteration log (CSV order). ``tokens_per_s``: new tokens per second of the collect
phase; ``update_tokens_per_s``: padded tokens through forward+backward per second of the update phase."""


class Trainer:
    """GiGPO/HGPO/GRPO training of a causal LM on any ``credit/*`` env (see module docstring).

    Args:
        config: every setting (:class:`TrainerConfig`).
        model, tokenizer: use these instead of loading ``config.model`` (tests, notebooks).
    """

    def __init__(self, config: TrainerConfig, model: Any = None, tokenizer: Any = None):
        t = _torch()
        from agentgym_credit.wrappers.collector import GroupedRolloutCollector

        self.cfg = cfg = config
        self.out_dir = Path(cfg.out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.device = resolve_device(cfg)
        if cfg.torch_threads:
            t.set_num_threads(cfg.torch_threads)
        t.manual_seed(cfg.seed)
        resume_dir = self.latest_checkpoint() if cfg.resume else None
        if model is None:
            tok_dir = resume_dir / "tokenizer" if resume_dir is not None and cfg.model == "tiny" else None
            model, tokenizer = load_model_and_tokenizer(cfg, tok_dir)
        elif tokenizer is None:
            raise ValueError("pass the tokenizer together with the model")
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.tokenizer = tokenizer
        model.to(self.device)
        disable_dropout(model)
        if cfg.gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            if cfg.lora:
                model.enable_input_require_grads()
        self.model = apply_lora(model, cfg) if cfg.lora else model
        self.model.eval()
        # the dtype the weights came in (bf16 stays bf16 on export even when trained with fp32 master weights)
        self.loaded_dtype = min((p.dtype for p in model.parameters() if p.is_floating_point()),
                                key=lambda d: d.itemsize, default=None)
        self.autocast_dtype = prepare_precision(self.model, cfg, self.device)
        self.recompute_old = cfg.recompute_old_logprobs == "yes" or (cfg.recompute_old_logprobs == "auto"
                                                                     and self.autocast_dtype is not None)
        # the KL reference: copied at the first RL update (after any warm-up); LoRA uses the base model
        self.ref_model: Any = None
        self._ref_state: dict[str, Any] | None = None
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = t.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        cache = cfg.sampler_cache if cfg.sampler_cache != "auto" else ("static" if self.device.type == "cuda"
                                                                       else "dynamic")
        self.sampler = BatchedSampler(
            self.model, tokenizer, max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, top_k=cfg.top_k,
            top_p=cfg.top_p, cache=cache, compile_decode=cfg.compile_decode, share_prefix=cfg.share_prefix,
            max_batch=cfg.max_sample_batch,
        )
        template = template_for(cfg.env_id) if cfg.template == "auto" else TEMPLATES[cfg.template]
        self.policy = LLMPolicy(self.sampler, template, history_len=cfg.history_len, chat_template=cfg.chat_template,
                                max_prompt_tokens=cfg.max_prompt_tokens)
        from agentgym_credit.credit import estimator_options

        self._credit_penalty = "invalid_penalty" in estimator_options(cfg.estimator)
        self._credit_propagate = "propagate_penalty" in estimator_options(cfg.estimator)
        env_penalty = 0.0 if self._credit_penalty else -float(cfg.invalid_action_penalty)
        factory = functools.partial(make_env, cfg.env_id, dict(cfg.env_kwargs), env_penalty)
        self.collector = GroupedRolloutCollector(factory, group_size=cfg.group_size, max_steps=cfg.max_steps,
                                                 history_depth=cfg.history_depth, progress=False, seed=cfg.seed)
        self.iteration = 0
        self.log: list[dict[str, float]] = []
        self.last_batch: Any = None
        self.warmup_losses: list[float] = []
        if resume_dir is not None:
            self.load_checkpoint(resume_dir)

    # -- format warm-up --------------------------------------------------------------------------
    def format_warmup(self, steps: int | None = None, batch_rows: int = 64) -> list[float]:
        """Teach a from-scratch model the action syntax (:func:`~agentgym_credit.trainer.warmup.format_warmup`);
        returns the loss per step. :meth:`train` runs it once per run (skipped on resume)."""
        from agentgym_credit.trainer.warmup import format_warmup

        cfg = self.cfg
        return format_warmup(self.model, self.policy, self.collector,
                             steps=cfg.format_warmup_steps if steps is None else int(steps), lr=cfg.format_warmup_lr,
                             seed=cfg.seed, groups_per_iter=cfg.groups_per_iter, token_budget=cfg.token_budget,
                             autocast_dtype=self.autocast_dtype, batch_rows=batch_rows,
                             train_mode=cfg.gradient_checkpointing)

    # -- one iteration ---------------------------------------------------------------------------
    def _autocast(self) -> Any:
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.autocast_dtype)

    def collect(self, iteration: int | None = None) -> Any:
        """The rollouts of iteration ``iteration`` (default: the current one); seeds depend on it only."""
        from agentgym_credit.wrappers.collector import group_seed

        it = self.iteration if iteration is None else int(iteration)
        g = self.cfg.groups_per_iter
        seeds = [group_seed(self.cfg.seed + self.cfg.task_seed_offset, it * g + j) for j in range(g)]
        gen = torch.Generator(device=self.device)
        gen.manual_seed(group_seed(self.cfg.seed, 1_000_003 + it))
        self.policy.generator = gen
        self.policy.reset()
        self.model.eval()
        with self._autocast():
            return self.collector.collect(self.policy, tasks=g, seeds=seeds)

    def evaluate(self, groups: int = 16, seed_offset: int = 20_000_033) -> dict[str, float]:
        """Success rate, return and invalid-action rate of the current policy (sampling as in training)
        on ``groups`` fixed groups (the same ones at every call: seeds depend on ``seed_offset`` only)."""
        from agentgym_credit.wrappers.collector import group_seed

        seeds = [group_seed(self.cfg.seed + seed_offset, j) for j in range(int(groups))]
        gen = torch.Generator(device=self.device)
        gen.manual_seed(group_seed(self.cfg.seed, seed_offset))
        self.policy.generator = gen
        self.policy.reset()
        self.model.eval()
        with self._autocast():
            batch = self.collector.collect(self.policy, tasks=len(seeds), seeds=seeds)
        st = batch_stats(batch, np.flatnonzero(batch.row_mask("drop")))
        return {k: st[k] for k in ("success_rate", "mean_return", "invalid_rate", "mean_length")}

    def advantages(self, batch: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, adv)``: the batch rows used for the update (non-failed trajectories) and their
        per-step advantages, with the invalid-action penalty on rows the env rejected."""
        import dataclasses

        from agentgym_credit.credit import advantages

        rows = np.flatnonzero(batch.row_mask("drop"))
        steps = batch.to_steps("drop")
        opts = dict(self.cfg.estimator_opts)
        if self._credit_penalty:
            steps = dataclasses.replace(steps, valid=batch.action_valid[rows])
            opts.setdefault("invalid_penalty", -float(self.cfg.invalid_action_penalty))
            if self._credit_propagate:  # the penalty is part of the return, so episode-level terms see it too
                opts.setdefault("propagate_penalty", True)
        if steps.n == 0:
            return rows, np.zeros(0, dtype=np.float32)
        return rows, advantages(self.cfg.estimator, steps, **opts)

    def update_batch(self, batch: Any, rows: np.ndarray, adv: np.ndarray) -> UpdateBatch:
        """Token rows for the update: the recorded ids and log-probs, advantages broadcast over tokens."""
        from agentgym_credit.credit import broadcast_to_tokens

        ex = [batch.extras[int(r)] for r in rows]
        missing = [k for k in ("prompt_ids", "response_ids", "logprobs") if ex and k not in ex[0]]
        if missing:
            raise ValueError(f"the batch extras lack {missing}: collect with LLMPolicy")
        lens = np.array([len(e["response_ids"]) for e in ex], dtype=np.int64)
        width = int(lens.max()) if len(lens) else 0
        mask = np.arange(width)[None, :] < lens[:, None]
        tok_adv = broadcast_to_tokens(np.asarray(adv, dtype=np.float64), mask, dtype=np.float64)
        return UpdateBatch(
            prompt_ids=[list(e["prompt_ids"]) for e in ex], response_ids=[list(e["response_ids"]) for e in ex],
            old_logprobs=[np.asarray(e["logprobs"]) for e in ex],
            advantages=[tok_adv[i, : lens[i]] for i in range(len(ex))],
        )

    def reference(self) -> Any:
        """The frozen KL reference (full fine-tuning with ``kl_coef > 0``): the model as the RL phase
        starts — copied on the first call, which :meth:`update` makes before its first step."""
        if self.cfg.kl_coef <= 0 or self.cfg.lora:
            return None
        if self.ref_model is None:
            self.ref_model = copy.deepcopy(self.model).eval().requires_grad_(False)
            if self._ref_state is not None:
                ckpt.copy_weights(self.ref_model, self._ref_state, "the checkpoint's reference.pt")
                self._ref_state = None
            elif self.iteration > 0:
                warnings.warn("resumed from a checkpoint without reference.pt: the KL reference is the resumed "
                              "model, not the model RL started from", RuntimeWarning, stacklevel=2)
        return self.ref_model

    def update(self, ub: UpdateBatch) -> dict[str, float]:
        """PPO-clip on ``ub``: old log-probs recomputed first when ``recompute_old`` (the sampler's kept
        otherwise; their gap is ``logprob_gap``), reference log-probs when ``kl_coef > 0``."""
        cfg = self.cfg
        if len(ub) == 0:
            return {"loss": 0.0}
        pad, budget, ac = self.sampler.pad_id, cfg.token_budget, self.autocast_dtype
        self.model.train() if cfg.gradient_checkpointing else self.model.eval()
        gap = None
        if self.recompute_old:
            again = recompute_logprobs(self.model, ub, pad, cfg.temperature, budget, ac)
            gap = logprob_gap(again, ub.old_logprobs)
            ub.old_logprobs = again
        if cfg.kl_coef > 0:
            if cfg.lora:
                with self.model.disable_adapter():
                    ub.ref_logprobs = recompute_logprobs(self.model, ub, pad, cfg.temperature, budget, ac)
            else:
                ub.ref_logprobs = recompute_logprobs(self.reference(), ub, pad, cfg.temperature, budget, ac)
        rng = np.random.default_rng([cfg.seed, 7, self.iteration])
        stats = ppo_update(
            self.model, self.optimizer, ub, pad_id=self.sampler.pad_id, temperature=cfg.temperature,
            epochs=cfg.ppo_epochs, minibatches=cfg.minibatches, clip_eps=cfg.clip_eps,
            clip_eps_high=cfg.clip_eps_high, kl_coef=cfg.kl_coef, max_grad_norm=cfg.max_grad_norm,
            token_budget=cfg.token_budget, autocast_dtype=self.autocast_dtype, generator=rng,
        )
        if gap is not None:
            stats["logprob_gap"] = gap
        self.model.eval()
        return stats

    def step(self) -> dict[str, float]:
        """One iteration (collect, advantages, update); returns and logs its statistics."""
        t0 = time.perf_counter()
        tokens_before = self.policy.stats["new_tokens"]
        rows_before, prefills_before = self.policy.stats["rows"], self.policy.stats["prefills"]
        trunc_before = self.policy.stats["truncated_prompts"]
        cfg = self.cfg
        lr = lr_at(self.iteration, cfg.lr, cfg.lr_warmup_iters, cfg.iterations, cfg.lr_schedule, cfg.min_lr_ratio)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        batch = self.collect()
        t1 = time.perf_counter()
        rows, adv = self.advantages(batch)
        ub = self.update_batch(batch, rows, adv)
        stats = self.update(ub)
        t2 = time.perf_counter()
        self.last_batch = batch
        new_tokens = self.policy.stats["new_tokens"] - tokens_before
        prefills = self.policy.stats["prefills"] - prefills_before
        rec = {"iteration": float(self.iteration + 1)}
        rec.update(batch_stats(batch, rows))
        rec.update({
            "adv_mean": float(np.mean(adv)) if len(adv) else 0.0, "adv_std": float(np.std(adv)) if len(adv) else 0.0,
            "loss": stats.get("loss", 0.0), "clip_frac": stats.get("clip_frac", 0.0),
            "approx_kl": stats.get("approx_kl", 0.0), "kl_ref": stats.get("kl_ref", float("nan")),
            "grad_norm": stats.get("grad_norm", 0.0), "entropy": stats.get("entropy", float("nan")), "lr": lr,
            "logprob_gap": stats.get("logprob_gap", float("nan")), "skipped_steps": stats.get("skipped_steps", 0.0),
            "truncated_prompts": self.policy.stats["truncated_prompts"] - trunc_before, "new_tokens": new_tokens,
            "prefill_share": (self.policy.stats["rows"] - rows_before) / max(prefills, 1.0),
            "collect_s": t1 - t0, "update_s": t2 - t1, "tokens_per_s": new_tokens / max(t1 - t0, 1e-9),
            "update_tokens_per_s": stats.get("tokens", 0.0) / max(t2 - t1, 1e-9),
        })
        self.iteration += 1
        self.log.append(rec)
        self._write_logs(rec)
        if self.cfg.save_every and self.iteration % self.cfg.save_every == 0:
            self.save_checkpoint()
        return rec

    def train(self, iterations: int | None = None) -> list[dict[str, float]]:
        """Run until ``iterations`` (default ``config.iterations``) have been done in total."""
        total = self.cfg.iterations if iterations is None else int(iterations)
        bar = None
        if self.cfg.progress:
            try:
                from tqdm.auto import tqdm

                bar = tqdm(total=total, initial=self.iteration, desc=f"train {self.cfg.estimator}")
            except ImportError:
                bar = None
        if self.iteration == 0 and self.cfg.format_warmup_steps:
            self.warmup_losses = self.format_warmup()
        try:
            while self.iteration < total:
                rec = self.step()
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(success=f"{rec['success_rate']:.2f}", ret=f"{rec['mean_return']:.2f}",
                                    loss=f"{rec['loss']:.3f}")
        finally:
            if bar is not None:
                bar.close()
        if not self.cfg.save_every or self.iteration % self.cfg.save_every:
            self.save_checkpoint()
        if self.cfg.plot:
            self.plot()
        return self.log

    def close(self) -> None:
        self.collector.close()

    # -- logs ------------------------------------------------------------------------------------
    def _write_logs(self, rec: dict[str, float] | None = None) -> None:
        ckpt.write_logs(self.out_dir, self.log, LOG_COLUMNS)

    def plot(self) -> Path | None:
        """``curves.png`` in ``out_dir``: success rate, return, loss, KL and entropy per iteration; without
        matplotlib the plot is skipped with a message (the logs and checkpoints are written anyway)."""
        if not self.log:
            return None
        from agentgym_credit.plotting import try_plot_panels

        x = [r["iteration"] for r in self.log]
        label = self.cfg.estimator
        panels = {k: {label: (x, [r.get(k, float("nan")) for r in self.log], None)}
                  for k in ("success_rate", "mean_return", "loss", "approx_kl", "entropy", "logprob_gap")}
        return try_plot_panels(self.out_dir / "curves.png", panels, xlabel="iteration", ylabel="", ncols=3)

    # -- checkpoints and export ------------------------------------------------------------------
    def checkpoint_dir(self, iteration: int | None = None) -> Path:
        it = self.iteration if iteration is None else int(iteration)
        return self.out_dir / "checkpoints" / f"iter_{it:06d}"

    def latest_checkpoint(self) -> Path | None:
        """The checkpoint with the highest iteration in ``out_dir``, or ``None``."""
        root = self.out_dir / "checkpoints"
        found = sorted(p for p in root.glob("iter_*") if (p / "state.json").exists()) if root.exists() else []
        return found[-1] if found else None

    def save_checkpoint(self, path: str | Path | None = None) -> Path:
        """Trainable weights, optimizer state, KL reference, iteration, log, config, tokenizer."""
        path = Path(path) if path is not None else self.checkpoint_dir()
        return ckpt.save_checkpoint(path, self.model, self.optimizer, self.cfg, self.tokenizer, self.iteration,
                                    self.log, self.ref_model)

    def load_checkpoint(self, path: str | Path) -> None:
        """Restore what :meth:`save_checkpoint` wrote (the model must have the same architecture); the
        log files in ``out_dir`` are rewritten to the checkpoint's iterations, so none is repeated."""
        it, log, ref = ckpt.load_checkpoint(path, self.model, self.optimizer, self.device)
        self.iteration, self.log = it, log
        self.ref_model, self._ref_state = None, ref
        self._write_logs()

    def export(self, path: str | Path, merge: bool = True, dtype: Any = "auto") -> Path:
        """A Hugging Face folder (``save_pretrained``) of the current policy and its tokenizer, loadable with
        ``AutoModelForCausalLM.from_pretrained``; LoRA merged into the base unless ``merge=False``.

        ``dtype``: ``"auto"`` (the dtype the model was loaded in: a bf16 model trained with fp32 master
        weights is exported in bf16), ``None`` (as trained), a ``torch.dtype`` or its name ("float32"...)."""
        import torch

        if dtype == "auto":
            dtype = self.loaded_dtype
        elif isinstance(dtype, str):
            if dtype not in ("float32", "bfloat16", "float16"):
                raise ValueError(f"export dtype must be 'auto', 'float32', 'bfloat16' or 'float16', got {dtype!r}")
            dtype = getattr(torch, dtype)
        current = {p.dtype for p in self.model.parameters() if p.is_floating_point()}
        if current == {dtype}:
            dtype = None  # nothing to cast: skip the copy
        return ckpt.export_pretrained(self.model, self.tokenizer, path, merge=merge, dtype=dtype)


def batch_stats(batch: Any, rows: np.ndarray) -> dict[str, float]:
    """Success, return, length, invalid-action rate and group statistics of a collected batch."""
    ok = ~batch.traj.failed
    rets, gids = batch.traj.ret[ok], batch.traj.group_id[ok]
    no_signal, stds = 0, []
    for g in np.unique(gids):
        r = rets[gids == g]
        stds.append(float(np.std(r)))
        no_signal += int(np.all(r == r[0]))
    n_groups = max(len(np.unique(gids)), 1)
    anchor = float("nan")
    if len(rows):
        from agentgym_credit.credit import group_stats

        anchor = group_stats(batch.to_steps("drop")).levels["state_key"].frac_non_singleton
    return {
        "success_rate": batch.success_rate, "mean_return": batch.mean_return,
        "mean_length": float(batch.traj.length[ok].mean()) if ok.any() else 0.0,
        "invalid_rate": float(1.0 - batch.action_valid[rows].mean()) if len(rows) else 0.0,
        "n_steps": float(len(rows)), "n_trajectories": float(ok.sum()),
        "groups_no_signal": no_signal / n_groups, "group_return_std": float(np.mean(stds)) if stds else 0.0,
        "anchor_nonsingleton": anchor,
    }


__all__ = ["Trainer", "make_env", "load_model_and_tokenizer", "disable_dropout", "apply_lora", "batch_stats",
           "resolve_device", "resolve_dtype", "tiny_tokenizer_corpus", "LOG_COLUMNS"]
