"""The ``agentgym-credit`` command.

Sub-commands:

- ``list`` — every registered ``credit/*`` env with its one-line description;
- ``play ENV_ID [--seed N] [--task T]`` — play an env in the terminal: the observation and the
  numbered admissible actions are shown; type a number or the action text, ``quit`` to stop. Text is
  projected on the admissible actions as :class:`~agentgym_credit.wrappers.ActionProjection` does: case,
  punctuation and spacing do not matter (``Go North!`` plays ``go north``). A typo is not corrected:
  when the text matches no admissible action but is close to some (``go sout``), nothing is played and
  the closest are shown (``did you mean: go south``); text close to none is played as typed (the env's
  no-op, ``action_valid=False``);
- ``demo [--env ID] [--seed N] [--policy P]`` — one scripted episode on an env with an exact model
  (GridWorld by default), printed with the exact advantage A^π and A* of every step;
- ``bench NAME [args]`` — runs ``main(args)`` of the benchmark module :func:`bench_module` names (NAME in
  :data:`BENCH_NAMES`); every argument, ``--out`` included, goes to the benchmark (``bench credit``
  writes to ``./agc-bench/`` unless it is a full run from the repository root or ``--out`` says
  otherwise);
- ``train [args]`` — runs ``agentgym_credit.trainer.cli:main(args)``.

:func:`main` takes ``argv`` (default ``sys.argv[1:]``) and returns the exit status.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from collections.abc import Sequence
from typing import Any, TextIO

BENCH_NAMES: tuple[str, ...] = (
    "credit",
    "branching",
    "train",
    "train_real",
    "update_direction",
    "rescore_real",
    "env_speed",
    "credit_speed",
    "collector_speed",
    "alfworld_speed",
    "alfworld_games",
    "alfworld_memory",
    "webshop_speed",
    "webshop_snapshot",
    "webshop_difficulty",
    "webshop_language",
    "webshop_hard",
    "llm_training",
    "gpu_rollout_speed",
    "grouping",
    "grouping_speed",
    "reliability",
    "credit_real",
    "credit_confirm",
    "text_imitation",
    "graph_credit",
    "verify",
)
"""Benchmarks ``agentgym-credit bench`` dispatches to (see :func:`bench_module`)."""

BENCH_ROOMS: dict[str, str] = {
    **dict.fromkeys(("credit", "graph_credit", "grouping", "branching"), "exact"),
    **dict.fromkeys(("credit_real", "credit_confirm", "text_imitation"), "montecarlo"),
    **dict.fromkeys(("train", "train_real", "update_direction", "rescore_real", "llm_training"), "learning"),
    **dict.fromkeys(("env_speed", "credit_speed", "collector_speed", "alfworld_speed", "alfworld_memory",
                     "webshop_speed", "webshop_snapshot", "gpu_rollout_speed", "grouping_speed"), "speed"),
    **dict.fromkeys(("reliability",), "faults"),
    **dict.fromkeys(("alfworld_games", "webshop_difficulty", "webshop_language", "webshop_hard"), "envs"),
    **dict.fromkeys(("verify",), "stats"),
}
"""The room (sub-package of ``agentgym_credit.bench``) each benchmark lives in: the question it answers."""


def bench_module(name: str) -> str:
    """The module of benchmark ``name``: ``agentgym_credit.bench.<room>.NAME`` (room from :data:`BENCH_ROOMS`)."""
    return f"agentgym_credit.bench.{BENCH_ROOMS[name]}.{name}"

POLICIES = ("noisy", "uniform", "optimal", "revisit")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agentgym-credit",
        description="Text environments, grouped rollouts and step-level credit assignment for LLM agents.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("list", help="list the registered credit/* environments")
    play = sub.add_parser("play", help="play an environment in the terminal")
    play.add_argument("env_id", help="an id from `agentgym-credit list`, e.g. credit/GridWorld-v0")
    play.add_argument("--seed", type=int, default=0, help="reset seed (default 0)")
    play.add_argument("--task", default=None, help="task passed as reset(options={'task': TASK})")
    demo = sub.add_parser("demo", help="a scripted episode with the exact advantage of every step")
    demo.add_argument("--env", default="credit/GridWorld-v0", help="an env with an exact model (default GridWorld)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--policy", choices=POLICIES, default="noisy",
                      help="behaviour policy: softmax of Q* (noisy), uniform, greedy optimal, revisit-avoiding")
    demo.add_argument("--temperature", type=float, default=0.05, help="temperature of the noisy policy")
    demo.add_argument("--gamma", type=float, default=0.95, help="discount of the advantages")
    bench = sub.add_parser("bench", help="run a benchmark: " + ", ".join(BENCH_NAMES))
    bench.add_argument("name", choices=BENCH_NAMES)
    bench.add_argument("args", nargs=argparse.REMAINDER, help="optional arguments of the benchmark (`bench NAME --help`)")
    train = sub.add_parser("train", help="train a causal LM with the companion trainer")
    train.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the trainer")
    return p


def _err(msg: str) -> int:
    print(f"agentgym-credit: error: {msg}", file=sys.stderr)
    return 2


def _dispatch(module: str, argv: list[str], what: str) -> int:
    """Import ``module`` and return its ``main(argv)`` (``None`` means 0)."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and module.startswith(e.name):
            return _err(f"{what} is not available in this installation (no module {module})")
        return _err(f"{what} needs a package that is not installed: {e}")
    except ImportError as e:  # DependencyNotInstalled names the extra to install
        return _err(str(e))
    rc = mod.main(argv)
    return int(rc or 0)


