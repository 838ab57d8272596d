#!/usr/bin/env bash
# Creates .venv at the repository root with torch (CPU build) and numpy from the local wheel house, for the
# capture agent's tests, benchmarks and the example. Idempotent: a .venv that already imports torch is kept.
# Prints the interpreter's path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
python="$venv/bin/python"
if [ -x "$python" ] && "$python" -c 'import torch' >/dev/null 2>&1; then
  echo "$python"
  exit 0
fi
base="${PYTHON:-python3}"
if [ ! -x "$python" ]; then
  "$base" -m venv "$venv" >&2
fi
"$python" -m pip install --quiet --disable-pip-version-check \
  --index-url file:///opt/pypi/simple --extra-index-url file:///opt/pypi-more/simple \
  torch==2.13.0+cpu numpy >&2
"$python" -c 'import torch' >&2
echo "$python"
