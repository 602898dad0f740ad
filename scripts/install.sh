#!/usr/bin/env bash
# Install agentgym-credit with every extra into the active Python environment.
#  - torch is pinned to the CPU build first (a plain `torch` pulls a multi-GB CUDA build);
#  - `alfworld` is installed with --no-deps: its declared dependencies pull spaCy and vision stacks
#    that the text engine never imports; what the engine does need comes with the `alfworld` extra.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q torch==2.13.0
python -m pip install -q --no-deps alfworld==0.4.2
python -m pip install -q -e '.[all,dev]'
