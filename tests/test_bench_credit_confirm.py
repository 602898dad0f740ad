"""bench credit_confirm: saved rows reproduce every number; the family's dedupe, Holm and power; bad files."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentgym_credit.bench.montecarlo import confirm_stats as S
from agentgym_credit.bench.montecarlo.confirm_report import recompute_text
from agentgym_credit.bench.montecarlo.credit_confirm import ConfirmConfig, main, run_chunk


def _tiny(tmp_path, backend="sync", workers=1):
    return ConfirmConfig(stage="explore", envs=("webshop",), groups={"webshop": 4}, rows_per_group={"webshop": 3},
                         chunk={"webshop": 2}, k=4, compare_truth=True, backend=backend, workers=workers,
                         out=tmp_path, progress=False)


def test_saved_rows_reproduce_every_number(tmp_path, capsys):
    """Issue 32.5: a run saves every scored row; --recompute from that file alone prints the report's tables."""
    assert main(["--stage", "explore", "--envs", "webshop", "--groups", "webshop=4", "--rows-per-group",
                 "webshop=3", "--compare-truth", "--backend", "sync", "--out", str(tmp_path), "--boot", "50",
                 "--no-progress"]) == 0
    rows = tmp_path / "credit_confirm_explore_rows.parquet"
    cols = S.load_rows(rows)
    assert len(cols["truth"]) == 12 and len(np.unique(cols["group"])) == 4
    for c in ("env", "cell", "group", "row", "truth", "truth_se", "adv:graph", "adv:grpo", "adv:gigpo[state]",
              "adv:graph[obs]", "adv:verl-agent", "truth_old", "truth_old_se"):
        assert c in cols, c
    capsys.readouterr()
    assert main(["--recompute", str(rows)]) == 0
    text = capsys.readouterr().out
    again = recompute_text(S.recompute(rows), S.load_rows(rows))
    assert text.strip() == again.strip()
    md = (tmp_path / "credit_confirm_explore.md").read_text()
    fam = S.recompute(rows)["primary"]
    assert fam and all(f"{r['diff']:+.3f} [{r['diff_lo']:+.3f}, {r['diff_hi']:+.3f}]" in md for r in fam)
    assert all(f"{r['diff']:+.3f} [{r['diff_lo']:+.3f}, {r['diff_hi']:+.3f}]" in text for r in fam)
    for r in fam:  # the t reference on G - 1 df is the more conservative one
        assert r["p"] >= r["p_normal"] - 1e-12 and r["family"] == len(fam)


@pytest.mark.slow
def test_chunks_and_backends_give_the_same_rows(tmp_path):
    """Groups keep their seeds and rows whatever the chunking; subprocess workers give the sync rows."""
    a, _ = run_chunk(_tiny(tmp_path), "webshop", 0, 2)
    b1, _ = run_chunk(_tiny(tmp_path), "webshop", 0, 1)
    assert [r["group"] for r in a if r["group"] == 0] == [r["group"] for r in b1]
    assert {r["task"] for r in a if r["group"] == 0} == {r["task"] for r in b1}
    c, _ = run_chunk(_tiny(tmp_path, "subprocess", 2), "webshop", 0, 2)
    for x, y in zip(a, c):
        assert x == y


def _cols(n_groups=20, rows=4, seed=0):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_groups), rows)
    truth = rng.normal(size=len(g))
    return {"env": np.array(["e"] * len(g), dtype=object), "cell": np.array(["e/p"] * len(g), dtype=object),
            "policy": np.array(["p"] * len(g), dtype=object), "group": g, "row": np.arange(len(g)),
            "truth": truth, "truth_se": np.full(len(g), 0.1)}, truth, rng


def test_dedupe_drops_comparisons_identical_by_construction():
    cols, truth, rng = _cols()
    noise = rng.normal(size=len(truth))
    cols.update({"adv:graph": truth + noise, "adv:grpo": np.zeros(len(truth)), "adv:gigpo[state]": np.zeros(len(truth)),
                 "adv:graph[obs]": truth + 0.5 * noise, "adv:verl-agent": truth + 0.5 * noise})
    fam, dropped = S.primary_family(cols, boot=100)
    # gigpo[state] == grpo (e.g. no step term and all returns equal): their comparison is 0 by construction
    # and graph - grpo is then graph - gigpo[state] again; graph[obs] == verl-agent likewise
    assert [(r["a"], r["b"]) for r in fam] == [("graph", "gigpo[state]")]
    assert len(dropped) == 3 and any("identical advantages" in d for d in dropped)
    assert any("the same comparison as graph vs gigpo[state]" in d for d in dropped)


