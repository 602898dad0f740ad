"""Report of ``bench credit_confirm``: markdown from the saved rows (and the run's costs).

- :func:`write_report` — ``benchmarks/montecarlo/credit_confirm_<stage>.md`` (setup, costs, cells, the primary
  family, accuracy, the truth's precision, the power plan); for the confirmatory stage also the leading
  ``primary`` section of ``benchmarks/montecarlo/credit_real.md``;
- :func:`recompute_text` — the same tables as text, from the rows alone (``--recompute``).

Every number below the setup lines comes from the rows file through :mod:`.confirm_stats`, so the
recomputation prints exactly what the report holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.montecarlo import confirm_stats as S
from agentgym_credit.bench.montecarlo.paired import p_text, robust_md
from agentgym_credit.bench.stats import report as R


def _verdict(r: dict[str, Any]) -> str:
    return {"a": f"{r['a']} wins", "b": f"{r['b']} wins"}.get(r.get("holm", "tie"), "tie")


ROBUST_NOTE = ("Each primary comparison again under three other lenses "
               "(`agentgym_credit.bench.montecarlo.paired.robustness`): the leave-one-group-out jackknife SE beside the "
               "group bootstrap's; the largest change of r(a) − r(b) when one scored row is dropped, and the comparison "
               "recomputed without the row that moves it most toward 0; Spearman beside Pearson. Holm over the same "
               "family for each lens.")


def _cell(r: dict[str, Any]) -> str:
    return str(r["env"])


def primary_table(fam: list[dict[str, Any]], plan: dict[tuple[str, str, str], dict[str, Any]] | None = None) -> str:
    body = []
    for r in fam:
        row = [r["env"], f"{r['a']} − {r['b']}", f"{r['diff']:+.3f} [{r['diff_lo']:+.3f}, {r['diff_hi']:+.3f}]",
               f"{r['se']:.3f}", str(r["groups"]), p_text(r["p"]), p_text(r["p_normal"]), f"{r['holm_threshold']:.4f}",
               _verdict(r)]
        if plan is not None:
            pl = plan.get((r["env"], r["a"], r["b"]))
            row.append(f"{S.power(pl['effect'], pl['se1'], r['groups'], r['holm_threshold']):.2f}" if pl else "–")
        body.append(row)
    head = ["env", "comparison", "r(a) − r(b) [95% CI]", "SE", "groups", "p (t, G−1 df)", "p (normal)",
            "Holm threshold", "Holm verdict"] + (["power at the exploration's effect"] if plan is not None else [])
    return R.markdown_table(head, body)


def accuracy_table(acc: list[dict[str, Any]]) -> str:
    body = [[r["env"], r["estimator"], f"{r['pearson']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}]"] for r in acc]
    return R.markdown_table(["env", "estimator", "Pearson r with Â^π [95% group bootstrap]"], body)


def cells_table(cols: dict[str, np.ndarray]) -> str:
    body = []
    for cell in sorted(set(cols["cell"].tolist())):
        m = cols["cell"] == cell
        groups = np.unique(cols["group"][m])
        body.append([cell, str(len(groups)), str(int(m.sum())),
                     f"{S.reliability(cols['truth'][m], cols['truth_se'][m]):.2f}",
                     f"{float(np.median(cols['truth_half'][m])):.3f}" if "truth_half" in cols else "–",
                     f"{float(np.mean(np.asarray(cols['truth_steps'][m], float))):.0f}" if "truth_steps" in cols else "–",
                     f"{float(np.mean(cols['won'][m])):.2f}" if "won" in cols else "–"])
    return R.markdown_table(["cell", "groups", "scored rows", "truth reliability", "median CI half-width",
                             "truth env steps per row", "scored rows on won trajectories"], body)


def precision_md(prec: list[dict[str, Any]]) -> str:
    body = [[p["cell"], str(p["rows"]), f"{p['se2_old']:.5f}", f"{p['steps_old']:.0f}", f"{p['se2_new']:.5f}",
             f"{p['steps_new']:.0f}", f"{p['gain']:.2f}×", f"{p['reliability_old']:.2f} / {p['reliability_new']:.2f}",
             f"{p['r_new_old']:.2f}"] for p in prec]
    return R.markdown_table(["cell", "rows", "mean se² (strata, K = 6+6)", "steps/row", "mean se² (CRN)",
                             "steps/row", "precision per env step, CRN / strata", "reliability strata / CRN",
                             "r(CRN, strata)"], body)


def power_md(plan: list[dict[str, Any]], what: str = "exploration") -> str:
    body = [[p["env"], f"{p['a']} − {p['b']}", f"{p['effect']:+.3f}", f"{p['se1']:.3f}", str(p["groups_explored"]),
             str(p["groups_needed"]), str(p["groups_needed_last_step"])] for p in plan]
    return R.markdown_table(["env", "comparison", f"{what} effect", "SE × sqrt(G)", "groups explored" if what == "exploration" else "groups run",
                             "groups for 80% power at Holm's first step (0.05/family)", "… at 0.05 (Holm's last step)"], body)


def recompute_text(res: dict[str, Any], cols: dict[str, np.ndarray]) -> str:
    """Every table of the report from the rows alone (what ``--recompute`` prints)."""
    parts = [f"{res['rows']} rows, cells: {', '.join(res['cells'])}", "", "Cells:", cells_table(cols), "",
             "Primary family (Holm over the comparisons below):", primary_table(res["primary"])]
    if res["dropped"]:
        parts += ["", "Dropped as identical by construction: " + "; ".join(res["dropped"])]
    parts += ["", "Robustness of the primary family:", robust_md(res["primary"], _cell)]
    parts += ["", "Accuracy per estimator:", accuracy_table(res["estimators"])]
    prec = S.precision_table(cols)
    if prec:
        parts += ["", "Truth precision:", precision_md(prec)]
    return "\n".join(parts)


def _costs(res: dict[str, Any]) -> str:
    body = []
    for env in dict.fromkeys(c["env"] for c in res["chunks"]):
        ch = [c for c in res["chunks"] if c["env"] == env]
        g = sum(c["groups"] for c in ch)
        body.append([env, str(g), f"{sum(c['seconds'] for c in ch) / g:.1f}", f"{sum(c['collect_s'] for c in ch) / g:.1f}",
                     f"{sum(c['truth_s'] for c in ch) / g:.1f}", f"{sum(c['old_truth_s'] for c in ch) / g:.1f}",
                     f"{sum(c['collect_steps'] for c in ch) / g:.0f}", f"{sum(c['truth_steps'] for c in ch) / g:.0f}",
                     f"{np.mean([c['success'] for c in ch]):.2f}",
                     f"{sum(c['mixed_groups'] for c in ch)}/{g}"])
    return R.markdown_table(["env", "groups", "s per group", "collect s", "CRN truth s", "strata truth s",
                             "collect steps", "truth steps", "success", "groups with mixed outcomes"], body)


def write_report(cfg: Any, res: dict[str, Any], command: str) -> Path:
    """``<out>/credit_confirm_<stage>.md`` from the saved rows and the run's costs (module docstring); ``cfg`` is
    the run's :class:`~agentgym_credit.bench.montecarlo.credit_confirm.ConfirmConfig`."""
    cols = S.load_rows(cfg.rows_path)
    rec = S.recompute(cfg.rows_path)
    md = cfg.out / f"credit_confirm_{cfg.stage}.md"
    lo0, lo1 = res["load"]
    setup = "\n".join([
        f"# credit_confirm, stage `{cfg.stage}`",
        "",
        R.machine_lines(command),
        f"- load (1-min average): {lo0:.1f} at the start, {lo1:.1f} at the end (2 cores shared with other jobs)",
        f"- wall time {res['seconds']:.0f} s on the {cfg.backend} backend × {cfg.workers} workers",
        f"- N = {cfg.n} rollouts per group; rows per group {cfg.rows_per_group}; truth: CRN, K = {cfg.k} "
        f"(antithetic pairs) + a second stage of {cfg.extra:g}× the first stage's steps",
        ("- behaviour policy (sees the observation text, the task text and the step count only: "
         "`agentgym_credit.truth.text_only`; fixed weights, not learned): " if cfg.stage == "textonly" else
         "- behaviour policy (sees the observation text, the task text and the admissible commands only: "
         "`agentgym_credit.truth.text_only`; learned by imitating the expert on dev games 0-11, "
         "`bench text_imitation`): " if cfg.stage.startswith("textonly") else
         "- behaviour policy (a documented stand-in for an agent in training, not a learned policy): ")
        + "; ".join(f"{k}: `{v}`" for k, v in res["policies"].items()),
        *([f"- groups left out as a pilot (run before the predictions): the first {cfg.start} of each env"]
          if getattr(cfg, "start", None) else []),
        f"- rows file: `{cfg.rows_path}`; every table below: `agentgym-credit bench credit_confirm --recompute "
        f"{cfg.rows_path}`",
    ])
    R.write_section(md, "setup", setup)
    R.write_section(md, "costs", "## Cost\n\n" + _costs(res))
    R.write_section(md, "cells", "## Cells\n\n" + cells_table(cols))
    R.write_section(md, "primary", "## Primary family\n\n" + primary_table(rec["primary"])
                    + ("\n\nDropped as identical by construction: " + "; ".join(rec["dropped"]) if rec["dropped"] else ""))
    write_robustness(md, rec["primary"])
    R.write_section(md, "accuracy", "## Accuracy per estimator\n\n" + accuracy_table(rec["estimators"]))
    prec = S.precision_table(cols)
    if prec:
        R.write_section(md, "precision", "## Truth precision per env step\n\n" + precision_md(prec))
    if cfg.stage == "explore":
        plan = S.power_plan(rec["primary"], family=8)
        R.write_section(md, "power", "## Power plan (from this exploration)\n\n" + power_md(plan))
    elif cfg.stage == "confirm":
        explore = cfg.out / "credit_confirm_explore_rows.parquet"
        plan = {(p["env"], p["a"], p["b"]): p for p in S.power_plan(S.recompute(explore)["primary"], family=8)} \
            if explore.exists() else None
        lead(cfg.out / "credit_real.md", "preregistered", lead_text(cfg, res, rec, plan, command))
    return md


