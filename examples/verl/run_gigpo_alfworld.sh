#!/usr/bin/env bash
# GiGPO on credit/ALFWorld-v0 (or WebShop) with Qwen2.5-1.5B-Instruct through verl 0.9.1 (see README.md here).
# Needs CUDA GPUs and verl's GPU stack; NOT run in this project (no GPU). Extra hydra overrides pass through:
#   bash examples/verl/run_gigpo_alfworld.sh trainer.n_gpus_per_node=4 data.train_batch_size=32
#   bash examples/verl/run_gigpo_alfworld.sh --config-name gigpo_alfworld_verl_agent   # verl-agent's ALFWorld recipe
#   bash examples/verl/run_gigpo_alfworld.sh --config-name gigpo_webshop_verl_agent    # verl-agent's WebShop recipe
# The one launch form: `--config-name NAME` (hydra's own flag, also `--config-name=NAME`) picks the config AND its
# dataset (built by make_data.py when missing); without it, gigpo_alfworld. Every other argument is a hydra override.
# First it checks, in seconds, that CUDA, the rollout engine, verl and TransferQueue are there (preflight.py), and
# stops with what is missing; AGC_SKIP_PREFLIGHT=1 skips the check.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${AGC_CONFIG:-}" ]; then
  echo "run_gigpo_alfworld.sh: AGC_CONFIG is no longer read; launch with --config-name $AGC_CONFIG" >&2; exit 2
fi
CONFIG=gigpo_alfworld
ARGS=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --config-name) [ "$#" -ge 2 ] || { echo "run_gigpo_alfworld.sh: --config-name needs a value" >&2; exit 2; }
                   CONFIG="$2"; shift 2 ;;
    --config-name=*) CONFIG="${1#--config-name=}"; shift ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
[ -f "examples/verl/config/$CONFIG.yaml" ] || {
  echo "run_gigpo_alfworld.sh: no config $CONFIG (examples/verl/config has: $(cd examples/verl/config && ls *.yaml | sed 's/.yaml$//' | tr '\n' ' '))" >&2; exit 2; }
set -- ${ARGS[@]+"${ARGS[@]}"}
if [ "${AGC_SKIP_PREFLIGHT:-0}" != "1" ]; then
    python examples/verl/preflight.py --gpus 2 "$@"   # the configs' trainer.n_gpus_per_node: 2
fi
case "$CONFIG" in
  gigpo_alfworld_verl_agent)
    DATA="$HOME/data/agc_alfworld_verl_agent"
    [ -f "$DATA/train.parquet" ] || python examples/verl/make_data.py --out "$DATA" --prompting verl-agent \
        --history-len 2 --val-dev-groups 64 ;;
  gigpo_webshop_verl_agent)
    DATA="$HOME/data/agc_webshop_verl_agent"
    [ -f "$DATA/train.parquet" ] || python examples/verl/make_data.py --env webshop --out "$DATA" \
        --prompting verl-agent --history-len 2 --val-groups 256 ;;   # verl-agent validates WebShop on 2 x 128 tasks
  *)
    DATA="$HOME/data/agc_alfworld"
    [ -f "$DATA/train.parquet" ] || python examples/verl/make_data.py --out "$DATA" ;;
esac
exec python -m agentgym_credit.integrations.verl.trainer \
    --config-path "$PWD/examples/verl/config" --config-name "$CONFIG" \
    "actor_rollout_ref.rollout.agent.agent_loop_config_path=$PWD/examples/verl/agent_loop.yaml" "$@"
