"""The per-game state memos (``envs/alfworld/statememo.py``, issue 41's second step) change nothing: engine
transcripts, env transcripts with snapshots and restores, and a ``bench train_real`` run on the dev games are
identical with them on (cold and warm), with them off (the first step's engine: ``queries.STATE_MEMOS``) and with
every memo off (``queries.ENABLED``)."""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path

import pytest

pytest.importorskip("textworld")
pytest.importorskip("fast_downward")

from alfworld_fixtures import private_sas_cache  # noqa: E402,F401

from agentgym_credit.envs.alfworld import fast, queries, statememo  # noqa: E402
from agentgym_credit.envs.alfworld.engine import make_engine, upgrade_game  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld" / "dev"
needs_dev = pytest.mark.skipif(not DEV.is_dir(), reason="needs the dev games in ../shared/data/alfworld/dev")
MODES = ("new", "step1", "off")
"""All memos on; this module's off (the engine before it); every memo off (textworld answers every query)."""


@contextlib.contextmanager
def mode(name: str, cold: bool = True):
    """Switch the memos for the block; ``cold``: empty every memo first (a state met again is not answered)."""
    if cold:
        fast._derived.clear()
        statememo.clear()
    old = queries.ENABLED, queries.STATE_MEMOS
    queries.ENABLED, queries.STATE_MEMOS = name != "off", name == "new"
    try:
        yield
    finally:
        queries.ENABLED, queries.STATE_MEMOS = old


def assert_same_in_every_mode(run, at_least: int) -> None:
    """``run()`` in every mode, each from cold memos, then once more with all memos on and warm: all equal."""
    runs = {}
    for name in MODES:
        with mode(name):
            runs[name] = run()
        if name == "new":
            with mode("new", cold=False):  # every state of the run above is memoized now
                warm = run()
            assert statememo._GAMES, "nothing was memoized"
    assert len(runs["off"]) > at_least
    assert runs["new"] == runs["step1"] == runs["off"] == warm


def _games() -> list[Path]:
    return [g for g in sorted(DEV.glob("*/*/game.tw-pddl")) if json.loads(g.read_text())["solvable"]]


def test_installed_grammar_templates_are_static_and_a_state_query_is_not():
    from agentgym_credit.envs.alfworld.fast import parse_logic
    from agentgym_credit.envs.alfworld.logic import installed_logic

    logic = parse_logic(*installed_logic())
    rules = logic.grammar._rules
    static = frozenset({"receptacleatlocation", "objecttype"})
    assert all(statememo.static_template(a.template, rules, static) for a in logic.actions.values())
    assert not statememo.static_template("go to [{r.name | receptacleatlocation(r:receptacle, l:location)}]",
                                         rules, frozenset({"objecttype"}))  # the same query, not static here
    assert not statememo.static_template("take {context}", rules, static)  # reads the context, not a variable
    assert not statememo.static_template("look #look.feedback#", rules, static)  # rules on the agent's place
    assert not statememo.static_template("x #no_such_rule#", rules, static)


@needs_dev
def test_engine_transcripts_are_identical_in_every_mode():
    """Random play on two dev games, the same commands in every mode: feedback, fact lists in the engine's
    order, valid commands and actions (operator ids, templates), admissible commands, ``won``."""
    games = _games()

    def play() -> list:
        out = []
        for k, seed in ((0, 1), (13, 3)):
            eng = make_engine(fast=True, facts=True)
            eng.load(upgrade_game(json.loads(games[k].read_text())))
            rng = random.Random(seed)
            for _ in range(2):  # the second episode meets the first one's states again
                st = eng.reset()
                for _ in range(15):
                    acts = st["_valid_actions"]
                    out.append((st["feedback"], [str(f) for f in st["facts"]], st["_valid_commands"],
                                st["admissible_commands"], [(a.id, a.name, a.command_template) for a in acts],
                                st["won"]))
                    st, _, done = eng.step(rng.choice(st["admissible_commands"]))
                    if done:
                        break
        return out

    assert_same_in_every_mode(play, 40)


