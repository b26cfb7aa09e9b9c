#!/usr/bin/env bash
# Set up (see setup.sh) and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test,datasets,pyserini,llm,embed
. .venv/bin/activate
python -m pytest -q "$@"