def _cmd_list(out: TextIO) -> int:
    from agentgym_credit.envs.registration import ENVS
    from agentgym_credit.errors import install_commands

    width = max(len(e.id) for e in ENVS)
    for e in ENVS:
        extra = ""
        if e.needs_extra:  # from a clone (how the package is installed): the editable form, after any first step
            steps = [*install_commands(e.needs_extra)[:-1], f"pip install -e '.[{e.needs_extra}]'"]
            extra = f"  [needs the {e.needs_extra} extra: {' && '.join(steps)}]"
        print(f"{e.id:<{width}}  {e.description}{extra}", file=out)
    return 0


def _make(env_id: str) -> Any:
    import gymnasium as gym

    import agentgym_credit  # noqa: F401  (registers credit/*)

    return gym.make(env_id)


def _task_option(task: str | None) -> dict[str, Any] | None:
    if task is None:
        return None
    try:
        return {"task": int(task)}
    except ValueError:  # a task id such as "grid-3" (or a digit int() does not read, e.g. "²")
        return {"task": task}


def _read(inp: TextIO, out: TextIO, prompt: str) -> str | None:
    print(prompt, end="", file=out, flush=True)
    line = inp.readline()
    return None if line == "" else line.rstrip("\r\n")


def _close_actions(text: str, admissible: Sequence[str], normalize: Any, n: int = 3) -> list[str]:
    """Up to ``n`` admissible actions (not templates) whose loose form is close to ``text``'s (difflib ratio
    >= 0.75), closest first."""
    forms: dict[str, str] = {}
    for a in admissible:
        if "<" not in a:
            forms.setdefault(normalize(a), a)
    return [forms[k] for k in difflib.get_close_matches(normalize(text), list(forms), n=n, cutoff=0.75)]


def _cmd_play(args: argparse.Namespace, inp: TextIO, out: TextIO) -> int:
    from agentgym_credit.envs.base import CreditEnv
    from agentgym_credit.wrappers.action_projection import (
        ActionProjection,
        fill_template,
        is_template,
        normalize_action,
        project_action,
    )

    base = _make(args.env_id)
    if not isinstance(base.unwrapped, CreditEnv):
        return _err(f"{args.env_id} is not a text env of this package; play one of `agentgym-credit list` (credit/...)")
    env = ActionProjection(base)
    try:
        obs, info = env.reset(seed=args.seed, options=_task_option(args.task))
    except (ValueError, TypeError) as e:  # a task the env does not have
        return _err(f"--task {args.task!r}: {e}")
    print(f"{args.env_id}  task {info.get('task_id')}  seed {args.seed}  (type a number or an action; quit to stop)",
          file=out)
    total, t = 0.0, 0
    while True:
        print(f"\n{obs}", file=out)
        adm = info.get("admissible_actions")
        if adm:
            for i, a in enumerate(adm, 1):
                print(f"  {i:>2}. {a}", file=out)
        line = _read(inp, out, "> ")
        if line is None or line.strip().lower() in ("quit", "exit", "q"):
            print(f"stopped after {t} steps, return {total:.2f}", file=out)
            return 0
        action = line.strip()
        if adm and action.isdigit():
            n = int(action)
            if not 1 <= n <= len(adm):
                print(f"(choose 1..{len(adm)})", file=out)
                continue
            action = adm[n - 1]
            if is_template(action):
                fill = _read(inp, out, f"fill {action}: ")
                if fill is None:
                    return 0
                action = fill_template(action, [fill.strip()] * action.count("<"))
        elif adm and project_action(action, adm) is None:
            close = _close_actions(action, adm, normalize_action)
            if close:  # a typo: suggest, play nothing
                print(f"(no admissible action reads {action!r}; did you mean: {' | '.join(close)})", file=out)
                continue
        obs, reward, terminated, truncated, info = env.step(action)
        t += 1
        total += float(reward)
        note = "" if info["action_valid"] else "   (not admissible: nothing happened)"
        print(f"[{info['projected_action']!s}]  reward {float(reward):+.2f}{note}", file=out)
        if terminated or truncated:
            print(f"\n{obs}\nepisode over after {t} steps ({'terminated' if terminated else 'truncated'}): "
                  f"return {total:.2f}, won {info['won']}", file=out)
            return 0


