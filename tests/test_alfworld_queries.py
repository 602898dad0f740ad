"""The engine's memoized grammar queries (``envs/alfworld/queries.py``) give textworld's own answers, and a
``bench train_real`` run on the dev games gives the same numbers with them as without (issue 41: the speed-up
of the ALFWorld confirmation changes no number)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

pytest.importorskip("textworld")
pytest.importorskip("fast_downward")

from alfworld_fixtures import private_sas_cache  # noqa: E402,F401

from agentgym_credit.envs.alfworld import fast, queries  # noqa: E402
from agentgym_credit.envs.alfworld.engine import make_engine, upgrade_game  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld" / "dev"
needs_dev = pytest.mark.skipif(not DEV.is_dir(), reason="needs the dev games in ../shared/data/alfworld/dev")


@pytest.fixture
def reference(monkeypatch):
    """Switch the memos off (textworld's own code answers every query) for the rest of the test."""
    def off():
        monkeypatch.setattr(queries, "ENABLED", False)
        fast._derived.clear()  # the per-state command memo would answer a state met again
    return off


def _engine(k: int):
    games = [g for g in sorted(DEV.glob("*/*/game.tw-pddl")) if json.loads(g.read_text())["solvable"]]
    eng = make_engine(fast=True, facts=True)
    eng.load(upgrade_game(json.loads(games[k % len(games)].read_text())))
    inner = eng
    while not hasattr(inner, "_pddl_state"):
        inner = inner._wrapped_env
    return eng, inner


def test_prop_key_orders_like_proposition_lt():
    from textworld.logic import Proposition, Variable

    rng = random.Random(0)
    props = {Proposition(rng.choice("ab"), [Variable(rng.choice(["x1", "x10", "x2", "y"]), rng.choice("rs"))
                                           for _ in range(rng.randint(0, 3))]) for _ in range(200)}
    assert sorted(props, key=queries.prop_key) == sorted(props)


def test_static_query_needs_static_predicates_and_no_free_placeholder():
    s = frozenset({"receptacleatlocation", "openable"})
    assert queries.is_static("receptacleatlocation(r:receptacle, l:location)", s)
    assert queries.is_static("openable(r:receptacle) & not_opened(r:receptacle)", s) is False
    assert queries.is_static("openable(r:receptacle) & opened(r:receptacle)", s) is False
    assert queries.is_static("openable(r:receptacle) & objecttype(o:object, t:otype)", s) is False


@needs_dev
def test_memoized_answers_equal_textworlds_on_a_played_game(reference):
    """Every query the grammar asks along random play: the window/static memo answer == textworld's own."""
    eng, inner = _engine(5)
    asked: list[tuple[str, str, dict]] = []
    real = queries._answer

    def spy(state, kind, query, mapping):
        asked.append((kind, query, dict(mapping)))
        return real(state, kind, query, mapping)

    queries._answer = spy
    try:
        st, rng = eng.reset(), random.Random(3)
        checked = 0
        for _ in range(12):
            st, _, _ = eng.step(rng.choice(st["admissible_commands"]))
            state, todo = inner._pddl_state, list(asked)
            asked.clear()
            with state.frozen():  # a window: the memoized answers, then textworld's on the same state
                got = [state._memoized(kind, q, m) for kind, q, m in todo]
            queries.ENABLED = False
            try:
                want = [real(state, kind, q, m) for kind, q, m in todo]
            finally:
                queries.ENABLED = True
            assert got == want
            checked += len(todo)
    finally:
        queries._answer = real
    assert checked > 50 and inner._static[1], "the game asked too few queries, or no static one"


@needs_dev
def test_env_transcripts_are_identical_with_and_without_the_memos(reference):
    """The env the confirmation plays (dev games, expert on): observations, admissible commands, state keys and
    expert commands, step by step, memos on and off."""
    from agentgym_credit.truth.experts import ALFWorldExpertFactory

    def play():
        env, out = ALFWorldExpertFactory((("source", "dev"),))(), []
        for task, seed in ((13, 1), (2, 2)):
            obs, info = env.reset(seed=seed, options={"task": task})
            rng = random.Random(seed)
            for _ in range(15):
                out.append((obs, info["state_key"], tuple(info["admissible_actions"]), info.get("expert_action")))
                obs, r, term, trunc, info = env.step(rng.choice(info["admissible_actions"]))
                if term or trunc:
                    break
        env.close()
        return out

    fast._derived.clear()
    new = play()
    reference()
    assert play() == new and len(new) > 20


@pytest.mark.slow
@needs_dev
def test_a_dev_games_training_run_gives_the_same_numbers_with_and_without_the_memos(tmp_path, reference):
    """The confirmation's design in miniature (KL step, expert bonus, dev games): identical rows."""
    from agentgym_credit.bench.learning import train_real as T

    cfg = T.RealTrainConfig(envs=("alfworld-dev",), arms=("grpo",), seeds=1, sweep_seeds=0, lrs=(0.03,),
                            budget_steps=60, min_updates=2, groups=2, group_size=2, train_tasks=2, checkpoints=1,
                            eval_rollouts=1, eval_limit=1, train_eval_rollouts=1, expert_bonus=0.75, step="kl",
                            out=tmp_path, progress=False, save_policies=False)

    def run():
        rows = T.train_one_real("alfworld-dev", "grpo", 5, 0.03, cfg, save=False)
        return [repr({k: v for k, v in r.items() if "seconds" not in k}) for r in rows]

    fast._derived.clear()
    new = run()
    reference()
    assert run() == new and len(new) >= 2
