#!/usr/bin/env bash
# Create .venv (once) and install exampp with the extras given as arguments, e.g. `setup.sh test`.
# torch==2.13.0 is installed first: it is the CPU wheel, and any open torch range pulled in
# by an extra would otherwise fetch gigabytes of CUDA packages.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
. .venv/bin/activate
extras=$(IFS=,; echo "$*")
quiet_pip() {  # pip, without the notes about package index locations this machine lacks
    pip install --quiet --disable-pip-version-check "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }
}
quiet_pip torch==2.13.0
quiet_pip -e ".${extras:+[$extras]}"