def write_robustness(md: Path, primary: list[dict[str, Any]], command: str | None = None) -> Path:
    """The ``robustness`` section of report ``md``: the primary family under every lens (``command``, when
    given, is the recomputation that wrote it: a report made before the lenses existed gets them from its rows;
    it then also writes ``power_observed``, the groups a rerun needs at the effects the rows show)."""
    import os

    how = (f"\n\nWritten from the saved rows by `{command}` (load {os.getloadavg()[0]:.1f}; machine: "
           + ", ".join(f"{k} `{v}`" for k, v in R.machine_info().items())
           + "); the rest of this report is from its run.") if command else ""
    R.write_section(md, "robustness", "## Robustness of the primary family\n\n" + ROBUST_NOTE + how
                    + "\n\n" + robust_md(primary, _cell))
    if command:
        R.write_section(md, "power_observed", "## Groups needed at the effects this run observed\n\n"
                        "The power plan of `confirm_stats.power_plan` fed with this run's own effects and one-group SEs "
                        f"(family of {len(primary)}): how many groups a rerun needs for 80% power if these effects are "
                        "the true ones (a plan for the next run, not a test of this one).\n\n"
                        + power_md(S.power_plan(primary, family=len(primary)), "observed"))
    return md


def write_from_rows(md: Path, paths: Any, rec: dict[str, Any], command: str, notes: Any = ()) -> Path:
    """A whole report from saved rows alone (``rec``: :func:`~.confirm_stats.recompute` of ``paths``), for a run
    that stopped before writing its own: setup (``command``, machine, load, ``notes``), cells, the primary family,
    its robustness, the groups needed at the observed effects, accuracy per estimator."""
    import os

    cols = S.load_rows(paths)
    md.parent.mkdir(parents=True, exist_ok=True)
    R.write_section(md, "setup", "\n".join([
        f"# credit_confirm from saved rows: {', '.join(rec['cells'])}", "", R.machine_lines(command),
        f"- load (1-min average) when this report was written: {os.getloadavg()[0]:.1f} (2 cores shared)",
        *(f"- {n}" for n in notes)]))
    R.write_section(md, "cells", "## Cells\n\n" + cells_table(cols))
    R.write_section(md, "primary", "## Primary family\n\n" + primary_table(rec["primary"])
                    + ("\n\nDropped as identical by construction: " + "; ".join(rec["dropped"]) if rec["dropped"] else ""))
    write_robustness(md, rec["primary"], command)
    return R.write_section(md, "accuracy", "## Accuracy per estimator\n\n" + accuracy_table(rec["estimators"]))


