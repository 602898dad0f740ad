"""Differential test: the fast engine says exactly what the stock TextWorld PDDL engine says.

Same game dict, same commands (random admissible ones, junk ones, and the oracle expert's), compared
character by character at every step: observation, admissible commands, facts (in order), score, done,
won. The full sweep over every dev game is in ``python -m agentgym_credit.bench.speed.alfworld_speed``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

pytest.importorskip("textworld")
pytest.importorskip("fast_downward")

from agentgym_credit.envs.alfworld.engine import expert_plan, make_engine, upgrade_game  # noqa: E402
from agentgym_credit.envs.alfworld.expert import oracle_action, task_spec  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld" / "dev"


@pytest.fixture(autouse=True)
def _private_sas_cache(tmp_path, monkeypatch):
    """Each test gets an empty on-disk translation cache (nothing is written to ~/.cache)."""
    monkeypatch.setenv("AGENTGYM_CREDIT_SAS_CACHE", str(tmp_path / "sas"))


def _dev_games() -> list[Path]:
    if not DEV.is_dir():
        pytest.skip(f"real ALFWorld dev games not found at {DEV}")
    return [g for g in sorted(DEV.glob("*/*/game.tw-pddl")) if json.loads(g.read_text())["solvable"]]


def _same(a, b, where: str) -> None:
    assert a["feedback"] == b["feedback"], where
    assert a["admissible_commands"] == b["admissible_commands"], where
    assert [str(f) for f in a["facts"]] == [str(f) for f in b["facts"]], where
    assert a["won"] == b["won"], where


def _play_both(data: dict, commands_for, n_steps: int) -> int:
    stock, fast = make_engine(fast=False), make_engine(fast=True)
    stock.load(data)
    fast.load(data)
    sa, sb = stock.reset(), fast.reset()
    _same(sa, sb, "reset")
    for t in range(n_steps):
        cmd = commands_for(sa, t)
        if cmd is None:
            return t
        sa, ra, da = stock.step(cmd)
        sb, rb, db = fast.step(cmd)
        _same(sa, sb, f"step {t}: {cmd!r}")
        assert (ra, da) == (rb, db)
    return n_steps


# the stock engine plays each game at ~15-30 s at load 10 on 2 cores: one game per test in the fast suite
@pytest.mark.parametrize("k", [0, pytest.param(12, marks=pytest.mark.slow)])
def test_random_and_junk_commands_identical(k):
    games = _dev_games()
    game = games[k % len(games)]
    data = upgrade_game(json.loads(game.read_text()))
    rng = random.Random(k)
    junk = ["jump", "take everything", "go to the moon", "", "open"]

    def pick(state, t):
        return rng.choice(junk) if rng.random() < 0.15 else rng.choice(state["admissible_commands"])

    assert _play_both(data, pick, 15) == 15


@pytest.mark.parametrize("k", [3, pytest.param(15, marks=pytest.mark.slow)])
def test_expert_episode_identical_and_wins(k):
    games = _dev_games()
    game = games[k % len(games)]
    data = upgrade_game(json.loads(game.read_text()))
    task_type = json.loads((game.parent / "traj_data.json").read_text())["task_type"]
    spec = task_spec(task_type, data["pddl_problem"])
    finished = {}

    def pick(state, t):
        if state["won"]:
            finished["won"] = True
            return None
        return oracle_action(spec, state["facts"])

    _play_both(data, pick, 30)
    assert finished.get("won")


def test_planner_agrees_after_moves():
    """The fast state loads the planner's SAS lazily; plans from a mid-game state must still agree."""
    games = _dev_games()
    data = upgrade_game(json.loads(games[1].read_text()))  # a small bedroom game: the planner is quick
    stock, fast = make_engine(fast=False), make_engine(fast=True)
    stock.load(data)
    fast.load(data)
    sa, _ = stock.reset(), fast.reset()
    for cmd in sa["admissible_commands"][:1]:
        stock.step(cmd)
        fast.step(cmd)
    assert expert_plan(stock) == expert_plan(fast)
    assert expert_plan(fast)


def test_env_level_identical_with_stock_engine():
    """``ALFWorldEnv(fast=False)`` and ``fast=True`` give equal (obs, reward, flags, info) tuples."""
    _dev_games()
    from agentgym_credit.envs.alfworld.env import ALFWorldEnv

    a = ALFWorldEnv(source="dev", fast=False, expert=True)
    b = ALFWorldEnv(source="dev", fast=True, expert=True)
    ra, rb = a.reset(seed=0, options={"task": 2}), b.reset(seed=0, options={"task": 2})
    assert ra == rb
    for cmd in ["jump", *ra[1]["admissible_actions"][:2]]:
        assert a.step(cmd) == b.step(cmd)


def test_translation_read_back_from_disk_gives_identical_transcripts(tmp_path):
    """The on-disk SAS cache: a game loaded from it plays exactly like the stock engine."""
    from agentgym_credit.envs.alfworld import fast

    games = _dev_games()
    data = upgrade_game(json.loads(games[4].read_text()))
    fast.translate(data["pddl_domain"], data["pddl_problem"], False)  # translate and write to disk
    assert list((tmp_path / "sas").rglob("*.sas.z"))
    fast.translate.cache_clear()  # the next load reads the disk entry
    rng = random.Random(4)
    assert _play_both(data, lambda st, t: rng.choice(st["admissible_commands"]), 10) == 10


@pytest.mark.parametrize("state_memos", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_states_met_again_are_read_from_the_memo_and_still_identical(monkeypatch, state_memos):
    """The second pass over the same commands meets the same states: every command comes from a memo — the
    per-game one (``statememo``: the installed grammar's templates read only static facts) or, with
    ``queries.STATE_MEMOS`` off, the per-state one (``fast.derived_commands``) — and must still match the stock
    engine."""
    from agentgym_credit.envs.alfworld import fast, queries, statememo

    monkeypatch.setattr(queries, "STATE_MEMOS", state_memos)
    fast._derived.clear()
    statememo.clear()
    games = _dev_games()
    data = upgrade_game(json.loads(games[5 % len(games)].read_text()))
    calls = []
    real = fast.FastGrammar.derive

    def counting(self, start, context):
        calls.append(start)
        return real(self, start, context)

    fast.FastGrammar.derive = counting
    try:
        for _ in range(2):
            rng = random.Random(7)
            before = len(calls)
            assert _play_both(data, lambda s, t, rng=rng: rng.choice(s["admissible_commands"]), 12) == 12
            per_pass = len(calls) - before
        first = len(calls) - per_pass
    finally:
        fast.FastGrammar.derive = real
    assert per_pass < first / 2  # the second pass derives far less: the states are in the memo
    per_game = any(m.commands for m in statememo._GAMES.values())
    assert (per_game, any(fast._derived.values())) == (state_memos, not state_memos)
