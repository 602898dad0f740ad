"""``examples/verl/verl_agent_settings.md``: its verl-agent column is verl-agent's and its recipe column the configs'.

The verl-agent column is checked against ``examples/gigpo_trainer/run_{alfworld,webshop}.sh`` of a verl-agent checkout
named by ``AGC_VERL_AGENT_DIR`` (read as text; skipped without one), and the table names the commit it was last
checked against. Before, the table gave ALFWorld ``test_freq 10`` and ``total_epochs 200`` (verl-agent's values
before 2025-05-12; since then 5 and 150) and left out that verl-agent validates WebShop on 256 tasks.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytest.importorskip("hydra")
pytest.importorskip("verl")

from hydra import compose, initialize_config_dir  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "examples" / "verl" / "verl_agent_settings.md"
CONFIG = ROOT / "examples" / "verl" / "config"
SCRIPTS = {"ALFWorld": "run_alfworld.sh", "WebShop": "run_webshop.sh"}
# table row (its first cell, up to the first space after the key) -> the verl-agent script's key
ROWS = {
    "`algorithm.gigpo.mode`": "algorithm.gigpo.mode",
    "`algorithm.gamma`": "algorithm.gamma",
    "`algorithm.gigpo.step_advantage_w`": "algorithm.gigpo.step_advantage_w",
    "`data.train_batch_size`": "data.train_batch_size",
    "`env.rollout.n`": "env.rollout.n",
    "`data.val_batch_size`": "data.val_batch_size",
    "validation tasks": "--val_data_size",
    "`actor.ppo_mini_batch_size`": "actor_rollout_ref.actor.ppo_mini_batch_size",
    "`actor.ppo_micro_batch_size_per_gpu`": "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
    "`rollout.log_prob_micro_batch_size_per_gpu`": "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
    "`ref.log_prob_micro_batch_size_per_gpu`": "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu",
    "`rollout.tensor_model_parallel_size`": "actor_rollout_ref.rollout.tensor_model_parallel_size",
    "`rollout.gpu_memory_utilization`": "actor_rollout_ref.rollout.gpu_memory_utilization",
    "`data.max_prompt_length`": "data.max_prompt_length",
    "`env.max_steps`": "env.max_steps",
    "`trainer.total_epochs`": "trainer.total_epochs",
    "`trainer.test_freq`": "trainer.test_freq",
    "`trainer.n_gpus_per_node`": "trainer.n_gpus_per_node",
}


def table() -> dict[str, dict[str, str]]:
    """``{row key: {"ALFWorld", "WebShop", "recipe ALFWorld", "recipe WebShop": cell}}`` of the settings table."""
    out = {}
    for line in TABLE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not cells[1] or cells[1].startswith("-"):
            continue
        key = next((k for k in ROWS if cells[0].startswith(k)), None)
        if key:
            out[key] = {"ALFWorld": cells[1], "WebShop": cells[2], "recipe ALFWorld": cells[4],
                        "recipe WebShop": cells[5]}
    return out


def script_settings(path: Path) -> dict[str, str]:
    """The ``key=value`` arguments of a verl-agent example script, its shell variables filled in (``$x``,
    ``$((x * 2))``), and the data-prep ``--val_data_size``."""
    text = path.read_text()
    var = {m[1]: m[2].strip("\"'") for m in re.finditer(r"^(\w+)=(\S+)", text, re.M)}

    def fill(v: str) -> str:
        v = re.sub(r"\$\(\((\w+) \* (\d+)\)\)", lambda m: str(int(var[m[1]]) * int(m[2])), v)
        return re.sub(r"\$(\w+)", lambda m: var.get(m[1], m[0]), v).strip("\"'")

    out = {m[1]: fill(m[2]) for m in re.finditer(r"^\s+([\w.]+)=(\S+)", text, re.M)}
    m = re.search(r"--val_data_size (\$\(\(\w+ \* \d+\)\)|\S+)", text)
    out["--val_data_size"] = fill(m[1])
    out["data.max_prompt_length"] += " / " + out["data.max_response_length"]
    return out


def _same(cell: str, value: str) -> bool:
    cell = cell.replace("`", "").split(" (")[0].strip()
    try:
        return float(cell) == float(value)
    except ValueError:
        return cell.replace(" ", "") == value.replace(" ", "")


def test_table_names_the_verl_agent_commit_it_was_checked_against():
    assert re.search(r"checked against its commit [0-9a-f]{7}", TABLE.read_text())
    assert set(table()) == set(ROWS)


@pytest.mark.skipif(not os.environ.get("AGC_VERL_AGENT_DIR"),
                    reason="no verl-agent checkout given (set AGC_VERL_AGENT_DIR to one)")
def test_settings_table_matches_a_verl_agent_checkout():
    root = Path(os.environ["AGC_VERL_AGENT_DIR"]) / "examples" / "gigpo_trainer"
    rows = table()
    wrong = []
    for env, script in SCRIPTS.items():
        got = script_settings(root / script)
        wrong += [f"{env} {k}: table {rows[k][env]!r}, verl-agent {got[v]!r}" for k, v in ROWS.items()
                  if not _same(rows[k][env], got[v])]
    assert wrong == []


def test_recipe_column_matches_the_configs():
    rows = table()
    for env, name in (("ALFWorld", "gigpo_alfworld_verl_agent"), ("WebShop", "gigpo_webshop_verl_agent")):
        with initialize_config_dir(config_dir=str(CONFIG), version_base=None):
            cfg = compose(config_name=name)
        cell = {k: rows[k][f"recipe {env}"] for k in rows}
        assert _same(cell["`trainer.total_epochs`"], str(cfg.trainer.total_training_steps))
        assert _same(cell["`trainer.test_freq`"], str(cfg.trainer.test_freq))
        assert _same(cell["`data.train_batch_size`"], str(cfg.data.train_batch_size))
        mini = cfg.actor_rollout_ref.actor.ppo_mini_batch_size
        n = cfg.actor_rollout_ref.rollout.n
        assert cell["`actor.ppo_mini_batch_size`"].startswith(f"{mini} x {n} = {mini * n}")
        assert _same(cell["`actor.ppo_micro_batch_size_per_gpu`"],
                     str(cfg.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu))