def write_synthetic(md: Path, rows: list[dict[str, Any]], command: str, seconds: float) -> Path:
    """The synthetic check's section: both truths on the same rows against the exact oracle."""
    import os

    body = [[r["task"], r["policy"], str(r["rows"]), f"{r['strata_coverage']:.3f}", f"{r['crn_coverage']:.3f}",
             str(r["strata_steps"]), str(r["crn_steps"]), f"{r['strata_mse']:.5f}", f"{r['crn_mse']:.5f}",
             f"{r['gain_mse']:.2f}×", f"{r['gain_se']:.2f}×"] for r in rows]
    table = R.markdown_table(["task", "policy", "rows", "coverage strata", "coverage CRN", "env steps strata",
                              "env steps CRN", "MSE vs exact, strata", "MSE vs exact, CRN",
                              "precision per env step CRN / strata (exact error)", "… (own SE)"], body)
    return R.write_section(md, "synthetic", "## Truth precision against the exact oracle (synthetic tasks)\n\n"
                           f"Command: `{command}` ({seconds:.0f} s, load {os.getloadavg()[0]:.1f}).\n\nMachine: "
                           + ", ".join(f"{k} `{v}`" for k, v in R.machine_info().items()) + "\n\nSame rows for both "
                           "truths: the independent strata (K = 8 per evaluated action + 8 for the rest) and the "
                           "common-random-numbers truth (K = 8 in antithetic pairs + a second stage of 1× the first "
                           "stage's steps). Precision per env step = 1 / (error variance × env steps).\n\n" + table)


