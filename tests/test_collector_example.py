"""Smoke runs of the collector's example (examples/pg_gigpo.py) and of its speed benchmark."""

from __future__ import annotations

import gc
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_pg_gigpo_example_runs_two_iterations(capsys):
    pytest.importorskip("torch", reason="the example needs torch (`pip install -e '.[trainer]'`)")
    spec = importlib.util.spec_from_file_location("pg_gigpo", ROOT / "examples" / "pg_gigpo.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    args = mod.parse_args(["--iterations", "2", "--groups", "2", "--group-size", "4", "--max-steps", "8",
                           "--update-epochs", "1"])
    success = mod.main(args)
    assert len(success) == 2 and all(0.0 <= s <= 1.0 for s in success)
    out = capsys.readouterr().out
    assert out.count("iter ") == 2 and "success rate: first 1 iterations" in out


def test_collector_speed_benchmark_writes_its_report(tmp_path):
    from agentgym_credit.bench.speed import collector_speed

    # the benchmark runs a full garbage collection before each of its ~30 timed runs; in the suite's process
    # (millions of objects from the modules before) each took seconds: the objects already here are frozen out
    gc.freeze()
    try:
        out = collector_speed.main(["--out", str(tmp_path / "speed.md"), "--groups", "2", "--group-size", "2",
                                    "--max-steps", "5", "--slow-groups", "1", "--slow-steps", "3", "--delay", "0.001",
                                    "--repeats", "1", "--backends", "subprocess"])
    finally:
        gc.unfreeze()
    text = out.read_text()
    assert "| bare hand-written loop |" in text and "| collector, backend=sync |" in text
    assert "| subprocess | 2 |" in text and "cpu_count" in text
    assert "--backends subprocess" in text  # the exact command is recorded
