"""The ``agentgym-credit`` command: list, play (scripted stdin), demo, bench/train dispatch."""

from __future__ import annotations

import io
import subprocess
import sys
import types

import gymnasium as gym
import pytest

import agentgym_credit  # noqa: F401
from agentgym_credit.cli import BENCH_NAMES, main
from agentgym_credit.envs.registration import registered_ids


def run(argv, stdin=""):
    out = io.StringIO()
    rc = main(argv, stdin=io.StringIO(stdin), stdout=out)
    return rc, out.getvalue()


def test_list_shows_every_env_with_its_description():
    rc, out = run(["list"])
    assert rc == 0
    lines = out.strip().splitlines()
    assert [ln.split()[0] for ln in lines] == registered_ids()
    assert "exact tabular model" in out
    # installed from a clone: the editable form, never the PyPI name (issue 30)
    assert "agentgym-credit[" not in out
    assert ("[needs the alfworld extra: pip install --no-deps alfworld==0.4.2 textworld==1.7.0 jericho==3.3.1 "
            "&& pip install -e '.[alfworld]']") in out
    assert "[needs the webshop extra: pip install -e '.[webshop]']" in out


def test_scripts_name_the_install_from_the_clone():
    from pathlib import Path

    for script in sorted((Path(__file__).resolve().parents[1] / "scripts").glob("*.sh")):
        text = script.read_text()
        assert "agentgym-credit[" not in text, f"{script.name} names a PyPI install; use pip install -e '.[extra]'"


def test_play_by_number_and_text_then_quit():
    env = gym.make("credit/GridWorld-v0")
    _, info = env.reset(seed=0)
    first = info["admissible_actions"][0]
    rc, out = run(["play", "credit/GridWorld-v0", "--seed", "0"], stdin=f"1\n{first.upper()}!\n99\nfly away\nquit\n")
    assert rc == 0
    assert f"   1. {first}" in out
    assert out.count(f"[{first}]") >= 1  # the number 1 was played
    assert "(choose 1.." in out  # 99 is out of range
    assert "[fly away]  reward +0.00   (not admissible: nothing happened)" in out
    assert "stopped after 3 steps" in out


def test_play_suggests_instead_of_playing_a_typo():
    """The docstring promised loose spelling projected; ``go sout`` was played as a no-op. Now: case and
    punctuation are projected, a typo is answered with the closest admissible actions and costs no step."""
    rc, out = run(["play", "credit/GridWorld-v0", "--seed", "0"], stdin="go sout\nGO SOUTH!\nquit\n")
    assert rc == 0
    assert "(no admissible action reads 'go sout'; did you mean: go south)" in out
    assert "[go south]  reward" in out and "stopped after 1 steps" in out  # only GO SOUTH! was played
    from agentgym_credit import cli

    assert "A typo is not corrected" in cli.__doc__ and "loose spelling is" not in cli.__doc__


def test_play_to_the_end_of_an_episode_and_eof():
    rc, out = run(["play", "credit/CueCorridor-v0", "--seed", "1"], stdin="1\n" * 40)
    assert rc == 0 and "episode over after" in out
    rc, out = run(["play", "credit/GridWorld-v0"], stdin="")  # EOF quits cleanly
    assert rc == 0 and "stopped after 0 steps" in out


def test_play_fills_a_template_action():
    rc, out = run(["play", "credit/WebShop-v0", "--seed", "0"], stdin="1\nusb cable\nquit\n")
    assert rc == 0 and "fill search[<query>]: " in out and "[search[usb cable]]" in out


def test_play_unknown_env_is_a_clear_error(capsys):
    rc = main(["play", "credit/Nope-v0"], stdin=io.StringIO(""), stdout=io.StringIO())
    assert rc == 2 and "Nope" in capsys.readouterr().err


def test_demo_prints_a_transcript_with_exact_advantages():
    rc, out = run(["demo", "--seed", "1"])
    assert rc == 0
    assert out.startswith("credit/GridWorld-v0") and "A^pi" in out and "A*" in out
    assert "episode over after" in out
    rc, out = run(["demo", "--env", "credit/CueCorridor-v0", "--policy", "optimal"])
    assert rc == 0 and "won True" in out
    assert all(float(x.split("A*")[1]) == 0.0 for x in out.splitlines() if "reward" in x)  # optimal: A* = 0


