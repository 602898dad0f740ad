"""WebShop difficulty benchmark: scripted baselines, random and the expert on the generated catalogs;
writes ``benchmarks/envs/webshop_difficulty.md`` (and a PNG bar chart when matplotlib is installed).

What lives here: the policies (:func:`rule_policy`, :func:`option_script_policy`,
:func:`random_policy`, the privileged :class:`~agentgym_credit.envs.webshop.expert.ExpertPolicy`),
:func:`run` (every policy on the test goals of each catalog size), :func:`language` (human and generated
instructions by one function), :func:`write_markdown`,
:func:`main` (``python -m agentgym_credit.bench.envs.webshop_difficulty [--sizes 1000 10000]``, or
``agentgym-credit bench webshop_difficulty``).

Policies, all on ``split="test"`` (goals 0-499), 15-step limit:

* **rule**: ``search[<instruction>]``, click the first result, ``Buy Now`` (the original paper's rule
  baseline: 45.6 average score);
* **option script**: as *rule*, plus a click on every option value of the item page that appears in
  the instruction text as whole words (case-insensitive);
* **normalizing**, **title-overlap**, **fuzzy-option**: the generic scripts of
  :mod:`~agentgym_credit.bench.envs.webshop_scripts` (written before generator v5, never tuned on it);
* **random**: a random admissible action each step (the search box gets the instruction text);
* **expert**: :class:`ExpertPolicy`, which knows the goal product (the original's human experts:
  82.1 average, 59.6% success).

Score = WebShop's reward x 100 (the paper's "score"), success = reward 1.0.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.envs.webshop_scripts import SCRIPTS, first_result
from agentgym_credit.bench.stats.report import write_atomic
from agentgym_credit.envs.webshop import pages as P
from agentgym_credit.envs.webshop.catalog import GENERATOR_VERSION, generate_catalog
from agentgym_credit.envs.webshop.env import WebShopEnv
from agentgym_credit.envs.webshop.expert import ExpertPolicy

PAPER = {"rule": (45.6, 9.6), "expert": (82.1, 59.6)}
"""The original paper's (score, success %) of its rule baseline and of human experts."""


def rule_policy(env: WebShopEnv, info: dict[str, Any], rng: np.random.Generator) -> str:
    """Search the instruction, open the first result, buy."""
    kind = env._page_kind
    if kind == "search":
        return f"search[{env.goal['instruction_text']}]"
    if kind == "results":
        first = first_result(env)
        return f"click[{first}]" if first else "click[back to search]"
    return "click[buy now]"


def option_script_policy(env: WebShopEnv, info: dict[str, Any], rng: np.random.Generator) -> str:
    """As :func:`rule_policy`, clicking first every option value written in the instruction."""
    if env._page_kind != "item":
        return rule_policy(env, info, rng)
    text = env.goal["instruction_text"].lower()
    for e in env._page.elements:
        if e.kind != P.OPTION or env._options.get(e.option_name) == e.text:
            continue
        if any(v == e.text for v in env._options.values()):
            continue
        if re.search(r"(?<![\w-])" + re.escape(e.text.lower()) + r"(?![\w-])", text):
            return f"click[{e.text}]"
    return "click[buy now]"


def random_policy(env: WebShopEnv, info: dict[str, Any], rng: np.random.Generator) -> str:
    """A uniformly random admissible action; the search box gets the instruction text."""
    adm = info["admissible_actions"]
    a = adm[int(rng.integers(len(adm)))]
    return f"search[{env.goal['instruction_text']}]" if a.startswith("search[") else a