def test_primary_family_null_and_known_effect():
    cols, truth, rng = _cols(n_groups=40)
    noise = rng.normal(size=(5, len(truth)))
    cols.update({"adv:graph": truth + 0.3 * noise[0], "adv:gigpo[state]": truth + 3.0 * noise[1],
                 "adv:grpo": truth + 3.0 * noise[2], "adv:graph[obs]": truth + noise[3],
                 "adv:verl-agent": truth + noise[4]})
    fam, _ = S.primary_family(cols, boot=200)
    v = {(r["a"], r["b"]): r for r in fam}
    assert v[("graph", "gigpo[state]")]["holm"] == "a" and v[("graph", "grpo")]["holm"] == "a"  # known effect
    assert v[("gigpo[state]", "grpo")]["holm"] == "tie" and v[("graph[obs]", "verl-agent")]["holm"] == "tie"  # null
    assert sorted(r["holm_threshold"] for r in fam) == pytest.approx([0.05 / 4, 0.05 / 3, 0.05 / 2, 0.05])


def test_power_matches_the_normal_formula_and_null_case():
    from statistics import NormalDist

    z = NormalDist().inv_cdf
    d, se1, alpha = 0.2, 1.0, 0.05 / 8
    want = ((z(1 - alpha / 2) + z(0.8)) * se1 / d) ** 2  # the normal's answer; t on G - 1 df asks a little more
    g = S.groups_for_power(d, se1, alpha)
    assert want <= g <= want * 1.03 + 2
    assert S.power(d, se1, g, alpha) >= 0.8 > S.power(d, se1, g - 1, alpha)
    assert S.groups_for_power(0.0, se1, alpha) == 100000  # no effect: no size is enough
    assert S.power(0.0, se1, 100, 0.05) == pytest.approx(0.05, abs=0.005)  # the null: power = size
    assert S.t_quantile(0.975, 10) == pytest.approx(2.228, abs=0.005)
    assert math.isnan(S.power(d, se1, 1, alpha))


def test_bad_rows_files_are_refused(tmp_path):
    with pytest.raises(S.RowsFileError, match="cannot read"):
        S.load_rows(tmp_path / "absent.parquet")
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet")
    with pytest.raises(S.RowsFileError, match="cannot read"):
        S.load_rows(junk)
    S.save_rows(tmp_path / "r.parquet", [{"env": "e", "truth": 0.1}])
    with pytest.raises(S.RowsFileError, match="missing columns"):
        S.load_rows(tmp_path / "r.parquet")
    cols = {"env": "e", "cell": "c", "policy": "p", "group": 0, "row": 0, "truth": float("nan"), "truth_se": 0.1,
            "adv:grpo": 0.0}
    S.save_rows(tmp_path / "n.parquet", [cols])
    with pytest.raises(S.RowsFileError, match="non-finite"):
        S.load_rows(tmp_path / "n.parquet")
    assert main(["--recompute", str(junk)]) == 2
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temporary file


def test_lead_section_goes_first_and_is_replaced_in_place(tmp_path):
    from agentgym_credit.bench.montecarlo.confirm_report import lead

    md = tmp_path / "credit_real.md"
    md.write_text("<!-- setup:start -->\nold report\n<!-- setup:end -->\n")
    lead(md, "preregistered", "first answer")
    lead(md, "preregistered", "second answer")
    text = md.read_text()
    assert text.startswith("<!-- preregistered:start -->\nsecond answer\n<!-- preregistered:end -->")
    assert "first answer" not in text and text.count("preregistered:start") == 1 and "old report" in text


def test_robustness_into_an_older_report_from_its_rows(tmp_path, capsys):
    """Issue 41.4: --recompute ROWS --robustness-into MD adds the lenses and the groups needed at the observed
    effects to a report written before they existed, leaving its other sections as they were."""
    cols, truth, rng = _cols(24, 3)
    rows = [{k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in cols.items()} for i in range(len(truth))]
    for i, r in enumerate(rows):
        r["adv:graph"] = float(truth[i] + rng.normal(scale=0.5))
        r["adv:gigpo[state]"] = float(truth[i] + rng.normal(scale=2.0))
        r["adv:grpo"] = float(rng.normal())
    path = S.save_rows(tmp_path / "rows.parquet", rows)
    md = tmp_path / "old.md"
    md.write_text("<!-- setup:start -->\nold setup\n<!-- setup:end -->\n")
    assert main(["--recompute", str(path), "--robustness-into", str(md), "--boot", "100"]) == 0
    text = md.read_text()
    assert "old setup" in text and "## Robustness of the primary family" in text and "load" in text
    assert "## Groups needed at the effects this run observed" in text
    fam = S.recompute(path, boot=100)["primary"]
    assert all("holm_jk" in r and "p_drop" in r and "spearman_diff" in r for r in fam)
    assert "graph − gigpo[state]" in capsys.readouterr().out
    # a run that stopped before its report: the whole report from its rows, the notes in the setup
    full = tmp_path / "full.md"
    assert main(["--recompute", str(path), "--report-into", str(full), "--boot", "100", "--note", "stopped at 3 of 9"]) == 0
    text = full.read_text()
    for part in ("Machine:", "- stopped at 3 of 9", "## Cells", "## Primary family", "## Robustness of the primary family",
                 "## Groups needed", "## Accuracy per estimator"):
        assert part in text, part
    assert "--note …" in text and "stopped at 3 of 9`" not in text


