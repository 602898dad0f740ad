#!/usr/bin/env bash
# GiGPO on credit/ALFWorld-v0 with Qwen2.5-1.5B-Instruct through verl 0.9.1 (see README.md here).
# Needs CUDA GPUs and verl's GPU stack; NOT run in this project (no GPU). Extra hydra overrides pass through:
#   bash examples/verl/run_gigpo_alfworld.sh trainer.n_gpus_per_node=4 data.train_batch_size=32
#   AGC_CONFIG=gigpo_alfworld_verl_agent bash examples/verl/run_gigpo_alfworld.sh   # verl-agent's recipe
set -euo pipefail
cd "$(dirname "$0")/../.."
CONFIG="${AGC_CONFIG:-gigpo_alfworld}"
if [ "$CONFIG" = gigpo_alfworld_verl_agent ]; then
    DATA="$HOME/data/agc_alfworld_verl_agent"
    [ -f "$DATA/train.parquet" ] || python examples/verl/make_data.py --out "$DATA" --prompting verl-agent \
        --history-len 2 --val-dev-groups 64
else
    DATA="$HOME/data/agc_alfworld"
    [ -f "$DATA/train.parquet" ] || python examples/verl/make_data.py --out "$DATA"
fi
exec python -m agentgym_credit.integrations.verl.trainer \
    --config-path "$PWD/examples/verl/config" --config-name "$CONFIG" \
    "actor_rollout_ref.rollout.agent.agent_loop_config_path=$PWD/examples/verl/agent_loop.yaml" "$@"