def _episodes(env: WebShopEnv, act: Callable[..., str], n: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    scores, lengths = [], []
    for k in range(n):
        expert = ExpertPolicy() if act is None else None
        obs, info = env.reset(seed=seed + k, options={"task": k})
        steps = 0
        while True:
            a = expert.act(env) if expert is not None else act(env, info, rng)
            obs, r, term, trunc, info = env.step(a)
            steps += 1
            if term or trunc:
                break
        scores.append(float(info["score"]) if term else 0.0)
        lengths.append(steps)
    s = np.asarray(scores)
    return {
        "score": 100 * float(s.mean()),
        "score_se": 100 * float(s.std(ddof=1) / np.sqrt(len(s))),
        "success": 100 * float(np.mean(np.isclose(s, 1.0))),
        "len_median": float(np.median(lengths)),
        "len_mean": float(np.mean(lengths)),
    }


POLICIES: dict[str, Any] = {
    "rule": rule_policy,
    "option script": option_script_policy,
    **SCRIPTS,
    "random": random_policy,
    "expert": None,
}


def run(
    sizes: list[int], n_goals: int = 500, reward_rules: str = "v2", seed: int = 0
) -> list[dict[str, Any]]:
    """Every policy on the first ``n_goals`` test goals of each catalog size (catalog ``seed``)."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        tqdm = None
    rows = []
    jobs = [(n, name) for n in sizes for name in POLICIES]
    bar = tqdm(total=len(jobs), desc="webshop difficulty", unit="policy") if tqdm else None
    for n in sizes:
        env = WebShopEnv(
            catalog=generate_catalog(n, seed), split="test", cache_dir=False, reward_rules=reward_rules
        )
        goals = min(n_goals, env.num_tasks)
        for name, act in POLICIES.items():
            t0 = time.perf_counter()
            row = {"n": n, "policy": name, "goals": goals, **_episodes(env, act, goals, seed=0)}
            row["seconds"] = time.perf_counter() - t0
            rows.append(row)
            if bar:
                bar.update(1)
            print(f"n={n} {name}: {row}", file=sys.stderr)
    if bar:
        bar.close()
    return rows


def _plot(rows: list[dict[str, Any]], path: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "(no plot: matplotlib is not installed)"
    sizes = sorted({r["n"] for r in rows})
    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.8 / len(sizes)
    for j, n in enumerate(sizes):
        sub = [r for r in rows if r["n"] == n]
        xs = np.arange(len(sub)) + j * width
        ax.bar(
            xs,
            [r["score"] for r in sub],
            width,
            yerr=[1.96 * r["score_se"] for r in sub],
            label=f"{n:,} products",
        )
        ax.set_xticks(np.arange(len(sub)) + width * (len(sizes) - 1) / 2, [r["policy"] for r in sub])
    for name, (score, _) in PAPER.items():
        ax.axhline(score, ls="--", lw=1, color="grey")
        ax.text(3.4, score + 1, f"paper {name} {score}", fontsize=7, color="grey", ha="right")
    ax.set_ylabel("average score (x100)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"![scores]({path.name})"


HUMAN_SAMPLE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "webshop" / "human_instructions_sample.json"
"""191 of the original's human instructions in a source checkout (the file says where from and how sampled)."""


def human_instructions(path: Path | None = None, n: int | None = None) -> list[str]:
    """Human instructions: the original's ``items_human_ins.json`` when ``path`` is one (the first ``n``), else
    the 191-instruction sample (:data:`HUMAN_SAMPLE`); ``[]`` when neither is there."""
    import json

    if path is not None and path.name != HUMAN_SAMPLE.name:
        from agentgym_credit.envs.webshop.data import iter_json_object

        out = [r["instruction"] for _, recs in iter_json_object(path) for r in recs if r.get("instruction")]
        return out[:n] if n else out
    path = path or HUMAN_SAMPLE
    if not path.is_file():
        return []
    return [r[0] for r in json.loads(path.read_text())["records"]]


def language(n: int = 5000, seed: int = 0, human: Path | None = None) -> dict[str, Any]:
    """``instructions.language_stats`` of the human instructions and of generated ones (the sentence, and the goal
    text the agent sees: sentence + budget clause) at the human sample's size and at ``n``, with the realized
    omission rates."""
    from agentgym_credit.envs.webshop import instructions as I
    from agentgym_credit.envs.webshop.catalog import generate_catalog
    from agentgym_credit.envs.webshop.instructions import language_stats

    typos = []
    real = I.add_typo
    I.add_typo = lambda rng, text: typos.append(text) or real(rng, text)  # count the typos drawn
    try:
        cat = generate_catalog(n, seed)
    finally:
        I.add_typo = real
    asked = [len(g["goal_options"]) for g in cat.goals]
    listed = [len(cat.by_asin[g["asin"]]["options"]) for g in cat.goals]
    sentences = [p["instruction_text"] for p in cat.products]
    hum = human_instructions(human, n)
    return {
        "human": language_stats(hum) if hum else None,
        "sentence_at_human_n": language_stats(sentences[: len(hum)]) if hum else None,
        "sentence": language_stats(sentences),
        "goal": language_stats([g["instruction_text"] for g in cat.goals]),
        "typo_share": len(typos) / max(len(cat.products), 1),
        "no_option_share": float(np.mean([a == 0 for a in asked])),
        "options_asked": float(np.mean(asked)),
        "options_listed": float(np.mean(listed)),
        "attributes_asked": float(np.mean([len(g["attributes"]) for g in cat.goals])),
    }


LANGUAGE_GOALS = {"distinct3": 0.50, "vocabulary": 4000, "two_sentence": 0.08, "informal": 0.08}
"""Issue 35's goals for generated instructions (vocabulary per 5,000 instructions)."""


def _row(name: str, st: dict[str, float]) -> str:
    return (f"| {name} | {st['n']:,.0f} | {st['mean_words']:.1f} | {st['vocabulary']:,.0f} | {st['distinct3']:.3f} | "
            f"{st['two_sentence']:.1%} | {st['informal']:.1%} |")


def _language_lines(lang: dict[str, Any]) -> list[str]:
    from agentgym_credit.envs.webshop.catalog import GENERATOR_VERSION
    from agentgym_credit.envs.webshop.instructions import RATES

    s, g = lang["sentence"], lang["goal"]
    n = int(s["n"])
    rows = []
    if lang["human"] is not None:
        rows += [_row("human (the original's, sample)", lang["human"]),
                 _row(f"generated v{GENERATOR_VERSION}, sentence, same size", lang["sentence_at_human_n"])]
    rows += [_row(f"generated v{GENERATOR_VERSION}, sentence", s),
             _row(f"generated v{GENERATOR_VERSION}, goal text (sentence + budget clause)", g)]
    met = {k: (s[k] >= v) for k, v in LANGUAGE_GOALS.items()}
    fmt = {"distinct3": "{:.3f}", "vocabulary": "{:,.0f}", "two_sentence": "{:.1%}", "informal": "{:.1%}"}
    verdict = "; ".join(f"{k} {fmt[k].format(s[k])} (goal >= {fmt[k].format(v)}): {'met' if met[k] else 'NOT met'}"
                        for k, v in LANGUAGE_GOALS.items())
    return [
        "Instructions, human and generated (seed 0), every row by the same function, "
        "`agentgym_credit.envs.webshop.instructions.language_stats`: words = lower-cased runs of letters and digits; "
        "vocabulary = distinct words in the sample; distinct-3 = distinct word 3-grams / all 3-grams (both grow "
        "with the sample: compare rows of one size); two-sentence = share with a sentence break; informal = share "
        "with an apostrophe-less contraction or chat abbreviation, a spacing slip, or a sample typo (a once-seen word "
        "one edit from a word seen 3+ times in the same sample).",
        "",
        "| instructions | n | mean words | vocabulary | distinct-3 | two-sentence | informal |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"Goals (generated sentence, {n:,} instructions): {verdict}.",
        "",
        f"Rates drawn (per sentence): typo {RATES['typo']:.0%}, informal spelling {RATES['informal']:.0%}, options "
        f"in a second sentence {RATES['second']:.0%}, a background sentence {RATES['story']:.0%}, brand named "
        f"{RATES['brand']:.0%}, recipient / occasion / purpose {RATES['context']:.0%}, qualifier {RATES['qualifier']:.0%}, "
        f"terse search-like {RATES['terse']:.0%}; paraphrased: {RATES['attr_paraphrase']:.0%} of attributes, "
        f"{RATES['value_paraphrase']:.0%} of option values. Realized: a typo in {lang['typo_share']:.1%} of the "
        f"sentences; goals asking no option {lang['no_option_share']:.1%}, options asked {lang['options_asked']:.2f} "
        f"of {lang['options_listed']:.2f} listed, attributes asked {lang['attributes_asked']:.2f}.",
        "",
    ]


def write_markdown(
    rows: list[dict[str, Any]], path: Path, command: str, seconds: float, load: str, language: dict | None = None
) -> None:
    """Write the table with the machine, the load and the exact command."""
    rules = rows[0].get("reward_rules", "v2") if rows else "v2"
    lines = [
        "# WebShop difficulty",
        "",
        f"Machine: `{platform.platform()}`, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"shared with other jobs (load average before / after: {load}); {seconds:.0f} s.",
        "",
        f"Command: `{command}`",
        "",
        f"Test goals (0-499) of the generated catalogs (generator v{GENERATOR_VERSION}), reward rules `{rules}`, 15-step limit. Score = "
        "average reward x 100 (± 1.96 standard errors), success = share of episodes with reward 1.0. "
        "Policies: see `agentgym_credit/bench/envs/webshop_difficulty.py`.",
        "",
        "| products | policy | score | success % | median steps | mean steps | paper |",
        "|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        paper = PAPER.get(r["policy"])
        ref = f"{paper[0]} ({paper[1]}% success)" if paper else ""
        if r["policy"] == "option script":
            ref = "verbatim values only"
        if r["policy"] in SCRIPTS:
            ref = "goal: <= 75 score, <= 40% success"
        lines.append(
            f"| {r['n']:,} | {r['policy']} | {r['score']:.1f} ± {1.96 * r['score_se']:.1f} | {r['success']:.1f} | "
            f"{r['len_median']:.0f} | {r['len_mean']:.1f} | {ref} |"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    lines += ["", _plot(rows, path.with_suffix(".png")), ""]
    checks = []
    for n in sorted({r["n"] for r in rows}):
        by = {r["policy"]: r for r in rows if r["n"] == n}
        checks += [
            f"- {n:,} products: expert success {by['expert']['success']:.1f}% (goal 100%): "
            f"{'met' if by['expert']['success'] >= 99.95 else 'NOT met'}; rule {by['rule']['score']:.1f} "
            f"(goal 35.6-55.6): {'met' if abs(by['rule']['score'] - 45.6) <= 10 else 'NOT met'}; rule success "
            f"{by['rule']['success']:.1f}% (goal 4.6-14.6%): "
            f"{'met' if abs(by['rule']['success'] - 9.6) <= 5 else 'NOT met'}; expert median "
            f"steps {by['expert']['len_median']:.0f} (goal >= 6): "
            f"{'met' if by['expert']['len_median'] >= 6 else 'NOT met'}",
        ]
        for name in SCRIPTS:
            if name in by:
                sc, su = by[name]["score"], by[name]["success"]
                checks.append(
                    f"- {n:,} products, generic script {name}: score {sc:.1f} (goal <= 75), success {su:.1f}% "
                    f"(goal <= 40%): {'met' if sc <= 75 and su <= 40 else 'NOT met'}"
                )
    lines += ["Goals:", "", *checks, ""]
    if language:
        lines += _language_lines(language)
    write_atomic(path, "\n".join(lines))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000], help="catalog sizes")
    ap.add_argument("--goals", type=int, default=500, help="test goals per size (at most 500)")
    ap.add_argument("--seed", type=int, default=0, help="catalog seed (0: the default catalogs)")
    ap.add_argument("--reward-rules", default="v2", choices=["v2", "master"], help="reward rule set")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/envs/webshop_difficulty.md"), help="report path")
    ap.add_argument("--language", type=int, default=5000, help="instructions for the language statistics (0: none)")
    ap.add_argument("--human", type=Path, default=None,
                    help="the original's items_human_ins.json (default: the 191-instruction sample of a source checkout)")
    args = ap.parse_args(argv)
    load0 = " / ".join(f"{x:.1f}" for x in os.getloadavg()[:1])
    t0 = time.perf_counter()
    rows = run(args.sizes, args.goals, args.reward_rules, args.seed)
    for r in rows:
        r["reward_rules"] = args.reward_rules
    lang = language(args.language, human=args.human) if args.language else None
    load = f"{load0} / {os.getloadavg()[0]:.1f}"
    cmd = "python -m agentgym_credit.bench.envs.webshop_difficulty " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    write_markdown(rows, args.out, cmd.strip(), time.perf_counter() - t0, load, lang)
    print(args.out.read_text())


if __name__ == "__main__":
    main()


__all__ = [
    "HUMAN_SAMPLE",
    "LANGUAGE_GOALS",
    "human_instructions",
    "PAPER",
    "language",
    "POLICIES",
    "main",
    "option_script_policy",
    "random_policy",
    "rule_policy",
    "run",
    "write_markdown",
]
