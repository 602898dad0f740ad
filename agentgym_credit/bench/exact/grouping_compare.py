"""``bench grouping``: every anchor against ``state_key``, with intervals and a multiplicity correction.

- :data:`COMPARISON_PREDICTIONS`: what the comparisons were expected to show, written before the
  run that first reported them;
- :func:`comparisons`: markdown lines. Per anchor: Pearson r of A^S paired over seeds against
  ``state_key`` in every (task, perturbation, N) cell, tallied with Holm's correction over those cells
  (:class:`~agentgym_credit.bench.exact.credit_findings.Tally`); bias over all cells as the cells' signed
  bias² pooled with one delete-one-rollout-group jackknife, and the paired pooled difference of
  bias² against ``state_key`` (:func:`~agentgym_credit.bench.stats.metrics.pooled_bias_squared_difference`).

``cfg`` and ``res`` are :class:`~agentgym_credit.bench.exact.grouping.GroupingBenchConfig` and
:class:`~agentgym_credit.bench.exact.grouping.GroupingResult` (read by attribute; this module sits below
:mod:`~agentgym_credit.bench.exact.grouping`, which imports it).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from agentgym_credit.bench.exact.credit_findings import Tally, ci_text
from agentgym_credit.bench.stats import metrics as M

COMPARISON_PREDICTIONS = (
    "Once each anchor's Pearson r is compared with state_key's paired over seeds and Holm-corrected, the oracle "
    "anchor has no loss to state_key (the earlier 'failed' check compared point means).",
    "obs_key and the similarity anchors have a higher pooled bias than state_key (paired difference of bias² "
    "excluding 0), from the states they mix on aliased and household.",
)


def comparisons(cfg: Any, res: Any, reference: str = "state_key") -> list[str]:
    """Markdown bullet lines comparing every anchor of the run with ``reference`` (module docstring)."""
    per: dict[tuple, list[tuple[int, float]]] = defaultdict(list)
    for r in res.runs:
        per[(r["task"], bool(r["perturb"]), int(r["N"]), r["anchor"])].append((int(r["seed"]), float(r["pearson"])))
    cells = sorted({k[:3] for k in per})
    body: list[str] = []
    tallies: dict[str, Tally] = {}
    bias_diffs: dict[str, tuple[float, float]] = {}
    body.append(f"Per anchor against `{reference}` over the {len(cells)} (task, perturbation, N) cells: Pearson r "
                 f"paired over seeds (Holm-corrected over the cells; a win: higher r than `{reference}`), and the "
                 "bias of A^S pooled over every cell (signed bias² pooled, one jackknife over all rollout groups) "
                 f"with the paired difference of bias² against `{reference}` (negative: lower bias).")
    body.append("")
    ref_parts = [res.parts.get((*c, reference)) for c in cells]
    if any(p is not None for p in ref_parts):
        body.append(f"- `{reference}`: pooled bias {ci_text(*M.pooled_bias(ref_parts), 4)}.")
    for anchor in cfg.anchors:
        if anchor == reference:
            continue
        diffs, halves, ps = [], [], []
        for c in cells:
            a, b = dict(per.get((*c, anchor), [])), dict(per.get((*c, reference), []))
            seeds = sorted(set(a) & set(b))
            if not seeds:
                continue
            d, h, n = M.paired_diff_ci(np.array([a[s] for s in seeds]), np.array([b[s] for s in seeds]))
            diffs.append(d)
            halves.append(h)
            ps.append(M.p_from_interval(d, h, n - 1))
        tl = Tally.of(diffs, halves, ps, diffs)
        pa = [res.parts.get((*c, anchor)) for c in cells]
        keep = [i for i, (x, y) in enumerate(zip(pa, ref_parts)) if x is not None and y is not None]
        d2, h2 = M.pooled_bias_squared_difference([pa[i] for i in keep], [ref_parts[i] for i in keep])
        tallies[anchor], bias_diffs[anchor] = tl, (d2, h2)
        body.append(f"- `{anchor}`: Pearson r against `{reference}` — {tl.text()}; pooled bias "
                    f"{ci_text(*M.pooled_bias(pa), 4)}, bias² difference {ci_text(d2, h2, 5)}.")
    lines = ["Predictions for this section, written before the run that first reported it, and what this run says:",
             ""]
    checks = (_check_oracle(tallies), _check_mixing_bias(bias_diffs))
    for i, (text, (held, why)) in enumerate(zip(COMPARISON_PREDICTIONS, checks), 1):
        verdict = "not checked" if held is None else ("**held**" if held else "**failed**")
        lines.append(f"{i}. {text} — {verdict} ({why})")
    return lines + [""] + body


def _check_oracle(tallies: dict[str, Tally]) -> tuple[bool | None, str]:
    tl = tallies.get("oracle")
    return (None, "no oracle anchor") if tl is None else (tl.losses == 0, tl.text())


def _check_mixing_bias(diffs: dict[str, tuple[float, float]]) -> tuple[bool | None, str]:
    names = [a for a in diffs if a == "obs_key" or a.startswith("sim")]
    if not names:
        return None, "no such anchors in this run"
    held = [a for a in names if math.isfinite(diffs[a][1]) and diffs[a][0] - diffs[a][1] > 0]
    return len(held) == len(names), f"interval above 0 for {', '.join(held) or 'none'} of {', '.join(names)}"


__all__ = ["COMPARISON_PREDICTIONS", "comparisons"]
