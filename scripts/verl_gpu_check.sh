#!/usr/bin/env bash
# Ten real verl PPO steps of each shipped recipe (examples/verl/config: gigpo_alfworld, gigpo_alfworld_verl_agent,
# gigpo_webshop_verl_agent), vLLM rollouts, a small random-weight Qwen2 model built from a config (nothing
# downloaded), through the recipes' own configs and launcher module. Writes benchmarks/speed/verl_gpu.md: machine,
# command, load, and per recipe and PPO step verl's own timing_s/step, perf/throughput (tokens per second per GPU)
# and perf/max_memory_allocated_gb / perf/max_memory_reserved_gb (peak GPU memory of the update worker).
#
# Needs: one or more CUDA GPUs, and verl's GPU stack in the active env: from the clone,
# `pip install torch==2.13.0 && pip install -e '.[verl]'`, plus vLLM as verl 0.9.1 ships it and TransferQueue (verl's v1 trainer), e.g.
#   pip install 'verl[vllm]==0.9.1' 'TransferQueue>=0.1.10'
# Usage: bash scripts/verl_gpu_check.sh [STEPS=10] [extra hydra overrides for every recipe...]
#   VERL_CHECK_RECIPES="gigpo_alfworld_verl_agent"   only these recipes (space-separated config names)
#   VERL_CHECK_TIMEOUT=540                           seconds each recipe's run may take (then it is killed, reported)
#   VERL_CHECK_REPORT=benchmarks/speed/verl_gpu.md   where the report goes
# The runs keep each recipe's estimator, rules, prompts, lengths and micro-batch sizes but shrink the batch so a
# step fits the time limit (4 groups x 4 rollouts, ppo_mini_batch_size 4, 10 env steps, 1024 / 128 tokens):
# the recipes' own batch sizes are checked by verl's validate_config on CPU (tests/test_verl_recipe_launch.py).
# VERL_CHECK_DRY=1: no GPU needed; builds the model and data, then only lets hydra compose and print each recipe's
# config (`--cfg job`), which checks every override against verl's config; writes no report.
# On a machine without CUDA, vLLM/SGLang, verl or TransferQueue it stops within seconds naming what is missing
# (examples/verl/preflight.py).
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS="${1:-10}"; shift || true
RECIPES="${VERL_CHECK_RECIPES:-gigpo_alfworld gigpo_alfworld_verl_agent gigpo_webshop_verl_agent}"
REPORT="${VERL_CHECK_REPORT:-benchmarks/speed/verl_gpu.md}"
if [ "${VERL_CHECK_DRY:-0}" != "1" ]; then
  python examples/verl/preflight.py --gpus 1 "$@"
fi
WORK="${VERL_CHECK_DIR:-$(mktemp -d /tmp/agc_verl_check.XXXXXX)}"
python - "$WORK" <<'EOF'
import json, os, sys
from pathlib import Path
import torch
from agentgym_credit.trainer.tiny import build_tiny_model, build_tokenizer, env_corpus

work = Path(sys.argv[1])
if not torch.cuda.is_available() and os.environ.get("VERL_CHECK_DRY") != "1":
    sys.exit("verl_gpu_check: no CUDA GPU here; this check needs one (vLLM and FSDP run on CUDA)")
corpus = [*env_corpus("credit/ALFWorld-v0", episodes=20, max_steps=10), *env_corpus("credit/WebShop-v0", episodes=20,
                                                                                      max_steps=10),
          "<think>", "</think>", "<action>", "</action>"]
