"""Write the verl dataset of the GiGPO examples (ALFWorld; WebShop with ``--env webshop``): one Parquet row per group.

Each row names the env, its settings and the group's reset seed; verl repeats a row ``rollout.n``
times, and the agent loop ``agc_credit_env`` resets every copy with that seed, so the N rollouts of a
group start from one state. Run it once before ``run_gigpo_alfworld.sh``::

    python examples/verl/make_data.py --out ~/data/agc_alfworld            # built-in generated games
    python examples/verl/make_data.py --out ~/data/agc_alfworld --data-dir $ALFWORLD_DATA   # real games
    python examples/verl/make_data.py --out ~/data/agc_alfworld_verl_agent --prompting verl-agent \
        --history-len 2 --val-dev-groups 64     # verl-agent's prompt format and scores; validation on dev + generated
    python examples/verl/make_data.py --env webshop --out ~/data/agc_webshop_verl_agent --prompting verl-agent

Validation reports, per data source (``alfworld/generated``, ``alfworld/dev``), ``acc`` (success) and
``acc/<task type>`` (success per ALFWorld task type) from the agent loop's ``reward_extra_info``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from agentgym_credit.integrations.verl import group_dataset


def write(rows: list[dict], path: Path) -> None:
    """Atomic Parquet write (temp file in the same folder, then os.replace)."""
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(pa.Table.from_pylist(rows), str(tmp))
    os.replace(tmp, path)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", choices=["alfworld", "webshop"], default="alfworld")
    p.add_argument("--out", type=Path, default=Path("~/data/agc_alfworld").expanduser())
    p.add_argument("--data-dir", default=None, help="real ALFWorld games (official layout; the trainer reads them from "
                   "$ALFWORLD_DATA: a dataset row may not name files); default: generated")
    p.add_argument("--train-groups", type=int, default=4096)
    p.add_argument("--val-groups", type=int, default=128, help="validation groups on generated games")
    p.add_argument("--val-dev-groups", type=int, default=0,
                   help="validation groups on the real dev games (source='dev'), reported as data source "
                        "alfworld/dev next to alfworld/generated")
    p.add_argument("--max-steps", type=int, default=None, help="env steps per episode (ALFWorld 50, WebShop 15)")
    p.add_argument("--prompting", choices=["plain", "verl-agent"], default="plain")
    p.add_argument("--history-len", type=int, default=2)
    p.add_argument("--token-rewards", choices=["episode", "verl-agent"], default=None,
                   help="each step row's score in token_level_rewards: the episode return, or verl-agent's (10 x "
                        "return, less 0.1 on an invalid action); default: verl-agent's with --prompting verl-agent")
    p.add_argument("--rules", choices=["ours", "verl-agent"], default=None,
                   help="how a reply becomes action, validity and reward: verl-agent's (first <action> block, "
                        "format-only validity, 10 x won) or ours; default: verl-agent's with --prompting verl-agent")
    p.add_argument("--prompt-template", default="",
                   help="a verl-agent checkout or a template file (agentgym_credit.integrations.verl.prompting)")
    p.add_argument("--env-workers", type=int, default=4, help="env processes per agent-loop worker")
    a = p.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    print(f"make_data: {a.train_groups} train and {a.val_groups + a.val_dev_groups} validation groups of {a.env}"
          " ...", file=sys.stderr, flush=True)
    token_rewards = a.token_rewards or ("verl-agent" if a.prompting == "verl-agent" else "episode")
    rules = a.rules or ("verl-agent" if a.prompting == "verl-agent" else "ours")
    if a.env == "webshop":  # verl-agent's WebShop: 15 steps; train and test goals apart
        common = dict(max_steps=a.max_steps or 15, history_len=a.history_len, history_depth=4, prompting=a.prompting,
                      env_workers=a.env_workers, token_rewards=token_rewards, rules=rules,
                      prompt_template=a.prompt_template)
        train = group_dataset("credit/WebShop-v0", list(range(a.train_groups)), env_kwargs={"split": "train"},
                              data_source="webshop/train", **common)
        val = group_dataset("credit/WebShop-v0", list(range(10**6, 10**6 + a.val_groups)),
                            env_kwargs={"split": "test"}, data_source="webshop/test", **common)
        return _write_splits(a.out, train, val)
    common = dict(max_steps=a.max_steps or 50, history_len=a.history_len, history_depth=4, prompting=a.prompting,
                  env_workers=a.env_workers, token_rewards=token_rewards, rules=rules,
                  prompt_template=a.prompt_template)
    real = {} if a.data_dir is None else {"source": "data"}  # a row may not choose files (DATASET_ENV_KWARGS)
    if a.data_dir is not None:
        print(f"rows read real games from $ALFWORLD_DATA where the trainer runs: export ALFWORLD_DATA={a.data_dir}",
              file=sys.stderr)
    train = group_dataset("credit/ALFWorld-v0", list(range(a.train_groups)), env_kwargs={**real, "split": "train"},
                          data_source="alfworld/train", **common)
    val = group_dataset("credit/ALFWorld-v0", list(range(10**6, 10**6 + a.val_groups)),
                        env_kwargs={**real, "split": "eval_in"},
                        data_source="alfworld/eval_in" if a.data_dir else "alfworld/generated", **common)
    if a.val_dev_groups:
        val += group_dataset("credit/ALFWorld-v0", list(range(a.val_dev_groups)), env_kwargs={"source": "dev"},
                             data_source="alfworld/dev", **common)
    _write_splits(a.out, train, val)


def _write_splits(out: Path, train: list[dict], val: list[dict]) -> None:
    for split, rows in (("train", train), ("val", val)):
        write(rows, out / f"{split}.parquet")
        print(f"{out / f'{split}.parquet'}: {len(rows)} groups")


if __name__ == "__main__":
    main()
