"""Shared fixtures: ``ray_cluster``, a local Ray cluster for one test module."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def ray_cluster():
    """A fresh local Ray cluster (2 CPUs) whose workers can import the tests' env modules; any cluster an
    earlier module left running is shut down first, and this one is shut down after the module."""
    ray = pytest.importorskip("ray", reason="the ray backend needs `pip install -e '.[ray]'`")
    if ray.is_initialized():
        ray.shutdown()
    tests_dir = str(Path(__file__).resolve().parent)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([tests_dir, os.environ.get("PYTHONPATH", "")])}})
    yield ray
    ray.shutdown()