def _env_transcript(expert: bool) -> list:
    """Two dev games through the env, with a snapshot taken mid-episode and restored twice: in the same env
    (the process memo) and in a fresh env (replaying the commands)."""
    from agentgym_credit.envs.alfworld.env import ALFWorldEnv

    env, out = ALFWorldEnv(source="dev", expert=expert), []

    def rec(*step):
        out.append(repr(step))

    for task, seed in ((13, 1), (2, 2), (13, 3)):
        obs, info = env.reset(seed=seed, options={"task": task})
        rec(obs, info)
        rng, snap = random.Random(seed), None
        for t in range(20):
            cmd = rng.choice(info["admissible_actions"]) if t % 5 else "no such command"
            obs, r, term, trunc, info = env.step(cmd)
            rec(obs, r, term, trunc, info)
            if t == 6:
                snap = env.get_state()
            if term or trunc:
                break
        if snap is not None:
            rec(*env.set_state(snap))
            other = ALFWorldEnv(source="dev", expert=expert)
            rec(*other.set_state(snap))
            for e in (env, other):
                for cmd in sorted(info["admissible_actions"])[:3]:
                    rec(*e.step(cmd))
            other.close()
    env.close()
    return out


@needs_dev
@pytest.mark.parametrize("expert", [True, False])
def test_env_transcripts_with_snapshots_are_identical_in_every_mode(expert):
    """Observations, rewards, every info field (state keys, admissible commands, expert commands, dead ends),
    and snapshot restores, in every mode and with warm memos."""
    assert_same_in_every_mode(lambda: _env_transcript(expert), 30)


def _rows(cfg) -> list[str]:
    from agentgym_credit.bench.learning import train_real as T

    rows = T.train_one_real("alfworld-dev", "grpo", 5, 0.03, cfg, save=False)
    return [repr({k: v for k, v in r.items() if "seconds" not in k}) for r in rows]


@pytest.mark.slow
@needs_dev
def test_a_short_training_run_gives_the_same_rows_in_every_mode(tmp_path):
    """The confirmation's design in miniature (KL step, expert bonus, dev games, evaluation episodes): identical
    rows with the memos cold, warm, and off at either switch."""
    from agentgym_credit.bench.learning import train_real as T

    cfg = T.RealTrainConfig(envs=("alfworld-dev",), arms=("grpo",), seeds=1, sweep_seeds=0, lrs=(0.03,),
                            budget_steps=40, min_updates=2, groups=2, group_size=2, train_tasks=2, checkpoints=1,
                            eval_rollouts=1, eval_limit=1, train_eval_rollouts=1, expert_bonus=0.75, step="kl",
                            out=tmp_path, progress=False, save_policies=False)
    assert_same_in_every_mode(lambda: _rows(cfg), 1)


@needs_dev
def test_memos_stay_bounded_and_exact_when_they_overflow(monkeypatch):
    """With tiny caps (1 game, 3 states) the memos are emptied as they fill, and play says the same as without."""
    monkeypatch.setattr(statememo, "GAMES", 1)
    monkeypatch.setattr(statememo, "STATES", 3)
    games, sizes = _games(), []

    def play() -> list:
        out = []
        for k in (0, 13, 0):  # a second game pushes the first out; the first comes back
            eng = make_engine(fast=True, facts=True)
            eng.load(upgrade_game(json.loads(games[k].read_text())))
            st, rng = eng.reset(), random.Random(k)
            for _ in range(6):
                out.append((st["feedback"], st["_valid_commands"], st["admissible_commands"]))
                memo = eng.unwrapped._game_memo
                sizes.append((len(statememo._GAMES), len(memo.applicable), len(memo.expert)))
                st, _, _ = eng.step(rng.choice(st["admissible_commands"]))
        return out

    assert_same_in_every_mode(play, 15)
    assert max(g for g, _, _ in sizes) == 1 and max(a for _, a, _ in sizes) <= 3
    assert max(a for _, a, _ in sizes) == 3, "the cap was never reached: the test shows nothing"
