#!/usr/bin/env bash
# A few real verl PPO steps with GiGPO (agc_gigpo, true-state anchors) on credit/ALFWorld-v0, vLLM rollouts,
# a small random-weight Qwen2 model built from a config (nothing downloaded), through examples/verl's config
# and launcher. Writes benchmarks/learning/verl_gpu.md (machine, command, load, seconds per PPO step).
#
# Needs: one or more CUDA GPUs, and verl's GPU stack in the active env: from the clone,
# `pip install torch==2.13.0 && pip install -e '.[verl]'`, plus vLLM as verl 0.9.1 ships it and TransferQueue (verl's v1 trainer), e.g.
#   pip install 'verl[vllm]==0.9.1' 'TransferQueue>=0.1.10'
# Usage: bash scripts/verl_gpu_check.sh [STEPS=3] [extra hydra overrides...]
# VERL_CHECK_DRY=1: no GPU needed; builds the model and data, then only lets hydra compose and print the
# config (`--cfg job`, into a file), which checks every override against verl's config; prints one OK line,
# writes no report and removes its temporary folder.
# On a machine without CUDA, vLLM/SGLang, verl or TransferQueue it stops within seconds naming what is missing
# (examples/verl/preflight.py). The training run is capped at 9 minutes (VERL_CHECK_TIMEOUT seconds), so the
# whole check ends within 10.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS="${1:-3}"; shift || true
if [ "${VERL_CHECK_DRY:-0}" != "1" ]; then
  python examples/verl/preflight.py --gpus 1 "$@"
fi
WORK="${VERL_CHECK_DIR:-$(mktemp -d /tmp/agc_verl_check.XXXXXX)}"
LOG="$WORK/train.log"
python - "$WORK" <<'EOF'
import json, os, sys
from pathlib import Path
import torch
from agentgym_credit.trainer.tiny import build_tiny_model, build_tokenizer, env_corpus

work = Path(sys.argv[1])
if not torch.cuda.is_available() and os.environ.get("VERL_CHECK_DRY") != "1":
    sys.exit("verl_gpu_check: no CUDA GPU here; this check needs one (vLLM and FSDP run on CUDA)")
tok = build_tokenizer(env_corpus("credit/ALFWorld-v0", episodes=20, max_steps=10), vocab_size=2048)
tok.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                     "{% if add_generation_prompt %}<|assistant|>{% endif %}")
model = build_tiny_model(tok, arch="qwen2", hidden_size=256, seed=0)
model.save_pretrained(work / "model")
tok.save_pretrained(work / "model")
print(json.dumps({"model": str(work / "model"), "params": sum(p.numel() for p in model.parameters())}))
EOF
python examples/verl/make_data.py --out "$WORK/data" --train-groups 64 --val-groups 4 --max-steps 10
NGPU="$(python -c 'import torch; print(max(torch.cuda.device_count(), 1))')"
CMD=(python -m agentgym_credit.integrations.verl.trainer --config-path "$PWD/examples/verl/config"
     --config-name gigpo_alfworld "actor_rollout_ref.rollout.agent.agent_loop_config_path=$PWD/examples/verl/agent_loop.yaml"
     "data.train_files=$WORK/data/train.parquet" "data.val_files=$WORK/data/val.parquet"
     data.train_batch_size=4 data.max_prompt_length=1024 data.max_response_length=16
     "actor_rollout_ref.model.path=$WORK/model" actor_rollout_ref.rollout.n=4
     actor_rollout_ref.actor.ppo_mini_batch_size=4 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8
     actor_rollout_ref.rollout.gpu_memory_utilization=0.4
     "trainer.n_gpus_per_node=$NGPU" "trainer.total_training_steps=$STEPS" trainer.val_before_train=false
     trainer.test_freq=-1 trainer.save_freq=-1 "trainer.default_local_dir=$WORK/ckpt" "$@")
if [ "${VERL_CHECK_DRY:-0}" = "1" ]; then  # the composed config goes to a file; one line says how it went
  rc=0
  "${CMD[@]}" --cfg job > "$WORK/config.txt" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "verl_gpu_check dry run: OK, verl composed the config with every override ($(wc -l < "$WORK/config.txt") lines)"
  else
    tail -n 40 "$WORK/config.txt" >&2
    echo "verl_gpu_check dry run: FAILED (exit $rc): verl could not compose the config; its last lines are above" >&2
  fi
  if [ -z "${VERL_CHECK_DIR:-}" ]; then rm -rf "$WORK"; fi  # a folder of its own making is removed
  exit "$rc"
fi
LOAD0="$(cut -d' ' -f1-3 /proc/loadavg)"
START="$(date +%s)"
set +e
timeout "${VERL_CHECK_TIMEOUT:-540}" "${CMD[@]}" 2>&1 | tee "$LOG"
RC="${PIPESTATUS[0]}"
set -e
python - "$LOG" "$RC" "$START" "$LOAD0" "$STEPS" "${CMD[*]}" <<'EOF'
import os, platform, re, subprocess, sys, time
log, rc, start, load0, steps, cmd = sys.argv[1:7]
text = open(log, errors="replace").read()
step_s = [float(m) for m in re.findall(r"timing_s/step:([0-9.eE+-]+)", text)]
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip().replace("\n", "; ")
lines = ["# verl GPU check: GiGPO (agc_gigpo) on credit/ALFWorld-v0, verl 0.9.1 + vLLM", "",
         f"- machine: {platform.node()}, GPUs: {gpu or 'unknown'}, CPUs: {os.cpu_count()}",
         f"- command: `bash scripts/verl_gpu_check.sh {steps}` -> `{cmd}`",
         f"- load average before / after: {load0} / {' '.join(open('/proc/loadavg').read().split()[:3])}",
         f"- exit status: {rc}{' (killed at the time limit)' if rc == '124' else ''}; "
         f"wall time {time.time() - float(start):.0f} s", "",
         "| PPO step | seconds |", "|---|---|"]
lines += [f"| {i + 1} | {s:.1f} |" for i, s in enumerate(step_s)] or ["| (no step finished) | |"]
if step_s:
    lines += ["", f"Mean of steps 2..n: {sum(step_s[1:]) / max(len(step_s) - 1, 1):.1f} s "
                  "(step 1 includes vLLM/CUDA graph warm-up)."]
if rc != "0":
    lines += ["", "The run failed; last lines of the log:", "", "```", *text.splitlines()[-40:], "```"]
tmp = "benchmarks/learning/verl_gpu.md.tmp"
open(tmp, "w").write("\n".join(lines) + "\n")
os.replace(tmp, "benchmarks/learning/verl_gpu.md")
print("\n".join(lines))
EOF
exit "$RC"