def _demo_policy(name: str, temperature: float, gamma: float) -> Any:
    from agentgym_credit.credit.policies import NoisyOptimalPolicy, RevisitAvoidingPolicy, UniformPolicy

    if name == "uniform":
        return UniformPolicy()
    if name == "optimal":
        return NoisyOptimalPolicy(0.0, gamma)
    if name == "revisit":
        return RevisitAvoidingPolicy(window=2, factor=0.1)
    return NoisyOptimalPolicy(temperature, gamma)


def _cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    import numpy as np

    from agentgym_credit.credit.oracle import evaluate_policy, optimal_values, push_window

    env = _make(args.env)
    obs, info = env.reset(seed=args.seed)
    model = getattr(env.unwrapped, "model", None)
    if model is None or "state_index" not in info:
        return _err(f"demo needs an env with an exact model (env.unwrapped.model and info['state_index']); "
                    f"{args.env} has none")
    policy = _demo_policy(args.policy, args.temperature, args.gamma)
    values = evaluate_policy(model, policy, args.gamma)
    best = optimal_values(model, args.gamma)
    rng = np.random.default_rng(args.seed)
    print(f"{args.env}  task {info['task_id']}  seed {args.seed}  policy {policy!r}  gamma {args.gamma}", file=out)
    if info.get("goal"):
        print(f"goal: {info['goal']}", file=out)
    horizon = model.horizon
    window: tuple = ()
    ret, disc, t = 0.0, 1.0, 0
    while True:
        s = int(info["state_index"])
        tt = None if horizon is None else t
        a = policy.sample(model, s, window, tt, rng)
        adv = values.advantage(s, a, t=tt, window=window)
        adv_star = best.advantage(s, a, t=tt)
        action = model.actions[s][a]
        print(f"\nt={t:<3} {obs}", file=out)
        obs, reward, terminated, truncated, info = env.step(action)
        ret += disc * float(reward)
        disc *= args.gamma
        print(f"      > {action:<28} reward {float(reward):+.2f}   A^pi {adv:+.3f}   A* {adv_star:+.3f}", file=out)
        window = push_window(window, s, a, values.window_size)
        t += 1
        if terminated or truncated:
            break
    print(f"\n{obs}\nepisode over after {t} steps: discounted return {ret:.3f}, won {info['won']}", file=out)
    print("A^pi is the exact advantage of each step under the behaviour policy (what credit estimators "
          "try to recover from rollouts); A* is the advantage under the optimal policy.", file=out)
    return 0


def main(argv: Sequence[str] | None = None, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    inp = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout
    # bench/train hand every remaining argument (options included) to the sub-program
    if argv[:1] == ["bench"] and len(argv) >= 2 and not argv[1].startswith("-"):
        if argv[1] not in BENCH_NAMES:
            close = difflib.get_close_matches(argv[1], BENCH_NAMES, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            return _err(f"unknown benchmark {argv[1]!r}{hint}; choose one of {', '.join(BENCH_NAMES)}")
        return _dispatch(bench_module(argv[1]), argv[2:], f"benchmark {argv[1]!r}")
    if argv == ["bench"]:  # argparse would call the optional ARGS required too
        print("usage: agentgym-credit bench NAME [ARGS ...]", file=sys.stderr)
        return _err(f"name a benchmark: one of {', '.join(BENCH_NAMES)} (`bench NAME --help` lists its ARGS)")
    if argv[:1] == ["train"]:
        return _dispatch("agentgym_credit.trainer.cli", argv[1:], "the trainer")
    from gymnasium import error as gym_error

    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            return _cmd_list(out)
        if args.command == "play":
            return _cmd_play(args, inp, out)
        if args.command == "demo":
            return _cmd_demo(args, out)
    except ImportError as e:  # an env whose extra is missing, or whose module is not there
        return _err(str(e))
    except gym_error.Error as e:  # unknown env id and the like
        return _err(f"{type(e).__name__}: {e}")
    except KeyboardInterrupt:
        return 130
    parser.print_help(out)
    return 0 if args.command is None else 2


if __name__ == "__main__":
    sys.exit(main())