def test_a_failed_chunk_names_the_failed_rollouts_errors(tmp_path, monkeypatch):
    """The textonly run stopped with "8 rollouts failed: ['', '']": the message showed the first two entries of
    ``traj.error`` (rollouts that had not failed). It now shows the failed rollouts' own errors."""
    from agentgym_credit.bench.montecarlo import credit_confirm as C

    monkeypatch.setitem(C.STAGES, "bad", C.Stage(0, {"webshop": (0, 10**6)}))
    cfg = ConfirmConfig(stage="bad", envs=("webshop",), n=2, k=2, backend="sync", out=tmp_path, progress=False)
    with pytest.warns(UserWarning, match="2 of 4 trajectories failed"), \
            pytest.raises(RuntimeError, match=r"webshop: 2 of 4 trajectories failed \(groups \[1\]\): "
                          r"reset failed: ValueError: .*out of range.* \(x2\)"):
        run_chunk(cfg, "webshop", 0, 2)


def test_every_stage_and_bench_task_is_in_its_envs_range():
    """The textonly stage (and ``credit_real``'s ``alfworld-dev``) listed 24 dev tasks; 19 dev games are playable,
    so the chunk of groups 16-19 lost group 19's eight rollouts at reset ("task 19 out of range")."""
    from agentgym_credit.bench.montecarlo.config import ENVS, dev_available
    from agentgym_credit.bench.montecarlo.credit_confirm import STAGES

    uses: dict[str, set] = {name: set(spec.tasks) for name, spec in ENVS.items()}
    for stage in STAGES.values():
        for name, tasks in stage.tasks.items():
            uses[name] |= set(tasks)
    for name, tasks in uses.items():
        if name == "alfworld-dev" and not dev_available():
            continue
        env = ENVS[name].factory()
        try:
            u = env.unwrapped
            count = u.num_tasks if hasattr(u, "num_tasks") else len(u.games)
        finally:
            env.close()
        assert min(tasks) >= 0 and max(tasks) < count, (name, max(tasks), count)


def test_a_stage_task_its_env_lacks_stops_the_run_before_any_chunk(tmp_path, monkeypatch, capsys):
    from agentgym_credit.bench.montecarlo import credit_confirm as C

    monkeypatch.setitem(C.STAGES, "bad", C.Stage(0, {"webshop": (0, 10**6)}))
    assert main(["--stage", "bad", "--envs", "webshop", "--groups", "webshop=2", "--backend", "sync",
                 "--out", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "stage 'bad', env 'webshop': task 1000000 cannot be played" in err and "out of range" in err
    assert not list(tmp_path.iterdir())  # nothing ran, nothing written
    ConfirmConfig(stage="bad", envs=("webshop",), groups={"webshop": 1}).check_tasks()  # group 0 plays task 0


def test_the_synthetic_check_section_names_its_own_machine(tmp_path):
    """credit_truth_precision.md's machine line was the first run's (in a hand-written setup block) after reruns:
    the section each rerun replaces now states the machine it ran on."""
    from agentgym_credit.bench.montecarlo.confirm_report import write_synthetic
    from agentgym_credit.bench.stats.report import machine_info

    row = {"task": "credit/GridWorld-v0", "policy": "uniform", "rows": 3, "strata_coverage": 1.0, "crn_coverage": 1.0,
           "strata_steps": 10, "crn_steps": 20, "strata_mse": 0.1, "crn_mse": 0.01, "gain_mse": 5.0, "gain_se": 4.0}
    md = tmp_path / "p.md"
    write_synthetic(md, [row], "agentgym-credit bench credit_confirm --synthetic-check", 1.0)
    text = md.read_text()
    assert f"platform `{machine_info()['platform']}`" in text and "| credit/GridWorld-v0 | uniform | 3 |" in text
