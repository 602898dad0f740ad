#!/usr/bin/env bash
# Install agentgym-credit with every extra into the active Python environment.
#  - torch is pinned to the CPU build first (a plain `torch` pulls a multi-GB CUDA build);
#  - `alfworld`, `textworld` and `jericho` are installed with --no-deps: their declared dependencies pull
#    spaCy, which the text engines never import; what the engines do need comes with the `alfworld` extra.
#    pip's resolver would then print a red "ERROR: ... jericho requires spacy, which is not installed" after
#    every later install: that one expected line is explained instead (one line), any other conflict is shown.
#  - newer pip (26.x) also reports "textworld 1.7.0 is not supported on this platform" (textworld's wheel tags
#    name manylinux/macOS builds pip check does not match on some platforms); the engine runs here (the import
#    check below imports it), so that line is explained too.
#  - a stamp in the environment (sys.prefix/agentgym-credit.install-stamp: the hash of pyproject.toml and this
#    script, pip's and Python's versions) makes a rerun with nothing changed return in seconds; --force reinstalls.
#  - one line per stage, with its seconds, so a long step never runs silent (pip's own output stays quiet).
#  - the final import check hides verl's notes about GPU engines (torchtitan, megatron, ...) and accelerators
#    a CPU install does not have; on failure everything it printed is shown.
set -euo pipefail

EXPECTED_CONFLICT='^jericho [^ ]+ requires spacy'
EXPECTED_PLATFORM='^textworld [^ ]+ is not supported on this platform'

# pip check's report without the lines this install expects (stdin -> stdout)
unexpected_conflicts() {
    grep -Ev "$EXPECTED_CONFLICT|$EXPECTED_PLATFORM|^No broken requirements found" || true
}

# what the install depends on: this script, pyproject.toml, pip's and Python's versions (stdout: one hash)
install_stamp() {
    { cat scripts/install.sh pyproject.toml; python -m pip --version; python -c 'import sys; print(sys.version)'; } \
        | sha256sum | cut -d' ' -f1
}

stamp_file() {
    if [[ -n "${AGC_INSTALL_STAMP:-}" ]]; then echo "$AGC_INSTALL_STAMP"; return; fi
    echo "$(python -c 'import sys; print(sys.prefix)')/agentgym-credit.install-stamp"
}

# 0 when the last install in this environment had the same stamp and its packages are still there
up_to_date() {
    local file
    file=$(stamp_file)
    [[ -f "$file" && "$(cat "$file")" == "$(install_stamp)" ]] || return 1
    python -c "import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in ('agentgym_credit', 'torch', 'verl', 'trl', 'alfworld', 'textworld', 'jericho')) else 1)" 2>/dev/null
}

write_stamp() {
    local file
    file=$(stamp_file)
    install_stamp > "$file.tmp" && mv "$file.tmp" "$file"
}

STAGE_START=$SECONDS
stage() {  # stage N/M WHAT: one line as each stage starts, with the seconds since the install began
    echo "[$1] $2 (at $((SECONDS - STAGE_START)) s)"
}

main() {
    cd "$(dirname "${BASH_SOURCE[0]}")/.."
    if [[ "${1:-}" != "--force" ]] && up_to_date; then
        echo "installed already: nothing changed since the last install here ($(stamp_file));" \
             "bash scripts/install.sh --force reinstalls"
        return 0
    fi
    stage 1/5 "torch 2.13.0, the CPU build (~1-2 min the first time)"
    python -m pip install -q torch==2.13.0
    stage 2/5 "the ALFWorld/TextWorld/Jericho engines, --no-deps"
    python -m pip install -q --no-deps alfworld==0.4.2 textworld==1.7.0 jericho==3.3.1
    stage 3/5 "agentgym-credit with every extra (verl, trl, ...; ~2-3 min the first time)"
    # `all` includes the trainer bridges (extras `verl`, `trl`); torch==2.13.0 is repeated so that no dependency
    # of verl/trl (tensordict, accelerate...) can swap the CPU build for another torch.
    python -m pip install -q -e '.[all,dev]' torch==2.13.0 --no-warn-conflicts
    stage 4/5 "pip check"
    local report others
    report=$(python -m pip check 2>&1 || true)
    others=$(printf '%s\n' "$report" | unexpected_conflicts)
    if [[ -n "$others" ]]; then
        printf 'pip check: dependency conflicts:\n%s\n' "$others" >&2
        exit 1
    fi
    if grep -Eq "$EXPECTED_CONFLICT" <<<"$report"; then
        echo "note: jericho declares spaCy, which is not installed on purpose (the engines never import it;" \
             "installed with --no-deps), so 'pip check' reports it; nothing else is missing."
    fi
    if grep -Eq "$EXPECTED_PLATFORM" <<<"$report"; then
        echo "note: this pip reports textworld as not supported on this platform (it matches the wheel's tags" \
             "strictly); the engine is installed and imports here, checked next."
    fi
    stage 5/5 "import check (torch, textworld, verl, trl; ~1 min)"
    local out
    if ! out=$(python -W ignore -c "import torch, textworld, verl.experimental.agent_loop, verl.trainer.ppo.ray_trainer, trl; assert torch.__version__.startswith('2.13.0'), torch.__version__; print(torch.__version__)" 2>&1); then
        printf '%s\n' "$out" >&2
        exit 1
    fi
    write_stamp
    echo "installed: torch ${out##*$'\n'} (CPU), every extra; verl and trl import ($((SECONDS - STAGE_START)) s)"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    main "$@"
fi
