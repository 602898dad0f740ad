"""The env speed benchmark script runs end to end and writes its table (tiny sizes; no timing asserted)."""

from __future__ import annotations

from agentgym_credit.bench.speed import env_speed


def test_env_speed_main_writes_markdown(tmp_path, capsys):
    out = tmp_path / "env_speed.md"
    rc = env_speed.main(["--steps", "300", "--repeats", "1", "--envs", "credit/CueCorridor-v0",
                         "--out", str(out), "--no-progress"])
    assert rc == 0
    md = out.read_text()
    assert md.startswith("# Synthetic env speed")
    assert "Command: `python -m agentgym_credit.bench.speed.env_speed --steps 300" in md and "cpu_count" in md
    row = next(line for line in md.splitlines() if line.startswith("| credit/CueCorridor-v0"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "20" and float(cells[6]) > 0  # tasks, ratio
    assert "credit/GridWorld-v0" not in md


def test_measure_counts_steps_across_resets():
    import gymnasium as gym

    env = gym.make("credit/CueCorridor-v0", max_steps=3)
    assert env_speed.measure(env, 50) > 0
