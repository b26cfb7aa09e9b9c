#!/usr/bin/env bash
# Create .venv (once) and install exampp with the extras given as arguments, e.g. `setup.sh test`.
#
# torch==2.13.0 is installed first, so that the open torch range of the llm and embed extras is
# already satisfied. Which build pip takes depends on where it looks:
#   - plain PyPI on Linux x86-64: the CUDA build (gigabytes of NVIDIA packages);
#   - EXAMPP_TORCH_INDEX=https://download.pytorch.org/whl/cpu: the CPU build, from PyTorch's CPU index;
#   - the project's own machines: a local CPU wheel of 2.13.0, which plain pip finds (the default,
#     so these machines need nothing but the variable left unset).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    echo "== setup: creating .venv"
    python3 -m venv .venv
fi
. .venv/bin/activate
extras=$(IFS=,; echo "$*")
quiet_pip() {  # pip, without the notes about package index locations this machine lacks
    pip install --quiet --disable-pip-version-check "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }
}
torch_index=${EXAMPP_TORCH_INDEX:-}
echo "== setup: installing torch==2.13.0${torch_index:+ from $torch_index}"
quiet_pip torch==2.13.0 ${torch_index:+--index-url "$torch_index"}
echo "== setup: installing exampp (editable) with extras: ${extras:-none}"
quiet_pip -e ".${extras:+[$extras]}"
echo "== setup: done (. .venv/bin/activate puts exampp on your PATH)"
