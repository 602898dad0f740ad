"""Rollout speed on a GPU: ``model.generate`` (eager, and HF's static cache + ``torch.compile`` fast
path) vs the trainer's :class:`BatchedSampler`, side by side, plus a training-like shape sweep.

What lives here:

- :func:`qwen2_05b_config`: a Qwen2-0.5B-shaped ``Qwen2Config`` (24 layers, hidden 896, 14 heads,
  2 KV heads, vocab 151936) — the model is built from it with random weights, nothing downloaded;
  :func:`tiny_config` is the same family at toy size for the CPU smoke path;
- :func:`compare`: times every method on the same prompts in one process and returns rows with
  seconds, new tokens per second and the ratios to eager ``generate`` and to HF's static+compile
  ``generate``;
- :func:`sweep`: a sequence of calls whose batch size and prompt length change as they do in
  training (envs finish, histories grow), per method: total time, new tokens/s and how many graphs
  ``torch.compile`` built (recompiles show here);
- :func:`main`: the benchmark (batch 256, 1024-token prompts, 64 new tokens, bf16, sampling at
  temperature 1 with no top-k/top-p, no early stop) writing ``benchmarks/speed/gpu_rollout_speed.md``.
  Without CUDA it refuses, except ``--device cpu --tiny``: a smoke run at toy size (the tests run it)
  whose numbers say nothing about GPU decoding.

Methods: ``generate`` eager (dynamic cache); ``generate`` with ``cache_implementation="static"`` and
a ``CompileConfig`` (HF's own fast path); the sampler with a dynamic cache, a static bucketed cache,
a static cache with a compiled decode step, and with prefix sharing (the batch is 32 groups of 8
identical prompts, as at the first step of a group of rollouts). The greedy-agreement line checks
that the two decoders pick the same tokens on the same prompts.

Goal: the sampler >= 4x eager ``generate`` and >= 1.5x static+compile ``generate`` in new
tokens/s; the report says met / not met from the measured rows.

Run: ``python -m agentgym_credit.bench.speed.gpu_rollout_speed`` (``--help`` for sizes).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from agentgym_credit.bench.stats.report import fmt_num, machine_lines, markdown_table, progress, write_atomic

GOAL_VS_EAGER = 4.0
GOAL_VS_STATIC = 1.5
GEN_EAGER = "model.generate, eager"
GEN_STATIC = "model.generate, static cache + torch.compile"


def qwen2_05b_config(vocab_size: int = 151936, **overrides: Any) -> Any:
    """A ``Qwen2Config`` with Qwen2/Qwen2.5-0.5B's shapes (``overrides`` replace any of them)."""
    from transformers import Qwen2Config

    shape = dict(vocab_size=vocab_size, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                 num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
                 rope_theta=1_000_000.0, tie_word_embeddings=True, bos_token_id=0, eos_token_id=1, pad_token_id=2)
    shape.update(overrides)
    return Qwen2Config(**shape)


def tiny_config() -> Any:
    """The same family at toy size (2 layers, hidden 64, vocab 512): the CPU smoke path."""
    return qwen2_05b_config(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096)


class _IdTokenizer:
    """The few tokenizer attributes the sampler reads (ids only; there is no text in this benchmark)."""

    def __init__(self, pad: int, eos: int):
        self.pad_token_id, self.eos_token_id = pad, eos

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return ""


