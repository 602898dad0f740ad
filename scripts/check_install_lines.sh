#!/usr/bin/env bash
# The quick start's install line and the light extras' lines, run as a new user would: in a clean virtual
# environment, from this clone. (The heavy lines -- the CPU torch pin, the engines' --no-deps line and the
# torch/verl/trl/alfworld extras -- are exactly what scripts/install.sh runs, also from a fresh venv, in .ci/run.)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(mktemp -d)/venv"
python3 -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
python -m pip install -q -e .                                   # README: quick start
python scripts/readme_example.py reinforce > "$venv/quickstart.out"   # the quick start's code, as written
grep -q "iteration 14: success" "$venv/quickstart.out"
# the error messages' lines (DependencyNotInstalled: each extra's requirements by name) for the light extras, as
# printed; the torch/engine extras' messages are the torch pin or the engines' --no-deps line plus the same
# requirement specs that scripts/install.sh installs through '.[all,dev]' (tests/test_install_lines.py checks that)
python - > "$venv/message_lines.sh" <<'PY'
from agentgym_credit.errors import install_commands
for extra in ("webshop", "similarity", "data", "progress", "plot"):
    for cmd in install_commands(extra):
        print("python -m " + cmd.replace("pip install ", "pip install -q ", 1))
PY
bash -e "$venv/message_lines.sh"
python -m pip install -q -e '.[webshop]'                        # README: extras
python -m pip install -q -e '.[data,progress,plot]'
python -m pip install -q -e '.[similarity]'
python -c "import rapidfuzz, pyarrow, tqdm, matplotlib, gymnasium; import agentgym_credit"
echo "install lines: ok"
rm -rf "$(dirname "$venv")"
