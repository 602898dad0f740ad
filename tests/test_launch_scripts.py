"""The GPU launch scripts check the machine first: on a machine without CUDA (or without the rollout engine) they
stop in seconds, naming what is missing, before building data, models or a Ray cluster. Before the check,
``run_gigpo_alfworld.sh`` composed its config, passed verl's checks and waited in Ray for minutes with no message."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA machine: the scripts would run for real")


FAST = 200  # s: a failing-fast script, with room for a busy machine (the subprocess timeout is 300 s)


def _run(args: list[str], tmp_path: Path, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    t0 = time.monotonic()
    out = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=ROOT,
                         env={**os.environ, "HOME": str(home), **(env or {})})
    return out, time.monotonic() - t0


@pytest.mark.parametrize("config", ["gigpo_alfworld", "gigpo_alfworld_verl_agent", "gigpo_webshop_verl_agent"])
def test_run_script_fails_fast_naming_cuda_and_the_engine(tmp_path, config):
    out, seconds = _run(["bash", "examples/verl/run_gigpo_alfworld.sh", "--config-name", config], tmp_path)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "no CUDA GPU here" in out.stderr
    if importlib_missing("vllm"):
        assert "rollout engine vllm is not installed" in out.stderr
    assert not (tmp_path / "home" / "data").exists()  # nothing built before the check
    assert seconds < FAST, f"took {seconds:.0f} s"  # seconds, not Ray's minutes (4-5 s idle, 25-31 s at load 12)


def test_preflight_reads_the_engine_and_gpu_count_from_the_overrides(tmp_path):
    out, _ = _run([sys.executable, "examples/verl/preflight.py", "actor_rollout_ref.rollout.name=sglang",
                   "trainer.n_gpus_per_node=4"], tmp_path)
    assert out.returncode == 2
    if importlib_missing("sglang"):
        assert "rollout engine sglang is not installed" in out.stderr
    out, _ = _run([sys.executable, "examples/verl/preflight.py", "actor_rollout_ref.rollout.name=hf"], tmp_path)
    assert "the recipe runs vllm or sglang" in out.stderr


def test_verl_gpu_check_fails_fast_on_cpu(tmp_path):
    out, seconds = _run(["bash", "scripts/verl_gpu_check.sh"], tmp_path, {"VERL_CHECK_DIR": str(tmp_path / "w")})
    assert out.returncode == 2 and "no CUDA GPU here" in out.stderr, out.stderr[-2000:]
    assert not (tmp_path / "w").exists() and seconds < FAST


def test_gpu_check_fails_fast_on_cpu(tmp_path):
    out, seconds = _run(["bash", "scripts/gpu_check.sh"], tmp_path)
    assert out.returncode == 2 and "no CUDA GPU here" in out.stdout + out.stderr
    assert seconds < FAST


def importlib_missing(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is None
