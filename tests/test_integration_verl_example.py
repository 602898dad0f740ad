"""examples/verl: the GiGPO/ALFWorld config composes against verl 0.9.1's own ``ppo_trainer`` config, every
key it sets exists there (a typo would be merged silently by Hydra), it selects our estimator, agent loop
and trainer mode; the dataset rows survive Parquet and drive the agent loop's settings. The GPU run
itself is not done here (no CUDA; see benchmarks/speed/verl_gpu.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("verl")
pytest.importorskip("hydra")
pq = pytest.importorskip("pyarrow.parquet")

from hydra import compose, initialize_config_dir  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from agentgym_credit.integrations.verl import agent_loop as al  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "verl"
OURS = {f"algorithm.agc_options.{k}" for k in ("gamma", "omega", "mode", "invalid_penalty", "reward_scale")}


def _leaves(d, prefix=""):
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            yield from _leaves(v, key + ".")
        else:
            yield key


def _compose(name: str):
    """The example config ``name`` composed by hydra, after checking that every key it sets is verl's (or ours):
    a typo would be merged silently."""
    import verl

    ref = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml")
    mine = OmegaConf.to_container(OmegaConf.load(EXAMPLE / "config" / f"{name}.yaml"))
    mine.pop("hydra")
    mine.pop("defaults")
    ref_keys = set(_leaves(OmegaConf.to_container(ref, resolve=False)))
    unknown = [k for k in _leaves(mine) if k not in OURS and k not in ref_keys]
    assert unknown == [], f"keys not in verl's ppo_trainer config: {unknown}"
    with initialize_config_dir(config_dir=str(EXAMPLE / "config"), version_base=None):
        return compose(config_name=name)


_MAKE_DATA_RUNS = r"""
import contextlib, io, json, runpy, sys, traceback
results = []
for argv in json.loads(sys.argv[1]):
    sys.argv = [sys.argv[0], *argv]
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(MAKE_DATA, run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


def make_data_runs(*argvs: list[str]) -> list[subprocess.CompletedProcess]:
    """``examples/verl/make_data.py`` run with each argument list, as ``python make_data.py ARGS`` from the root, in
    one interpreter: each start imports verl (with ``core_algos``), ~30-50 s of wall time at load 10 on 2 cores."""
    code = _MAKE_DATA_RUNS.replace("MAKE_DATA", repr(str(EXAMPLE / "make_data.py")))
    done = subprocess.run([sys.executable, "-c", code, json.dumps([list(a) for a in argvs])], capture_output=True,
                          text=True, timeout=300 * len(argvs), cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return [subprocess.CompletedProcess(["make_data.py", *a], rc, out, err)
            for a, (rc, out, err) in zip(argvs, json.loads(done.stdout.strip().splitlines()[-1]), strict=True)]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Every make_data.py run of this module, in one interpreter: {name: (output folder, CompletedProcess)}."""
    root = tmp_path_factory.mktemp("make_data")
    runs = {"plain": ["--out", str(root / "plain"), "--train-groups", "3", "--val-groups", "2"],
            "va": ["--out", str(root / "plain" / "va"), "--train-groups", "1", "--val-groups", "1",
                   "--val-dev-groups", "2", "--prompting", "verl-agent", "--history-len", "2"],
            **{name: ["--env", va["env"], "--out", str(root / name), "--train-groups", "1", "--val-groups", "1",
                      "--prompting", "verl-agent"] for name, va in sorted(VERL_AGENT.items())}}
    done = make_data_runs(*runs.values())
    return {name: (Path(argv[argv.index("--out") + 1]), out)
            for (name, argv), out in zip(runs.items(), done, strict=True)}


def test_example_config_composes_and_every_key_is_verls():
    cfg = _compose("gigpo_alfworld")
    assert cfg.algorithm.adv_estimator == "agc_gigpo"
    assert cfg.actor_rollout_ref.rollout.agent.default_agent_loop == al.AGENT_NAME
    assert cfg.trainer.use_v1 and cfg.trainer.v1.trainer_mode == "sync"  # verl's own mode (trainer.install)
    assert cfg.actor_rollout_ref.model.path == "Qwen/Qwen2.5-1.5B-Instruct"
    assert cfg.actor_rollout_ref.rollout.prompt_length == cfg.data.max_prompt_length  # verl's interpolation
    entry = OmegaConf.load(EXAMPLE / "agent_loop.yaml")[0]
    assert entry.name == al.AGENT_NAME and entry._target_.endswith(".CreditEnvAgentLoop")


def test_verl_agent_config_has_verl_agents_settings_and_valid_options():
    from agentgym_credit import credit
    from agentgym_credit.integrations.verl import VERL_ESTIMATORS

    cfg = _compose("gigpo_alfworld_verl_agent")
    assert cfg.algorithm.adv_estimator == "agc_verl_agent" and VERL_ESTIMATORS["agc_verl_agent"][0] == "verl-agent"
    assert (cfg.data.max_prompt_length, cfg.data.max_response_length) == (2048, 512)
    assert cfg.actor_rollout_ref.rollout.n == 8 and cfg.trainer.v1.trainer_mode == "sync"
    opts = OmegaConf.to_container(cfg.algorithm.agc_options)
    assert set(opts) <= set(credit.estimator_options("verl-agent")) and opts["mode"] == "mean_std_norm"


def test_make_data_rows_survive_parquet_and_give_the_loop_its_settings(made):
    tmp_path, out = made["plain"]
    assert out.returncode == 0, out.stderr[-2000:]
    rows = pq.read_table(tmp_path / "train.parquet").to_pylist()
    assert len(rows) == 3 and not list(tmp_path.glob("*.tmp"))
    s = al._settings(rows[1])
    assert s["env_id"] == "credit/ALFWorld-v0" and s["seed"] == 1 and s["env_kwargs"] == {"split": "train"}
    assert s["max_steps"] == 50 and s["task"] is None
    val = al._settings(pq.read_table(tmp_path / "val.parquet").to_pylist()[0])
    assert val["env_kwargs"] == {"split": "eval_in"} and val["seed"] == 10**6
    out = made["va"][1]
    assert out.returncode == 0, out.stderr[-2000:]
    val = pq.read_table(tmp_path / "va" / "val.parquet").to_pylist()
    assert [r["data_source"] for r in val] == ["alfworld/generated", "alfworld/dev", "alfworld/dev"]
    s = al._settings(val[1])
    assert s["prompting"] == "verl-agent" and s["history_len"] == 2 and s["env_kwargs"] == {"source": "dev"}
    assert s["token_rewards"] == "verl-agent" and al._settings(rows[0])["token_rewards"] == "episode"
    assert s["rules"] == "verl-agent" and al._settings(rows[0])["rules"] == "ours"  # verl-agent's mode with its prompt
    with pytest.raises(ValueError, match="token_rewards must be"):
        al._settings({"extra_info": {"agc": {"env_id": "credit/GridWorld-v0", "token_rewards": "verl_agent"}}})


def test_trainer_without_transferqueue_names_what_to_install(monkeypatch):
    """verl's v1 trainer imports TransferQueue (in our verl extra): without it, a clear error naming the extra,
    not a ModuleNotFoundError from deep inside verl; the launcher's task runner is still a Ray actor class."""
    import builtins

    from agentgym_credit.errors import DependencyNotInstalled
    from agentgym_credit.integrations.verl import trainer

    assert trainer._task_runner().__class__.__name__ == "ActorClass(CreditTaskRunner)"
    real_import = builtins.__import__

    def no_tq(name, *args, **kwargs):
        if name == "transfer_queue":
            raise ImportError("No module named 'transfer_queue'", name="transfer_queue")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(trainer, "_CLASS", [])
    monkeypatch.setattr(builtins, "__import__", no_tq)
    with pytest.raises(DependencyNotInstalled, match=r"pip install -e .\.\[verl\]."):
        trainer.trainer_class()


# verl-agent's example scripts (langfengQ/verl-agent examples/gigpo_trainer/run_{alfworld,webshop}.sh), transcribed:
# its actor_rollout_ref.rollout.n is 1 (the group size is env.rollout.n), so its batch sizes count step rows.
VERL_AGENT = {
    "gigpo_alfworld_verl_agent": {"train_batch_size": 16, "group_n": 8, "max_prompt_length": 2048,
                                  "max_response_length": 512, "ppo_mini_batch_size": 256,
                                  "ppo_micro_batch_size_per_gpu": 32, "log_prob_micro_batch_size_per_gpu": 32,
                                  "ref_log_prob_micro_batch_size_per_gpu": 32, "tensor_model_parallel_size": 2,
                                  "mode": "mean_std_norm", "max_steps": 50, "env": "alfworld"},
    "gigpo_webshop_verl_agent": {"train_batch_size": 16, "group_n": 8, "max_prompt_length": 4096,
                                 "max_response_length": 512, "ppo_mini_batch_size": 64,
                                 "ppo_micro_batch_size_per_gpu": 8, "log_prob_micro_batch_size_per_gpu": 16,
                                 "ref_log_prob_micro_batch_size_per_gpu": 16, "tensor_model_parallel_size": 2,
                                 "mode": "mean_norm", "max_steps": 15, "env": "webshop"},
}


@pytest.mark.parametrize("name", sorted(VERL_AGENT))
def test_recipe_batch_sizes_in_step_rows_equal_verl_agents(name, made):
    """verl 0.9.1's v1 trainer updates on mini-batches of ``ppo_mini_batch_size * rollout.n`` rows
    (``trainer_base._update_actor``); each row is one env step. verl-agent's are ``ppo_mini_batch_size`` step rows."""
    va = VERL_AGENT[name]
    cfg = _compose(name)
    a, r = cfg.actor_rollout_ref.actor, cfg.actor_rollout_ref.rollout
    # verl 0.9.1 refuses ppo_mini_batch_size > train_batch_size (groups); verl-agent's fork skips that check, so its
    # 256 step rows (ALFWorld) become the largest mini-batch verl accepts with its 16 groups: 16 x 8 = 128
    assert a.ppo_mini_batch_size * r.n == min(va["ppo_mini_batch_size"], cfg.data.train_batch_size * r.n)
    assert a.ppo_micro_batch_size_per_gpu == va["ppo_micro_batch_size_per_gpu"]
    assert r.log_prob_micro_batch_size_per_gpu == va["log_prob_micro_batch_size_per_gpu"]
    assert cfg.actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu == va["ref_log_prob_micro_batch_size_per_gpu"]
    assert r.tensor_model_parallel_size == va["tensor_model_parallel_size"]
    assert (cfg.data.train_batch_size, r.n) == (va["train_batch_size"], va["group_n"])
    assert (cfg.data.max_prompt_length, cfg.data.max_response_length) == (va["max_prompt_length"],
                                                                          va["max_response_length"])
    assert cfg.algorithm.adv_estimator == "agc_verl_agent" and cfg.algorithm.agc_options.mode == va["mode"]
    assert r.val_kwargs.temperature == 0.4 and cfg.actor_rollout_ref.ref.fsdp_config.param_offload
    tmp_path, out = made[name]
    assert out.returncode == 0, out.stderr[-2000:]
    s = al._settings(pq.read_table(tmp_path / "train.parquet").to_pylist()[0])
    assert (s["max_steps"], s["rules"], s["token_rewards"], s["history_len"]) == (va["max_steps"], "verl-agent",
                                                                                   "verl-agent", 2)