def lead_text(cfg: Any, res: dict[str, Any], rec: dict[str, Any], plan: Any, command: str) -> str:
    """The leading section of ``credit_real.md``: the pre-registered primary family's answer."""
    groups = {c["env"]: 0 for c in res["chunks"]}
    for c in res["chunks"]:
        groups[c["env"]] += c["groups"]
    wins = sum(r.get("holm") in ("a", "b") for r in rec["primary"])
    return "\n".join([
        "## Pre-registered primary results (issue 32)",
        "",
        "The plan (family, sizes from a power analysis, predictions) was committed before this run: "
        "`benchmarks/montecarlo/credit_real_prereg.md`. Behaviour policy: the trainee stand-in (history-dependent, mixed "
        "success inside a group; a documented stand-in, not a learned policy); N = 8; truth: common random "
        "numbers (`agentgym_credit.truth.crn`); fresh games and goals (stage `confirm`, seed 1). Groups run: "
        + ", ".join(f"{e} {g} of {cfg.groups[e]} planned" for e, g in groups.items())
        + f"; {res['seconds'] / 60:.0f} min wall on the {cfg.backend} backend × {cfg.workers} workers "
        f"(2 cores shared with other jobs, load {res['load'][0]:.1f} → {res['load'][1]:.1f}).",
        "",
        primary_table(rec["primary"], plan),
        "",
        ("Dropped as identical by construction before Holm: " + "; ".join(rec["dropped"]) + "\n\n") if rec["dropped"] else "",
        f"{wins} of {len(rec['primary'])} comparisons are decided after Holm; a tie is a tie at the power shown "
        "(the power of each comparison at the groups run, for the exploration's effect size, at its Holm "
        "threshold). p uses Student-t on G − 1 degrees of freedom (the SE comes from G clusters; conservative "
        "for few groups); the normal reference's p is beside it.",
        "",
        f"Every number in this section: `agentgym-credit bench credit_confirm --recompute {cfg.rows_path}`; "
        f"the run: `{command}`.",
    ])


def lead(path: Path, name: str, body: str) -> Path:
    """Write section ``name`` of ``path``, placing it at the top the first time."""
    start = f"<!-- {name}:start -->"
    text = path.read_text() if path.exists() else ""
    if start not in text:
        tmp = path.with_name(f".{path.name}.lead")
        tmp.write_text(f"{start}\n\n<!-- {name}:end -->\n\n" + text)
        tmp.replace(path)
    return R.write_section(path, name, body)


__all__ = ["write_from_rows", "write_robustness", "primary_table", "accuracy_table", "cells_table", "precision_md", "power_md", "recompute_text",
           "write_report", "write_synthetic", "lead_text", "lead"]
