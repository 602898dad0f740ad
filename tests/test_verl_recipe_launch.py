"""The verl recipes launch the way their headers say and pass verl's own checks before any GPU is touched.

``examples/verl/run_gigpo_alfworld.sh`` is run with a recording ``python`` first on PATH, so every command it would
run (preflight, make_data, the trainer) is captured, not executed. The trainer's exact arguments (config path, config
name, overrides) are then composed by hydra as verl's ``main_ppo`` does and handed to verl 0.9.1's own
``validate_config`` (CPU only): before, both ALFWorld configs set ``train_batch_size 16`` with
``ppo_mini_batch_size 32`` and verl stopped the launch (exit 1 after 42 s on the real launcher); and the headers'
``--config-name`` form built the plain dataset for the verl-agent configs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("verl")
pytest.importorskip("hydra")

from hydra import compose, initialize_config_dir  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(p.stem for p in (ROOT / "examples" / "verl" / "config").glob("*.yaml"))
SCRIPT = "examples/verl/run_gigpo_alfworld.sh"


def _launch(tmp_path: Path, args: list[str], env: dict | None = None) -> tuple[subprocess.CompletedProcess, list]:
    """Run the launcher with a ``python`` that records its arguments; returns the process and the recorded calls."""
    bindir, log = tmp_path / "bin", tmp_path / "calls.jsonl"
    bindir.mkdir(exist_ok=True)
    log.unlink(missing_ok=True)
    shim = bindir / "python"
    shim.write_text(f"#!{sys.executable}\nimport json, sys\n"
                    f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n")
    shim.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    full_env = {k: v for k, v in os.environ.items() if k != "AGC_CONFIG"}
    full_env.update(HOME=str(home), PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}", **(env or {}))
    out = subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True, timeout=60, cwd=ROOT, env=full_env)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return out, calls


def _trainer_call(calls: list) -> list[str]:
    (call,) = [c for c in calls if c[:2] == ["-m", "agentgym_credit.integrations.verl.trainer"]]
    return call[2:]


def _make_data_call(calls: list) -> list[str]:
    (call,) = [c for c in calls if c and c[0] == "examples/verl/make_data.py"]
    return call[1:]


def compose_launch(argv: list[str]):
    """The config verl's hydra entry point builds from the trainer's command line (``--config-path P --config-name N
    overrides...``)."""
    assert argv[0] == "--config-path" and argv[2] == "--config-name", argv
    with initialize_config_dir(config_dir=argv[1], version_base=None):
        return compose(config_name=argv[3], overrides=argv[4:])


def verl_validate(cfg) -> None:
    """What verl 0.9.1's ``main_ppo.main`` runs before Ray starts: ``auto_set_device`` and ``validate_config``."""
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config
    from verl.utils.device import auto_set_device

    auto_set_device(cfg)
    validate_config(config=cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))


@pytest.mark.parametrize("name", CONFIGS)
def test_every_shipped_config_passes_verls_validate_config_as_launched(tmp_path, name):
    out, calls = _launch(tmp_path, ["--config-name", name], {"AGC_SKIP_PREFLIGHT": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    argv = _trainer_call(calls)
    assert argv.count("--config-name") == 1 and argv[3] == name
    verl_validate(compose_launch(argv))  # verl-agent's fork comments out its train >= mini-batch check; verl's has it


@pytest.mark.parametrize("name", CONFIGS)
def test_both_spellings_of_config_name_launch_the_same_config_and_dataset(tmp_path, name):
    o1, c1 = _launch(tmp_path, ["--config-name", name, "trainer.test_freq=3"], {"AGC_SKIP_PREFLIGHT": "1"})
    o2, c2 = _launch(tmp_path, [f"--config-name={name}", "trainer.test_freq=3"], {"AGC_SKIP_PREFLIGHT": "1"})
    assert o1.returncode == o2.returncode == 0, o1.stderr[-2000:] + o2.stderr[-2000:]
    assert _trainer_call(c1) == _trainer_call(c2) and _trainer_call(c1)[-1] == "trainer.test_freq=3"
    data = _make_data_call(c1)
    assert data == _make_data_call(c2)
    out_dir = Path(data[data.index("--out") + 1]).name
    assert out_dir == {"gigpo_alfworld": "agc_alfworld"}.get(name, f"agc_{name.removeprefix('gigpo_')}")
    assert ("--prompting" in data) == name.endswith("_verl_agent")
    assert compose_launch(_trainer_call(c1)).data.train_files == f"{Path.home()}/data/{out_dir}/train.parquet"


def test_old_env_var_and_unknown_config_stop_with_a_message(tmp_path):
    out, calls = _launch(tmp_path, [], {"AGC_CONFIG": "gigpo_webshop_verl_agent", "AGC_SKIP_PREFLIGHT": "1"})
    assert out.returncode == 2 and "--config-name gigpo_webshop_verl_agent" in out.stderr and calls == []
    out, calls = _launch(tmp_path, ["--config-name", "gigpo_nope"], {"AGC_SKIP_PREFLIGHT": "1"})
    assert out.returncode == 2 and "no config gigpo_nope" in out.stderr and calls == []