def test_demo_refuses_an_env_without_a_model(capsys):
    rc = main(["demo", "--env", "credit/WebShop-v0"], stdout=io.StringIO())
    assert rc == 2 and "exact model" in capsys.readouterr().err


def test_bench_and_train_dispatch_every_argument(monkeypatch):
    seen = {}
    for name in ("agentgym_credit.bench.speed.credit_speed", "agentgym_credit.trainer.cli"):
        mod = types.ModuleType(name)
        mod.main = lambda argv, name=name: seen.setdefault(name, argv) and 3
        monkeypatch.setitem(sys.modules, name, mod)
    assert main(["bench", "credit_speed", "--quick", "-n", "5"]) == 3
    assert seen["agentgym_credit.bench.speed.credit_speed"] == ["--quick", "-n", "5"]
    assert main(["train", "--config", "x.toml"]) == 3
    assert seen["agentgym_credit.trainer.cli"] == ["--config", "x.toml"]
    assert "credit" in BENCH_NAMES and "webshop_speed" in BENCH_NAMES


def test_bench_unknown_or_missing_is_a_clear_error(monkeypatch, capsys):
    assert main(["bench", "nope"]) == 2
    assert "unknown benchmark 'nope'" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "agentgym_credit.bench.speed.alfworld_speed", None)  # import fails
    assert main(["bench", "alfworld_speed"]) == 2
    assert "alfworld_speed" in capsys.readouterr().err


def test_bench_without_a_name_asks_for_the_name_only(capsys):
    assert main(["bench"]) == 2
    err = capsys.readouterr().err
    assert "bench NAME [ARGS ...]" in err and "credit" in err and "required: name, args" not in err


def test_no_command_prints_help():
    rc, out = run([])
    assert rc == 0 and "play" in out and "bench" in out


def test_module_entry_point_runs():
    r = subprocess.run([sys.executable, "-m", "agentgym_credit.cli", "list"], capture_output=True, text=True,
                       timeout=120, check=False)
    assert r.returncode == 0 and "credit/GridWorld-v0" in r.stdout


@pytest.mark.parametrize("argv", [["play"], ["demo", "--policy", "greedy"]])
def test_bad_arguments_exit_2(argv):
    with pytest.raises(SystemExit) as e:
        main(argv, stdout=io.StringIO())
    assert e.value.code == 2


@pytest.mark.parametrize("task", ["99999", "\u00b2", "nope"])
def test_play_bad_task_is_a_clear_error(task, capsys):
    rc = main(["play", "credit/GridWorld-v0", "--task", task], stdin=io.StringIO(""), stdout=io.StringIO())
    err = capsys.readouterr().err
    assert rc == 2 and "task" in err and "Traceback" not in err


def test_play_refuses_an_env_that_is_not_a_text_env(capsys):
    rc = main(["play", "CartPole-v1"], stdin=io.StringIO("0\n"), stdout=io.StringIO())
    assert rc == 2 and "credit/" in capsys.readouterr().err


def test_every_benchmark_name_resolves_to_a_module_with_main():
    """Every benchmark lives in a room of agentgym_credit.bench (exact, montecarlo, learning, speed, faults,
    envs); every name the CLI offers points at a module that exists and has a ``main``."""
    import importlib.util

    from agentgym_credit.cli import BENCH_NAMES, BENCH_ROOMS, bench_module

    assert set(BENCH_ROOMS) == set(BENCH_NAMES)
    for name in BENCH_NAMES:
        mod = bench_module(name)
        assert importlib.util.find_spec(mod) is not None, mod
        src = importlib.util.find_spec(mod).origin
        assert "def main(" in open(src).read(), mod
    assert bench_module("credit") == "agentgym_credit.bench.exact.credit"
    assert bench_module("collector_speed") == "agentgym_credit.bench.speed.collector_speed"
