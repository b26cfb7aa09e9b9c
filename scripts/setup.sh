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
pip install --quiet --disable-pip-version-check torch==2.13.0
pip install --quiet --disable-pip-version-check -e ".${extras:+[$extras]}"