tok = build_tokenizer(corpus, vocab_size=2048)
tok.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                     "{% if add_generation_prompt %}<|assistant|>{% endif %}")
model = build_tiny_model(tok, arch="qwen2", hidden_size=256, seed=0)
model.save_pretrained(work / "model")
tok.save_pretrained(work / "model")
print(json.dumps({"model": str(work / "model"), "params": sum(p.numel() for p in model.parameters())}))
EOF
NGPU="$(python -c 'import torch; print(max(torch.cuda.device_count(), 1))')"
LOAD0="$(cut -d' ' -f1-3 /proc/loadavg)"
START="$(date +%s)"
RC_ALL=0
RESULTS=()
for RECIPE in $RECIPES; do
  case "$RECIPE" in
    gigpo_alfworld) DATA_ARGS=() ;;
    gigpo_alfworld_verl_agent) DATA_ARGS=(--prompting verl-agent --history-len 2) ;;
    gigpo_webshop_verl_agent) DATA_ARGS=(--env webshop --prompting verl-agent --history-len 2) ;;
    *) echo "verl_gpu_check: unknown recipe $RECIPE" >&2; exit 2 ;;
  esac
  python examples/verl/make_data.py --out "$WORK/data_$RECIPE" --train-groups 64 --val-groups 4 --max-steps 10 \
      ${DATA_ARGS[@]+"${DATA_ARGS[@]}"}
  CMD=(python -m agentgym_credit.integrations.verl.trainer --config-path "$PWD/examples/verl/config"
       --config-name "$RECIPE" "actor_rollout_ref.rollout.agent.agent_loop_config_path=$PWD/examples/verl/agent_loop.yaml"
       "data.train_files=$WORK/data_$RECIPE/train.parquet" "data.val_files=$WORK/data_$RECIPE/val.parquet"
       data.train_batch_size=4 data.max_prompt_length=1024 data.max_response_length=128
       "actor_rollout_ref.model.path=$WORK/model" actor_rollout_ref.rollout.n=4
       actor_rollout_ref.actor.ppo_mini_batch_size=4 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8
       actor_rollout_ref.rollout.tensor_model_parallel_size=1 actor_rollout_ref.rollout.gpu_memory_utilization=0.4
       "trainer.n_gpus_per_node=$NGPU" "trainer.total_training_steps=$STEPS" trainer.val_before_train=false
       trainer.test_freq=-1 trainer.save_freq=-1
       "trainer.default_local_dir=$WORK/ckpt_$RECIPE" "$@")
  if [ "${VERL_CHECK_DRY:-0}" = "1" ]; then  # the composed config goes to a file; one line says how it went
    rc=0
    "${CMD[@]}" --cfg job > "$WORK/$RECIPE.cfg.yaml" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
      tail -n 40 "$WORK/$RECIPE.cfg.yaml" >&2
      echo "verl_gpu_check dry run: $RECIPE FAILED (exit $rc): verl could not compose the config; its last lines are above" >&2
      exit "$rc"
    fi
    echo "verl_gpu_check dry run: $RECIPE OK, verl composed the config with every override ($(wc -l < "$WORK/$RECIPE.cfg.yaml") lines)"
    continue
  fi
  T0="$(date +%s)"
  set +e
  timeout "${VERL_CHECK_TIMEOUT:-540}" "${CMD[@]}" > "$WORK/$RECIPE.log" 2>&1
  RC="$?"
  set -e
  tail -5 "$WORK/$RECIPE.log"
  [ "$RC" = "0" ] || RC_ALL="$RC"
  RESULTS+=("$RECIPE" "$RC" "$(( $(date +%s) - T0 ))" "${CMD[*]}")
done
if [ "${VERL_CHECK_DRY:-0}" = "1" ]; then
  if [ -z "${VERL_CHECK_DIR:-}" ]; then rm -rf "$WORK"; fi  # a folder of its own making is removed
  exit 0
fi
python - "$WORK" "$REPORT" "$START" "$LOAD0" "$STEPS" "${RESULTS[@]}" <<'EOF'
import os, platform, re, subprocess, sys, time
work, report, start, load0, steps, *results = sys.argv[1:]
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip().replace("\n", "; ")
lines = [f"# verl GPU check: {steps} PPO steps of each verl recipe, verl 0.9.1 + vLLM", "",
         f"- machine: {platform.node()}, GPUs: {gpu or 'unknown'}, CPUs: {os.cpu_count()}",
         f"- command: `bash scripts/verl_gpu_check.sh {steps}` (a random-weight Qwen2 model, hidden 256, built from a "
         "config; 4 groups x 4 rollouts a step, 10 env steps, 1024 / 128 tokens)",
         f"- load average before / after: {load0} / {' '.join(open('/proc/loadavg').read().split()[:3])}",
         f"- wall time {time.time() - float(start):.0f} s", ""]


def metric(text, key):
    return [float(m) for m in re.findall(re.escape(key) + r":([0-9.eE+-]+)", text)]


for i in range(0, len(results), 4):
    recipe, rc, secs, cmd = results[i:i + 4]
    text = open(os.path.join(work, f"{recipe}.log"), errors="replace").read()
    cols = {k: metric(text, k) for k in ("timing_s/step", "perf/throughput", "perf/max_memory_allocated_gb",
                                         "perf/max_memory_reserved_gb")}
    lines += [f"## {recipe}", "", f"- exit status: {rc}{' (killed at the time limit)' if rc == '124' else ''}; "
              f"{secs} s", f"- command: `{cmd}`", "",
              "| PPO step | seconds | tokens/s per GPU | peak GPU memory allocated (GB) | reserved (GB) |",
              "|---|---|---|---|---|"]
    n = len(cols["timing_s/step"])
    cell = lambda k, j: f"{cols[k][j]:.2f}" if j < len(cols[k]) else ""  # noqa: E731
    lines += [f"| {j + 1} | {cell('timing_s/step', j)} | {cell('perf/throughput', j)} | "
              f"{cell('perf/max_memory_allocated_gb', j)} | {cell('perf/max_memory_reserved_gb', j)} |"
              for j in range(n)] or ["| (no step finished) | | | | |"]
    if n > 1:
        tail = cols["perf/throughput"][1:]
        lines += ["", f"Steps 2..{n}: mean {sum(cols['timing_s/step'][1:]) / (n - 1):.1f} s a step"
                  + (f", {sum(tail) / len(tail):.0f} tokens/s per GPU" if tail else "")
                  + " (step 1 includes vLLM / CUDA graph warm-up)."]
    if rc != "0":
        lines += ["", "The run failed; last lines of its log:", "", "```", *text.splitlines()[-40:], "```"]
    lines.append("")
os.makedirs(os.path.dirname(report) or ".", exist_ok=True)
with open(report + ".tmp", "w") as f:
    f.write("\n".join(lines))
os.replace(report + ".tmp", report)
print("\n".join(lines))
EOF
exit "$RC_ALL"
