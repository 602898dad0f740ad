"""Issue 41.4: the learned text-only ALFWorld behaviour policy (``text-imitation-alfworld``), the imitation that
builds it, and ``bench credit_confirm --resume``."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

from agentgym_credit.bench.montecarlo import confirm_stats as S
from agentgym_credit.bench.montecarlo import credit_confirm as CC
from agentgym_credit.bench.montecarlo.text_imitation import fit
from agentgym_credit.truth.text_only import (
    IMITATION_FILE,
    TEXT_ONLY,
    VISIBLE,
    ObservationOnly,
    SavedTextPolicy,
)
from agentgym_credit.truth.text_policy import TextPolicy, scene_of

NAME = "text-imitation-alfworld"


def _info(**over: Any) -> dict[str, Any]:
    base = {"admissible_actions": ["go to countertop 1", "take apple 1 from countertop 1", "go to fridge 1", "look"],
            "goal": "put a cool apple in fridge", "history_t": 2, "expert_action": "go to fridge 1",
            "state_key": "s-3", "obs_key": 5, "task_id": "game-1", "won": False}
    base.update(over)
    return base


def test_the_imitation_policy_is_a_committed_checkpoint_with_no_expert_and_no_state_part():
    """The named policy reads its committed checkpoint: no expert bonus, and no per-(obs_key, action) residual."""
    pi = TEXT_ONLY[NAME]
    assert isinstance(pi, ObservationOnly) and pi.name == NAME
    assert IMITATION_FILE.exists() and IMITATION_FILE.stat().st_size < 1 << 20
    pol, meta = TextPolicy.load(IMITATION_FILE)
    assert pol.expert_bonus == 0.0 and "residual" not in pol.parts and "scene" in pol.parts
    assert meta["games"] == list(range(12))  # imitated on the training dev games only


def test_the_imitation_policy_sees_the_visible_keys_only_and_ignores_the_hidden_ones():
    """Its distribution does not move when the expert, the state key or the task id do, and the learned policy
    inside is called with :data:`VISIBLE` keys only (a policy reading the expert or the state fails here)."""
    pi = TEXT_ONLY[NAME]
    obs = "You arrive at countertop 1. On the countertop 1, you see a apple 1."
    acts, p = pi.distribution(obs, _info())
    acts2, p2 = pi.distribution(obs, _info(expert_action="look", state_key="s-9", obs_key=1, task_id="game-7"))
    assert acts == acts2 and np.array_equal(p, p2)
    inner = pi.policy
    assert isinstance(inner, SavedTextPolicy)
    seen: list[set[str]] = []
    real = inner.load()
    orig = real.distribution
    real.distribution = lambda o, i: (seen.append(set(i)), orig(o, i))[1]  # type: ignore[method-assign]
    try:
        pi.distribution(obs, _info())
    finally:
        del real.distribution
    assert seen and seen[0] <= set(VISIBLE)


def test_the_saved_policy_pickles_as_its_path_and_acts_the_same_after():
    pi = TEXT_ONLY[NAME]
    obs = "You pick up the apple 1 from the countertop 1."
    info = _info(admissible_actions=["go to fridge 1", "put apple 1 in/on countertop 1", "cool apple 1 with fridge 1"])
    _, p = pi.distribution(obs, info)
    blob = pickle.dumps(pi)
    assert len(blob) < 2000  # the path, not the weights
    _, p2 = pickle.loads(blob).distribution(obs, info)
    assert np.array_equal(p, p2)


def test_a_missing_checkpoint_is_a_policy_file_error(tmp_path):
    from agentgym_credit.errors import PolicyFileError
    from agentgym_credit.truth.text_only import imitation_policy

    with pytest.raises(PolicyFileError):
        imitation_policy(tmp_path / "none.npz").distribution("x", _info())


def test_scene_part_sees_holding_from_the_commands_and_the_last_event():
    free, hold = scene_of("You arrive at fridge 1.", ["go to fridge 1"]), scene_of("You arrive at fridge 1.",
                                                                                   ["put apple 1 in/on fridge 1"])
    assert free.startswith("free") and hold.startswith("hold") and free.endswith("you arrive")
    pol = TextPolicy(0.0, parts=("linear", "scene"))
    assert not np.array_equal(pol.features("o", "put apple in fridge", "go to fridge 1", free),
                              pol.features("o", "put apple in fridge", "go to fridge 1", hold))
    plain = TextPolicy(0.0, parts=("linear",))
    assert np.array_equal(plain.features("o", "g", "go to fridge 1", free), plain.features("o", "g", "go to fridge 1"))


def test_fit_raises_the_likelihood_of_the_teachers_commands():
    """Imitation with the package's update: the mean log-likelihood of the labelled commands goes up, and the
    label wins on each labelled step after enough steps."""
    pol = TextPolicy(0.0, 0.0, buckets=1 << 12, parts=("linear", "scene"))
    data = [("You arrive at desk 1. On the desk 1, you see a apple 1.",
             {"admissible_actions": ["go to bed 1", "take apple 1 from desk 1", "look"], "goal": "put an apple in bed",
              "history_t": 1}, "take apple 1 from desk 1"),
            ("You pick up the apple 1 from the desk 1.",
             {"admissible_actions": ["go to bed 1", "go to desk 1", "put apple 1 in/on desk 1"],
              "goal": "put an apple in bed", "history_t": 2}, "go to bed 1")]
    before = fit(pol, data, 0, 1.0)
    after = fit(pol, data, 30, 1.0)
    assert before == pytest.approx(np.mean([np.log(1 / 3)] * 2)) and after > before + 0.5
    for obs, vis, teacher in data:
        acts, p = pol.distribution(obs, vis)
        assert acts[int(np.argmax(p))] == teacher
    with pytest.raises(ValueError, match="residual"):
        fit(TextPolicy(0.0), data, 1, 1.0)


def test_the_textonly_alfworld_stage_uses_the_imitation_policy_on_the_dev_games():
    st = CC.STAGES["textonly_alfworld"]
    assert set(st.tasks) == {"alfworld-dev"} and st.seed not in {s.seed for k, s in CC.STAGES.items() if k != "textonly_alfworld"}
    assert CC.behaviour(st, "alfworld-dev").name == NAME
    assert CC.behaviour(CC.STAGES["textonly"], "alfworld-dev").name == "text-scorer-alfworld"


def _fake_rows(stage: str, env: str, groups: range) -> list[dict[str, Any]]:
    return [{"env": env, "cell": f"{env}/p", "policy": "p", "stage": stage, "group": g, "task": str(g), "copy": 0,
             "t": 0, "row": g, "truth": 0.1 * g, "truth_se": 0.01, "truth_half": 0.02, "truth_steps": 10, "won": False,
             "return_t": 0.0, S.ADV + "grpo": 0.1} for g in groups]


def test_resume_keeps_the_saved_groups_and_runs_only_the_missing_ones(tmp_path, monkeypatch):
    """A stopped run resumed with ``--resume`` runs the chunks after its saved groups and keeps the saved rows;
    without ``--resume`` it starts again from the first group."""
    calls: list[tuple[int, int]] = []

    def chunk(cfg: Any, env: str, first: int, count: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        calls.append((first, count))
        return _fake_rows(cfg.stage, env, range(first, first + count)), {"env": env, "groups": count, "seconds": 1.0,
                                                                         "success": 0.0, "mixed_groups": 0}

    monkeypatch.setattr(CC, "run_chunk", chunk)
    cfg = CC.ConfirmConfig(stage="textonly_alfworld", envs=("alfworld-dev",), out=tmp_path, progress=False,
                           groups={"alfworld-dev": 12}, chunk={"alfworld-dev": 4}, start={"alfworld-dev": 2})
    S.save_rows(cfg.rows_path, _fake_rows(cfg.stage, "alfworld-dev", range(2, 6)))
    cfg.resume = True
    res = CC.run(cfg)
    assert calls == [(6, 4), (10, 4)]
    assert sorted(int(g) for g in S.load_rows(cfg.rows_path)["group"]) == list(range(2, 14))
    assert len(res["rows"]) == 12
    calls.clear()
    cfg.resume = False
    CC.run(cfg)
    assert calls == [(2, 4), (6, 4), (10, 4)]


def test_resume_refuses_another_stages_rows_or_a_gap(tmp_path):
    cfg = CC.ConfirmConfig(stage="textonly_alfworld", envs=("alfworld-dev",), out=tmp_path, progress=False,
                           resume=True)
    assert CC.saved_groups(cfg) == ([], {})
    S.save_rows(cfg.rows_path, _fake_rows("textonly", "alfworld-dev", range(4)))
    with pytest.raises(S.RowsFileError, match="stage"):
        CC.saved_groups(cfg)
    S.save_rows(cfg.rows_path, _fake_rows(cfg.stage, "alfworld-dev", [0, 1, 3]))
    with pytest.raises(S.RowsFileError, match="not groups 0"):
        CC.saved_groups(cfg)


def test_a_resumed_run_saves_the_rows_of_an_uninterrupted_one(tmp_path):
    """Real env (WebShop, tiny): a run stopped after its first chunk and resumed saves exactly the rows of a run
    that never stopped (each chunk draws from its own seeds)."""
    def cfg(out: Any, groups: int, resume: bool = False) -> CC.ConfirmConfig:
        return CC.ConfirmConfig(stage="explore", envs=("webshop",), groups={"webshop": groups},
                                rows_per_group={"webshop": 2}, chunk={"webshop": 1}, k=4, backend="sync", workers=1,
                                out=out, progress=False, resume=resume)

    CC.run(cfg(tmp_path / "whole", 2))
    CC.run(cfg(tmp_path / "cut", 1))
    CC.run(cfg(tmp_path / "cut", 2, resume=True))
    whole, cut = (S.load_rows(p / "credit_confirm_explore_rows.parquet") for p in (tmp_path / "whole", tmp_path / "cut"))
    assert set(whole) == set(cut)
    for k in whole:
        assert np.array_equal(whole[k], cut[k]), k


def test_resuming_a_finished_run_runs_nothing_and_keeps_its_report(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(CC, "run_chunk", lambda *a: pytest.fail("no chunk should run"))
    monkeypatch.setattr(CC.ConfirmConfig, "check_tasks", lambda self: None)
    rows = tmp_path / "credit_confirm_textonly_alfworld_rows.parquet"
    S.save_rows(rows, _fake_rows("textonly_alfworld", "alfworld-dev", range(4)))
    report = tmp_path / "credit_confirm_textonly_alfworld.md"
    report.write_text("the run's report\n")
    assert CC.main(["--stage", "textonly_alfworld", "--groups", "alfworld-dev=4", "--resume", "--out", str(tmp_path),
                    "--no-progress"]) == 0
    assert "nothing ran" in capsys.readouterr().out and report.read_text() == "the run's report\n"
