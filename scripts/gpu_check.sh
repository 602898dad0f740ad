#!/usr/bin/env bash
# The GPU checks, in one run of under 10 minutes (each step has its own timeout):
#  1. bench gpu_rollout_speed: a Qwen2-0.5B-shaped model (random bf16 weights, nothing downloaded), batch 256,
#     1024-token prompts, 64 new tokens: `generate` eager and with static cache + torch.compile against the
#     trainer's sampler, plus a training-like shape sweep that counts compiled graphs
#     -> benchmarks/speed/gpu_rollout_speed.md (goal: >= 4x eager generate and >= 1.5x static+compile generate);
#  2. a 20-iteration bf16 training run (fp32 master weights, bf16 autocast) of a 0.5B-sized model on
#     credit/GridWorld-v0 -> benchmarks/learning/gpu_training.md.
# A step that fails or runs out of time leaves its report saying so (with the log tail), never a stale one.
#
# Usage: bash scripts/gpu_check.sh            (on a machine with a CUDA GPU and the trainer extra)
#        GPU_CHECK_SMOKE=1 bash scripts/gpu_check.sh   (no GPU: toy sizes on CPU into a temp folder; checks the
#                                                       script and the code paths, measures nothing)
set -uo pipefail
export PYTHONUNBUFFERED=1  # a step killed at its timeout still leaves its log lines
cd "$(dirname "$0")/.."
SMOKE="${GPU_CHECK_SMOKE:-0}"
if [ "$SMOKE" = "1" ]; then
  OUT="$(mktemp -d /tmp/agc_gpu_check.XXXXXX)"; EXTRA=(--device cpu --tiny); T_ROLL=300; T_TRAIN=200
  SPEED="$OUT"; LEARN="$OUT"
else
  OUT=benchmarks; EXTRA=(); T_ROLL=330; T_TRAIN=230
  SPEED="$OUT/speed"; LEARN="$OUT/learning"
  python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'gpu_check: no CUDA GPU here (GPU_CHECK_SMOKE=1 runs the CPU smoke path)')" || exit 2
fi
nvidia-smi --query-gpu=name,memory.total,utilization.gpu --format=csv 2>/dev/null || true
uptime

step() {  # step NAME TIMEOUT REPORT COMMAND...
  local name="$1" limit="$2" report="$3"; shift 3
  local log="$OUT/.${name}.log" start=$SECONDS
  echo "== $name (timeout ${limit}s): $*"
  timeout "$limit" "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    {
      echo "# $name: did not complete"
      echo
      echo "Command: \`$*\` (scripts/gpu_check.sh), exit status $rc after $((SECONDS - start)) s"
      [ "$rc" -eq 124 ] && echo "(killed at the ${limit} s timeout)"
      echo; echo "Load: $(uptime)"; echo
      echo "Goal not met: nothing measured. Last lines of the log:"; echo; echo '```'
      tail -n 40 "$log"; echo '```'
    } > "$report"
    echo "== $name failed (exit $rc); wrote $report"
  fi
  return 0
}

step gpu_rollout_speed "$T_ROLL" "$SPEED/gpu_rollout_speed.md" \
  python -m agentgym_credit.bench.speed.gpu_rollout_speed "${EXTRA[@]}" --sweep-budget-s 45 --no-progress \
  --out "$SPEED/gpu_rollout_speed.md"
step gpu_training "$T_TRAIN" "$LEARN/gpu_training.md" \
  python -m agentgym_credit.bench.learning.llm_training --gpu "${EXTRA[@]}" --iterations 20 --no-progress \
  --out "$LEARN/gpu_training.md"
echo "reports: $SPEED/gpu_rollout_speed.md $LEARN/gpu_training.md"