def _sync(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _compiled_graphs() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def _runners(model: Any, new_tokens: int, compile_backend: str, compile_mode: str | None, seed: int) -> dict[str, Any]:
    """name -> function(prompts) -> number of new tokens, one per method."""
    import torch
    from transformers import CompileConfig

    from agentgym_credit.trainer.sampling import BatchedSampler

    dev = next(model.parameters()).device
    cfg = model.config
    tok = _IdTokenizer(pad=int(cfg.pad_token_id), eos=int(cfg.eos_token_id))

    def generate(static: bool):
        kw: dict[str, Any] = {}
        if static:
            cc = CompileConfig(backend=compile_backend, mode=compile_mode or "default")
            if dev.type != "cuda":
                cc._compile_all_devices = True  # HF compiles on CUDA only unless told (the CPU smoke path)
            kw = {"cache_implementation": "static", "compile_config": cc}

        def run(p: list[list[int]]) -> int:
            x = torch.tensor(p, device=dev)
            out = model.generate(x, attention_mask=torch.ones_like(x), do_sample=True, temperature=1.0, top_k=0,
                                 top_p=1.0, max_new_tokens=new_tokens, min_new_tokens=new_tokens, eos_token_id=None,
                                 pad_token_id=tok.pad_token_id, **kw)
            return int(out.shape[0] * (out.shape[1] - x.shape[1]))
        return run

    def sampler(cache: str, compiled: bool, share: bool):
        s = BatchedSampler(model, tok, max_new_tokens=new_tokens, temperature=1.0, stop_token_ids=[], cache=cache,
                           compile_decode=compiled, share_prefix=share, compile_backend=compile_backend,
                           compile_mode=compile_mode)

        def run(p: list[list[int]]) -> int:
            out = s.sample(p, generator=torch.Generator(device=dev).manual_seed(seed))
            return sum(len(r) for r in out.response_ids)
        return run

    return {GEN_EAGER: generate(False), GEN_STATIC: generate(True),
            "sampler, dynamic cache": sampler("dynamic", False, False),
            "sampler, static bucketed cache": sampler("static", False, False),
            "sampler, static cache + compiled decode": sampler("static", True, False),
            "sampler, compiled + prefix sharing": sampler("static", True, True)}


def compare(model: Any, *, batch: int, prompt_len: int, new_tokens: int, repeats: int = 2, share_group: int = 8,
            compile_decode: bool = True, compile_backend: str = "inductor", compile_mode: str | None = "reduce-overhead",
            seed: int = 0, show: bool = False) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Time each method (best of ``repeats`` after one warm-up run, which also compiles) on the same
    random prompts. Returns the rows (with ``ratio`` to eager ``generate`` and ``ratio_static`` to the
    static+compile one) and a greedy-agreement check on a small batch."""
    import torch

    from agentgym_credit.trainer.sampling import BatchedSampler

    dev = next(model.parameters()).device
    cfg = model.config
    g = torch.Generator().manual_seed(seed)
    prompts = torch.randint(3, cfg.vocab_size, (batch, prompt_len), generator=g).tolist()
    groups = max(1, batch // share_group)
    shared = [prompts[i % groups] for i in range(batch)]
    run = _runners(model, new_tokens, compile_backend, compile_mode, seed)
    methods = [(GEN_EAGER, prompts), (GEN_STATIC, prompts), ("sampler, dynamic cache", prompts),
               ("sampler, static bucketed cache", prompts)]
    if compile_decode:
        methods.append(("sampler, static cache + compiled decode", prompts))
    share_name = "sampler, compiled + prefix sharing" if compile_decode else "sampler, static bucketed cache"
    methods.append((share_name, shared))
    methods.append((GEN_EAGER, shared))
    rows: list[dict[str, Any]] = []
    for name, p in progress(methods, total=len(methods), desc="compare", enable=show):
        label = name if p is prompts else f"{name}, {groups} distinct prompts x {share_group}"
        try:
            with torch.no_grad():
                g0 = _compiled_graphs()
                _sync(dev)
                t0 = time.perf_counter()
                run[name](p)  # warm-up (and compilation)
                _sync(dev)
                first = time.perf_counter() - t0
                best, ntok = float("inf"), 0
                for _ in range(repeats):
                    _sync(dev)
                    t0 = time.perf_counter()
                    ntok = run[name](p)
                    _sync(dev)
                    best = min(best, time.perf_counter() - t0)
            rows.append({"method": label, "seconds": best, "first_call_s": first, "new_tokens": ntok,
                         "tokens_per_s": ntok / best, "graphs": _compiled_graphs() - g0, "error": ""})
        except Exception as e:  # one broken method must not hide the others' numbers
            rows.append({"method": label, "seconds": float("nan"), "first_call_s": float("nan"), "new_tokens": 0,
                         "tokens_per_s": float("nan"), "graphs": 0, "error": f"{type(e).__name__}: {str(e)[:200]}"})
    base = {r["method"]: r["tokens_per_s"] for r in rows if not r["error"]}
    for r in rows:
        r["ratio"] = r["tokens_per_s"] / base[GEN_EAGER] if GEN_EAGER in base else float("nan")
        r["ratio_static"] = r["tokens_per_s"] / base[GEN_STATIC] if GEN_STATIC in base else float("nan")
    # greedy agreement on a few rows
    k = min(8, batch)
    small = prompts[:k]
    with torch.no_grad():
        x = torch.tensor(small, device=dev)
        ref = model.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=new_tokens,
                             eos_token_id=None, pad_token_id=int(cfg.pad_token_id))
        ref_ids = ref[:, prompt_len:].tolist()
        tok = _IdTokenizer(pad=int(cfg.pad_token_id), eos=int(cfg.eos_token_id))
        ours = BatchedSampler(model, tok, max_new_tokens=new_tokens, temperature=0.0, stop_token_ids=[]).sample(small)
    same = sum(a == b for ra, rb in zip(ref_ids, ours.response_ids) for a, b in zip(ra, rb))
    first_pos = [next((i for i, (a, b) in enumerate(zip(ra, rb)) if a != b), new_tokens)
                 for ra, rb in zip(ref_ids, ours.response_ids)]
    agree = {"rows": float(k), "token_agreement": same / (k * new_tokens),
             "mean_first_divergence": sum(first_pos) / k}
    return rows, agree


def training_shapes(batch: int, prompt_len: int) -> list[tuple[int, int]]:
    """Batch sizes and prompt lengths as one training iteration produces them: all envs at the first
    step with short prompts, then fewer active envs with longer histories."""
    fr = [(1.0, 0.5), (0.75, 0.7), (0.55, 0.85), (0.3, 1.0), (0.12, 0.95)]
    return [(max(1, round(batch * b)), max(2, round(prompt_len * p))) for b, p in fr]


def sweep(model: Any, shapes: list[tuple[int, int]], new_tokens: int, compile_backend: str = "inductor",
          compile_mode: str | None = "reduce-overhead", budget_s: float = 150.0, seed: int = 0,
          show: bool = False) -> list[dict[str, Any]]:
    """Per method, the calls of ``shapes`` in order (first call included: compiling is part of the cost
    in training). A method stops when its calls exceed ``budget_s``; the row says how many it ran."""
    import torch

    dev = next(model.parameters()).device
    run = _runners(model, new_tokens, compile_backend, compile_mode, seed)
    g = torch.Generator().manual_seed(seed + 1)
    data = [torch.randint(3, model.config.vocab_size, (b, n), generator=g).tolist() for b, n in shapes]
    rows = []
    for name in progress([GEN_EAGER, GEN_STATIC, "sampler, static cache + compiled decode"], total=3, desc="sweep",
                         enable=show):
        g0, total, ntok, done, err = _compiled_graphs(), 0.0, 0, 0, ""
        try:
            with torch.no_grad():
                for p in data:
                    _sync(dev)
                    t0 = time.perf_counter()
                    ntok += run[name](p)
                    _sync(dev)
                    total += time.perf_counter() - t0
                    done += 1
                    if total > budget_s:
                        break
        except Exception as e:
            err = f"{type(e).__name__}: {str(e)[:200]}"
        rows.append({"method": name, "calls": done, "of": len(shapes), "seconds": total, "new_tokens": ntok,
                     "tokens_per_s": ntok / total if total else float("nan"), "graphs": _compiled_graphs() - g0,
                     "error": err})
    return rows


def goal_lines(rows: list[dict[str, Any]]) -> str:
    """Met / not met for the issue's two ratios, from the best sampler row on the full (unshared) batch."""
    cands = [r for r in rows if r["method"].startswith("sampler") and "distinct" not in r["method"] and not r["error"]]
    if not cands:
        return "Goal: not measured (no sampler row ran)."
    best = max(cands, key=lambda r: r["tokens_per_s"])
    ok1 = best["ratio"] >= GOAL_VS_EAGER
    ok2 = best["ratio_static"] >= GOAL_VS_STATIC
    return (f"Goal, best sampler row `{best['method']}`: {fmt_num(best['ratio'], 2)}x eager `generate` "
            f"(goal >= {GOAL_VS_EAGER:g}x: **{'met' if ok1 else 'not met'}**), {fmt_num(best['ratio_static'], 2)}x "
            f"static+compile `generate` (goal >= {GOAL_VS_STATIC:g}x: **{'met' if ok2 else 'not met'}**).")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=256, help="rows per call (default 256)")
    p.add_argument("--prompt-len", type=int, default=1024, help="prompt tokens per row (default 1024)")
    p.add_argument("--new-tokens", type=int, default=64, help="new tokens per row (default 64)")
    p.add_argument("--repeats", type=int, default=2, help="timed runs per method after the warm-up (default 2)")
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu (only with --tiny)")
    p.add_argument("--tiny", action="store_true", help="toy model and sizes: a smoke run, not a measurement")
    p.add_argument("--no-compile", action="store_true", help="skip the compiled decode step")
    p.add_argument("--no-sweep", action="store_true", help="skip the training-like shape sweep")
    p.add_argument("--sweep-budget-s", type=float, default=150.0, help="seconds per method in the sweep")
    p.add_argument("--compile-backend", default=None, help="torch.compile backend (default inductor; eager on CPU)")
    p.add_argument("--out", default="benchmarks/speed/gpu_rollout_speed.md", help="report path")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = p.parse_args(argv)
    import torch

    on_cpu = args.device == "cpu"
    if on_cpu and not args.tiny:
        print("gpu_rollout_speed: --device cpu is only a smoke path (add --tiny); CPU numbers say nothing about "
              "GPU decoding. Nothing was written.", file=sys.stderr)
        return 2
    if not on_cpu and not torch.cuda.is_available():
        print("gpu_rollout_speed: no CUDA device found. This benchmark measures GPU decoding (bf16, batch "
              f"{args.batch}, {args.prompt_len}-token prompts) and refuses to run on CPU; run it on a machine "
              "with an NVIDIA GPU (or --device cpu --tiny for a smoke run). Nothing was written.", file=sys.stderr)
        return 2
    from transformers import Qwen2ForCausalLM

    if args.tiny:
        args.batch, args.prompt_len, args.new_tokens = min(args.batch, 8), min(args.prompt_len, 24), \
            min(args.new_tokens, 4)
        args.repeats = 1
    dev = torch.device(args.device)
    backend = args.compile_backend or ("eager" if on_cpu else "inductor")
    mode = None if on_cpu else "reduce-overhead"
    torch.manual_seed(0)
    cfg = tiny_config() if args.tiny else qwen2_05b_config()
    dtype = torch.float32 if on_cpu else torch.bfloat16
    model = Qwen2ForCausalLM(cfg).to(device=dev, dtype=dtype).eval()
    n_params = sum(p.numel() for p in model.parameters())
    show = not args.no_progress
    t0 = time.perf_counter()
    rows, agree = compare(model, batch=args.batch, prompt_len=args.prompt_len, new_tokens=args.new_tokens,
                          repeats=args.repeats, compile_decode=not args.no_compile, compile_backend=backend,
                          compile_mode=mode, show=show)
    shapes = training_shapes(args.batch, args.prompt_len)
    sw = [] if args.no_sweep else sweep(model, shapes, args.new_tokens, backend, mode, args.sweep_budget_s, show=show)
    total = time.perf_counter() - t0
    command = ["python", "-m", "agentgym_credit.bench.speed.gpu_rollout_speed"] + (sys.argv[1:] if argv is None
                                                                              else list(argv))
    table = markdown_table(
        ["method", "seconds", "first call s", "new tokens", "new tokens/s", "x generate eager",
         "x generate static+compile", "graphs compiled", "error"],
        [[r["method"], fmt_num(r["seconds"], 3), fmt_num(r["first_call_s"], 2), r["new_tokens"],
          fmt_num(r["tokens_per_s"], 0), fmt_num(r["ratio"], 2), fmt_num(r["ratio_static"], 2), r["graphs"],
          r["error"]] for r in rows])
    sweep_md = "(skipped: --no-sweep)"
    if sw:
        sweep_md = (f"Shapes (batch, prompt length) in order: {', '.join(f'({b}, {n})' for b, n in shapes)}; "
                    f"{args.new_tokens} new tokens each; first calls included (compiling is part of a training run's "
                    f"cost); a method stops after {args.sweep_budget_s:g} s.\n\n" + markdown_table(
                        ["method", "calls run", "seconds", "new tokens/s", "graphs compiled", "error"],
                        [[r["method"], f"{r['calls']} of {r['of']}", fmt_num(r["seconds"], 2),
                          fmt_num(r["tokens_per_s"], 0), r["graphs"], r["error"]] for r in sw]))
    where = (f"GPU: `{torch.cuda.get_device_name(dev)}`" if dev.type == "cuda" else
             "**CPU smoke run at toy size (--tiny): these numbers say nothing about GPU decoding and judge no goal.**")
    goal = goal_lines(rows) if not args.tiny else "Goal: not judged on a smoke run."
    text = f"""# Rollout speed on a GPU: `model.generate` (eager, static+compile) vs the trainer's sampler

{machine_lines(command)}

{where}; transformers `{__import__("transformers").__version__}`; compile backend `{backend}`.

Model: Qwen2-{"tiny" if args.tiny else "0.5B"}-shaped config ({n_params / 1e6:.1f} M parameters), random weights,
{str(dtype).split(".")[-1]}. Batch {args.batch}, {args.prompt_len}-token random prompts, {args.new_tokens} new tokens
per row (no early stop), sampling at temperature 1 with no top-k/top-p on both sides. Best of {args.repeats}
timed runs after a warm-up run (which compiles). Total benchmark time {total:.0f} s.

{goal}

{table}

## Training-like shape sweep

{sweep_md}

Greedy agreement on {int(agree["rows"])} rows: {agree["token_agreement"]:.3f} of tokens equal, first divergence at
token {agree["mean_first_divergence"]:.1f} on average (bf16 kernels differ between a left-padded batched
prefill and `generate`'s, so late divergence after a near-tie is expected; on CPU in float32 the tests
check exact equality).
"""
    out = write_atomic(args.out, text)
    print(table)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["qwen2_05b_config", "tiny_config", "compare", "sweep", "training_shapes", "goal_lines", "main"]
